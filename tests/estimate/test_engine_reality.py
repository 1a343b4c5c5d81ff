"""Engine reality as dated data (estimate/data/engine_kernels.toml): which kernel an engine
runs for a weight format on an architecture, and which engine builds ("eras") a constant
belongs to. llama.cpp's MXFP4 on an RTX 5090 computes in its own MMA kernel, not at the FP4
tensor-core peak; vLLM's NVFP4 there does; builds before August 2025 synchronise with the host
per MoE layer; validation rows are estimated for the build they measured."""

from __future__ import annotations

import csv

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.speed.hardware import arch_key, hardware
from whichgpu.estimate.speed.kernels import default_era, era_of, kernel
from whichgpu.estimate.speed.llm import engine_era, engine_value, kernel_notes
from whichgpu.estimate.validation import default_path
from whichgpu.estimate.validation.rows import workload_of
from whichgpu.estimate.validation.speed import predict
from whichgpu.models.quant import get_quant
from whichgpu.units import parse_engine_version

RTX_5090 = get_gpu("rtx-5090")


def _speed(model, gpu, count=1, **kw):
    w = build_workload(model, gpus=count, **kw)
    return estimate_speed(w, get_gpu(gpu), count, check_fit=False, saturation=False)


def _rows():
    with default_path("speed").open(newline="", encoding="utf-8") as fh:
        return {r["id"]: r for r in csv.DictReader(fh)}


def test_llama_cpp_mxfp4_on_blackwell_geforce_runs_its_mma_kernel_not_the_fp4_peak():
    k = kernel("llamacpp", "prefill", "Blackwell GeForce", get_quant("mxfp4"))
    assert k is not None and "MXFP4" in k.path
    assert k.peak == "mma_sync_int8" and k.speedup > 1 and k.efficiency == "llamacpp_mmq"
    # on a GeForce card the mma.sync rate is the int8 datasheet
    assert hardware(RTX_5090).peak("mma_sync_int8") == hardware(RTX_5090).peak("int8")
    # the same format elsewhere is MMQ at the mma.sync int8 rate, with no speed-up
    ada = kernel("llamacpp", "prefill", "Ada Lovelace", get_quant("mxfp4"))
    assert ada is not None and ada.path.startswith("MMQ") and ada.speedup == 1
    e = _speed("gpt-oss-20b", "rtx-5090", quant="mxfp4", engine="llamacpp",
               prompt_tokens="2048")
    matmul = next(c for c in e.components if c.name.startswith("prefill matmuls"))
    assert "int8" in matmul.formula and "fp4" not in matmul.formula
    assert any("native MXFP4" in a for a in e.assumptions)


def test_vllm_fp4_on_an_rtx_5090_nvfp4_at_the_fp4_peak_mxfp4_through_marlin():
    nv = kernel("vllm", "prefill", "Blackwell GeForce", get_quant("nvfp4"))
    mx = kernel("vllm", "prefill", "Blackwell GeForce", get_quant("mxfp4"))
    assert nv is not None and nv.peak == "fp4" and nv.since
    assert mx is not None and mx.efficiency == "weight_only" and mx.peak == "bf16"
    dc = kernel("vllm", "prefill", "Blackwell", get_quant("mxfp4"))
    assert dc is not None and dc.peak == "fp4"  # B200: tcgen05 FP4 GEMMs
    precision, notes = kernel_notes(
        build_workload("llama-3.1-8b", quant="nvfp4", engine="vllm"), hardware(RTX_5090))
    assert precision == "fp4" and any("sm_120" in n for n in notes)
    assert _speed("llama-3.1-8b", "rtx-5090", quant="nvfp4", engine="vllm",
                  prompt_tokens="4096").precision == "fp4"


def test_mmq_runs_at_sm_count_times_clock_not_the_data_centre_int8_peak():
    """llama.cpp's MMQ (mma.sync on int8 tiles, no wgmma/tcgen05) runs at a consumer SM's
    int8 rate: the A100's doubled per-SM int8 and the H100's wgmma peak go unused. One MMQ
    efficiency then serves every NVIDIA card, and the measured rows follow: the A100 and the
    RTX A6000 (int8 624 vs 310 TOPS, equal SM x clock) prefill a 70B Q4_K_M in 8.4 and 9.7 s,
    the H100 PCIe runs Llama 2 70B Q4_0 at 856 t/s."""
    a100, a6000 = hardware(get_gpu("a100-80gb-sxm")), hardware(get_gpu("rtx-a6000"))
    h100 = hardware(get_gpu("h100-pcie"))
    assert a100.peak("mma_sync_int8") == pytest.approx(a6000.peak("mma_sync_int8"), rel=0.02)
    assert a100.peak("mma_sync_int8") == pytest.approx(a100.peak("int8") / 2)
    assert h100.peak("mma_sync_int8") < 0.3 * h100.peak("int8")
    ada = hardware(get_gpu("rtx-4090"))
    assert (engine_value("prefill_kernel_efficiency", "llamacpp_mmq", h100)
            == engine_value("prefill_kernel_efficiency", "llamacpp_mmq", ada))
    rows = _rows()
    for rid in ("pre-xd-l2-70b-q40-h100pcie", "pre-gp-a100-l31-70b-ollama-ttft4k"):
        value, _, _ = predict(rows[rid])
        assert value == pytest.approx(float(rows[rid]["value"]), rel=0.25)


@pytest.mark.parametrize(("version", "date", "era"), [
    ("b4458", None, "2025-h1"),
    ("build 3200", None, "2023-24"),
    ("b7340", None, "2025-26"),
    ("", "2024-05", "2023-24"),
    ("", "2025-03-10", "2025-h1"),
    ("Ollama 0.11", None, "ollama"),
    ("", None, "2025-26"),
    ("2023-24", None, "2023-24"),
])
def test_a_build_number_a_date_or_a_name_gives_the_engine_era(version, date, era):
    assert era_of("llamacpp", parse_engine_version(version, date)) == era


def test_today_is_the_default_and_validation_rows_are_estimated_for_the_build_they_measured():
    assert default_era("llamacpp") == "2025-26"
    assert engine_era(build_workload("llama-3.1-8b", quant="q4_k_m", engine="llamacpp")) \
        == "2025-26"
    rows = _rows()
    dated = [r for r in rows.values() if r["engine"].strip().lower() in ("llamacpp", "llama.cpp")
             and (r.get("date") or "")[:4] == "2023"]
    assert dated
    for r in dated:
        assert engine_era(workload_of(r)) == "2023-24", r["id"]
    # DeepSeek-R1 on 2 x H100, January 2025: the host-synchronised MoE builds
    assert engine_era(workload_of(rows["dec-uns1591-2xh100-dsr1-udiq1s-tg128"])) == "2025-h1"


def test_older_builds_pay_more_per_moe_layer():
    hw = hardware(get_gpu("h100-sxm"))
    assert (engine_value("decode_moe_layer_us", "llamacpp", hw, "2025-h1")
            > 2 * engine_value("decode_moe_layer_us", "llamacpp", hw, "2025-26"))
    old = _speed("gpt-oss-20b", "h100-sxm", quant="mxfp4", engine="llamacpp",
                 engine_version="b5000")
    new = _speed("gpt-oss-20b", "h100-sxm", quant="mxfp4", engine="llamacpp")
    key = "decode_tokens_per_s_per_sequence"
    assert new.rates[key].typical > old.rates[key].typical


def test_deepseek_r1_ud_iq1_s_on_two_h100s_is_near_the_measurement_and_in_range():
    # 671B parameters, 37B active, 131 GiB at 1.58 bits: once five times too slow an estimate
    row = _rows()["dec-uns1591-2xh100-dsr1-udiq1s-tg128"]
    value, _, span = predict(row)
    measured = float(row["value"])
    assert value == pytest.approx(measured, rel=0.5)
    assert span is not None and span[0] <= measured <= span[1]


def test_iq_formats_decode_through_their_own_kernel():
    iq = kernel("llamacpp", "decode", "Ada Lovelace", get_quant("iq2_xxs"))
    k = kernel("llamacpp", "decode", "Ada Lovelace", get_quant("q4_k_m"))
    assert iq is not None and iq.efficiency == "llamacpp_iq"
    assert k is not None and k.efficiency == "llamacpp_mmvq"


def test_the_rtx_5090_is_blackwell_geforce():
    assert arch_key(RTX_5090) == "Blackwell GeForce"
    assert arch_key(get_gpu("b200")) == "Blackwell"


def test_llama_cpp_splits_layers_so_two_gpus_decode_at_one_gpus_bandwidth():
    def decode(engine, quant, n):
        e = _speed("llama-3.1-8b", "h100-sxm", n, quant=quant, engine=engine)
        return e, e.rates["decode_tokens_per_s_per_sequence"].typical

    one = decode("llamacpp", "q8_0", 1)[1]
    e, two = decode("llamacpp", "q8_0", 2)
    assert two == pytest.approx(one, rel=0.05) and two <= one
    assert any(c.name == "layer-split hops" and "one active at a time" in c.formula
               for c in e.components)
    # tensor parallelism reads half the weights per GPU
    assert decode("vllm", "bf16", 2)[1] > 1.3 * decode("vllm", "bf16", 1)[1]
