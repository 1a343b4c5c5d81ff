"""A ``Workload.with_`` copy that changes only sizes, lengths or the layout re-runs only the
checks that read them (estimate/workload.py ``_validate_changed``): it must accept and refuse
exactly what validating the whole copy does, with the same message."""

from __future__ import annotations

import dataclasses

import pytest

from whichgpu.errors import InputError
from whichgpu.estimate.workload import _LIGHT_FIELDS, Workload
from whichgpu.models.resolve import resolve_model

CHANGES = [
    {"batch": 8}, {"batch": 0}, {"batch": 1 << 17}, {"batch": 2.5},
    {"context": 4096}, {"context": 0}, {"context": 1 << 25}, {"context": 1 << 20},
    {"prompt_tokens": 1000, "output_tokens": 200, "context": None},
    {"prompt_tokens": -1}, {"output_tokens": 1 << 25},
    {"prompt_tokens": 200_000, "output_tokens": 1, "context": None},
    {"gpus": 2}, {"gpus": 3}, {"gpus": 0}, {"gpus": 8, "tp": 3, "pp": 1},
    {"gpus": 4, "tp": 2, "pp": 2}, {"gpus": 6, "tp": 2, "pp": 2}, {"gpus": 4, "tp": 0},
    {"gpus": 200, "pp": 200}, {"gradient_checkpointing": True},
    {"batch": 4, "context": 2048, "prompt_tokens": 1500, "output_tokens": 500},
]


def _outcome(make):
    try:
        w = make()
    except InputError as exc:
        return "refused", str(exc)
    return "accepted", dataclasses.astuple(w)


@pytest.mark.parametrize("task", ["inference", "lora"])
@pytest.mark.parametrize("changes", CHANGES, ids=str)
def test_a_light_copy_is_checked_as_a_whole_one(task: str, changes: dict) -> None:
    assert changes.keys() <= _LIGHT_FIELDS
    base = Workload(model=resolve_model("llama-3.1-70b"), task=task, context=8192)
    light = _outcome(lambda: base.with_(**changes))
    whole = _outcome(lambda: dataclasses.replace(base, **changes))  # __post_init__: validate
    assert light == whole


def test_an_invalid_light_change_is_refused() -> None:
    base = Workload(model=resolve_model("llama-3.1-8b"), task="inference")
    with pytest.raises(InputError, match="whole number"):
        base.with_(batch=0)
    with pytest.raises(InputError, match="trained maximum"):
        base.with_(context=1 << 20)


DERIVED = ("quant_format", "engine_name", "tp_degree", "pp_degree")
BASES = [  # a layer split (llama.cpp), tensor parallelism (vLLM), expert parallelism,
    # training, diffusion; each with its derived settings read once (kept by a copy)
    dict(model="llama-3.1-70b", task="inference", quant="q4_k_m", context=8192),
    dict(model="llama-3.1-70b", task="inference", quant="awq", engine="vllm", gpus=2),
    dict(model="qwen3-30b-a3b", task="inference", engine="vllm", gpus=4,
         expert_parallel=True),
    dict(model="llama-3.1-8b", task="lora", context=2048),
    dict(model="flux.1-dev", task="image"),
]


@pytest.mark.parametrize("base", BASES, ids=lambda b: f"{b['model']}-{b['task']}")
@pytest.mark.parametrize("changes", [c for c in CHANGES if "context" not in c
                                     or c["context"] in (4096, 2048)], ids=str)
def test_a_copy_derives_what_a_fresh_workload_derives(base: dict, changes: dict) -> None:
    """with_ keeps the derived settings a change cannot move (a size keeps all four, a
    layout the format and the engine): each equals the fresh workload's."""
    w = Workload(**{**base, "model": resolve_model(base["model"])})
    for name in DERIVED:
        getattr(w, name)  # remembered on the original, so a copy may carry them
    try:
        fresh = dataclasses.replace(w, **changes)
    except InputError:
        return
    copy = w.with_(**changes)
    for name in DERIVED:
        assert getattr(copy, name) == getattr(fresh, name), name
