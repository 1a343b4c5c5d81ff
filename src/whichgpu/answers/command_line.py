"""The command line that asks the same question as a request (shown under each web result:
"the same numbers from the command line"), written from the request model's own flags."""

from __future__ import annotations

import shlex
from enum import Enum
from typing import Any

from whichgpu.answers.fields import cli_of, flag, negative_flag
from whichgpu.answers.inputs.values import said
from whichgpu.answers.request import Request


def _default(model: type[Request], name: str) -> Any:
    field = model.model_fields[name]
    return None if field.is_required() else field.get_default(call_default_factory=True)


def command_line(q: Request, *, skip: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> str:
    """``whichgpu CMD ...`` with every value that differs from the command line's default,
    each under its flag (a False for an on-by-default switch is its ``--no-`` form); the
    positional arguments first, when set; a value read as it validated (``8k``, ``2s@p95``)
    in the words it was written. ``skip``: fields left out; ``extra``: flags added.
    """
    model = type(q)
    parts = ["whichgpu", *model.COMMAND.split()]
    names = [n for n in model.model_fields if n not in skip and n not in ("config", "as_json")
             and not cli_of(model, n).skip]
    for name in names:
        if cli_of(model, name).positional:
            value = getattr(q, name)
            if value not in (None, "", []):
                parts += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    for name in names:
        if cli_of(model, name).positional:
            continue
        value, default = said(getattr(q, name)), _default(model, name)
        if value is None or value == [] or value == default or (
                value is False and default is None):
            continue
        option = flag(model, name)
        if isinstance(value, bool):
            off = negative_flag(model, name)
            if value:
                parts.append(option)
            elif off:
                parts.append(off)
        elif isinstance(value, list):
            for v in value:
                parts += [option, str(v)]
        elif isinstance(value, Enum):
            parts += [option, str(value.value)]
        elif isinstance(value, float):
            parts += [option, f"{value:g}"]
        else:
            parts += [option, str(value)]
    parts += list(extra)
    return " ".join(shlex.quote(p) for p in parts)
