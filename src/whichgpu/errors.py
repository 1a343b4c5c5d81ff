"""Exceptions that say what went wrong and what to do next.

Every error a user can cause derives from :class:`InputError` (CLI exit status 2, HTTP 422);
everything else derives from :class:`WhichGPUError` (exit status 1).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from whichgpu.messages import Join, data_text, msg

#: the things a name can fail to name, in words (the web says them in its language)
_KINDS = {"GPU": msg("kind.gpu", "GPU"), "model": msg("kind.model", "model"),
          "price source": msg("kind.price_source", "price source"),
          "quantization format": msg("kind.quant", "quantization format"),
          "precision": msg("kind.precision", "precision"),
          "URL source": msg("kind.url_source", "URL source"),
          "imported feed": msg("kind.imported_feed", "imported feed"),
          "offer set": msg("kind.offer_set", "offer set"),
          "sort key": msg("kind.sort_key", "sort key")}


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
        what = _KINDS.get(kind) or data_text(kind)
        near = Join(self.suggestions)
        if self.suggestions and hint:
            message = msg("unknown.near.hint", "unknown {kind} {name!r}: did you mean {near}? "
                          "({hint})", kind=what, name=name, near=near, hint=hint)
        elif self.suggestions:
            message = msg("unknown.near", "unknown {kind} {name!r}: did you mean {near}?",
                          kind=what, name=name, near=near)
        elif hint:
            message = msg("unknown.hint", "unknown {kind} {name!r} ({hint})", kind=what,
                          name=name, hint=hint)
        else:
            message = msg("unknown", "unknown {kind} {name!r}", kind=what, name=name)
        super().__init__(message)


class DataError(InputError):
    """A data file (catalog, offers, config.json, price file) that cannot be read as it stands.

    The message names the file and, where known, the row and the field.
    """

    def __init__(self, path: object, problem: str, *, row: int | None = None,
                 field: str | None = None) -> None:
        self.path = str(path)
        where = path if isinstance(path, str) else self.path  # a Message names a paste
        self.row = row
        self.field = field
        if row is not None and field is not None:
            text = msg("data.row_field", "{path}, row {row}, field {field!r}: {problem}",
                       path=where, row=row, field=field, problem=problem)
        elif row is not None:
            text = msg("data.row", "{path}, row {row}: {problem}", path=where, row=row,
                       problem=problem)
        elif field is not None:
            text = msg("data.field", "{path}, field {field!r}: {problem}", path=where,
                       field=field, problem=problem)
        else:
            text = msg("data", "{path}: {problem}", path=where, problem=problem)
        super().__init__(text)


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
