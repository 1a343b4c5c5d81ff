"""The articles' speed figures (S23, S25, S28) from the speed model, on the real presets.

Where the article's range and our measured-calibrated estimate disagree, the test says how
(see the README's validation section): the model follows published measurements first.
"""

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
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


def _seconds(w, gpu):
    return speed(w, gpu).times["seconds_per_image"].typical


def test_s25_flux_fp8_h100_follows_the_measured_eager_h100():
    """The article's 8-12 images/min and the published eager H100 runs agree: xDiT 6.71 s and
    BenchmarkFlux 7.11 s for FLUX.1-dev at 28 steps (rows img-xdit-flux-h100-eager,
    img-flux-dev-h100-bf16); our 28-step time is within 15 % of both, and the 20-step rate
    sits at the article's top (within 5 %)."""
    w28 = build_workload("flux.1-dev", task="image", quant="fp8", steps=28)
    for measured in (6.71, 7.11):
        assert _seconds(w28, "h100-sxm") == pytest.approx(measured, rel=0.15)
    low, high = FLUX_RANGES["h100-sxm"]
    r = flux_fp8("h100-sxm").rates["images_per_min"]
    assert low <= r.typical <= high * 1.05
    assert r.low <= high and r.high >= low


def test_s25_flux_fp8_4090_comfyui_is_inside_the_article_and_the_measured_rate():
    """ComfyUI runs FP8 checkpoints in 16-bit on a 4090 (at the GeForce FP32-accumulate half
    rate): the BFL reference code with FP8 weights measured 1.70 it/s at 1024x1024
    (img-ared-flux-4090-bfl-fp8wo-1024, 21 % above us; its 768x768 twin is within 4 %); our
    step rate is within 25 % of it and the 20-step images/min at the article's 4-6 (the low
    end, within 10 %; README, where we differ)."""
    est = flux_fp8("rtx-4090")
    assert est.rates["it_per_s"].typical == pytest.approx(1.70, rel=0.25)
    low, high = FLUX_RANGES["rtx-4090"]
    r = est.rates["images_per_min"]
    assert 0.9 * low <= r.typical <= high and r.high >= low


def test_s25_flux_a100_sits_above_the_articles_range_as_the_measurement_does():
    """A documented deviation (README, where we differ): the published A100 measurement is
    above the article's 3-5 images/min and inside our range; our typical is above it too
    (the eager DiT efficiency is fitted on H100, GeForce and video rows; the A100 row is a
    holdout 31 % slower than we say)."""
    high = FLUX_RANGES["a100-80gb-sxm"][1]
    r = flux_fp8("a100-80gb-sxm").rates["images_per_min"]
    # BenchmarkFlux (validation row img-flux-dev-a100-bf16): 15.65 s for 28 steps in bf16
    # (the A100 has no FP8): at 20 steps at least 60 / (15.65 x 20 / 28) = 5.4 images/min
    measured_at_20_steps = 60 / (15.65 * 20 / 28)
    assert measured_at_20_steps > high
    assert r.low <= measured_at_20_steps <= r.high
    assert high < r.typical <= 1.45 * high


def test_s25_fp8_flux_runs_its_matmuls_in_16_bit_without_compile():
    """Measured: FP8 weights give no speed in eager pipelines (pollinations: 1.96 s vs 1.54 s
    bf16 on an H100 PCIe), so the A100's missing FP8 costs it nothing extra here (S24)."""
    w = build_workload("flux.1-dev", task="image", quant="fp8", steps=20)
    a100, h100 = speed(w, "a100-80gb-sxm"), speed(w, "h100-sxm")
    assert a100.precision == "bf16" and h100.precision == "bf16"
    bf16 = speed(w.with_(quant="bf16"), "h100-sxm").rates["images_per_min"].typical
    # no faster than bf16: the eager cast of the FP8 weights costs a little (HF blog, H100:
    # 12 s in bf16, 13 s with FP8 layerwise casting, 15 s with torchao float8 weight-only)
    assert 0.85 * bf16 <= h100.rates["images_per_min"].typical <= bf16
    compiled = estimate_speed(w, get_gpu("h100-sxm"), compile=True)
    assert compiled.precision == "fp8"
    assert compiled.rates["images_per_min"].typical > bf16


def test_s25_the_h100_makes_flux_images_fastest():
    rates = {g: flux_fp8(g).rates["images_per_min"].typical for g in FLUX_RANGES}
    assert max(rates, key=rates.get) == "h100-sxm"
    # S25: H100 ~2x the 4090; measured step rates say 2.5 (xDiT H100 eager 28 steps in 6.71 s,
    # about 4.2 it/s, against the 4090's 1.70 it/s), and the 4090 adds its model offload
    assert 1.5 <= rates["h100-sxm"] / rates["rtx-4090"] <= 3.0


LORA_HOURS = {"rtx-4090": (1, 2.5), "a100-80gb-sxm": (1, 2), "h100-sxm": (0.5, 1)}


@pytest.mark.parametrize("gpu", LORA_HOURS)
def test_s25_flux_lora_2000_steps_typical_hours_inside_the_articles_range(gpu):
    """FLUX.1-dev LoRA, 2,000 steps (S25): an fp8 base so that it fits the 4090."""
    quant = "fp8" if gpu == "rtx-4090" else None
    est = with_total(speed(build_workload("flux.1-dev", task="image-lora", quant=quant), gpu),
                     steps=2000)
    low, high = LORA_HOURS[gpu]
    total = est.times["total_s"]
    if gpu == "a100-80gb-sxm":
        low *= 0.9  # README, where we differ: 0.9-1 h, just under the article's 1-2 h
    assert low <= total.typical / 3600 <= high
    assert total.low < total.typical < total.high
    assert est.confidence == "low"  # no FLUX training row calibrates it


def test_s25_flux_lora_on_the_h100_gains_its_peak_times_the_hopper_training_factor():
    """The H100's 3.2x dense peak over the A100 is cut by the Hopper training factor (fitted
    on the LLM training rows), as for LLM training: not 3.2x faster."""
    from whichgpu.estimate.constants import per_key

    w = build_workload("flux.1-dev", task="image-lora")
    a100, h100 = speed(w, "a100-80gb-sxm"), speed(w, "h100-sxm")
    from whichgpu.estimate.speed.sustained import sustained_fraction

    ratio = a100.times["step_s"].typical / h100.times["step_s"].typical
    h, a = get_gpu("h100-sxm"), get_gpu("a100-80gb-sxm")
    peaks = (h.tflops("bf16") * sustained_fraction(h)[0]) / (
        a.tflops("bf16") * sustained_fraction(a)[0])
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
