"""Issue 27, second pass: llama.cpp's placement and the fit suggestions are computed once and
reused (the placement by value across copies of a workload, the target-independent part of the
suggestions across target GPUs), with the same results as the reference path (memos off)."""

from __future__ import annotations

import json

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate import memo
from whichgpu.estimate.memory import changes, estimate_memory
from whichgpu.estimate.memory import placement as placement_module
from whichgpu.estimate.memory.placement import placement, workload_placement
from whichgpu.estimate.memory.weights import workload_weight_bytes

TARGETS = ("rtx-4090", "rtx-3090", "l4", "a10")


@pytest.fixture(autouse=True)
def _fresh_memos():
    memo.clear()
    yield
    memo.clear()


def _counting(monkeypatch: pytest.MonkeyPatch, module, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _q4_70b(**kw):
    return build_workload("llama-3.1-70b", quant="q4_k_m", engine="llamacpp", context=8192,
                          **kw)


def test_equal_placements_of_different_workload_copies_are_computed_once(monkeypatch):
    calls = _counting(monkeypatch, placement_module, "placement")
    w = _q4_70b(gpu_layers=40)
    copies = [w, w.with_(batch=2), w.with_(batch=4), w.with_(context=4096)]
    got = [workload_placement(c) for c in copies]
    assert len(calls) == 1  # the batch and the context do not move a weight
    assert all(p is got[0] for p in got)
    other = workload_placement(w.with_(gpu_layers=30))  # another -ngl: placed again
    assert len(calls) == 2
    assert other.layer_on_gpu != got[0].layer_on_gpu
    # the memoized layout is the one placement() computes
    assert got[0] == placement(w, workload_weight_bytes(w))
    assert got[0].offloaded and sum(got[0].layer_on_gpu) < w.model.num_layers


def test_the_memory_estimate_places_each_layout_once(monkeypatch):
    calls = _counting(monkeypatch, placement_module, "placement")
    w = _q4_70b(gpu_layers=60)
    for batch in (1, 2, 3, 8):
        estimate_memory(w.with_(batch=batch))
    assert len(calls) == 1


def test_reference_mode_places_every_time_with_the_same_layout(monkeypatch):
    w = _q4_70b(gpu_layers=40)
    fast = workload_placement(w)
    calls = _counting(monkeypatch, placement_module, "placement")
    with memo.reference():
        slow = [workload_placement(w.with_(batch=b)) for b in (1, 2)]
    assert len(calls) == 2
    assert slow[0] == slow[1] == fast


def _said(changes: list[changes.Change]) -> str:
    return json.dumps([c.to_json() for c in changes], default=lambda v: v.to_json()
                      if hasattr(v, "to_json") else str(v), sort_keys=True)


@pytest.mark.parametrize("model,kw", [
    ("llama-3.1-70b", {"task": "pretrain"}),  # training: checkpointing, LoRA, 8-bit AdamW ...
    ("llama-3.1-70b", {"context": 32768}),  # inference: formats, fp8 KV, context, pairs
])
def test_suggestions_for_several_targets_equal_the_reference(monkeypatch, model, kw):
    w = build_workload(model, **kw)
    targets = [get_gpu(t) for t in TARGETS]
    calls = _counting(monkeypatch, changes, "_candidates")
    fast = [_said(changes.suggestions(w, t)) for t in targets] + [_said(changes.suggestions(w))]
    # the candidates (and the changed workloads) are made once for all the targets: once for
    # the single changes and at most once for the pairs
    assert 1 <= len(calls) <= 2
    with memo.reference():
        slow = [_said(changes.suggestions(w, t)) for t in targets] + [_said(changes.suggestions(w))]
    assert len(calls) > 2 + len(targets)  # the reference path makes them for every target
    assert fast == slow
    assert all(s != "[]" for s in fast)  # each target gets changes to compare


def test_the_need_per_count_is_asked_once_for_every_target(monkeypatch):
    w = build_workload("llama-3.1-70b", task="pretrain")
    calls = _counting(monkeypatch, changes, "layout_for")
    changes.suggestions(w, get_gpu("rtx-4090"))
    first = len(calls)
    changes.suggestions(w, get_gpu("l4"))  # the same changes, another card: no new layout
    assert first > 0 and len(calls) - first <= len(changes.COUNTS)  # only the "more GPUs" step


@pytest.mark.parametrize("model,kw", [
    ("llama-3.1-70b", {"quant": "q4_k_m"}),  # dense, untied output head
    ("llama-3.2-1b", {"quant": "q4_k_m"}),  # tied embeddings: the head loaded again
    ("gpt-oss-120b", {"quant": "mxfp4"}),  # MoE: routed experts
    ("gpt-oss-120b", {"quant": "mxfp4", "n_cpu_moe": 10}),
    ("gpt-oss-120b", {"quant": "mxfp4", "n_cpu_moe": 999}),  # --cpu-moe
    ("gpt-oss-120b", {"quant": "mxfp4", "override_tensor": [r"blk\.(1|7)\.ffn_.*=CPU"]}),
    ("gpt-oss-120b", {"quant": "mxfp4", "override_tensor": [r"output=CPU", r"blk\.3\.=CUDA0"],
                      "n_cpu_moe": 5}),
])
def test_the_placement_by_layer_equals_the_per_tensor_scan_at_every_ngl(model, kw):
    base = build_workload(model, engine="llamacpp", **kw)
    wb = workload_weight_bytes(base)
    n = base.model.num_layers
    seen = set()
    for ngl in (None, *range(0, n + 3)):
        w = base.with_(gpu_layers=ngl)
        fast, slow = placement(w, wb), placement_module.placement_by_tensor(w, wb)
        assert fast == slow, ngl
        seen.add((fast.gpu_bytes, fast.host_expert_layers))
    assert len(seen) > n // 2  # -ngl moved the layout (the comparison is not of one layout)
