"""How a request field is written on each surface: one declaration per field.

A request model (answers/requests.py) is a pydantic model; each field is annotated with its
type, its bounds and its help text (pydantic's ``description``, also the OpenAPI text), and
with :class:`Cli` (the flag, its short forms, ``--no-`` switch, positional argument) and
:class:`Web` (the web's own words for the field, a bound the server adds) where they differ
from what the field's name implies. The command line is generated from these (cli/bind.py),
the REST API validates with the models themselves, and the pages label their inputs with
:class:`Web` (so a page never shows a CLI flag).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from whichgpu.messages import Message


def N_(text: str) -> str:
    """Mark a string for the web's message catalog (translated where it is shown)."""
    return text


@dataclass(frozen=True)
class Cli:
    """A field on the command line. ``flags``: its option names (default ``--`` + the name
    with ``-``); ``negatable``: a boolean with a ``--no-`` form; ``positional``: an argument
    (``required`` on the command line even where the web may leave it out, for a pasted
    config; with ``flags``, the same value is also accepted as that option, e.g. ``gpu h100``
    or ``gpu --gpu h100``); ``help``: the command line's own help when it differs from the field's
    description; ``skip``: a field the command line does not take (the web's own); ``text``:
    a number the command line reads as text for the model's own reader (``170W``)."""

    flags: tuple[str, ...] = ()
    negatable: bool = False
    positional: bool = False
    required: bool = False
    metavar: str | None = None
    help: str | None = None
    skip: bool = False
    text: bool = False


@dataclass(frozen=True)
class Web:
    """A field on the web. ``label``/``hint``: the page's words for it (marked for the
    catalog); ``max``, ``max_length`` (of a text, or of each item of a list) and
    ``max_items``: bounds only the server applies (what one request may cost it; a text
    field without ``max_length`` takes at most 40 characters); ``skip``: a field the web
    never takes (files on the server's disk, the store's path)."""

    label: str | None = None
    hint: str | None = None
    max: float | None = None
    max_length: int | None = None
    max_items: int | None = None
    skip: bool = False


@dataclass(frozen=True)
class Text:
    """A sentence of the request layer, by its message id and English template (the web's
    engine catalog translates it; message extraction reads these)."""

    id: str
    template: str

    def __call__(self, **params: Any) -> Message:
        return Message(self.id, self.template, params)


@dataclass(frozen=True)
class Choice:
    """A field whose value is one of a vocabulary: ``unknown`` is the sentence for any other
    value (``{v}`` the value, ``{choices}`` the vocabulary)."""

    unknown: Text


_CLI = Cli()
_WEB = Web()


def _meta(model: type[BaseModel], name: str, kind: type) -> Any:
    field = model.model_fields[name]
    for m in field.metadata:
        if isinstance(m, kind):
            return m
    return None


def cli_of(model: type[BaseModel], name: str) -> Cli:
    return _meta(model, name, Cli) or _CLI


def web_of(model: type[BaseModel], name: str) -> Web:
    return _meta(model, name, Web) or _WEB


def choice_of(model: type[BaseModel], name: str) -> Choice | None:
    return _meta(model, name, Choice)


def flags(model: type[BaseModel], name: str) -> tuple[str, ...]:
    """The field's option names on the command line (``--kv-dtype``; ``--gpu-layers``,
    ``-ngl``); a positional argument has none."""
    cli = cli_of(model, name)
    if cli.positional:
        return ()
    return cli.flags or ("--" + name.replace("_", "-"),)


def option_flags(model: type[BaseModel], name: str) -> tuple[str, ...]:
    """Every option name the command line takes the field under: its flags, or for a
    positional argument the option it is also accepted as (none if it has none)."""
    cli = cli_of(model, name)
    if cli.positional:
        return cli.flags
    return flags(model, name)


def flag(model: type[BaseModel], name: str) -> str:
    """The field's main flag (``--kv-dtype``)."""
    found = flags(model, name)
    return found[0] if found else name.upper()


def negative_flag(model: type[BaseModel], name: str) -> str | None:
    """The ``--no-`` form of a negatable boolean field."""
    if not cli_of(model, name).negatable:
        return None
    return "--no-" + flag(model, name).removeprefix("--")


def base_type(annotation: Any) -> Any:
    """``str | None`` -> ``str``; ``list[str]`` stays; an Annotated type is unwrapped."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, _UnionType) and len(args) == 1:
        return base_type(args[0])
    return annotation


_UnionType = type(int | None)


def is_list(model: type[BaseModel], name: str) -> bool:
    return typing.get_origin(base_type(model.model_fields[name].annotation)) is list


def is_bool(model: type[BaseModel], name: str) -> bool:
    return base_type(model.model_fields[name].annotation) is bool


def label(model: type[BaseModel], name: str) -> str:
    """The web's words for a field (its ``Web.label``), else the name with spaces."""
    return web_of(model, name).label or name.replace("_", " ")
