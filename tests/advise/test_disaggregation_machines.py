"""A prefill/decode split is priced as machines someone sells (brief flaws10): each pool of
instances on the cheapest offer whose machines hold them, paid whole, and named; it was priced
at a GPU's price per GPU-hour, as if any number of them were on sale."""

from __future__ import annotations

from whichgpu.advise.disaggregation import _Pools
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.offers import Offer
from whichgpu.units import Money


def _machine(gpus: int, price: float, provider: str = "Example") -> Offer:
    return Offer(gpu="h100-sxm", provider=provider, gpu_count=gpus, instance_type=f"{gpus}x",
                 price_per_hour=Money(price, "USD"))


def test_a_pool_pays_for_the_whole_machine_that_holds_it():
    w = build_workload("llama-3.1-70b")
    per_gpu = {"h100-sxm": Money(2.0, "USD")}
    eight = _Pools(w, [_machine(8, 16.0)], "USD", None, per_gpu)
    assert eight.cost("h100-sxm", 2, 1) == 16.0  # one 8-GPU machine, not 2 x $2.00
    both = _Pools(w, [_machine(8, 16.0), _machine(2, 5.0, "Two")], "USD", None, per_gpu)
    assert both.cost("h100-sxm", 2, 1) == 5.0  # the 2-GPU machine on sale
    assert both.cost("h100-sxm", 2, 3) == 15.0  # three of them, each on its own machine


def test_a_pool_no_machine_on_sale_holds_is_not_priced():
    w = build_workload("llama-3.1-70b")
    ones = _Pools(w, [_machine(1, 2.0)], "USD", None, {"h100-sxm": Money(2.0, "USD")})
    assert ones.cost("h100-sxm", 2, 1) is None  # tp=2 needs two GPUs in one machine
    assert ones.cost("h100-sxm", 1, 2) == 4.0


def test_the_split_says_where_each_pool_is_bought(cli):
    out = cli("recommend", "llama-3.1-70b", "--requests-per-s", "10", "--disaggregate",
              "--top", "1", "--json")
    assert out.code == 0, out.err
    data = out.json()
    said = " ".join(str(m) for m in data["explanation"])
    assert "Priced as machines on sale: prefill on" in said and "; decode on" in said
