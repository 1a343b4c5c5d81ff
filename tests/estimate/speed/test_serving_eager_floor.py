"""A replica run without CUDA graphs waits for the host to dispatch every layer's kernels:
no step is shorter than layers x serving_eager_dispatch_per_layer_ms (0.8 ms, aiconfigurator's
CPU dispatch cost per layer). dstack's TensorRT-LLM 0.17 PyTorch-flow DeepSeek-R1 runs (no CUDA
graphs by that flow's default) decode at concurrency 8 in 56 ms per token, which the GPU time
alone (about 15 ms) put 75 % low; at concurrency 64 and 128 the GPU time hides the dispatch."""

from __future__ import annotations

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.speed.serving_engine import engine_config
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def _model(cuda_graphs: bool) -> ServingModel:
    w = Workload(resolve_model("llama-3.1-8b"), engine="vllm", prompt_tokens=1000,
                 output_tokens=200)
    gpu = get_gpu("h100-sxm")
    cfg = engine_config(w, gpu).with_(cuda_graphs=cuda_graphs)
    return ServingModel(w, gpu, config=cfg)


def test_an_eager_step_is_never_shorter_than_the_hosts_dispatch():
    graphs, eager = _model(True), _model(False)
    floor = 32 * 0.8e-3  # Llama 3.1 8B: 32 layers
    assert eager.steps.eager_floor_s == pytest.approx(floor)
    assert graphs.steps.eager_floor_s == 0.0
    assert graphs.steps.decode(1.0) < floor  # one sequence: the GPU is faster than the host
    assert eager.steps.decode(1.0) == pytest.approx(floor)
    big = graphs.steps.decode(4096.0)  # a step whose GPU time passes the dispatch is unchanged
    assert big > floor and eager.steps.decode(4096.0) == pytest.approx(big)


def test_dstacks_eager_tensorrt_llm_rows_come_within_reach():
    """Concurrency-8 TPOT: 75 % low with the GPU time alone, within 20 % with the floor; the
    concurrency-64 and 128 runs stay where the GPU time put them."""
    from whichgpu.estimate.validation import default_path, read_rows
    from whichgpu.estimate.validation import serving as vs

    rows = [r for r in read_rows(default_path("serving"))
            if r["group"].startswith("dstack-dsr1-h200-trtllm-")
            and r["metric"] == "tpot_ms_mean"]
    assert all(vs.settings(r).get("cuda_graphs") == "false" for r in rows)
    errors = {o.id: o.error for o in vs.evaluate_rows(rows)}
    assert abs(errors["srv-dstack-dsr1-h200-trtllm-c8-tpot-mean"]) < 0.20
    assert abs(errors["srv-dstack-dsr1-h200-trtllm-c64-tpot-mean"]) < 0.25
