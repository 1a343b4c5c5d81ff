"""Issue 27: the web memo sizes an answer by deciding what to do once per type, not per object
(the per-object ``isinstance`` chain took half of a recommendation's sizing), and counts the
same bytes as the walk it replaced; a REST answer is remembered as the JSON bytes it sent.
"""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import pytest

from whichgpu.web import api, services

LLAMA = json.loads(resources.files("whichgpu.models").joinpath(
    "presets", "llama-3.1-8b", "config.json").read_text("utf-8"))


def _reference_size(value: Any) -> int:
    """The walk as it was before issue 27 (every object tested with isinstance in turn)."""
    if isinstance(value, tuple) and value and isinstance(value[0], bytes):
        return len(value[0]) + 64
    skip = (*services._shared_types(), type, types.ModuleType, types.FunctionType,
            types.MethodType)
    seen: set[int] = set()
    stack = [value]
    total = 0
    while stack and len(seen) < services.MAX_WALK:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip) or services._owned_elsewhere(obj):
            continue
        seen.add(id(obj))
        try:
            total += sys.getsizeof(obj)
        except TypeError:
            continue
        if isinstance(obj, str | bytes | int | float | bool | type(None)):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
        else:
            attrs = getattr(obj, "__dict__", None)
            if isinstance(attrs, dict):
                stack.append(attrs)
            for name in getattr(type(obj), "__slots__", ()):
                if hasattr(obj, name):
                    stack.append(getattr(obj, name))
    return total + 64


class _Slotted:
    __slots__ = ("a", "b", "unset")

    def __init__(self) -> None:
        self.a = [1.5, "x" * 100]
        self.b = {"k": (3, None)}


class _Subclassed(dict):
    pass


@dataclass
class _Holder:
    items: list[Any] = field(default_factory=list)


def test_the_walk_counts_what_the_per_object_walk_counted():
    """Every kind of object a walk meets: slots (one unset), dicts and their subclasses,
    sets, shared catalog objects (skipped), code (skipped), a preset's spec (skipped) and a
    pasted one (counted), shared and repeated references."""
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.models.config_parse import parse_config
    from whichgpu.models.resolve import resolve_model

    gpu = default_catalog().gpus[0]
    preset = resolve_model("llama-3.1-8b")
    pasted = parse_config({**LLAMA, "num_hidden_layers": 40}, origin="pasted",
                          source="config:pasted")
    shared = [_Slotted()]
    value = _Holder([_Slotted(), _Subclassed(x=frozenset({1, 2})), {3, "y"}, gpu, len, sys,
                     _reference_size, preset, pasted, shared, shared, b"raw", 10**30])
    for v in (value, pasted, preset, gpu, shared, ("key", 1.0, None), (b"<html>", 200)):
        assert services._size(v) == _reference_size(v)
    assert services._size(value) > services._size(pasted) > 50 * services._size(preset)


def test_real_answers_are_sized_as_before(web):
    from whichgpu.answers import requests as r

    memory = services.memory(r.Memory(model="llama-3.1-70b", quant="q4_k_m", batch=300))
    gpus = services.gpus(r.Gpus())
    for answer in (memory, gpus):
        assert services._size(answer) == _reference_size(answer) > 10_000


def test_a_rest_answer_is_remembered_as_the_bytes_it_sent(web):
    """The same bytes as the answer's JSON written by the response class (now and on a
    repeat), and the memo counts their length, not a walk of the JSON's objects."""
    from whichgpu.answers import requests as r

    path = "/api/v1/memory?model=llama-3.1-8b&context=4k&batch=3"
    first = web.get(path)
    again = web.get(path)
    assert first.status_code == again.status_code == 200
    assert first.content == again.content
    assert first.headers["content-type"] == again.headers["content-type"] == "application/json"
    q = api.Memory.model_validate({"model": "llama-3.1-8b", "context": "4k", "batch": 3})
    typed = services.memory(r.Memory.model_validate(q.model_dump()))
    assert first.content == api.JSON(typed.to_json()).body
    kept = [(k, v) for k, v in services._memo.items() if k[0] == "json:memory"]
    assert len(kept) == 1
    key, (held, size) = kept[0]
    assert held == (first.content,)
    assert size == len(first.content) + 64 + services._size(key)  # the key holds the question


def test_json_bytes_writes_a_non_finite_number_as_null():
    assert api.json_bytes({"a": float("inf"), "b": [1.0, float("nan")], "é": "ü"}) == \
        '{"a":null,"b":[1.0,null],"é":"ü"}'.encode()


def test_a_rest_answer_keeps_no_typed_answer_but_reuses_a_kept_one(web):
    """The REST API keeps its bytes only; a typed answer a page kept is reused, not made
    again (the same object)."""
    assert web.get("/api/v1/memory?model=qwen2.5-7b&batch=2").status_code == 200
    assert [k[0] for k in services._memo] == ["json:memory"]
    q = api.Memory.model_validate({"model": "qwen2.5-7b", "batch": 3})  # as a page reads it
    kept = services.memory(q)  # as a page asks: kept
    made = []
    real = services.estimates.memory

    def counted(*args):
        made.append(args)
        return real(*args)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(services.estimates, "memory", counted)
        assert web.get("/api/v1/memory?model=qwen2.5-7b&batch=3").status_code == 200
    assert made == []  # the page's answer served the REST question
    assert services.memory(q) is kept
