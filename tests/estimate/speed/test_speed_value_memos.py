"""What issue 27's fourth pass remembers in the speed model gives the answer the reference
path computes: the hardware view of a GPU x count (one object, so the per-configuration memos
hit by identity), the kernel path, the confidence of an estimate and a decode step's rates of a
copied workload; and each is keyed by everything it reads."""

from __future__ import annotations

from specs import LLAMA_31_8B
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate import memo
from whichgpu.estimate.speed.hardware import arch_key, hardware
from whichgpu.estimate.speed.kernels import kernel
from whichgpu.estimate.speed.llm import decode_step
from whichgpu.estimate.speed.result import confidence_for
from whichgpu.estimate.workload import Workload
from whichgpu.models.quant import get_quant


def test_a_gpu_and_count_give_one_hardware_view_equal_to_the_reference() -> None:
    h100 = get_gpu("h100-sxm")
    one, again, four = hardware(h100, 1), hardware(h100, 1), hardware(h100, 4)
    assert one is again
    assert four.count == 4 and four is not one
    assert hardware(h100, 16, gpus_per_node=4).per_server == 4  # the server size is a key
    assert hardware(h100, 16).per_server != 4
    with memo.reference():
        fresh = hardware(h100, 4)
    assert fresh is not four and fresh == four


def test_a_kernel_path_is_remembered_and_equal_to_the_reference() -> None:
    arch = arch_key(get_gpu("h100-sxm"))
    q4, bf16 = get_quant("q4_k_m"), get_quant("bf16")
    a = kernel("llamacpp", "prefill", arch, q4, None)
    assert kernel("llamacpp", "prefill", arch, q4, None) is a
    with memo.reference():
        assert kernel("llamacpp", "prefill", arch, q4, None) == a
        other = kernel("llamacpp", "prefill", arch, bf16, None)
        assert kernel("vllm", "prefill", arch, q4, None) is None
    assert kernel("llamacpp", "prefill", arch, bf16, None) == other  # the format is a key
    assert kernel("vllm", "prefill", arch, q4, None) is None  # so is the engine
    assert a is not None and other is not None and "MMQ" in a.path and "cuBLAS" in other.path


def test_confidence_is_keyed_by_the_card_and_the_format() -> None:
    h100, rtx = hardware(get_gpu("h100-sxm"), 1), hardware(get_gpu("rtx-4090"), 1)
    w = Workload(LLAMA_31_8B, context=4096)
    q4 = Workload(LLAMA_31_8B, context=4096, quant="q4_k_m")
    got = {(name, c): confidence_for(c, wl, hw, wl.engine_name)
           for name, wl, hw in (("h100", w, h100), ("rtx", w, rtx), ("q4", q4, rtx))
           for c in ("decode", "prefill")}
    with memo.reference():
        ref = {(name, c): confidence_for(c, wl, hw, wl.engine_name)
               for name, wl, hw in (("h100", w, h100), ("rtx", w, rtx), ("q4", q4, rtx))
               for c in ("decode", "prefill")}
    assert got == ref
    assert got["h100", "decode"].band_key != got["rtx", "decode"].band_key  # HBM vs GDDR
    assert got["rtx", "decode"].band_key != got["q4", "decode"].band_key  # 16 vs 4 bits


def test_a_copied_workload_decodes_as_a_fresh_one() -> None:
    hw = hardware(get_gpu("a100-80gb"), 2)
    w = Workload(LLAMA_31_8B, context=8192, gpus=2)
    first = decode_step(w, hw, 8, 4096)
    copy = w.with_(batch=3)  # another object, the same rates
    again = decode_step(copy, hw, 8, 4096)
    awq = decode_step(w.with_(quant="awq"), hw, 8, 4096)  # another format: other rates
    with memo.reference():
        ref = decode_step(Workload(LLAMA_31_8B, context=8192, gpus=2), hw, 8, 4096)
    assert first.seconds == again.seconds == ref.seconds
    assert first.parts == ref.parts
    assert awq.parts["memory-bandwidth"] < first.parts["memory-bandwidth"]


def test_band_ratios_are_keyed_by_group_and_confidence() -> None:
    from whichgpu.estimate.speed.result import band_ratios

    got = {(g, c): band_ratios(g, c) for g in ("decode", "decode/vllm/HBM/16bit", None)
           for c in ("low", "medium", "high")}
    with memo.reference():
        ref = {(g, c): band_ratios(g, c) for g in ("decode", "decode/vllm/HBM/16bit", None)
               for c in ("low", "medium", "high")}
    assert got == ref
    lo_low, hi_low = got["decode/vllm/HBM/16bit", "low"]
    lo_high, hi_high = got["decode/vllm/HBM/16bit", "high"]
    assert hi_low / lo_low > hi_high / lo_high  # lower confidence: a wider range
