"""Reading fields of a config.json with checks: every bad value is a DataError naming the
file and the field (missing, wrong type, or outside what any real model has).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Mapping
from typing import Any

from whichgpu.errors import DataError

_MISSING = object()

# Upper bounds no real model comes near (the largest public models have ~10^2 layers,
# ~10^4-10^5 hidden, ~10^6 vocabulary, ~10^7 context). Past these a config is broken.
LIMITS: dict[str, int] = {
    "layers": 100_000,
    "hidden": 1_000_000,
    "heads": 100_000,
    "intermediate": 10_000_000,
    "vocab": 100_000_000,
    "context": 1_000_000_000,
    "experts": 1_000_000,
    "default": 1_000_000_000,
}


class ConfigReader:
    """Typed access to a config mapping; ``origin`` names the file in error messages."""

    def __init__(self, data: Any, origin: str, prefix: str = "") -> None:
        if not isinstance(data, Mapping):
            where = prefix.rstrip(".") or None
            raise DataError(origin, f"expected a JSON object, got {_kind(data)}", field=where)
        self.data = data
        self.origin = origin
        self.prefix = prefix

    # ------------------------------------------------------------------ helpers
    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def raw(self, name: str, default: Any = None) -> Any:
        value = self.data.get(name)
        return default if value is None else value

    def _fail(self, name: str, problem: str) -> DataError:
        return DataError(self.origin, problem, field=self.prefix + name)

    def _find(self, names: tuple[str, ...]) -> tuple[str, Any]:
        for n in names:
            if self.data.get(n) is not None:
                return n, self.data[n]
        return names[0], _MISSING

    def sub(self, name: str) -> ConfigReader:
        """A nested object (``text_config``) with the same checks and a dotted field name."""
        value = self.data.get(name)
        if value is None:
            raise self._fail(name, "required object is missing")
        return ConfigReader(value, self.origin, f"{self.prefix}{name}.")

    # ------------------------------------------------------------------ typed getters
    def int(self, *names: str, default: Any = _MISSING, lo: int = 1,
            limit: str = "default") -> int:
        """An integer field (the first of ``names`` present); ``4096.0`` is accepted."""
        name, value = self._find(names)
        if value is _MISSING:
            if default is _MISSING:
                raise self._fail(name, "required field is missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._fail(name, f"expected an integer, got {_kind(value)} {value!r:.40}")
        if isinstance(value, float):
            if not math.isfinite(value) or value != int(value):
                raise self._fail(name, f"expected an integer, got {value!r}")
            value = int(value)
        hi = LIMITS[limit]
        if value < lo:
            raise self._fail(name, f"must be at least {lo}, got {value}")
        if value > hi:
            raise self._fail(name, f"{value:,} is not a plausible value (at most {hi:,})")
        return value

    def opt_int(self, *names: str, lo: builtins.int = 1,
                limit: builtins.str = "default") -> builtins.int | None:
        name, value = self._find(names)
        if value is _MISSING:
            return None
        return self.int(name, lo=lo, limit=limit)

    def bool(self, *names: str, default: bool = False) -> bool:
        name, value = self._find(names)
        if value is _MISSING:
            return default
        if not isinstance(value, bool):
            raise self._fail(name, f"expected true or false, got {_kind(value)} {value!r:.40}")
        return value

    def float(self, *names: str, default: Any = _MISSING) -> float:
        name, value = self._find(names)
        if value is _MISSING:
            if default is _MISSING:
                raise self._fail(name, "required field is missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
                value):
            raise self._fail(name, f"expected a number, got {_kind(value)} {value!r:.40}")
        return float(value)

    def str(self, *names: str, default: Any = _MISSING) -> str:
        name, value = self._find(names)
        if value is _MISSING:
            if default is _MISSING:
                raise self._fail(name, "required field is missing")
            return default
        if not isinstance(value, str):
            raise self._fail(name, f"expected a string, got {_kind(value)} {value!r:.40}")
        return value

    def int_list(self, name: builtins.str, *, lo: builtins.int = 0) -> list[builtins.int]:
        value = self.data.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= lo for v in value):
            raise self._fail(name, f"expected a list of integers, got {value!r:.60}")
        return list(value)

    def str_list(self, name: builtins.str) -> list[builtins.str] | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._fail(name, f"expected a list of strings, got {value!r:.60}")
        return list(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
