"""What each engine does differently, read from ``whichgpu/data/engines.toml``.

Code asks for a trait (``has(engine, "splits_layers")``) or the engines that have one
(``engines_with("continuous_batching")``), so a new engine is a table in that file, not a
tuple to extend in several modules. What an engine does that data cannot say (its memory
reserve, its launch command, its ROCm build) is its own module here, ``engines/<engine>.py``,
found by :func:`module`.
"""

from __future__ import annotations

import importlib
import importlib.util
import tomllib
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any, Literal

from whichgpu.errors import DataError
from whichgpu.vocabulary import Engine

Trait = Literal["continuous_batching", "splits_layers", "ggml_runtime",
                "pages_sliding_windows", "caches_mla_latent", "dit_parallel",
                "caching_allocator", "host_offload", "streams_weights", "group_offload"]
TRAITS: tuple[Trait, ...] = ("continuous_batching", "splits_layers", "ggml_runtime",
                             "pages_sliding_windows", "caches_mla_latent", "dit_parallel",
                             "caching_allocator", "host_offload", "streams_weights",
                             "group_offload")
Family = Literal["llm", "diffusion"]
Kind = Literal["inference", "training", "diffusion"]  # a job's kind, for defaults and fallbacks
KINDS: tuple[Kind, ...] = ("inference", "training", "diffusion")
_PATH = "whichgpu/data/engines.toml"


@dataclass(frozen=True)
class EngineTraits:
    """One engine's row of engines.toml."""

    engine: Engine
    label: str
    family: Family
    traits: frozenset[str] = field(default_factory=frozenset)
    fallback: dict[str, int] = field(default_factory=dict)
    also: tuple[Family, ...] = ()  # other families it runs (SGLang: diffusion too)
    picked_for_quant: tuple[str, ...] = ()  # quantization-format prefixes that pick it
    picked_for_file: tuple[str, ...] = ()  # checkpoint-source prefixes that pick it
    default_for: tuple[Kind, ...] = ()  # the kinds of job it runs when nothing picks another
    prefill_chunk_tokens: int | None = None  # prefills a long prompt this many tokens at a time

    @property
    def families(self) -> tuple[Family, ...]:
        return (self.family, *self.also)


@cache
def engine_table() -> dict[Engine, EngineTraits]:
    """Every engine's traits (the file is checked: every Engine once, known traits only)."""
    from whichgpu.parse_cache import cached_toml

    return _traits(cached_toml("whichgpu", "data/engines.toml"))


def parse_table(text: str) -> dict[Engine, EngineTraits]:
    """engines.toml's text as traits per engine; a DataError names what is wrong."""
    return _traits(tomllib.loads(text))


def _traits(data: dict[str, Any]) -> dict[Engine, EngineTraits]:
    table: dict[Engine, EngineTraits] = {}
    for name, row in data.items():
        try:
            engine = Engine(name)
        except ValueError:
            raise DataError(_PATH, f"[{name}] is not an engine whichgpu knows") from None
        unknown = set(row) - {"label", "family", "also", "fallback", "picked_for_quant",
                              "picked_for_file", "default_for", "prefill_chunk_tokens",
                              *TRAITS}
        if unknown:
            raise DataError(_PATH, f"[{name}] has unknown keys {sorted(unknown)}")
        if row.get("family") not in ("llm", "diffusion") or not set(
                row.get("also", [])) <= {"llm", "diffusion"}:
            raise DataError(_PATH, f"[{name}].family and .also must be llm or diffusion")
        if not set(row.get("default_for", [])) <= set(KINDS):
            raise DataError(_PATH, f"[{name}].default_for must be among {list(KINDS)}")
        table[engine] = EngineTraits(engine, str(row["label"]), row["family"],
                                     frozenset(t for t in TRAITS if row.get(t)),
                                     dict(row.get("fallback", {})),
                                     tuple(row.get("also", ())),
                                     tuple(str(p).lower() for p in row.get("picked_for_quant", ())),
                                     tuple(str(p).lower() for p in row.get("picked_for_file", ())),
                                     tuple(row.get("default_for", ())),
                                     _chunk(name, row.get("prefill_chunk_tokens")))
    missing = set(Engine) - set(table)
    if missing:
        raise DataError(_PATH, f"no table for {sorted(missing)}")
    for kind in KINDS:
        defaults = [str(e) for e, t in table.items() if kind in t.default_for]
        if len(defaults) != 1:
            raise DataError(_PATH, f"{kind} needs exactly one engine with default_for, not "
                            f"{defaults}")
    return table


def _chunk(name: str, value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise DataError(_PATH, f"[{name}].prefill_chunk_tokens must be a whole number >= 1")
    return value


def prefill_chunk(engine: str | None) -> int | None:
    """How many tokens ``engine`` prefills at a time (None: the whole prompt at once)."""
    try:
        return engine_table()[Engine(engine)].prefill_chunk_tokens if engine else None
    except ValueError:
        return None


def default_engine(kind: Kind) -> Engine:
    """The engine a kind of job runs on when it names none and nothing picks another."""
    return next(e for e, t in engine_table().items() if kind in t.default_for)


@cache
def picked_engine(quant: str, checkpoint_source: str = "") -> Engine | None:
    """The engine an inference job's checkpoint file or quantization format implies when it
    names none (a GGUF file or format: llama.cpp; EXL2: exllamav2); the file decides first."""
    table = engine_table().items()
    source, q = checkpoint_source.lower(), quant.lower()
    for by_file, name in ((True, source), (False, q)):
        for engine, t in table:
            if name and name.startswith(t.picked_for_file if by_file else t.picked_for_quant):
                return engine
    return None


def traits(engine: str) -> EngineTraits:
    return engine_table()[Engine(engine)]


def has(engine: str | None, trait: Trait) -> bool:
    """Whether ``engine`` has ``trait`` (an unknown or missing engine has none)."""
    if engine is None:
        return False
    # the table's keys are Engine members (a StrEnum): an engine's id finds its member by
    # value, as Engine(engine) would, without the enum's call (asked per memory estimate)
    found = engine_table().get(engine)  # type: ignore[call-overload]
    return found is not None and trait in found.traits


@cache
def engines_with(trait: Trait) -> tuple[Engine, ...]:
    """The engines that have ``trait``, in the file's order."""
    return tuple(e for e, t in engine_table().items() if trait in t.traits)


def label(engine: str) -> str:
    """How an engine is named in a sentence ('vLLM', 'llama.cpp'); an unknown id as it is."""
    try:
        return engine_table()[Engine(engine)].label
    except ValueError:
        return engine


@cache
def labels() -> dict[str, str]:
    return {str(e): t.label for e, t in engine_table().items()}


def family_engines(family: Family) -> tuple[Engine, ...]:
    return tuple(e for e, t in engine_table().items() if family in t.families)


def fallbacks(kind: str) -> tuple[Engine, ...]:
    """The engines swapped in for a default the card lacks, most common first (``kind``:
    inference, training or diffusion)."""
    ranked = [(t.fallback[kind], e) for e, t in engine_table().items() if kind in t.fallback]
    return tuple(e for _, e in sorted(ranked))


@dataclass(frozen=True)
class NotModelled:
    """An engine people name that whichgpu does not model: why, and what to ask instead."""

    name: str
    why: str
    source: str
    use: tuple[tuple[str, str], ...] = ()  # request fields and values to ask instead


@cache
def _not_modelled() -> dict[str, NotModelled]:
    from whichgpu.parse_cache import cached_toml

    data = cached_toml("whichgpu", "data/engines_not_modelled.toml")
    table: dict[str, NotModelled] = {}
    for name, row in data.items():
        use = tuple((str(k), str(v)) for k, v in dict(row.get("use", {})).items())
        entry = NotModelled(name, str(row["why"]), str(row["source"]), use)
        for key in (name, *row.get("aliases", ())):
            table[str(key).lower()] = entry
    return table


def not_modelled(name: str) -> NotModelled | None:
    """The entry of an engine whichgpu knows of but does not model (None otherwise)."""
    return _not_modelled().get(str(name).strip().lower())



# ------------------------------------------------------------ what an engine does in code
# Everything else about an engine is data (the table above, its speed and memory constants).
# What takes code is its own module, ``whichgpu/engines/<engine>.py``, found here by the
# engine's name: a new engine is that module and its data, no list to extend. Such a module
# writes memory terms and command lines, so it sits above the export layer and nothing imports
# it by name; the layer that asks for a hook (the memory estimate, the export) names its type.
# what an engine's module may define: its memory reserve and runtime (the memory estimate),
# the note on its prefill (idem), its GGUF file types (estimate/memory/weights.py), its LoRA
# adapter slots (estimate/multi_lora.py), its command line and note over cards of different
# sizes (estimate/mixed_cards.py), what it does to fit a diffusion pipeline
# (estimate/diffusion_parallel.py) and what it did by itself to fit, in its words (the
# recommender's notes, advise/evaluate.py), its launch command and ROCm build (the export)
# Besides hooks, a module may state facts the diffusion estimate reads by name:
# STREAMS_UNASKED (it streams weights in by itself), ONE_DEVICE (an instance uses one GPU),
# MODEL_OFFLOAD_WORDS (its words for moving idle models off the GPU); see engines/comfyui.py;
# CPU_OFFLOAD_WORDS (its words for CPU offload, not diffusers' API names; engines/sglang.py).
# and the LLM estimate: SPLITS_UNEVEN_CARDS (it splits layers over cards of different sizes in
# any proportion: estimate/mixed_cards.py), GPU_BACKENDS (it is built for one of ggml's GPU
# backends: estimate/workload.py's --backend check), CONSUMER_GEMM (the precision and its why
# of its 16-bit GEMMs on consumer cards: estimate/speed/hardware.py); see engines/llamacpp.py.
HOOKS = ("memory_reserve", "runtime_term", "prefill_note", "gguf_file_type", "lora_slots",
         "tp_launch", "uneven_cards", "fit_note", "automatic_note", "launch", "rocm")


@cache
def module(engine: str | None) -> ModuleType | None:
    """``whichgpu.engines.<engine>``, or None for an engine without one (or not an engine: a
    trainer's name); ask it for a hook with ``getattr(module(e), "launch", None)``."""
    try:
        name = Engine(engine).value if engine is not None else None
    except ValueError:
        return None
    if name is None or importlib.util.find_spec(f"{__name__}.{name}") is None:
        return None
    return importlib.import_module(f"{__name__}.{name}")
