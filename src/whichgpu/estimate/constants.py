"""Calibration constants as data (``data/*.toml``): every value with its source."""

from __future__ import annotations

import tomllib
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Constant:
    name: str
    value: Any
    source: str
    note: str | None = None


@cache
def _load(table: str) -> dict[str, Constant]:
    """A table's constants (read once per process; parsed once per change of the file or of
    this module, see parse_cache.py)."""
    from pathlib import Path

    from whichgpu.parse_cache import cached_parse

    data = resources.files("whichgpu.estimate").joinpath(f"data/{table}.toml")
    if not isinstance(data, Path):  # a zipped package: parse each time
        return _parse(data.read_text("utf-8"))
    return cached_parse(table, data, Path(__file__),
                        lambda: _parse(data.read_text("utf-8")), dict)


def _parse(text: str) -> dict[str, Constant]:
    raw = tomllib.loads(text)["constant"]
    return {k: Constant(k, v["value"], v["source"], v.get("note")) for k, v in raw.items()}


def memory_constant(name: str) -> Constant:
    return _load("memory_constants")[name]


def memory_value(name: str) -> Any:
    return _load("memory_constants")[name].value


def all_constants(table: str) -> dict[str, Constant]:
    return dict(_load(table))


def speed_constant(name: str) -> Constant:
    return _load("speed_constants")[name]


def speed_value(name: str) -> Any:
    return _load("speed_constants")[name].value


def per_key(name: str, key: str, table: str = "speed_constants") -> float:
    """A per-engine/per-format constant: ``value[key]`` or ``value['default']``."""
    value = _load(table)[name].value
    return float(value.get(key, value.get("default")))


_GENERATION = [0]  # bumped when a constant changes: the estimate memos (memo.py) empty then


def generation() -> int:
    """How many times a constant was overridden or restored (the memos' freshness)."""
    return _GENERATION[0]


@contextmanager
def overridden(table: str, name: str, value: Any):
    """Temporarily replace one constant (for the calibration script, never for answers)."""
    constants = _load(table)
    old = constants[name]
    constants[name] = Constant(name, value, old.source, old.note)
    _GENERATION[0] += 1
    try:
        yield
    finally:
        constants[name] = old
        _GENERATION[0] += 1
