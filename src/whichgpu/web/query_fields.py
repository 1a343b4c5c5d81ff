"""FastAPI's check "is this query field a list?", remembered per field type.

A GET question is a request model read from the query string (``Annotated[Model, Query()]``).
For every field of the model and every request, FastAPI 0.165 asks twice whether the field's
type is a sequence (``fastapi._compat.field_annotation_is_sequence``: a walk through
``Annotated`` and unions with ``issubclass`` tests), ~80 fields on ``/recommend``: about half
of the 0.7 ms FastAPI spent reading a ``/recommend`` query (issue 27; measured 2026-12-07 on
the shared 2-core machine). The answer depends only on the type, so it is remembered per type
(a type that cannot be a dict key is asked each time, as before). :func:`install` replaces the
name that ``fastapi.dependencies.utils`` calls, once per process; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_ORIGINAL: list[Callable[[Any], bool]] = []
_KNOWN: dict[Any, bool] = {}


def install() -> None:
    """Use the remembered check in FastAPI's request reading (idempotent)."""
    from fastapi.dependencies import utils

    if _ORIGINAL or not callable(getattr(utils, "field_annotation_is_sequence", None)):
        return  # installed already, or a FastAPI without it: nothing to speed up
    _ORIGINAL.append(utils.field_annotation_is_sequence)
    utils.field_annotation_is_sequence = is_sequence


def is_sequence(annotation: Any) -> bool:
    """``field_annotation_is_sequence(annotation)``, remembered per annotation."""
    try:
        return _KNOWN[annotation]
    except KeyError:
        pass
    except TypeError:  # not hashable: asked each time
        return _ORIGINAL[0](annotation)
    found = _ORIGINAL[0](annotation)
    if len(_KNOWN) < 4096:  # the request models' field types: a few hundred at most
        _KNOWN[annotation] = found
    return found
