"""A number input's ``min``, ``max`` and ``step`` from its request field's own bounds, so the
browser accepts exactly what the server does: decimals where the field is a float (PUE 1.3,
a load of 0.7, 2.5 years), whole numbers where it is an int, nothing below or above the bounds
(the server still checks, and says why in the page's words).

The attributes are built here, never written in a template as text (Jinja escaped such text:
``step="&#34;any&#34;"`` made every decimal invalid on /rent-or-buy).
"""

from __future__ import annotations

import types
import typing
from typing import Any, cast

import annotated_types as at
from markupsafe import Markup, escape
from pydantic import BaseModel

from whichgpu.answers.fields import web_of


def _kind(annotation: Any) -> type | None:
    """int or float from ``int | None``, ``Annotated[float | None, ...]``; else None."""
    args = typing.get_args(annotation) if isinstance(annotation, types.UnionType) or \
        typing.get_origin(annotation) is typing.Union else (annotation,)
    for a in args:
        if a in (int, float):
            return a
    return None


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def number_attrs(model: type[BaseModel], name: str) -> Markup:
    """``type="number" min=".." max=".." step=".."`` for field ``name`` of ``model``
    (pydantic's ge/gt/le/lt and the web server's own ``Web(max=...)``)."""
    field = model.model_fields[name]
    kind = _kind(field.annotation)
    if kind is None:
        raise TypeError(f"{model.__name__}.{name} is not a number field")
    low = high = None
    for m in field.metadata:
        if isinstance(m, at.Ge | at.Gt):
            low = float(cast(float, m.ge if isinstance(m, at.Ge) else m.gt))
            if kind is int and isinstance(m, at.Gt):
                low += 1
        elif isinstance(m, at.Le | at.Lt):
            high = float(cast(float, m.le if isinstance(m, at.Le) else m.lt))
    cap = web_of(model, name).max
    if cap is not None:
        high = cap if high is None else min(high, cap)
    return bounds_attrs(kind is int, low, high)


def bounds_attrs(whole: bool, low: float | None = None, high: float | None = None) -> Markup:
    """The attributes of a number input taking whole numbers or decimals within bounds."""
    parts = ['type="number"', f'inputmode="{"numeric" if whole else "decimal"}"',
             f'step="{"1" if whole else "any"}"']
    if low is not None:
        parts.append(f'min="{escape(_number(low))}"')
    if high is not None:
        parts.append(f'max="{escape(_number(high))}"')
    return Markup(" ".join(parts))


def field_attrs(command: str, name: str) -> Markup:
    """:func:`number_attrs` of a request model by its class name (for the templates)."""
    from whichgpu.answers import requests

    return number_attrs(getattr(requests, command), name)
