"""Any GPU count a layout allows (issue 14): 3 x RTX 3090 is a common build."""

import pytest

from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.offers import Offer
from whichgpu.estimate.memory.fit import COUNTS, counts_for, fits, layout_for
from whichgpu.estimate.workload import valid_tp_degrees
from whichgpu.units import Money


def test_every_count_a_server_holds_is_tried():
    assert COUNTS == (1, 2, 3, 4, 5, 6, 7, 8)


def test_a_layer_split_takes_any_count():
    w = build_workload("llama-3.1-70b", quant="q4_k_m")  # llama.cpp: split by layers
    assert counts_for(w) == COUNTS
    three = layout_for(w, 3)
    assert three.gpus == 3 and three.pp_degree == 3 and three.tp_degree == 1


def test_tensor_parallel_uses_the_divisors_of_the_heads_and_stages_for_the_rest():
    w = build_workload("llama-3.1-70b", quant="awq", engine="vllm")  # 64 heads, 8 KV heads
    assert valid_tp_degrees(w.model, 8) == [1, 2, 4, 8]
    three, six = layout_for(w, 3), layout_for(w, 6)
    assert (three.tp_degree, three.pp_degree) == (1, 3)
    assert (six.tp_degree, six.pp_degree) == (2, 3)
    assert layout_for(w, 8).tp_degree == 8


def test_memory_lists_three_cards_when_two_are_short():
    w = build_workload("llama-3.1-70b", quant="q6_k", context="4k")
    on_3090 = [f for f in fits(w, gpus=[_catalog_gpu("rtx-3090")]) if f.fits]
    assert min(f.count for f in on_3090) == 3


def test_three_cards_win_where_they_are_the_cheapest():
    w = build_workload("llama-3.1-70b", quant="q6_k", context="4k")
    job = build_job(w, tokens="100k")
    offers = [Offer(provider="market", gpu="rtx-3090", price_per_hour=Money(0.22, "USD"),
                    offer_set="test")]
    rec = recommend(job, offers)
    best = rec.best
    assert best.gpu.id == "rtx-3090" and best.gpus == 3  # 2 are short, 4 cost more
    # two cards hold it only with llama.cpp layers in host RAM, and cost more for the job
    two = next(o for o in rec.options if o.gpus == 2)
    assert any("host RAM" in n for n in two.notes)
    assert two.cost.typical.amount > best.cost.typical.amount
    four = next(o for o in rec.options if o.gpus == 4)
    assert four.cost.typical.amount > best.cost.typical.amount


def test_recommend_stays_within_max_gpus():
    w = build_workload("llama-3.1-70b", quant="q6_k", context="4k")
    offers = [Offer(provider="market", gpu="rtx-3090", price_per_hour=Money(0.22, "USD"),
                    offer_set="test")]
    rec = recommend(build_job(w, tokens="100k"), offers, max_gpus=3)
    assert {o.gpus for o in rec.options} <= {1, 2, 3}  # 1 and 2 with layers in host RAM
    assert rec.best.gpus == 3


@pytest.fixture(scope="module")
def _catalog():
    from whichgpu.catalog.gpus import default_catalog
    return default_catalog()


def _catalog_gpu(gpu_id):
    from whichgpu.catalog.gpus import default_catalog
    return default_catalog().get(gpu_id)


# ------------------------------------------- speed and memory on a count the heads do not divide

def test_a_workload_on_three_or_six_cards_takes_the_layout_the_recommender_gives():
    for count, layout in ((3, (1, 3)), (6, (2, 3)), (4, (4, 1))):
        w = build_workload("llama-3.1-70b", quant="awq", engine="vllm", gpus=count)
        assert (w.tp_degree, w.pp_degree, w.dp_degree) == (*layout, 1)
        same = layout_for(build_workload("llama-3.1-70b", quant="awq", engine="vllm"), count)
        assert (same.tp_degree, same.pp_degree) == layout


def test_a_tensor_parallel_degree_the_user_names_is_still_checked():
    from whichgpu.errors import InputError

    with pytest.raises(InputError, match="64 attention heads do not split evenly over 3"):
        build_workload("llama-3.1-70b", quant="awq", engine="vllm", gpus=3, tp=3)


@pytest.mark.parametrize(("count", "tp", "pp"), [(3, 1, 3), (6, 2, 3)])
def test_speed_on_three_or_six_3090s_answers_with_tensor_and_pipeline_stages(cli, count, tp, pp):
    r = cli("speed", "llama-3.1-70b", "--quant", "awq", "--engine", "vllm", "--gpu",
            "rtx-3090", "--count", str(count), "--json")
    assert r.code == 0, r.err
    data = r.json()
    assert (data["tp"], data["pp"]) == (tp, pp)
    assert any(a.startswith(f"layout tp={tp} x pp={pp} on {count} GPUs") for a in
               data["assumptions"])


def test_memory_on_three_3090s_splits_the_weights_over_three_stages(cli):
    one = cli("memory", "llama-3.1-70b", "--quant", "awq", "--engine", "vllm", "--json").json()
    r = cli("memory", "llama-3.1-70b", "--quant", "awq", "--engine", "vllm", "--gpus", "3",
            "--json")
    assert r.code == 0, r.err
    data = r.json()
    assert (data["details"]["tp"], data["details"]["pp"]) == (1, 3)
    weights = next(t for t in data["terms"] if t["name"] == "weights")["bytes"]
    alone = next(t for t in one["terms"] if t["name"] == "weights")["bytes"]
    assert weights == pytest.approx(alone / 3, rel=0.01)
