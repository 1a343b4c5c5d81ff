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
    from hypothesis import assume

    from whichgpu.catalog.gpus import default_catalog

    assume(default_catalog().engine_problem(get_gpu(gpu), w.engine_name) is None)  # no TRT on AMD
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
    from hypothesis import assume

    from whichgpu.catalog.gpus import default_catalog

    assume(default_catalog().engine_problem(get_gpu(gpu), w.engine_name) is None)  # no TRT on AMD
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
    many = estimate_speed(Workload(LLAMA_31_8B, engine="vllm", batch=512, prompt_tokens=64,
                                   output_tokens=64), g, check_fit=False)
    assert one.bound == "memory-bandwidth"
    assert many.bound == "compute"
    assert many.rates["decode_tokens_per_s"].typical > 20 * \
        one.rates["decode_tokens_per_s"].typical


def test_moe_batches_touch_more_distinct_experts():
    assert expected_distinct_experts(8, 2, 1) == pytest.approx(2)
    assert expected_distinct_experts(8, 2, 1000) == pytest.approx(8)
    assert expected_distinct_experts(128, 8, 4) < expected_distinct_experts(128, 8, 16)


def test_training_reports_the_mfu_it_used():
    est = estimate_speed(Workload(LLAMA_31_8B, task="lora"), get_gpu("h100-sxm"))
    assert 0 < est.scalars["mfu"] < 1 and est.scalars["mfu_assumed"] > 0


# ------------------------------------------------------------------ context, fit, saturation

def test_a_longer_context_slows_decode_because_the_kv_read_grows():
    g = get_gpu("h100-sxm")
    short = estimate_speed(Workload(LLAMA_31_8B, engine="vllm"), g)
    long = estimate_speed(Workload(LLAMA_31_8B, engine="vllm", context=32768), g)
    assert long.scalars["prompt_tokens"] == 32768 - 256
    assert long.scalars["decode_context_tokens"] > 30000
    assert long.rates["decode_tokens_per_s"].typical < \
        0.9 * short.rates["decode_tokens_per_s"].typical


def test_prompt_tokens_win_over_the_context_and_must_fit_in_it():
    from whichgpu.errors import InputError

    g = get_gpu("h100-sxm")
    est = estimate_speed(Workload(LLAMA_31_8B, engine="vllm", context=32768, prompt_tokens=1000,
                                  output_tokens=100), g)
    assert (est.scalars["prompt_tokens"], est.scalars["output_tokens"]) == (1000, 100)
    with pytest.raises(InputError, match="exceed --context"):
        estimate_speed(Workload(LLAMA_31_8B, engine="vllm", context=1000, prompt_tokens=900,
                                output_tokens=200), g)


def test_the_fit_check_uses_the_lengths_the_rates_assume():
    """256 sequences of 512 + 256 tokens fit an H100; the speed is given, as it is with the
    lengths spelt out (the memory estimate no longer assumes 4,096 tokens per sequence)."""
    g = get_gpu("h100-sxm")
    implicit = estimate_speed(Workload(LLAMA_31_8B, engine="vllm", batch=256), g)
    explicit = estimate_speed(Workload(LLAMA_31_8B, engine="vllm", batch=256, prompt_tokens=512,
                                       output_tokens=256), g)
    assert implicit.rates["decode_tokens_per_s"] == explicit.rates["decode_tokens_per_s"]
    with pytest.raises(DoesNotFit):  # and a context that does not fit is still refused
        estimate_speed(Workload(LLAMA_31_8B, engine="vllm", batch=256, context=32768), g)


def test_saturation_reports_the_kv_limit_and_where_decode_turns_compute_bound():
    from whichgpu.estimate.memory.fit import max_concurrency

    g = get_gpu("a100-80gb-sxm")
    w = Workload(LLAMA_31_8B, engine="vllm", prompt_tokens=128, output_tokens=128)
    sat = estimate_speed(w, g).details["saturation"]
    assert sat["kv_limited_batch"] == max_concurrency(w, g, 1, limit=4096)
    cb = sat["compute_bound_batch"]
    assert cb is not None and 1 < cb <= 4096
    from whichgpu.estimate.speed.hardware import hardware
    from whichgpu.estimate.speed.llm import decode_step

    hw = hardware(g)
    before, at = decode_step(w, hw, cb - 1, 192).parts, decode_step(w, hw, cb, 192).parts
    assert before["compute"] < before["memory-bandwidth"]
    assert at["compute"] >= at["memory-bandwidth"]
    assert sat["batch"] == min(cb, sat["kv_limited_batch"])
    assert sat["limited_by"] in ("compute", "kv-memory")
    json = estimate_speed(w, g).to_json()["saturation"]
    assert set(json["output_tokens_per_s"]) == {"low", "typical", "high"}


def test_long_context_serving_saturates_on_kv_memory_before_compute():
    sat = estimate_speed(Workload(LLAMA_31_8B, engine="vllm", context=32768),
                         get_gpu("h100-sxm")).details["saturation"]
    assert sat["limited_by"] == "kv-memory"
    assert sat["batch"] == sat["kv_limited_batch"] < 64


def test_decode_turns_compute_bound_when_batched_short():
    g = get_gpu("a100-80gb-sxm")
    many = estimate_speed(Workload(LLAMA_31_8B, engine="vllm", batch=1024, prompt_tokens=16,
                                   output_tokens=16), g, check_fit=False)
    assert many.bound == "compute"


# ------------------------------------------------------------------ training: framework, totals

def test_the_training_framework_changes_the_mfu_as_its_published_benchmarks_say():
    g = get_gpu("a100-80gb-sxm")
    w = Workload(LLAMA_31_8B, task="lora")
    tps = {f: estimate_speed(w, g, framework=f).rates["tokens_per_s"].typical
           for f in ("transformers", "pytorch", "unsloth")}
    assert tps["transformers"] < tps["pytorch"] < tps["unsloth"]
    assert tps["unsloth"] / tps["transformers"] == pytest.approx(2.0, rel=0.01)  # unsloth docs
    compiled = estimate_speed(w, g, framework="torchtitan", compile=True)
    eager = estimate_speed(w, g, framework="torchtitan")
    assert compiled.rates["tokens_per_s"].typical / eager.rates["tokens_per_s"].typical == \
        pytest.approx(1.16, rel=0.01)  # torchtitan Table 1
    assert compiled.scalars["framework"] == "torchtitan" and compiled.scalars["compile"]


def test_an_unknown_framework_is_bad_input():
    from whichgpu.errors import InputError

    with pytest.raises(InputError, match="unknown training framework"):
        estimate_speed(Workload(LLAMA_31_8B, task="lora"), get_gpu("a100-80gb-sxm"),
                       framework="keras")


def test_total_training_time_from_steps_or_tokens():
    from whichgpu.errors import InputError
    from whichgpu.estimate.speed import with_total

    est = estimate_speed(Workload(LLAMA_31_8B, task="lora"), get_gpu("h100-sxm"))
    by_steps = with_total(est, steps=1000).times["total_s"]
    step = est.times["step_s"]
    assert by_steps.typical == pytest.approx(1000 * step.typical)
    assert by_steps.low == pytest.approx(1000 * step.low)
    tokens = 1000 * est.scalars["tokens_per_step"]
    by_tokens = with_total(est, tokens=tokens)
    assert by_tokens.times["total_s"].typical == pytest.approx(by_steps.typical, rel=1e-6)
    assert by_tokens.scalars["train_steps"] == 1000
    with pytest.raises(InputError):
        with_total(est, steps=10, tokens=1e9)
    inference = estimate_speed(Workload(LLAMA_31_8B), get_gpu("h100-sxm"))
    with pytest.raises(InputError, match="training"):
        with_total(inference, steps=10)


def test_a_slow_link_that_forces_gradient_accumulation_says_so_as_a_warning():
    model = llama_like(layers=24, hidden=896, heads=14, kv_heads=2, intermediate=4864)
    est = estimate_speed(Workload(model, task="full-ft", gpus=4, batch=2, context=2048),
                         get_gpu("rtx-4090"), 4, check_fit=False)
    assert est.scalars["gradient_accumulation"] > 1
    assert any("accumulates gradients" in w_ for w_ in est.warnings)


def test_beyond_one_server_consumer_cards_stay_limited_by_their_pcie_inside_each_server():
    """16 x 4090 is two PCIe servers: scaling cannot beat 8 x 4090 per GPU (the ring crosses
    each server's host-staged PCIe as well as the network)."""
    model = llama_like(layers=24, hidden=896, heads=14, kv_heads=2, intermediate=4864)
    g = get_gpu("rtx-4090")

    def tps(n):
        w = Workload(model, task="full-ft", gpus=n, batch=2, context=2048)
        return estimate_speed(w, g, n, check_fit=False)

    one, eight, sixteen = tps(1), tps(8), tps(16)
    per_gpu = [e.rates["tokens_per_s"].typical / e.count for e in (one, eight, sixteen)]
    assert per_gpu[2] <= per_gpu[1] * 1.001 <= per_gpu[0] * 1.001
    assert "pcie_host" in " ".join(sixteen.assumptions)


# ------------------------------------------------------------------ confidence and bands

def test_confidence_follows_the_calibration_evidence_of_family_and_engine():
    from whichgpu.answers.inputs.workload import build_workload

    def conf(model, gpu="h100-sxm", **kw):
        return estimate_speed(build_workload(model, **kw), get_gpu(gpu)).confidence

    # llama.cpp 4-bit decode: 15 held-out residuals on GDDR cards, 2 on HBM ones (issue 30:
    # the data-centre range is wider; the label follows its width, label_for, capped at medium
    # by the HBM group's thin evidence, evidence_cap)
    from whichgpu.estimate.speed.result import LEVELS, evidence, evidence_cap, label_for

    def capped(width, key):
        label = label_for(width, 2)
        return LEVELS[min(LEVELS.index(label), evidence_cap(key, None)[0])]

    def width(gpu):
        est = estimate_speed(build_workload("llama-3.1-8b", quant="q4_k_m", engine="llamacpp"),
                             get_gpu(gpu))
        r = est.rates["decode_tokens_per_s"]
        return r.high / r.low

    assert conf("llama-3.1-8b", "rtx-4090", quant="q4_k_m", engine="llamacpp") == "high"
    assert width("h100-sxm") > width("rtx-4090")
    assert conf("llama-3.1-8b", quant="q4_k_m", engine="llamacpp") == capped(
        width("h100-sxm"), "decode/llamacpp/HBM/4bit")
    assert conf("qwen-image", task="image") == "low"  # no Qwen-Image row at all
    assert conf("hidream-i1", task="image") == "low"
    # SDXL has calibration rows on diffusers: the evidence is high, and the label follows the
    # width of the range it is given (estimate/speed/result.label_for), capped by the rows of
    # its own range group (evidence_cap)
    assert evidence("diffusion", "StableDiffusionXLPipeline", "diffusers")[0] == 2
    est = estimate_speed(build_workload("sdxl", task="image"), get_gpu("h100-sxm"))
    r = est.times["seconds_per_image"]
    assert est.confidence == capped(r.high / r.low, "diffusion/diffusers/HBM/16bit")


def test_video_gets_low_confidence_and_the_widest_band():
    from whichgpu.answers.inputs.workload import build_workload

    est = estimate_speed(build_workload("wan-2.2-14b", task="video"), get_gpu("h200-sxm"),
                         check_fit=False)
    # video's band is the widest (its cross-validated error, make calibrate): never high
    r = est.times["seconds_per_video"]
    assert est.confidence != "high" and r.high / r.low > 2
    image = estimate_speed(build_workload("sdxl", task="image"), get_gpu("h200-sxm"),
                           check_fit=False)
    ri = image.times["seconds_per_image"]
    assert r.high / r.low > ri.high / ri.low


def test_bands_come_from_the_calibrated_error_per_category_and_widen_without_evidence():
    from whichgpu.estimate.constants import speed_value
    from whichgpu.estimate.speed.result import band

    lo, hi = speed_value("band_ratios")["decode"]
    high = band(100.0, "high", category="decode")
    assert (high.low, high.high) == pytest.approx((100 * min(lo, 1), 100 * max(hi, 1)))
    low = band(100.0, "low", category="decode")
    assert low.low < high.low and low.high > high.high
    t = band(2.0, "high", inverse=True, category="decode")
    assert t.low == pytest.approx(2.0 / max(hi, 1)) and t.high == pytest.approx(2.0 / min(lo, 1))


def test_a_profile_counts_only_for_the_gpu_it_measured():
    class Profile:
        def scales_for(self, gpu_id, a, b):
            return (0.9, 0.9) if gpu_id == "h100-sxm" else (1.0, 1.0)

        def link_for(self, gpu_id, count):
            return None

        def entries(self, gpu_id):
            return [{}] if gpu_id == "h100-sxm" else []

        def describe(self):
            return "test profile"

    w = Workload(LLAMA_31_8B, engine="vllm")
    other = estimate_speed(w, get_gpu("a100-80gb-sxm"), profile=Profile())
    assert other.calibration is None
    assert other.to_json() == estimate_speed(w, get_gpu("a100-80gb-sxm")).to_json()
    measured = estimate_speed(w, get_gpu("h100-sxm"), profile=Profile())
    assert measured.calibration == "test profile"


# ------------------------------------------------------------------ properties beyond LLMs

DIFFUSION = ["sdxl", "flux.1-dev", "sd-1.5"]


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(DIFFUSION), st.sampled_from(GPUS), st.floats(1.0, 4.0),
       st.sampled_from([512, 768, 1024]), st.integers(1, 4))
def test_diffusion_never_slows_down_with_more_compute_and_ranges_are_ordered(
        model, gpu, factor, side, batch):
    from whichgpu.answers.inputs.workload import build_workload

    w = build_workload(model, task="image", resolution=f"{side}x{side}", batch=batch)
    base = estimate_speed(w, get_gpu(gpu), check_fit=False)
    faster = estimate_speed(w, scaled(gpu, compute=factor), check_fit=False)
    assert faster.rates["images_per_min"].typical >= \
        base.rates["images_per_min"].typical * (1 - 1e-9)
    for r in [*base.rates.values(), *base.times.values()]:
        assert 0 < r.low <= r.typical <= r.high
    assert base.bound in BOUNDS


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["mixtral-8x7b", "qwen3-30b-a3b"]), st.sampled_from(GPUS),
       st.integers(1, 64), st.floats(1.0, 4.0))
def test_moe_decode_never_slows_down_with_more_bandwidth_and_batches_read_more_experts(
        model, gpu, batch, factor):
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.estimate.speed.llm import streamed_weight_bytes

    w = build_workload(model, engine="vllm", batch=batch)
    base = estimate_speed(w, get_gpu(gpu), check_fit=False)
    faster = estimate_speed(w, scaled(gpu, bandwidth=factor), check_fit=False)
    assert faster.rates["decode_tokens_per_s"].typical >= \
        base.rates["decode_tokens_per_s"].typical * (1 - 1e-9)
    assert streamed_weight_bytes(w, batch)[0] >= streamed_weight_bytes(w, 1)[0]
    for r in base.rates.values():
        assert 0 < r.low <= r.typical <= r.high


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["h100-sxm", "a100-80gb-sxm", "rtx-4090", "l40s"]),
       st.sampled_from([2, 4, 8]), st.floats(1.0, 4.0))
def test_tensor_parallel_inference_is_monotonic_in_hardware_and_ordered(gpu, count, factor):
    w = Workload(LLAMA_31_8B, engine="vllm", gpus=count, batch=8)
    base = estimate_speed(w, get_gpu(gpu), count, check_fit=False)
    assert base.scalars["tp"] == count
    for faster in (scaled(gpu, bandwidth=factor), scaled(gpu, compute=factor)):
        est = estimate_speed(w, faster, count, check_fit=False)
        for name, r in est.rates.items():
            assert r.typical >= base.rates[name].typical * (1 - 1e-9), name
    for r in [*base.rates.values(), *base.times.values()]:
        assert 0 < r.low <= r.typical <= r.high


def test_saturation_can_be_skipped_where_only_the_rates_are_wanted():
    w = Workload(LLAMA_31_8B, engine="vllm", batch=8)
    g = get_gpu("h100-sxm")
    full, quick = estimate_speed(w, g), estimate_speed(w, g, saturation=False)
    assert "saturation" in full.to_json() and "saturation" not in quick.to_json()
    assert full.rates == quick.rates
