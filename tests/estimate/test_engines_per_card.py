"""An engine that cannot run on a card is refused or swapped, never priced (issue 14)."""

import pytest

from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.estimate.memory.fit import fits
from whichgpu.estimate.platform import EngineUnavailable, engine_for
from whichgpu.estimate.speed import estimate_speed
from whichgpu.units import Money

CATALOG = default_catalog()


def test_a_named_engine_the_card_cannot_run_is_refused_with_what_runs_instead():
    w = build_workload("llama-3.1-8b", engine="vllm")
    with pytest.raises(EngineUnavailable) as info:
        estimate_speed(w, CATALOG.get("apple-m4-max"))
    assert "vLLM does not run on Apple silicon" in str(info.value)
    assert "llama.cpp, MLX-LM, MLC LLM or transformers (PyTorch) do" in str(info.value)
    with pytest.raises(EngineUnavailable, match="TensorRT-LLM"):
        estimate_speed(build_workload("llama-3.1-8b", engine="trtllm"), CATALOG.get("mi300x"))


def test_a_default_engine_is_swapped_for_one_the_card_runs_and_the_swap_is_said():
    w = build_workload("llama-3.1-8b")  # bf16: vLLM by default
    assert w.engine_name == "vllm"
    est = estimate_speed(w, CATALOG.get("apple-m4-max"))
    assert est.engine == "llamacpp"
    assert "estimated with llama.cpp" in est.assumptions[0]
    swapped, note = engine_for(w, CATALOG.get("gaudi3"))
    assert swapped.engine_name == "vllm" and note is None  # vLLM runs on Gaudi (vllm-gaudi)
    swapped, note = engine_for(build_workload("llama-3.1-8b", quant="q4_k_m"),
                               CATALOG.get("gaudi3"))
    assert swapped.engine_name == "vllm" and "llama.cpp does not run" in note


def test_recommend_excludes_a_card_that_cannot_run_the_named_engine():
    w = build_workload("llama-3.1-8b", engine="vllm")
    offers = [Offer(provider="p", gpu=g, price_per_hour=Money(0.5, "USD"), offer_set="t")
              for g in ("apple-m4-max", "rtx-4090")]
    rec = recommend(build_job(w, tokens="1M"), offers)
    assert {o.gpu.id for o in rec.options} == {"rtx-4090"}
    why = next(e for e in rec.excluded if e.gpu.id == "apple-m4-max")
    assert why.kind == "engine" and "vLLM does not run on Apple silicon" in why.reason


def test_recommend_prices_a_swapped_engine_with_a_note():
    w = build_workload("llama-3.1-8b")
    offers = [Offer(provider="p", gpu="dgx-spark", price_per_hour=Money(0.5, "USD"),
                    offer_set="t"),
              Offer(provider="p", gpu="ryzen-ai-max-395", price_per_hour=Money(0.3, "USD"),
                    offer_set="t")]
    rec = recommend(build_job(w, tokens="1M"), offers)
    strix = next(o for o in rec.options if o.gpu.id == "ryzen-ai-max-395")
    assert strix.speed.engine == "llamacpp" and any("vLLM" in n for n in strix.notes)
    spark = next(o for o in rec.options if o.gpu.id == "dgx-spark")
    assert spark.speed.engine == "vllm"  # CUDA: vLLM runs on DGX Spark


def test_the_fit_list_leaves_out_cards_that_cannot_run_the_named_engine():
    ids = {f.gpu.id for f in fits(build_workload("llama-3.1-8b", engine="vllm"))}
    assert "apple-m4-max" not in ids and "rtx-4090" in ids and "gaudi3" in ids
    ids = {f.gpu.id for f in fits(build_workload("llama-3.1-8b"))}
    assert "apple-m4-max" in ids  # with no engine named, every card is listed


def test_cli_refuses_in_one_line(cli):
    r = cli("speed", "llama-3.1-8b", "--gpu", "m4max", "--engine", "vllm")
    assert r.code == 2 and "llama.cpp, MLX-LM" in r.err and r.out == ""
