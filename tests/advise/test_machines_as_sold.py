"""Issue 26, part 1: every option is machines that are sold. GPUs that work together are
priced only from an offer whose machine holds them; independent parts may run on separate
machines, and the answer, the JSON, the page and the exported file say so."""

from __future__ import annotations

import math
import re

import pytest

from whichgpu.advise.job import Job
from whichgpu.advise.machines import Spread, machines_for
from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.offers import Offer
from whichgpu.units import Money

# one question per work kind, on the default prices (the market snapshot)
QUESTIONS = {
    "tokens": ("llama-3.1-8b", "--tokens", "10M"),
    "tokens-70b": ("llama-3.1-70b", "--quant", "bf16", "--tokens", "1M"),
    "daily": ("llama-3.1-8b", "--tokens-per-day", "2B"),
    "users": ("llama-3.1-8b", "--users", "300", "--tokens-per-s-each", "20"),
    "rate": ("llama-3.1-8b", "--engine", "vllm", "--requests-per-s", "20"),
    "images": ("flux.1-dev", "--task", "image", "--images", "1000"),
    "videos": ("wan-2.2-14b", "--task", "video", "--videos", "10"),
    "steps": ("llama-3.1-8b", "--task", "lora", "--steps", "2000"),
    "pretrain": ("1B", "--task", "pretrain", "--train-tokens", "2B"),
}


def _offer(gpu: str, count: int, price: float, instance: str | None = "box",
           provider: str = "host") -> Offer:
    return Offer(provider=provider, gpu=gpu, gpu_count=count,
                 price_per_hour=Money(price, "USD"), billing=BillingRule(),
                 instance_type=instance)


def _sold() -> set[tuple]:
    from whichgpu.catalog.prices.selection import get_offers

    return {(o.provider, o.gpu, o.gpu_count, o.instance_type) for o in get_offers(None)}


@pytest.mark.parametrize("kind", sorted(QUESTIONS))
def test_every_option_is_machines_its_offer_sells(cli, kind):
    out = cli("recommend", *QUESTIONS[kind], "--json", "--top", "0")
    assert out.code == 0, out.err
    options = out.json()["options"]
    assert options, kind
    sold = _sold()
    for o in options:
        offer = o["offer"]
        assert offer["gpu_count"] == o["gpus_per_machine"], o
        assert offer["instances"] == o["machines"]
        assert (offer["provider"], o["gpu"], offer["gpu_count"], offer["instance_type"]) \
            in sold, o  # a machine of the price list, as listed
        assert o["machines"] * o["gpus_per_machine"] == o["gpus_paid"] >= o["gpus_used"]
        if o["spread"] == Spread.CLUSTER:
            assert o["gpus_per_machine"] >= 8
        else:  # the GPUs that work together sit in one machine
            assert o["linked_gpus"] <= o["gpus_per_machine"], o
        if o["machines"] > 1 and o["spread"] != Spread.CLUSTER:
            assert o["spread"] == Spread.SEPARATE
            assert any("separate" in a for a in o["assumptions"]), o


def test_two_linked_cards_are_never_two_one_card_hosts(cli):
    """The trial's first option: 2 x rtx-6000-ada at tp=2 'priced as 2 x the 1-GPU offer of
    Vast.ai'. Vast.ai sells that card in 1-GPU hosts only: no such option any more."""
    out = cli("recommend", "llama-3.1-8b", "--tokens", "10M", "--json", "--top", "0").json()
    for o in out["options"]:
        assert not any("1-GPU offer" in a for a in o["assumptions"])
        if o["count"] > 1 and o["linked_gpus"] > 1:
            assert o["offer"]["gpu_count"] >= o["linked_gpus"]


def test_linked_gpus_with_no_machine_that_holds_them_are_excluded_saying_why():
    w = build_workload("llama-3.1-70b", quant="bf16", engine="vllm")
    from whichgpu.catalog.gpus import resolve_gpu

    h100 = resolve_gpu("h100-sxm").gpu
    rec = recommend(Job(w, tokens=1_000_000), [_offer("h100-sxm", 1, 2.0)], gpus=[h100])
    assert not rec.options
    (miss,) = rec.excluded
    assert miss.kind == "offer" and miss.has_offer
    assert "must be linked in one machine" in miss.reason
    assert "only in machines of 1 GPU(s)" in miss.reason
    # an 8-GPU machine of the same card runs it, paid whole
    rec = recommend(Job(w, tokens=1_000_000),
                    [_offer("h100-sxm", 1, 2.0), _offer("h100-sxm", 8, 16.0, "eight")],
                    gpus=[h100])
    assert rec.options and all(o.offer.gpu_count == 8 for o in rec.options if o.gpus > 1)
    two = next(o for o in rec.options if o.gpus == 2)
    assert two.price_per_hour.amount == 16.0  # the whole 8-GPU machine
    assert any("16 GPUs paid for" in a or "8 GPUs paid for, 2 used" in a
               for a in two.assumptions)


def test_images_split_over_separate_one_gpu_machines_cost_their_machine_hours():
    w = build_workload("flux.1-dev", task="image")
    from whichgpu.catalog.gpus import resolve_gpu

    g = resolve_gpu("rtx-6000-ada").gpu
    rec = recommend(Job(w, images=1000), [_offer("rtx-6000-ada", 1, 0.5)], gpus=[g])
    four = next(o for o in rec.options if o.gpus == 4)
    m = four.shape
    assert (m.machines, m.per_machine, m.spread) == (4, 1, Spread.SEPARATE)
    assert four.price_per_hour.amount == pytest.approx(2.0)
    # four machines for the wall time: the cost of the machine-hours, billed per second
    billed_s = math.ceil(four.time_s.typical)  # each machine, per second
    assert four.cost.typical.amount == pytest.approx(2.0 * billed_s / 3600)
    assert "4 separate machines of 1 GPU(s)" in str(four.to_json()["shape"])


def test_a_per_gpu_price_is_taken_as_one_machine_of_the_size_asked_and_says_so():
    """The articles' offer sets give a price per GPU and no machine (no instance type)."""
    w = build_workload("llama-3.1-70b", quant="bf16", engine="vllm")
    sized, m = machines_for(_offer("h100-sxm", 1, 3.0, instance=None), w, 4)
    assert (sized.gpu_count, sized.price_per_hour.amount, m.sized_as_asked) == (4, 12.0, True)
    # a marketplace host (an instance type) stays what it is: it cannot hold 4 linked GPUs
    assert machines_for(_offer("h100-sxm", 1, 3.0), w, 4) is None


def test_the_export_launches_the_machines_the_answer_shows(cli):
    data = cli("recommend", *QUESTIONS["images"], "--json").json()
    best = data["options"][0]
    sky = cli("recommend", *QUESTIONS["images"], "--export", "skypilot")
    assert sky.code == 0, sky.err
    head = re.search(r"# Option (\d+) of", sky.out)
    assert head is not None
    chosen = data["options"][int(head.group(1)) - 1]
    n = chosen["machines"]
    if n > 1:  # separate machines: num_nodes, or a job array where SkyPilot has no clusters
        assert f"num_nodes: {n}" in sky.out or (f"SHARD_COUNT: '{n}'" in sky.out
                                                and f"seq 0 {n - 1}" in sky.out)
    assert f"{data['options'][0]['gpu']}" in sky.out or chosen is not best
    dstack = cli("recommend", *QUESTIONS["images"], "--export", "dstack")
    head = re.search(r"# Option (\d+) of", dstack.out)
    chosen = data["options"][int(head.group(1)) - 1]
    if chosen["machines"] > 1 and chosen["spread"] == "separate machines":  # one run each
        assert f"SHARD_COUNT={chosen['machines']}" in dstack.out and "\nnodes:" not in dstack.out
    elif chosen["machines"] > 1:  # a cluster: one multi-node task
        assert f"\nnodes: {chosen['machines']}\n" in dstack.out
    assert f"count: {chosen['gpus_per_machine']}" in dstack.out


def test_a_tensor_parallel_export_asks_for_one_machine_of_that_size(cli):
    out = cli("recommend", *QUESTIONS["tokens-70b"], "--json").json()
    linked = [(i, o) for i, o in enumerate(out["options"], 1) if o["linked_gpus"] > 1]
    assert linked
    o: dict = {}
    for i, candidate in linked:  # the first one a dstack backend exists for
        text = cli("recommend", *QUESTIONS["tokens-70b"], "--export", "dstack",
                   "--export-option", str(i))
        if text.code == 0:
            o = candidate
            break
    assert text.code == 0, text.err
    assert f"count: {o['gpus_per_machine']}" in text.out and "\nnodes:" not in text.out
    if o["offer"]["instance_type"]:
        assert o["offer"]["instance_type"] in text.out


def test_rest_and_page_show_the_same_machines(web):
    q = "model=flux.1-dev&task=image&amount=1000&unit=images"
    api = web.get("/api/v1/recommend?model=flux.1-dev&task=image&images=1000")
    assert api.status_code == 200, api.text
    best = api.json()["options"][0]
    assert {"machines", "gpus_per_machine", "spread", "shape"} <= set(best)
    assert best["offer"]["gpu_count"] == best["gpus_per_machine"]
    en = web.get("/?" + q).text
    fr = web.get("/?" + q, headers={"Accept-Language": "fr"}).text
    assert best["machines"] > 1  # the trial's question: cheapest as several 1-GPU hosts
    headline = re.search(r'<p class="big">(.*?)</p>', en, re.S).group(1)
    assert f"{best['machines']} separate machines of 1 GPU(s)" in headline
    assert f"{best['machines']} machines séparées de 1 GPU" in fr
