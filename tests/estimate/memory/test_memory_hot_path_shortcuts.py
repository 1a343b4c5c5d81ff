"""Issue 27: the shortcuts on a memory estimate's hot path say what the long ways said: an
engine's trait found without the enum's call, the catalog GPUs an engine runs on kept once,
a message made without copying its parameters."""

from __future__ import annotations

import pickle

from whichgpu import engines
from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.memory.fit import gpus_running
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.vocabulary import Engine


def _has_by_enum(engine, trait) -> bool:  # has() as it was: Engine(engine) in the table
    if engine is None:
        return False
    try:
        return trait in engines.engine_table()[Engine(engine)].traits
    except ValueError:
        return False


def test_has_answers_as_the_enum_lookup_for_every_engine_and_trait():
    traits = set().union(*(t.traits for t in engines.engine_table().values()))
    assert traits  # the table has traits to ask about
    asked = [*Engine, *(str(e) for e in Engine), "no-such-engine", "", None, "VLLM"]
    for engine in asked:
        for trait in sorted(traits) + ["no-such-trait"]:
            assert engines.has(engine, trait) == _has_by_enum(engine, trait), (engine, trait)
    assert any(engines.has(e, t) for e in Engine for t in traits)


class _Job:  # what gpus_running reads of a workload: its engine (any engine, any task)
    def __init__(self, engine: Engine | None) -> None:
        self.engine = engine


def test_catalog_gpus_an_engine_runs_on_are_kept_and_the_same():
    catalog = default_catalog()
    for engine in (None, *Engine):
        w = _Job(engine)
        want = [(g, g.usable_memory_bytes) for g in catalog.gpus
                if engine is None or not catalog.engine_problem(g, engine)]
        assert list(gpus_running(w, catalog)) == want
        assert gpus_running(w, catalog) is gpus_running(w, catalog)  # worked out once
    # a list of GPUs given is filtered as before, not the catalog's answer
    some = list(catalog.gpus[:3])
    w = _Job(Engine.MLX)
    assert [g for g, _ in gpus_running(w, catalog, some)] == [
        g for g in some if not catalog.engine_problem(g, Engine.MLX)]
    # some engine runs on fewer GPUs than the whole catalog: the filter is exercised
    assert any(len(gpus_running(_Job(e), catalog)) < len(catalog.gpus)
               for e in Engine)


def test_msg_is_the_message_the_class_makes():
    cases = [("a.plain", "plain words", {}),
             ("a.num", "context {n:,} tokens, {share:.0%}", {"n": 8192, "share": 0.25}),
             ("a.nested", "{one} + {two}", {"one": msg("x", "fp8 ({f})", f=Field("quant", "fp8")),
                                           "two": Join(("a", "b"), " and ")}),
             ("a.enum", "engine {e}", {"e": Engine.VLLM})]
    for id_, template, params in cases:
        fast, slow = msg(id_, template, **params), Message(id_, template, params)
        assert type(fast) is Message and str(fast) == str(slow)
        assert (fast.id, fast.template, dict(fast.params)) == (slow.id, slow.template,
                                                               dict(slow.params))
        assert fast.to_json() == slow.to_json()
        back = pickle.loads(pickle.dumps(fast))
        assert (str(back), back.id, dict(back.params)) == (str(fast), fast.id, dict(fast.params))


def _raised(make, template: str) -> type[Exception] | None:
    try:
        make("bad", template)
    except Exception as exc:  # the same exception type is the point
        return type(exc)
    return None


def test_a_malformed_template_raises_as_the_class_does():
    for template in ("{missing}", "{n:q}", "{"):
        fast = _raised(lambda i, t: msg(i, t, n=1), template)
        slow = _raised(lambda i, t: Message(i, t, {"n": 1}), template)
        assert fast is slow and fast is not None, template
