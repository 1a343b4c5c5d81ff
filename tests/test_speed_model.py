"""The speed model's behaviour: monotonic in hardware, honest ranges, no speed without a fit."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specs import LLAMA_31_8B, llama_like
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed import DoesNotFit, estimate_speed
from whichgpu.estimate.speed.hardware import compute_precision
from whichgpu.estimate.speed.llm import expected_distinct_experts
from whichgpu.estimate.speed.result import BOUNDS
from whichgpu.estimate.workload import Workload
from whichgpu.models.quant import get_quant

GPUS = ["rtx-4090", "rtx-3090", "l40s", "a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x"]
TASKS = ["inference", "lora", "full-ft"]


def scaled(gpu_id: str, *, bandwidth: float = 1.0, compute: float = 1.0):
    """A copy of a catalog GPU with more (or less) bandwidth or compute."""
    g = get_gpu(gpu_id)
    bw = g.bandwidth_gb_s.model_copy(update={"value": float(g.bandwidth_gb_s.value) * bandwidth})
    tp = {k: (t.model_copy(update={"tflops": t.tflops * compute}) if t.tflops else t)
          for k, t in g.throughput.items()}
    return g.model_copy(update={"bandwidth_gb_s": bw, "throughput": tp})


def rates(est):
    return list(est.rates.values())


workloads = st.builds(
    lambda task, batch, ctx, engine: Workload(
        LLAMA_31_8B, task=task, batch=batch, context=ctx,
        engine=engine if task == "inference" else None),
    st.sampled_from(TASKS), st.integers(1, 64), st.sampled_from([512, 2048, 8192]),
    st.sampled_from(["vllm", "llamacpp", "transformers", "trtllm"]))


@settings(max_examples=40, deadline=None)
@given(workloads, st.sampled_from(GPUS), st.floats(1.0, 4.0))
def test_more_bandwidth_or_compute_never_makes_a_job_slower(w, gpu, factor):
    base = estimate_speed(w, get_gpu(gpu), check_fit=False)
    for faster in (scaled(gpu, bandwidth=factor), scaled(gpu, compute=factor)):
        est = estimate_speed(w, faster, check_fit=False)
        for name, r in est.rates.items():
            assert r.typical >= base.rates[name].typical * (1 - 1e-9), name


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["lora", "full-ft", "pretrain"]), st.sampled_from(GPUS),
       st.integers(1, 8))
def test_more_gpus_never_lower_data_parallel_throughput(task, gpu, batch):
    model = llama_like(layers=8, hidden=1024, heads=8, kv_heads=4, intermediate=4096)
    previous = 0.0
    for count in (1, 2, 4, 8):
        w = Workload(model, task=task, batch=batch, gpus=count, context=1024)
        tps = estimate_speed(w, get_gpu(gpu), count, check_fit=False).rates["tokens_per_s"]
        assert tps.typical >= previous
        previous = tps.typical


@settings(max_examples=40, deadline=None)
@given(workloads, st.sampled_from(GPUS))
def test_every_range_is_ordered_and_the_bound_is_named(w, gpu):
    est = estimate_speed(w, get_gpu(gpu), check_fit=False)
    for r in [*rates(est), *est.times.values()]:
        assert 0 < r.low <= r.typical <= r.high
    assert est.bound in BOUNDS and est.confidence in ("low", "medium", "high")


def test_a_gpu_that_cannot_hold_the_job_gets_no_speed():
    w = Workload(llama_like(name="big", layers=80, hidden=8192, heads=64, intermediate=28672),
                 quant="bf16", engine="vllm")
    with pytest.raises(DoesNotFit, match="does not fit on rtx-4090"):
        estimate_speed(w, get_gpu("rtx-4090"))


def test_weight_only_quantization_cuts_bytes_not_compute_precision():
    g = get_gpu("h100-sxm")
    assert compute_precision(g, get_quant("awq"))[0] == "bf16"
    assert compute_precision(g, get_quant("fp8"))[0] == "fp8"


def test_fp8_computes_in_16_bit_on_the_a100():
    precision, why = compute_precision(get_gpu("a100-80gb-sxm"), get_quant("fp8"))
    assert precision == "bf16" and "no FP8" in why


def test_geforce_llamacpp_uses_the_fp16_accumulate_rate():
    assert compute_precision(get_gpu("rtx-4090"), get_quant("q4_k_m"), "llamacpp")[0] == \
        "fp16_acc16"
    assert compute_precision(get_gpu("rtx-4090"), get_quant("bf16"), "vllm")[0] == "bf16"


def test_decode_is_bandwidth_bound_at_batch_one_and_compute_bound_when_batched():
    g = get_gpu("a100-80gb-sxm")
    one = estimate_speed(Workload(LLAMA_31_8B, engine="vllm"), g)
    many = estimate_speed(Workload(LLAMA_31_8B, engine="vllm", batch=512, context=1024), g,
                          check_fit=False)
    assert one.bound == "memory-bandwidth"
    assert many.rates["decode_tokens_per_s"].typical > 20 * \
        one.rates["decode_tokens_per_s"].typical


def test_moe_batches_touch_more_distinct_experts():
    assert expected_distinct_experts(8, 2, 1) == pytest.approx(2)
    assert expected_distinct_experts(8, 2, 1000) == pytest.approx(8)
    assert expected_distinct_experts(128, 8, 4) < expected_distinct_experts(128, 8, 16)


def test_training_reports_the_mfu_it_used():
    est = estimate_speed(Workload(LLAMA_31_8B, task="lora"), get_gpu("h100-sxm"))
    assert 0 < est.scalars["mfu"] < 1 and est.scalars["mfu_assumed"] > 0
