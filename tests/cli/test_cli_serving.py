"""``speed --max-throughput`` (and its REST twin), and the speed command's serving numbers
coming from the continuous-batching model."""

from __future__ import annotations

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model

BOUNDS = {"compute", "kv-capacity", "max-num-seqs", "token-budget"}


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_max_throughput_gives_a_range_the_batch_and_what_bounds_it(cli, engine):
    res = cli("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", engine,
              "--prompt-tokens", "1000", "--output-tokens", "200", "--max-throughput", "--json")
    assert res.code == 0, res.err
    d = res.json()
    r = d["throughput_tokens_per_s"]
    assert 0 < r["low"] < r["typical"] < r["high"]
    assert d["bound"] in BOUNDS and d["limited_by"] in BOUNDS - {"compute"}
    assert 1 <= d["batch"] <= d["kv_capacity"]["sequences"]
    assert d["batch"] <= d["engine"]["max_num_seqs"]
    assert d["requests_per_s"]["typical"] == pytest.approx(r["typical"] / 200, rel=1e-5)


def test_a_long_context_is_bounded_by_the_kv_cache(cli):
    d = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "vllm",
            "--prompt-tokens", "8000", "--output-tokens", "500", "--max-throughput",
            "--json").json()
    assert d["bound"] == "kv-capacity" and d["batch"] < 16


def test_more_gpu_memory_means_more_max_throughput(cli):
    def tput(gpu: str) -> float:
        return cli("speed", "llama-3.1-70b", "--gpu", gpu, "--count", "4", "--engine", "vllm",
                   "--max-throughput", "--json").json()["throughput_tokens_per_s"]["typical"]

    assert tput("h200-sxm") > tput("h100-sxm")


def test_max_throughput_is_for_serving_engines_and_models_that_fit(cli):
    res = cli("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "llamacpp",
              "--quant", "q4_k_m", "--max-throughput")
    assert res.code == 2 and "serving engines" in res.err
    res = cli("speed", "llama-3.1-70b", "--gpu", "rtx-4090", "--engine", "vllm",
              "--max-throughput")
    assert res.code == 2 and "does not fit" in res.err


def test_the_rest_api_gives_the_clis_max_throughput(web, cli):
    from web_parity import same_as_cli

    same_as_cli(web, cli, "/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&engine=sglang"
                "&max_throughput=true", "speed", "llama-3.1-8b", "--gpu", "h100-sxm",
                "--engine", "sglang", "--max-throughput")


def test_speed_output_tokens_per_s_is_the_serving_models_closed_loop():
    w = Workload(resolve_model("llama-3.1-8b"), engine="vllm", batch=64, prompt_tokens=512,
                 output_tokens=256)
    gpu = get_gpu("h100-sxm")
    est = estimate_speed(w, gpu, saturation=False)
    served = ServingModel(est_workload(w), gpu).at_concurrency(64)
    assert est.rates["output_tokens_per_s"].typical == pytest.approx(
        served.output_tokens_per_s)
    assert any("continuous batching" in a for a in est.assumptions)


def est_workload(w: Workload) -> Workload:
    """The workload as estimate_speed holds it (context = prompt + output)."""
    return w.with_(context=(w.prompt_tokens or 0) + (w.output_tokens or 0))


def test_other_engines_keep_the_wave_formula():
    w = Workload(resolve_model("llama-3.1-8b"), engine="transformers", batch=8,
                 prompt_tokens=512, output_tokens=256)
    est = estimate_speed(w, get_gpu("h100-sxm"), saturation=False)
    assert not any("continuous batching" in a for a in est.assumptions)
