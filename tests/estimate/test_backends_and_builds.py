"""llama.cpp's backends (Metal, Vulkan, HIP), MLX, Unsloth's Dynamic 2.0 files, kernels that
arrived in a given build, and prefill's per-micro-batch weight reads (issue 15, after the
merges): each test fails if the phenomenon it names comes back."""

import csv

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.platform import EngineUnavailable, engine_for
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.kernels import kernel, version_label
from whichgpu.estimate.speed.llm import constants_key, llamacpp_backend
from whichgpu.estimate.validation import default_path
from whichgpu.estimate.validation.memory import run as run_memory
from whichgpu.estimate.validation.rows import workload_of
from whichgpu.estimate.validation.speed import predict
from whichgpu.models import resolve_model
from whichgpu.models.gguf_recipe import recipe
from whichgpu.models.quant import get_quant
from whichgpu.units import parse_engine_version


def _rows():
    with default_path("speed").open(newline="", encoding="utf-8") as fh:
        return {r["id"]: r for r in csv.DictReader(fh)}


def _prefill(est):
    return est.rates["prefill_tokens_per_s"].typical


# ------------------------------------------------------------------ DGX Spark, builds


def test_dgx_spark_has_an_int8_and_fp32_rate_so_mmq_is_not_priced_at_bf16():
    """The GB10's catalog entry had no int8 figure, so llama.cpp's MMQ prefill fell back to
    its 62.5 bf16 TFLOPS and came out 2-5x slow (Qwen2.5-Coder 7B Q8_0 -51 %, Qwen3-Coder
    30B -82 %); with its GeForce-ratio int8 and its FP32 rate the rows come within reach."""
    spark = get_gpu("dgx-spark")
    assert spark.tflops("int8") == 250 and spark.tflops("fp32") == pytest.approx(29.71)
    hw = hardware(spark)
    # above 2x even at the GB10's fitted mma_sync_rate_factor (0.65 of its boost-clock rate)
    assert hw.peak("mma_sync_int8") > 2 * hw.peak("bf16")
    rows = _rows()
    value, _, _ = predict(rows["pre-ggml-spark-q3coder30b-q80-pp2048"])
    assert value == pytest.approx(float(rows["pre-ggml-spark-q3coder30b-q80-pp2048"]["value"]),
                                  rel=0.3)


def test_native_mxfp4_prefill_applies_from_its_build_on():
    """PR 17906 (native MXFP4 MMA on Blackwell GeForce, 1.26x over MMQ) was merged in b7536
    (2025-12-24): a b6910 measurement (the DGX Spark rows of 2025-11) ran MMQ, today's build
    the native path. Pricing the November rows at the FP4 peak made gpt-oss-20b +97 %."""
    mx = get_quant("mxfp4")
    old = kernel("llamacpp", "prefill", "Blackwell GeForce", mx, parse_engine_version("b6910"))
    new = kernel("llamacpp", "prefill", "Blackwell GeForce", mx, parse_engine_version("b7536"))
    today = kernel("llamacpp", "prefill", "Blackwell GeForce", mx)
    assert old is not None and old.path.startswith("MMQ") and old.speedup == 1
    assert new is not None and "native MXFP4" in new.path and today == new
    v = parse_engine_version
    assert kernel("llamacpp", "prefill", "Blackwell GeForce", mx, v("2025-11")).speedup == 1
    assert version_label("llamacpp", v("llama.cpp b6918 (a1b2c3)", "2025-11-02")) == "b6918"
    assert version_label("llamacpp", v("llama.cpp main", "2025-09-04")) == "2025-09"
    assert version_label("llamacpp", v("Ollama (Sep 2025)", "2025-09")) == "ollama"
    rows = _rows()
    row = rows["pre-ggml-spark-gptoss20b-pp2048"]
    assert "native MXFP4" not in " ".join(
        estimate_speed(workload_of(row), get_gpu("dgx-spark"), check_fit=False).assumptions)


def test_prefill_reads_the_weights_once_per_micro_batch():
    """llama.cpp runs a 2,048-token prompt as four 512-token micro-batches (-ub), each a
    forward pass over every weight: on a 256 GB/s iGPU the reads of a 60 GB MoE bound it."""
    w = build_workload("gpt-oss-120b", quant="mxfp4", engine="llamacpp", prompt_tokens="2048",
                       output_tokens="16")
    est = estimate_speed(w, get_gpu("ryzen-ai-max-395"), check_fit=False)
    read = next(c for c in est.components if c.name.startswith("weights read per micro"))
    assert "4 pass(es) of up to 512 tokens" in read.formula
    big = estimate_speed(w.with_(ubatch=2048), get_gpu("ryzen-ai-max-395"), check_fit=False)
    big_read = next(c for c in big.components if c.name.startswith("weights read per micro"))
    assert read.seconds > 3 * big_read.seconds


def test_a_narrow_model_prefills_at_a_smaller_share_of_the_peak():
    """The width curve of small_model_mfu applies to LLM prefill too: Llama 3.2 3B (hidden
    3,072) reaches x0.93 of an 8B's (4,096) efficiency per FLOP."""
    gpu = get_gpu("rtx-4090")
    small = estimate_speed(build_workload("llama-3.2-3b", quant="q4_0", engine="llamacpp",
                                          prompt_tokens="512"), gpu)
    assert any("hidden 3,072: x0.93" in c.formula for c in small.components)


# ------------------------------------------------------------------ backends


def test_llamacpp_backend_follows_the_card_unless_named():
    w = build_workload("llama-3.1-8b", quant="q4_k_m", engine="llamacpp")
    assert llamacpp_backend(w, get_gpu("apple-m4-pro")) == "metal"
    assert llamacpp_backend(w, get_gpu("ryzen-ai-max-395")) == "rocm"
    assert llamacpp_backend(w, get_gpu("rtx-4090")) == "cuda"
    vk = build_workload("llama-3.1-8b", quant="q4_k_m", engine="llamacpp", backend="vulkan")
    assert llamacpp_backend(vk, get_gpu("ryzen-ai-max-395")) == "vulkan"
    assert constants_key(w, hardware(get_gpu("apple-m4-pro"))) == "llamacpp-metal"
    assert constants_key(w, hardware(get_gpu("rtx-4090"))) == "llamacpp"
    with pytest.raises(InputError, match="backend"):
        build_workload("llama-3.1-8b", engine="vllm", backend="metal")
    with pytest.raises(InputError, match=r"unknown llama\.cpp backend"):
        build_workload("llama-3.1-8b", engine="llamacpp", backend="opencl")


def test_metal_prefill_uses_simdgroup_half_matmuls_not_int8_mmq():
    """Apple GPUs have no int8 tensor unit: llama.cpp's Metal mul_mm dequantizes to half and
    multiplies at the FP16 rate (about 0.58 of it, measured on M1 and M2 Ultras)."""
    k = kernel("llamacpp-metal", "prefill", "Apple M4", get_quant("q4_k_m"))
    assert k is not None and k.peak == "fp16" and k.efficiency == "llamacpp_metal"
    assert kernel("llamacpp-metal", "prefill", "Apple M4", get_quant("mxfp4")).peak == "fp16"
    cuda = kernel("llamacpp", "prefill", "Ada Lovelace", get_quant("q4_k_m"))
    assert cuda is not None and cuda.path.startswith("MMQ")
    w = build_workload("llama-3.1-8b", quant="q4_k_m", engine="llamacpp", prompt_tokens="512")
    est = estimate_speed(w, get_gpu("apple-m4-pro"))
    assert any("metal backend" in a for a in est.assumptions)
    fp16 = get_gpu("apple-m4-pro").tflops("fp16") * 1e12
    # 8B: about 15 GFLOP per prompt token; the estimate sits near 0.58 of the FP16 rate
    assert 0.3 * fp16 / 15e9 < _prefill(est) < 0.7 * fp16 / 15e9


@pytest.mark.parametrize("rid", [
    "dec-geer-l31-70b-apple-m3-ultra", "dec-llmfit-apple-m4-pro-l31-8b-q4km",
    "pre-lhl-strix-gptoss20b-hip-pp512", "dec-ik758-strix-gptoss120b-rocm-tg16",
    "dec-llmfit-apple-m4-pro-l31-8b-mlx4"])
def test_rows_of_the_new_backends_and_mlx_are_modelled(rid):
    """llamacpp-metal, llamacpp-rocm and mlx rows were 'engine ... has no model here'."""
    value, note, _ = predict(_rows()[rid])
    assert value and value > 0 and "not modelled" not in note


def test_mlx_runs_on_apple_silicon_only_and_sizes_its_4bit_groups():
    w = build_workload("llama-3.1-8b", quant="mlx-4bit", engine="mlx")
    assert engine_for(w, get_gpu("apple-m4-pro"))[0].engine == "mlx"
    with pytest.raises(EngineUnavailable, match="MLX-LM does not run"):
        engine_for(w, get_gpu("rtx-4090"))
    q = get_quant("mlx-4bit")  # 4 bits + an fp16 scale and bias per group of 64
    assert q.linear_bits == pytest.approx(4 + 32 / 64)
    est = estimate_speed(w, get_gpu("apple-m4-pro"))
    assert est.rates["decode_tokens_per_s_per_sequence"].typical > 20


# ------------------------------------------------------------------ Unsloth Dynamic 2.0


def test_ud_k_xl_files_are_sized_by_their_declared_base_file_type():
    """Unsloth picks each tensor's type per model; the file declares its base type (llama-bench
    reports UD-Q4_K_XL as 'Q4_K - Medium'), and seven published files fall within -6 % to +8 %
    of that type's recipe (validation/memory.csv rows mem-lhl-ud-*)."""
    qwen = resolve_model("Qwen/Qwen3-30B-A3B", offline=True)
    ud, base = recipe(qwen, "ud-q4_k_xl"), recipe(qwen, "q4_k_m")
    assert ud.total_bytes == base.total_bytes
    assert any("Dynamic 2.0" in n for n in ud.notes)
    outcomes = {o.id: o for o in run_memory(default_path("memory"))}
    ud_rows = [o for rid, o in outcomes.items() if rid.startswith("mem-lhl-ud-")]
    assert len(ud_rows) == 7
    assert all(o.error is not None and abs(o.error) <= 0.09 for o in ud_rows)


def test_rows_in_ud_quants_are_scored():
    rows = _rows()
    for rid in ("dec-lhl-strix-q3-30b-udq4kxl-vk-tg128",
                "dec-trk-pro6000ws-gptoss120b-udq8kxl-tg128"):
        value, note, _ = predict(rows[rid])
        assert value and "not modelled" not in note
    assert not any("needs quant ud-" in (r.get("settings") or "") for r in rows.values())
