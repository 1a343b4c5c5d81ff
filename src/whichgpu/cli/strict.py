"""Commands that refuse an option given twice.

click keeps the last value of a single-valued option and drops the others silently, so
``--gpu h100 --gpu a100 --count 2`` used to price two A100s. Every generated command (and
group) uses these classes: an option that takes one value, given more than once, is a usage
error (exit 2) that names the option and the values.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from typer.core import TyperCommand, TyperGroup

# The click typer runs on (typer 0.2x ships its own copy, typer._click; older ones use click).
_CORE: Any = sys.modules[TyperCommand.__mro__[1].__module__]
UsageError: Any = importlib.import_module(
    _CORE.__name__.rpartition(".")[0] + ".exceptions").UsageError


def _is_option(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "option"


def _single_valued(command: Any, ctx: Any) -> dict[str, Any]:
    """Every spelling of each option that takes exactly one value, to its parameter."""
    out: dict[str, Any] = {}
    for param in command.get_params(ctx):
        if not _is_option(param) or param.is_flag or param.count:
            continue
        if param.multiple or param.nargs != 1:
            continue
        for name in (*param.opts, *param.secondary_opts):
            out[name] = param
    return out


def _takes_value(command: Any, ctx: Any) -> set[str]:
    """Spellings of every option that consumes the next argument (so it is skipped)."""
    names: set[str] = set()
    for param in command.get_params(ctx):
        if _is_option(param) and not param.is_flag and not param.count:
            names.update(param.opts)
    return names


def repeated(command: Any, ctx: Any, args: list[str],
             *, stop_at_argument: bool) -> tuple[str, list[str]] | None:
    """The first single-valued option ``args`` give twice, with the values given; None if
    none is. A group stops at its first argument (the subcommand's own options follow)."""
    single = _single_valued(command, ctx)
    valued = _takes_value(command, ctx)
    seen: dict[str, list[str]] = {}
    spelt: dict[str, str] = {}
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            break
        name, eq, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in valued and not eq:
            value = args[i] if i < len(args) else ""
            i += 1
        elif not token.startswith("-") or token == "-":
            if stop_at_argument:
                break
            continue
        param = single.get(name)
        if param is None or param.name is None:
            continue
        values = seen.setdefault(param.name, [])
        values.append(value)
        spelt.setdefault(param.name, name)
        if len(values) > 1:
            return spelt[param.name], values
    return None


def _refuse_repeats(command: Any, ctx: Any, args: list[str],
                    *, stop_at_argument: bool) -> None:
    if ctx.resilient_parsing:  # shell completion parses partial lines: never refuse there
        return
    found = repeated(command, ctx, args, stop_at_argument=stop_at_argument)
    if found is not None:
        flag, values = found
        shown = ", ".join(repr(v) for v in values)
        raise UsageError(f"{flag} was given {len(values)} times ({shown}); it takes one "
                               "value: give it once", ctx)


def _format_help(command: Any, ctx: Any) -> None:
    from rich.console import Console

    from whichgpu.cli.help import render

    render(command, ctx, Console(highlight=False))


class StrictCommand(TyperCommand):
    """A typer command that refuses a single-valued option given twice (its help: cli/help.py)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _format_help(self, ctx)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _refuse_repeats(self, ctx, args, stop_at_argument=False)
        result: Any = super().parse_args(ctx, args)
        return list(result)


class StrictGroup(TyperGroup):
    """A typer group (a command with subcommands) that refuses its own options twice."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _format_help(self, ctx)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _refuse_repeats(self, ctx, args, stop_at_argument=True)
        result: Any = super().parse_args(ctx, args)
        return list(result)
