"""Command help that reads at 80 columns: options grouped into panels, each flag whole.

typer's rich help puts every spelling of an option in its own column (``--x``, ``--no-x``,
the type, the help), so a panel with one long switch squeezed the rest and cut flag names
("--tokens-per-s-ea…"). Here each option is two cells: its names (one spelling a line, the
metavar after the flag when it fits) and its help, which wraps on words. Panels are the
``rich_help_panel`` each option was declared with (cli/panels.py), in a fixed order.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from whichgpu.cli.panels import ARGUMENTS, ORDER, OTHER

#: the widest a name line gets before the metavar moves to a line of its own
NAME_WIDTH = 28


def _names(param: Any) -> Text:
    """An option's spellings, one a line, with its metavar; an argument's metavar."""
    if getattr(param, "param_type_name", "") != "option":
        return Text(param.metavar or str(param.name).upper(), style="bold cyan")
    lines = [", ".join(param.opts)]
    if len(lines[0]) > NAME_WIDTH:
        lines = list(param.opts)
    lines += list(param.secondary_opts)
    metavar = None if param.is_flag or param.count else (param.metavar or "VALUE")
    if metavar:
        if len(lines[0]) + 1 + len(metavar) <= NAME_WIDTH:
            lines[0] = f"{lines[0]} {metavar}"
        else:
            lines.insert(1, f"  {metavar}")
    text = Text(no_wrap=True, overflow="ignore")
    for i, line in enumerate(lines):
        if i:
            text.append("\n")
        flag, _, rest = line.partition(" ")
        text.append(flag, style="bold cyan" if not flag.startswith("--no-") else "bold magenta")
        if rest:
            text.append(" " + rest, style="yellow")
    return text


def _help(param: Any) -> Text:
    text = Text(" ".join((getattr(param, "help", None) or "").split()))
    default = getattr(param, "default", None)
    show = getattr(param, "show_default", False)
    if default is True and getattr(param, "is_flag", False):
        if "default" not in text.plain:  # a switch that is on unless its --no- form is given
            text.append(" [default: on]", style="dim")
    elif show and default not in (None, False, "", (), []):
        shown = getattr(default, "value", default)
        text.append(f" [default: {shown}]", style="dim")
    if getattr(param, "required", False) and getattr(param, "param_type_name", "") == "argument":
        text.append(" [required]", style="dim red")
    return text


def _panel_of(param: Any) -> str:
    if getattr(param, "param_type_name", "") == "argument":
        return ARGUMENTS
    return getattr(param, "rich_help_panel", None) or OTHER


def render(command: Any, ctx: Any, console: Console) -> None:
    """Print ``command``'s help: usage, description, then one panel per group of options."""
    pieces = command.collect_usage_pieces(ctx)
    console.print(Text.assemble(("Usage: ", "yellow"), (ctx.command_path, "bold"), " ",
                                " ".join(pieces)))
    if command.help:
        console.print()
        paras = [" ".join(p.split()) for p in command.help.split("\n\n")]
        console.print(Text("\n\n".join(p for p in paras if p)))
    console.print()
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    groups: dict[str, list[Any]] = {}
    for p in params:
        groups.setdefault(_panel_of(p), []).append(p)
    if [p.name for p in groups.get(OTHER, [])] == ["help"] and len(groups) > 2:
        groups.setdefault(ORDER[-1], []).extend(groups.pop(OTHER))  # --help under Output
    order = [ARGUMENTS, *ORDER, OTHER]
    for name in [*order, *(g for g in groups if g not in order)]:
        members = groups.get(name)
        if not members:
            continue
        table = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False,
                      expand=True)
        table.add_column(no_wrap=True)
        table.add_column(ratio=1, overflow="fold")
        for p in members:
            table.add_row(_names(p), _help(p))
        console.print(Panel(table, title=name, title_align="left", box=box.ROUNDED,
                            border_style="dim"))
    subcommands = getattr(command, "list_commands", None)
    if subcommands is not None:
        names = subcommands(ctx)
        if names:
            table = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False,
                          expand=True)
            table.add_column(no_wrap=True, style="bold cyan")
            table.add_column(ratio=1)
            for n in names:
                sub = command.get_command(ctx, n)
                if sub is not None and not getattr(sub, "hidden", False):
                    table.add_row(n, Text(sub.get_short_help_str(limit=300)))
            console.print(Panel(table, title="Commands", title_align="left", box=box.ROUNDED,
                                border_style="dim"))
