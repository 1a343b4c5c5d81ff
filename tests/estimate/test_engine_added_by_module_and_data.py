"""The thought experiment of issue 35 (item 2): adding an engine is one module plus data.

A new engine, ``fakeinfer``, is added here the way ARCHITECTURE.md's recipe says, and nothing
under src/ is edited: its word (a member of ``Engine``, which in the source is the one line
step 1 adds), its table in data/engines.toml (a label, a family, a prefill chunk), where it runs
(the catalog's [platforms] table), a speed constant keyed by its name
(estimate/data/speed_constants.toml) and its module ``whichgpu.engines.fakeinfer`` (a memory
reserve). The memory estimate and the speed estimate then answer for it, each reading what
the module and the data say.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from collections.abc import Iterator
from importlib import resources

import pytest

from specs import LLAMA_31_8B
from whichgpu import engines
from whichgpu.catalog import gpus
from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate import workload
from whichgpu.estimate.constants import _load
from whichgpu.estimate.memo import reference
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.units import GiB
from whichgpu.vocabulary import Engine

NAME = "fakeinfer"
TABLE = f'\n[{NAME}]\nlabel = "FakeInfer"\nfamily = "llm"\nprefill_chunk_tokens = 1024\n'


def _caches() -> None:
    for f in (engines.engines_with, engines.labels, engines.picked_engine, engines.module):
        f.cache_clear()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """The new engine: its word, its data and its module (all undone after the test)."""
    # 1. its word (in the source: one member of Engine in vocabulary.py)
    member = str.__new__(Engine, NAME)
    member._name_, member._value_ = NAME.upper(), NAME
    monkeypatch.setitem(Engine._member_map_, NAME.upper(), member)
    monkeypatch.setitem(Engine._value2member_map_, NAME, member)
    monkeypatch.setattr(Engine, "_member_names_", [*Engine._member_names_, NAME.upper()])
    # 2. its table in data/engines.toml (read by the same parser, which checks it)
    text = resources.files("whichgpu").joinpath("data/engines.toml").read_text("utf-8")
    table = engines.parse_table(text + TABLE)
    monkeypatch.setattr(engines, "engine_table", lambda: table)
    _caches()
    # what modules read from the vocabulary and the table when they load, as a fresh import
    # with the engine in both would read it
    monkeypatch.setattr(workload, "ENGINES", tuple(Engine))
    monkeypatch.setitem(workload._ENGINE_OF, NAME, member)
    monkeypatch.setattr(workload, "LLM_ENGINES", engines.family_engines("llm"))
    monkeypatch.setitem(gpus.ENGINE_LABELS, NAME, "FakeInfer")
    # 3. where it runs: the catalog's [platforms] table (CUDA cards)
    monkeypatch.setitem(default_catalog().platforms["cuda"].engines, NAME, "plat-cuda")
    # 4. its module, found by name
    code = types.ModuleType(f"whichgpu.engines.{NAME}")
    code.__spec__ = importlib.machinery.ModuleSpec(f"whichgpu.engines.{NAME}", None)
    code.memory_reserve = lambda used, kv_gpu: MemoryTerm(  # type: ignore[attr-defined]
        "engine_reserve", GiB, "FakeInfer keeps 1 GiB back", "", "test")
    monkeypatch.setitem(sys.modules, code.__name__, code)
    _caches()
    with reference():  # no memo: each estimate is computed, none is kept
        yield member
    _caches()


def test_the_new_engine_answers_memory_from_its_module_and_its_data(fake: Engine) -> None:
    w = Workload(LLAMA_31_8B, engine=fake, context=8192)
    est = estimate_memory(w)
    assert est.term("engine_reserve") == GiB  # its module's reserve
    activations = next(t for t in est.terms if t.name == "activations")
    assert "prefill of 1,024 tokens" in str(activations.formula)  # its data's chunk
    # the same job on an engine with neither (transformers): no reserve, the whole prompt
    plain = estimate_memory(w.with_(engine=Engine.TRANSFORMERS))
    assert plain.term("engine_reserve") == 0
    assert "prefill of 8,192 tokens" in str(
        next(t for t in plain.terms if t.name == "activations").formula)


def test_the_new_engine_answers_speed_and_its_constant_moves_it(
        fake: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    w = Workload(LLAMA_31_8B, engine=fake, context=8192)
    gpu = default_catalog().get("rtx-4090")
    first = estimate_speed(w, gpu, 1)
    assert first.to_json()["engine"] == NAME
    decode = first.to_json()["decode_tokens_per_s"]["typical"]
    assert decode > 0
    # its own decode efficiency, keyed by its name as every engine's is: half the default's
    efficiency = _load("speed_constants")["decode_bandwidth_efficiency"].value
    monkeypatch.setitem(efficiency, NAME, efficiency["default"] / 2)
    slower = estimate_speed(w, gpu, 1).to_json()["decode_tokens_per_s"]["typical"]
    # streaming the weights at half the bandwidth: a little over half the rate (the step's
    # fixed costs do not halve)
    assert 0.5 < slower / decode < 0.6


def test_the_data_parser_refuses_a_bad_chunk() -> None:
    text = resources.files("whichgpu").joinpath("data/engines.toml").read_text("utf-8")
    with pytest.raises(Exception, match="prefill_chunk_tokens must be a whole number"):
        engines.parse_table(text.replace("prefill_chunk_tokens = 2048",
                                         "prefill_chunk_tokens = 0", 1))
