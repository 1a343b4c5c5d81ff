"""What the speed-ups of issue 27 remember is keyed by everything the answer depends on: a
memory estimate by every setting of the workload (its notes too), a workload's derived
settings worked out again for a changed copy, a step's words the same when made late."""

from __future__ import annotations

from specs import LLAMA_31_8B
from whichgpu.estimate import memo
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.workload import Workload


def test_equal_workloads_share_an_estimate_and_different_ones_do_not() -> None:
    a = estimate_memory(Workload(LLAMA_31_8B, context=8192, batch=4))
    b = estimate_memory(Workload(LLAMA_31_8B, context=8192, batch=4))
    c = estimate_memory(Workload(LLAMA_31_8B, context=8192, batch=5))
    assert a is b  # remembered
    assert c.total_bytes > a.total_bytes  # another batch: its own estimate
    with memo.reference():  # the reference path computes it again, to the same answer
        assert estimate_memory(Workload(LLAMA_31_8B, context=8192, batch=4)) == a


def test_notes_are_part_of_the_key() -> None:
    """Notes do not take part in a Workload's equality, but they are the estimate's warnings."""
    plain = estimate_memory(Workload(LLAMA_31_8B, context=4096))
    noted = estimate_memory(Workload(LLAMA_31_8B, context=4096, notes=("a note",)))
    assert "a note" in noted.warnings
    assert "a note" not in plain.warnings


def test_a_changed_copy_works_its_derived_settings_out_again() -> None:
    w = Workload(LLAMA_31_8B, gpus=2)
    assert (w.engine_name, w.quant_format.name, w.tp_degree, w.pp_degree) == (
        "vllm", "bf16", 2, 1)
    gguf = w.with_(quant="q4_k_m")
    assert gguf.engine_name == "llamacpp"  # not the copied 'vllm'
    assert gguf.quant_format.name == "q4_k_m"
    assert (gguf.tp_degree, gguf.pp_degree) == (1, 2)  # llama.cpp splits layers
    one = w.with_(gpus=1)
    assert (one.tp_degree, one.pp_degree) == (1, 1)


def test_a_step_says_the_same_words_whenever_they_are_read() -> None:
    from whichgpu.catalog.gpus import get_gpu
    from whichgpu.estimate.speed.hardware import hardware
    from whichgpu.estimate.speed.llm import decode_step, prefill_time

    w = Workload(LLAMA_31_8B, context=4096)
    hw = hardware(get_gpu("h100-sxm"), 1, None, None, None)
    step = decode_step(w, hw, 8, 2048)
    pre = prefill_time(w, hw, 8, 1024)
    for s in (step, pre):
        words = s.components
        assert words is s.components  # made once
        assert all(isinstance(c.formula, str) for c in words)
    assert [c.name for c in step.components][:2] == ["weights+kv read", "matmuls"]
    assert step.components[0].seconds == step.parts["memory-bandwidth"]
    assert "GB/s" in step.components[0].formula and "TFLOP" in step.components[1].formula
    assert pre.components[0].name == "prefill matmuls + attention"
    assert pre.components[0].seconds == pre.parts["compute"]
