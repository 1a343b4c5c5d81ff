"""Bounded memos for pure estimate functions whose first argument is a frozen spec.

A recommendation asks the same per-sequence questions (a model's KV cache at a context, the
attention FLOPs of a token) thousands of times across GPUs, counts and batch sizes. These
functions are pure: the answer depends only on the arguments and the calibration constants.
:func:`by_identity` remembers them keyed by the *identity* of the first argument (a
``ModelSpec`` hashes slowly: every field, every layer) and the value of the others; the
memo holds the object itself, so its id is never reused while the entry lives.

The memos empty themselves when a constant is overridden (``constants.overridden``, the
calibration scripts), and :func:`reference` switches them off (the reference path
``tests/test_answers_identical.py`` compares the memoized answers with); so does
``WHICHGPU_NO_MEMO=1`` in the environment.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from whichgpu.estimate import constants

F = TypeVar("F", bound=Callable[..., Any])

_ENABLED = [os.environ.get("WHICHGPU_NO_MEMO", "").strip().lower() in ("", "0", "false", "no")]
_TABLES: list[dict[Any, Any]] = []


def by_identity(size: int = 4096, identities: int = 1) -> Callable[[F], F]:
    """Memoize ``f(spec, *rest)`` (positional arguments only) in a table of at most ``size``
    entries (emptied when full): the first ``identities`` arguments by identity, the rest
    (hashable) by value."""

    def wrap(f: F) -> F:
        table: dict[Any, tuple[tuple[Any, ...], Any]] = {}
        seen = [constants.generation()]
        _TABLES.append(table)
        fresh = constants._GENERATION  # read in place: the hot path calls nothing

        if identities == 1:  # the common case, without the general path's loops
            @functools.wraps(f)
            def memo1(*args: Any) -> Any:
                if not _ENABLED[0]:
                    return f(*args)
                if seen[0] != fresh[0]:
                    table.clear()
                    seen[0] = fresh[0]
                held = args[0]
                key = (id(held), *args[1:])
                hit = table.get(key)
                if hit is not None and hit[0] is held:
                    return hit[1]
                value = f(*args)
                if len(table) >= size:
                    table.clear()
                table[key] = (held, value)
                return value

            return memo1  # type: ignore[return-value]

        if identities == 2:  # (workload, hardware): the decode step's per-configuration rates
            @functools.wraps(f)
            def memo2(*args: Any) -> Any:
                if not _ENABLED[0]:
                    return f(*args)
                if seen[0] != fresh[0]:
                    table.clear()
                    seen[0] = fresh[0]
                one, two = args[0], args[1]
                key = (id(one), id(two), *args[2:])
                hit = table.get(key)
                if hit is not None and hit[0][0] is one and hit[0][1] is two:
                    return hit[1]
                value = f(*args)
                if len(table) >= size:
                    table.clear()
                table[key] = ((one, two), value)
                return value

            return memo2  # type: ignore[return-value]

        @functools.wraps(f)
        def memo(*args: Any) -> Any:
            if not _ENABLED[0]:
                return f(*args)
            if seen[0] != fresh[0]:
                table.clear()
                seen[0] = fresh[0]
            held = args[:identities]
            key = (*map(id, held), *args[identities:])
            hit = table.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], held, strict=True)):
                return hit[1]
            value = f(*args)
            if len(table) >= size:
                table.clear()
            table[key] = (held, value)
            return value

        return memo  # type: ignore[return-value]

    return wrap


def by_settings(size: int = 4096) -> Callable[[F], F]:
    """Memoize ``f(workload, hardware, *rest)`` (positional arguments only) by value: every
    setting of the workload but its ``batch`` (the model by identity), every field of the
    hardware view (the GPU by identity), the rest as given; for step times that take their
    batch as an argument and are asked again on each copy of a workload (a copy per batch
    tried, per users per replica, per changed job). An unhashable setting: no memo.

    The workload's settings and the hardware view's fields are each read and hashed once
    per object (:func:`_value_key`: a number that stands for them), not once per call."""

    def wrap(f: F) -> F:
        table: dict[Any, tuple[Any, Any]] = {}
        seen = [constants.generation()]
        _TABLES.append(table)
        fresh = constants._GENERATION

        @functools.wraps(f)
        def memo(w: Any, hw: Any, *rest: Any) -> Any:
            if not _ENABLED[0]:
                return f(w, hw, *rest)
            if seen[0] != fresh[0]:
                table.clear()
                seen[0] = fresh[0]
            model = w.model
            settings, view = _value_key(w, _settings_of), _value_key(hw, _hardware_of)
            if settings is None or view is None:  # an unhashable setting
                return f(w, hw, *rest)
            key = (id(model), settings, view, *rest)
            hit = table.get(key)
            if hit is not None and hit[0] is model:
                return hit[1]
            value = f(w, hw, *rest)
            if len(table) >= size:
                table.clear()
            table[key] = (model, value)
            return value

        return memo  # type: ignore[return-value]

    return wrap


# by_settings' value keys: an object (by identity, held) -> the number of its value (its
# settings, equal values one number); numbers are never reused, so emptying these tables
# (when full, or by clear()) only costs misses
_KEY_OF: dict[int, tuple[Any, int]] = {}
_NUMBER_OF: dict[Any, tuple[Any, int]] = {}
_NUMBERS = itertools.count()
_TABLES += [_KEY_OF, _NUMBER_OF]


def _value_key(obj: Any, value_of: Callable[[Any], tuple[Any, Any]]) -> int | None:
    """The number standing for ``obj``'s value (None: unhashable). ``value_of`` gives (the
    value, an object the value names by identity and holds)."""
    hit = _KEY_OF.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    value, held = value_of(obj)
    try:
        known = _NUMBER_OF.get(value)
    except TypeError:
        return None
    if known is None or known[0] is not held:
        if len(_NUMBER_OF) >= 8192:
            _NUMBER_OF.clear()
        known = _NUMBER_OF[value] = (held, next(_NUMBERS))
    if len(_KEY_OF) >= 8192:
        _KEY_OF.clear()
    _KEY_OF[id(obj)] = (obj, known[1])
    return known[1]


_GETTERS: list[Callable[[Any], tuple[Any, ...]]] = []


def _settings_of(w: Any) -> tuple[Any, Any]:
    """Every Workload field but the model and the batch (the model's identity with them)."""
    if not _GETTERS:
        _GETTERS.append(_settings_getter())
    return (id(w.model), _GETTERS[0](w)), w.model


def _hardware_of(hw: Any) -> tuple[Any, Any]:
    """Every field of a hardware view, the GPU by identity."""
    return (id(hw.gpu), hw.count, hw.link, hw.fabric, hw.compute_scale, hw.bandwidth_scale,
            hw.calibration, hw.per_server, hw.network), hw.gpu


def _settings_getter() -> Callable[[Any], tuple[Any, ...]]:
    """Every Workload field but the model and the batch, as one tuple."""
    from dataclasses import fields
    from operator import attrgetter

    from whichgpu.estimate.workload import Workload

    getter: Callable[[Any], tuple[Any, ...]] = attrgetter(
        *(f.name for f in fields(Workload) if f.name not in ("model", "batch")))
    return getter


#: Where a model spec comes from when something else keeps it anyway (the presets, the Hub
#: cache): the memos that outlive one answer hold only these (a pasted config's spec is its
#: answer's own, and the web counts it against that answer's memory: issue 36)
SHARED_SOURCES = ("preset:", "hub:")


def shared(model: Any) -> bool:
    """Whether ``model`` may be held by a memo that outlives one answer (see SHARED_SOURCES)."""
    return str(getattr(model, "source", "")).startswith(SHARED_SOURCES)


_WORKLOAD_GETTER: list[Callable[[Any], tuple[Any, ...]]] = []


def workload_settings(w: Any) -> tuple[Any, ...]:
    """Every Workload field but the model (the batch included), as one tuple: with the
    model's identity, the value key of a workload for the memos that outlive one answer
    (two questions that differ only in their amount of work size and time equal workloads).
    May hold an unhashable setting: the caller catches the TypeError of the lookup."""
    if not _WORKLOAD_GETTER:
        from dataclasses import fields
        from operator import attrgetter

        from whichgpu.estimate.workload import Workload

        _WORKLOAD_GETTER.append(attrgetter(
            *(f.name for f in fields(Workload) if f.name != "model")))
    return _WORKLOAD_GETTER[0](w)


class Table:
    """A bounded memo table keyed by value (emptied when full or when a constant changes;
    never used in reference mode): for answers that equal workloads share although they are
    different objects."""

    def __init__(self, size: int = 1024) -> None:
        self._data: dict[Any, Any] = {}
        self._size = size
        self._seen = constants.generation()
        self._fresh = constants._GENERATION  # read in place: the hot path calls nothing
        _TABLES.append(self._data)

    def get(self, key: Any) -> Any | None:
        if not _ENABLED[0]:
            return None
        if self._seen != self._fresh[0]:
            self._data.clear()
            self._seen = self._fresh[0]
        return self._data.get(key)

    def put(self, key: Any, value: Any) -> Any:
        if _ENABLED[0]:
            if len(self._data) >= self._size:
                self._data.clear()
            self._data[key] = value
        return value


def enabled() -> bool:
    """Whether the memos are on (off in the reference path and with WHICHGPU_NO_MEMO=1)."""
    return _ENABLED[0]


def clear() -> None:
    """Empty every memo."""
    for table in _TABLES:
        table.clear()


@contextmanager
def reference() -> Iterator[None]:
    """Compute without the memos (the reference path), then switch them back on."""
    old = _ENABLED[0]
    _ENABLED[0] = False
    clear()
    try:
        yield
    finally:
        _ENABLED[0] = old
