"""A serving question asks a decode step and a prefill per configuration at a batch nobody
asked before (issue 27, fast9): the terms that do not move with the batch (the prefill's
rates, a dense model's streamed bytes, the llama.cpp host split, the kernel precision) are
computed once per configuration and shared by the workload's copies at other batches; a
step at a batch is remembered by value. Each memo gives the reference path's answer, and
keeps apart what it must (another batch, context, engine, GPU count, offload plan)."""

from __future__ import annotations

import pytest

from specs import LLAMA_31_8B
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate import memo
from whichgpu.estimate.speed import llm
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.offload import host_share
from whichgpu.estimate.workload import Workload


def _steps(w: Workload, hw, batch: int) -> tuple[float, dict, float, dict, str | None]:
    d = llm.decode_step(w, hw, batch, 1500)
    p = llm.prefill_time(w, hw, batch, 1000)
    return d.seconds, dict(d.parts), p.seconds, dict(p.parts), llm.kernel_precision(w, hw)


CASES = [
    ("vllm", None, "h100-sxm", 1),
    ("vllm", None, "a100-80gb", 2),
    ("sglang", "fp8", "h100-sxm", 4),
    ("llamacpp", "q4_k_m", "rtx-4090", 1),
    ("llamacpp", "q4_k_m", "rtx-3060-12gb", 1),  # part of the model in host RAM (-ngl)
]


@pytest.mark.parametrize(("engine", "quant", "gpu", "count"), CASES)
def test_steps_at_each_batch_equal_the_reference_path(engine, quant, gpu, count) -> None:
    base = Workload(model=LLAMA_31_8B, task="inference", engine=engine, quant=quant,
                    batch=1, context=4096, gpus=count,
                    gpu_layers=20 if gpu == "rtx-3060-12gb" else None)
    hw = hardware(get_gpu(gpu), count)
    copies = [base.with_(batch=b) for b in (1, 3, 8, 64)]
    fast = [_steps(w, hw, w.batch) for w in copies]  # the first fills the rates' memos
    again = [_steps(w.with_(batch=w.batch), hw, w.batch) for w in copies]  # new copies
    with memo.reference():
        slow = [_steps(w, hw, w.batch) for w in copies]
    assert fast == again == slow
    # the batch moves the steps: a memo that ignored it would give one value for all
    assert len({f[0] for f in fast}) == len(copies)
    assert len({f[2] for f in fast}) == len(copies)


def test_the_rates_are_shared_by_copies_and_keyed_by_what_they_read() -> None:
    w = Workload(model=LLAMA_31_8B, task="inference", engine="vllm", batch=4, context=4096)
    hw = hardware(get_gpu("h100-sxm"), 1)
    rates = llm._prefill_rates(w, hw, 1000)
    assert llm._prefill_rates(w.with_(batch=32), hw, 1000) is rates  # another batch: shared
    assert llm._decode_rates(w.with_(batch=32), hw) is llm._decode_rates(w, hw)
    assert llm._prefill_rates(w, hw, 200).attn < rates.attn  # the prompt is a key
    other = llm._prefill_rates(w.with_(engine="sglang"), hw, 1000)
    assert other is not rates
    assert llm._prefill_rates(w, hardware(get_gpu("a100-80gb"), 1), 1000).peak < rates.peak
    with memo.reference():
        assert llm._prefill_rates(w, hw, 1000) == rates
        assert llm._decode_rates(w, hw) == llm._decode_rates(w.with_(batch=32), hw)


def test_a_step_at_a_batch_is_remembered_by_value_and_apart_by_batch_and_context() -> None:
    w = Workload(model=LLAMA_31_8B, task="inference", engine="vllm", batch=4, context=4096)
    hw = hardware(get_gpu("h100-sxm"), 1)
    step = llm.decode_step(w, hw, 16, 2000)
    assert llm.decode_step(w.with_(batch=9), hw, 16, 2000) is step  # a copy: the same step
    assert llm.decode_step(w, hw, 17, 2000).seconds > step.seconds
    assert llm.decode_step(w, hw, 16, 4000).seconds > step.seconds
    assert llm.decode_step(w.with_(kv_dtype="fp8"), hw, 16, 2000).seconds \
        < step.seconds


def test_the_host_split_is_asked_once_per_workload_and_equals_the_reference() -> None:
    w = Workload(model=LLAMA_31_8B, task="inference", engine="llamacpp", quant="q4_k_m",
                 batch=1, context=4096, gpu_layers=10)
    share = host_share(w, 1.0)
    assert share is not None and share.host_weight_bytes > 0
    assert host_share(w, 1.0) is share
    with memo.reference():
        assert host_share(w, 1.0) == share
        assert host_share(w.with_(gpu_layers=None), 1.0) is None  # all layers on the GPU


@pytest.mark.parametrize(("engine", "quant", "gpu", "count"), CASES[:4])
def test_whole_estimates_at_new_batches_equal_the_reference_path(engine, quant, gpu,
                                                                 count) -> None:
    """The estimate's confidence, range groups and precision (asked once per configuration)
    and its rates: the same JSON as the reference path's, batch by batch."""
    from whichgpu.estimate.speed import estimate_speed

    base = Workload(model=LLAMA_31_8B, task="inference", engine=engine, quant=quant,
                    batch=1, context=4096, gpus=count)
    card = get_gpu(gpu)
    fast = [estimate_speed(base.with_(batch=b), card, count, check_fit=False).to_json()
            for b in (1, 5, 40)]
    with memo.reference():
        slow = [estimate_speed(base.with_(batch=b), card, count, check_fit=False).to_json()
                for b in (1, 5, 40)]
    assert fast == slow
    assert fast[0]["decode_tokens_per_s"] != fast[2]["decode_tokens_per_s"]
