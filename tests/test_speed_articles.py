"""The articles' speed figures (S23, S25, S28) from the speed model, on the real presets.

Where the article's range and our measured-calibrated estimate disagree, the test says how
(see the README's validation section): the model follows published measurements first.
"""

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.build import build_workload
from whichgpu.estimate.memory.fit import max_concurrency
from whichgpu.estimate.speed import DoesNotFit, estimate_speed, with_total


def speed(w, gpu, count=1):
    return estimate_speed(w, get_gpu(gpu), count)


def seventy_b(engine="llamacpp", quant="q4_k_m"):
    return build_workload("llama-3.1-70b", quant=quant, engine=engine, prompt_tokens="512",
                          output_tokens="512")


@pytest.mark.parametrize(("gpu", "low", "high"), [("a100-80gb-sxm", 25, 35),
                                                  ("h100-sxm", 35, 50)])
def test_s25_70b_4bit_single_user_tokens_per_s(gpu, low, high):
    rate = speed(seventy_b(), gpu).rates["decode_tokens_per_s_per_sequence"]
    assert low <= rate.typical <= high


def test_s25_70b_4bit_does_not_fit_a_4090():
    with pytest.raises(DoesNotFit, match="rtx-4090"):
        speed(seventy_b(), "rtx-4090")


@pytest.mark.parametrize(("gpu", "low", "high"), [("a100-80gb-sxm", 300, 700),
                                                  ("h100-sxm", 600, 1500)])
def test_s25_70b_4bit_batched_vllm_tokens_per_s(gpu, low, high):
    w = seventy_b("vllm", "awq")
    batch = max_concurrency(w, get_gpu(gpu), 1, limit=256)
    rate = speed(w.with_(batch=batch), gpu).rates["output_tokens_per_s"]
    assert low <= rate.typical <= high


def test_s25_h100_finishes_the_batched_million_tokens_about_twice_as_fast_as_a100():
    w = seventy_b("vllm", "awq")
    rates = {}
    for gpu in ("a100-80gb-sxm", "h100-sxm"):
        batch = max_concurrency(w, get_gpu(gpu), 1, limit=256)
        rates[gpu] = speed(w.with_(batch=batch), gpu).rates["output_tokens_per_s"].typical
    assert 1.5 <= rates["h100-sxm"] / rates["a100-80gb-sxm"] <= 2.5


FLUX_RANGES = {"rtx-4090": (4, 6), "a100-80gb-sxm": (3, 5), "h100-sxm": (8, 12)}


def flux_fp8(gpu):
    """1,000 FLUX.1-dev images in fp8 at 20 steps (S25): ComfyUI on the 4090 (its GeForce
    FP16-accumulate path; T5 and the denoiser take turns in 24 GB), diffusers elsewhere."""
    if gpu == "rtx-4090":
        w = build_workload("flux.1-dev", task="image", quant="fp8", steps=20, engine="comfyui",
                           offload="model")
    else:
        w = build_workload("flux.1-dev", task="image", quant="fp8", steps=20)
    return speed(w, gpu)


def test_s25_flux_fp8_h100_images_per_min_typical_is_inside_the_articles_range():
    low, high = FLUX_RANGES["h100-sxm"]
    assert low <= flux_fp8("h100-sxm").rates["images_per_min"].typical <= high


def test_s25_flux_fp8_4090_typical_is_at_the_top_of_the_articles_range():
    """Inside the article's 4-6 images/min or above it by under 10 % (the fitted DiT
    efficiency moves it across the top: 0.85 since SD 3.5 Medium's calibration row counts)."""
    low, high = FLUX_RANGES["rtx-4090"]
    r = flux_fp8("rtx-4090").rates["images_per_min"]
    assert 0.9 * high <= r.typical <= 1.10 * high
    assert r.low <= high and r.high >= low


@pytest.mark.parametrize(("gpu", "most"), [("a100-80gb-sxm", 1.35)])
def test_s25_flux_fp8_a100_sits_above_the_articles_range_as_measurements_do(gpu, most):
    """A documented deviation (README, where we differ): our typical lies above the article's
    top (A100 by under 35 %), our range overlaps the article's, and the published A100
    measurement the model follows is inside our range."""
    high = FLUX_RANGES[gpu][1]
    r = flux_fp8(gpu).rates["images_per_min"]
    assert high < r.typical <= most * high
    assert r.low <= high
    if gpu == "a100-80gb-sxm":
        # BenchmarkFlux (validation row img-flux-dev-a100-bf16): 15.65 s for 28 steps in bf16
        # (the A100 has no FP8): at 20 steps at least 60 / (15.65 x 20 / 28) = 5.4 images/min,
        # above the article's 3-5 too
        measured_at_20_steps = 60 / (15.65 * 20 / 28)
        assert measured_at_20_steps > high
        assert r.low <= measured_at_20_steps <= r.high


def test_s25_fp8_flux_runs_its_matmuls_in_16_bit_without_compile():
    """Measured: FP8 weights give no speed in eager pipelines (pollinations: 1.96 s vs 1.54 s
    bf16 on an H100 PCIe), so the A100's missing FP8 costs it nothing extra here (S24)."""
    w = build_workload("flux.1-dev", task="image", quant="fp8", steps=20)
    a100, h100 = speed(w, "a100-80gb-sxm"), speed(w, "h100-sxm")
    assert a100.precision == "bf16" and h100.precision == "bf16"
    bf16 = speed(w.with_(quant="bf16"), "h100-sxm").rates["images_per_min"].typical
    assert h100.rates["images_per_min"].typical == pytest.approx(bf16, rel=0.02)
    compiled = estimate_speed(w, get_gpu("h100-sxm"), compile=True)
    assert compiled.precision == "fp8"
    assert compiled.rates["images_per_min"].typical > bf16


def test_s25_the_h100_makes_flux_images_fastest():
    rates = {g: flux_fp8(g).rates["images_per_min"].typical for g in FLUX_RANGES}
    assert max(rates, key=rates.get) == "h100-sxm"
    assert 1.5 <= rates["h100-sxm"] / rates["rtx-4090"] <= 2.5  # S25: H100 ~2x the 4090


LORA_HOURS = {"rtx-4090": (1, 2.5), "a100-80gb-sxm": (1, 2), "h100-sxm": (0.5, 1)}


@pytest.mark.parametrize("gpu", LORA_HOURS)
def test_s25_flux_lora_2000_steps_typical_hours_inside_the_articles_range(gpu):
    """FLUX.1-dev LoRA, 2,000 steps (S25): an fp8 base so that it fits the 4090."""
    quant = "fp8" if gpu == "rtx-4090" else None
    est = with_total(speed(build_workload("flux.1-dev", task="image-lora", quant=quant), gpu),
                     steps=2000)
    low, high = LORA_HOURS[gpu]
    total = est.times["total_s"]
    assert low <= total.typical / 3600 <= high
    assert total.low < total.typical < total.high
    assert est.confidence == "low"  # no FLUX training row calibrates it


def test_s25_flux_lora_on_the_h100_gains_its_peak_times_the_hopper_training_factor():
    """The H100's 3.2x dense peak over the A100 is cut by the Hopper training factor (fitted
    on the LLM training rows), as for LLM training: not 3.2x faster."""
    from whichgpu.estimate.constants import per_key

    w = build_workload("flux.1-dev", task="image-lora")
    a100, h100 = speed(w, "a100-80gb-sxm"), speed(w, "h100-sxm")
    ratio = a100.times["step_s"].typical / h100.times["step_s"].typical
    peaks = get_gpu("h100-sxm").tflops("bf16") / get_gpu("a100-80gb-sxm").tflops("bf16")
    assert ratio == pytest.approx(peaks * per_key("compute_arch_factor", "Hopper"), rel=0.01)
    assert ratio < 2.5


def test_s23_h100_generates_about_three_times_faster_than_a_4090():
    w = build_workload("qwen2.5-32b", quant="awq", engine="vllm")
    ratio = (speed(w, "h100-sxm").rates["decode_tokens_per_s_per_sequence"].typical
             / speed(w, "rtx-4090").rates["decode_tokens_per_s_per_sequence"].typical)
    assert 2.4 <= ratio <= 3.5  # bandwidth ratio 3.3, minus fixed per-token costs


def test_s23_llamacpp_reaches_only_about_twice_the_4090_on_an_h100():
    """A documented deviation (README): llama.cpp on HBM data-centre cards hits a per-token
    floor (decode_fixed_ms llamacpp/HBM, fitted on the XiongjieDai rows: 7B q4_0 runs at 136
    t/s on an A100 and 134 on an H100 PCIe, below the 4090's 149), so S23's 3x holds for
    vLLM, TensorRT-LLM and ExLlamaV2, not for llama.cpp."""
    w = build_workload("qwen2.5-32b", quant="q4_k_m", engine="llamacpp")
    ratio = (speed(w, "h100-sxm").rates["decode_tokens_per_s_per_sequence"].typical
             / speed(w, "rtx-4090").rates["decode_tokens_per_s_per_sequence"].typical)
    assert 1.6 <= ratio < 2.4


def _scaling(model, gpu, count):
    kw = dict(task="full-ft", context="2k", batch=2, gradient_checkpointing=True)
    one = speed(build_workload(model, **kw), gpu).rates["tokens_per_s"].typical
    many = speed(build_workload(model, gpus=count, **kw), gpu, count)
    return many.rates["tokens_per_s"].typical / one, many


def test_s28_four_4090s_without_peer_to_peer_train_like_two_or_three():
    speedup, est = _scaling("qwen2.5-0.5b", "rtx-4090", 4)
    assert est.scalars["link"] == "pcie_host"
    assert 2.0 <= speedup <= 3.0


def test_s28_eight_sxm_gpus_over_nvlink_get_much_closer_to_eight():
    speedup, est = _scaling("qwen2.5-0.5b", "h100-sxm", 8)
    assert est.scalars["link"] == "nvlink"
    assert speedup >= 7.0


def test_s28_inference_split_across_consumer_cards_is_fine():
    w = build_workload("llama-3.1-70b", quant="q4_k_m", engine="llamacpp", prompt_tokens="512",
                       output_tokens="256")
    two = speed(w.with_(gpus=2), "rtx-4090", 2)
    h100 = speed(w, "h100-sxm")
    # a layer split over PCIe keeps one card's bandwidth: slower than an H100, but usable
    assert 10 <= two.rates["decode_tokens_per_s_per_sequence"].typical < \
        h100.rates["decode_tokens_per_s_per_sequence"].typical
