"""Typer commands generated from the request models (answers/requests.py).

Each field becomes an option (or an argument) with its flag, its default and its help, in the
order the model declares them (``--json`` last); the command parses what typer read into the
request model, so bad input gets the same one-line reason as on the web, then hands the
request to its command body, which calls the answer and renders it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Any

import typer
from pydantic_core import PydanticUndefined

from whichgpu.answers.fields import base_type, cli_of, flags, is_bool, is_list
from whichgpu.answers.request import Request
from whichgpu.cli import panels
from whichgpu.cli.strict import StrictCommand, StrictGroup, UsageError

#: the suffix of the option a positional argument is also accepted as (``gpu`` -> ``--gpu``)
AS_OPTION = "__as_option"

Body = Callable[..., None]


def _typer_type(model: type[Request], name: str) -> Any:
    """What typer parses a field as: its base type (an enum as text: the request model
    says what an unknown value means), optional unless required."""
    field = model.model_fields[name]
    base = base_type(field.annotation)
    if is_list(model, name):
        return list[str] | None
    if (isinstance(base, type) and issubclass(base, Enum)) or cli_of(model, name).text:
        base = str
    if field.is_required() and not cli_of(model, name).positional:
        return base
    return base | None


def _default(model: type[Request], name: str) -> Any:
    field = model.model_fields[name]
    if field.is_required() or cli_of(model, name).required:
        return ...
    default = field.get_default(call_default_factory=True)
    if default is PydanticUndefined:
        return ...
    if isinstance(default, Enum):
        return default.value
    if isinstance(default, list):
        return None  # typer: an empty repeatable option reads as None
    return default


def parameters(model: type[Request]) -> list[inspect.Parameter]:
    """The typer parameters of a request model's command."""
    names = [n for n in model.model_fields if n != "as_json"]
    if "as_json" in model.model_fields:
        names.append("as_json")
    out = []
    for name in names:
        cli = cli_of(model, name)
        if cli.skip:
            continue
        field = model.model_fields[name]
        help_text = cli.help or field.description
        default = _default(model, name)
        if cli.positional:
            info = typer.Argument(None if cli.flags else default, metavar=_bare(cli.metavar),
                                  help=help_text, show_default=False)
            if cli.flags:  # also accepted as an option: `gpu h100` or `gpu --gpu h100`
                out.append(inspect.Parameter(
                    name + AS_OPTION, inspect.Parameter.KEYWORD_ONLY,
                    default=typer.Option(None, *cli.flags, metavar=_bare(cli.metavar),
                                         help=f"The same as the {_bare(cli.metavar)} argument.",
                                         rich_help_panel=panels.panel(model, name)),
                    annotation=_typer_type(model, name) | None))
        else:
            decls = list(flags(model, name))
            if is_bool(model, name) and cli.negatable:
                decls[0] = f"{decls[0]}/--no-{decls[0].removeprefix('--')}"
            info = typer.Option(default, *decls, help=help_text,
                                metavar=panels.metavar(model, name),
                                rich_help_panel=panels.panel(model, name),
                                show_default=default not in (None, ..., False))
        out.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info,
                                     annotation=_typer_type(model, name)))
    return out


def _bare(metavar: str | None) -> str:
    """``[GPU]`` -> ``GPU`` (the usage line brackets an optional argument itself)."""
    text = metavar or "VALUE"
    inner = text[1:-1]
    if text.startswith("[") and text.endswith("]") and "[" not in inner and "]" not in inner:
        return inner
    return text


def _values(model: type[Request], kwargs: dict[str, Any]) -> dict[str, Any]:
    """What typer read, as the request model takes it (an empty list option is no value; a
    positional argument given as its option too must be given once)."""
    kwargs = dict(kwargs)
    for key in [k for k in kwargs if k.endswith(AS_OPTION)]:
        name, value = key.removesuffix(AS_OPTION), kwargs.pop(key)
        if value is None:
            continue
        if kwargs.get(name) not in (None, value):
            option = cli_of(model, name).flags[0]
            raise UsageError(
                f"{_bare(cli_of(model, name).metavar)} was given twice ({kwargs[name]!r} and "
                f"{option} {value!r}); give it once")
        kwargs[name] = value
    for name, field in model.model_fields.items():
        cli = cli_of(model, name)
        if cli.positional and cli.flags and field.is_required() and kwargs.get(name) is None:
            raise UsageError(f"Missing argument '{_bare(cli.metavar)}' (or "
                                   f"{cli.flags[0]} {_bare(cli.metavar)}).")
    return {k: v for k, v in kwargs.items()
            if not (v is None and is_list(model, k)) and k != "ctx"}


def help_of(model: type[Request]) -> str:
    """The command's help: the request model's docstring without the command's name."""
    doc = inspect.cleandoc(model.__doc__ or "")
    head, sep, rest = doc.partition(": ")
    if sep and head.startswith("``whichgpu"):
        doc = rest[:1].upper() + rest[1:]
    return "\n\n".join(" ".join(p.split()) for p in doc.split("\n\n"))


PROFILE = "profile__option"


def _takes_profile(model: type[Request]) -> bool:
    from whichgpu.answers.profiles import APPLIES

    return any(model.COMMAND in commands for commands in APPLIES.values())


def _apply_profile(model: type[Request], kwargs: dict[str, Any], ctx: Any,
                   name: str | None) -> None:
    """Fill what the command line left out from the profile (``--profile`` or the default)."""
    from whichgpu.answers import profiles
    from whichgpu.cli.common import note

    chosen = profiles.chosen(name)
    if chosen is None:
        return
    given = set()
    for key in kwargs:
        source = ctx.get_parameter_source(key) if ctx is not None else None
        if source is not None and source.name != "DEFAULT":
            given.add(key.removesuffix(AS_OPTION))
    label, profile = chosen
    filled = profiles.fill(model.COMMAND, kwargs, given, set(model.model_fields), profile)
    if filled:
        shown = ", ".join(f"{k}={kwargs[k]}" for k in filled)
        note(f"profile {label}{' (default)' if name is None else ''}: {shown}")


#: commands that ask questions, run a server or print their own progress: no spinner
NO_SPINNER = frozenset({"checklist", "serve", "bench", "bench model", "compare",
                        "prices refresh"})


def _spinner(model: type[Request], request: Request) -> Any:
    """A spinner on a terminal while the answer is computed (after a second), else nothing."""
    from contextlib import nullcontext

    from whichgpu.cli.common import Spinner

    if model.COMMAND in NO_SPINNER or getattr(request, "as_json", False) or not Spinner.wanted():
        return nullcontext()
    return Spinner(f"whichgpu {model.COMMAND} ...")


def command(model: type[Request], body: Body, *, context: bool = False) -> Callable[..., None]:
    """A typer command function for ``model``: typer's values -> the request -> ``body``
    (``body(request)``, or ``body(request, ctx)`` with ``context``)."""
    params = parameters(model)
    takes_profile = _takes_profile(model)
    if takes_profile:  # before --json, which stays last
        at = next((i for i, p in enumerate(params) if p.name == "as_json"), len(params))
        params.insert(at, inspect.Parameter(
            PROFILE, inspect.Parameter.KEYWORD_ONLY, annotation=str | None,
            default=typer.Option(None, "--profile", metavar="NAME", rich_help_panel=(
                panels.panel(model, "gpu") if "gpu" in model.model_fields else None),
                help="Your machine as 'whichgpu profile save' described it (default: the "
                     "default profile, if one is set).")))
    params.insert(0, inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                       annotation=typer.Context))

    def run(**kwargs: Any) -> None:
        ctx = kwargs.pop("ctx", None)
        if context and ctx is not None and ctx.invoked_subcommand is not None:
            return
        if takes_profile:
            _apply_profile(model, kwargs, ctx, kwargs.pop(PROFILE, None))
        request = model.parse(_values(model, kwargs))
        with _spinner(model, request):
            if context:
                body(request, ctx)
            else:
                body(request)

    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # for typer
    run.__annotations__ = {p.name: p.annotation for p in params}
    run.__name__ = model.COMMAND.split()[-1].replace("-", "_") or "command"
    run.__doc__ = help_of(model)
    return run


#: while cli/lazy.py loads one root command: its name (the other commands of its module are
#: not bound, see :func:`only`)
_only: str | None = None


@contextmanager
def only(root: str | None) -> Iterator[None]:
    """While registering a module's commands, bind only those under the root command
    ``root`` (``memory``; ``validate`` for ``validate speed``); None: every command."""
    global _only
    _only, before = root, _only
    try:
        yield
    finally:
        _only = before


def binding(root: str) -> bool:
    """Whether the commands under the root command ``root`` are bound now (see :func:`only`):
    a module names a model only then, so that a command's process defines no other command's
    model (answers/requests.py defines most of them on first use)."""
    return _only is None or _only == root


def bind(app: typer.Typer, model: type[Request], body: Body, *, name: str | None = None,
         callback: bool = False, **settings: Any) -> None:
    """Register ``model``'s command on ``app`` (as the group's callback with ``callback``);
    nothing while another root command is loaded alone (:func:`only`)."""
    if not binding(model.COMMAND.split()[0]):
        return
    fn = command(model, body, context=callback)
    if callback:
        settings.setdefault("cls", StrictGroup)
        app.callback(invoke_without_command=True, help=help_of(model), **settings)(fn)
        return
    settings.setdefault("cls", StrictCommand)
    app.command(name or model.COMMAND.split()[-1], help=help_of(model), **settings)(fn)
