"""Exceptions that say what went wrong and what to do next.

Every error a user can cause derives from :class:`InputError` (CLI exit status 2, HTTP 422);
everything else derives from :class:`WhichGPUError` (exit status 1).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class WhichGPUError(Exception):
    """Base class: a failure the user cannot fix by changing the input (exit 1)."""

    exit_code = 1


class InputError(WhichGPUError, ValueError):
    """Bad input: a value, a flag, an id or a file the user gave (exit 2, HTTP 422)."""

    exit_code = 2


class NotFoundError(InputError, LookupError):
    """An id that names nothing we know, with the closest known names."""

    def __init__(self, kind: str, name: str, known: Iterable[str], hint: str = "") -> None:
        self.kind = kind
        self.name = name
        self.suggestions = closest(name, known)
        message = f"unknown {kind} {name!r}"
        if self.suggestions:
            message += f": did you mean {', '.join(self.suggestions)}?"
        if hint:
            message += f" ({hint})"
        super().__init__(message)


class DataError(InputError):
    """A data file (catalog, offers, config.json, price file) that cannot be read as it stands.

    The message names the file and, where known, the row and the field.
    """

    def __init__(self, path: object, problem: str, *, row: int | None = None,
                 field: str | None = None) -> None:
        self.path = str(path)
        self.row = row
        self.field = field
        where = self.path
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {problem}")


def closest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Names in ``known`` that look most like ``name`` (case-insensitive), best first.

    Names that start with what was typed come first ("h10" -> the h100 variants), then names
    that contain it, then the closest spellings.
    """
    known = list(dict.fromkeys(known))
    lowered = {k.lower(): k for k in known}
    needle = name.lower().strip()
    if not needle:
        return []
    starts = sorted((k for k in lowered if k.startswith(needle)), key=len)
    contains = sorted((k for k in lowered if needle in k and k not in starts), key=len)
    similar = difflib.get_close_matches(needle, list(lowered), n=n, cutoff=0.5)
    ordered = list(dict.fromkeys(starts + contains + similar))
    return [lowered[k] for k in ordered[:n]]
