"""An LLM speed estimate formats its words (components, assumptions) only when they are read,
and says the same words then as a tuple would (issue 27: a recommendation estimates hundreds
of configurations and shows a few)."""

from __future__ import annotations

import copy
import pickle

import pytest

from specs import LLAMA_31_8B
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.llm import kernel_notes, kernel_precision
from whichgpu.estimate.speed.result import Later
from whichgpu.estimate.workload import Workload


def test_later_is_made_once_and_only_when_read() -> None:
    made = []

    def make() -> list[str]:
        made.append(1)
        return ["a", "b"]

    later = Later(make)
    assert made == []
    assert list(later) == ["a", "b"] and len(later) == 2 and later[1] == "b"
    assert later[:1] == ("a",) and "a" in later
    assert made == [1]  # made once, kept


def test_later_equals_its_tuple_and_pickles_as_it() -> None:
    later = Later(lambda: ("x", "y"))
    assert later == ("x", "y") and ("x", "y") == later and later != ("x",)
    assert later == Later(lambda: ["x", "y"]) and hash(later) == hash(("x", "y"))
    assert pickle.loads(pickle.dumps(later)) == ("x", "y")
    assert type(copy.deepcopy(later)) is tuple


def test_llm_estimate_words_wait_until_read() -> None:
    est = estimate_speed(Workload(model=LLAMA_31_8B), get_gpu("h100-sxm"))
    assert isinstance(est.components, Later) and isinstance(est.assumptions, Later)
    assert est.components._items is None and est.assumptions._items is None
    data = est.to_json()  # reading them makes them
    assert [c["name"] for c in data["components"]][:2] == ["weights+kv read", "matmuls"]
    assert any(a.startswith("prompt ") for a in data["assumptions"])
    assert est.components._items is not None


@pytest.mark.parametrize("quant,engine", [("nvfp4", "vllm"), ("mxfp4", "llamacpp"),
                                          ("q4_k_m", "llamacpp"), ("awq", "vllm"),
                                          (None, "vllm"), ("fp8", "sglang")])
@pytest.mark.parametrize("gpu", ["rtx-5090", "h100-sxm", "a100-80gb-sxm", "rtx-4090",
                                 "mi300x", "b200"])
def test_kernel_precision_is_kernel_notes_precision(quant, engine, gpu) -> None:
    """The estimate reads its precision alone (kernel_precision) and the notes when its
    assumptions are read: the same precision kernel_notes gives."""
    try:
        w = build_workload("llama-3.1-8b", quant=quant, engine=engine)
    except InputError:
        pytest.skip("a format this engine does not run")
    hw = hardware(get_gpu(gpu))
    assert kernel_precision(w, hw) == kernel_notes(w, hw)[0]
