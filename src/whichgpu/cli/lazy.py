"""Lazy command loading: ``whichgpu --help`` lists every command without importing them.

The root group knows each command's name, module, one-line help and help panel from a
static table (:mod:`whichgpu.cli.commands_index`, generated from the commands themselves and
kept in step by ``tests/test_cli_lazy_commands.py``). A command's module (and with it the
request models, pydantic and the answers) is imported only when that command is resolved:
run, asked for its own ``--help``, or completed. The group's ``commands`` mapping loads what
is read, so code that walks ``group.commands`` sees every command, as before.

Regenerate the table after adding, renaming or re-describing a command::

    python -m whichgpu.cli.lazy > src/whichgpu/cli/commands_index.py
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from importlib import import_module
from typing import Any, NamedTuple

from typer.core import TyperGroup

#: the rich help panel attribute typer reads on a command
PANEL = "rich_help_panel"


class Entry(NamedTuple):
    """One command of the root group, as ``--help`` lists it."""

    name: str
    module: str  #: under whichgpu.cli, with a ``register(app)`` function
    help: str  #: the first paragraph of its help, as the command list shows it
    panel: str | None = None
    hidden: bool = False


def typer_settings() -> dict[str, Any]:
    """The settings of the root typer app, shared with the per-module apps commands are
    built in (so a command's help renders the same either way)."""
    return {"no_args_is_help": True, "add_completion": False,
            "pretty_exceptions_enable": False, "rich_markup_mode": "rich"}


def load_module(module: str, root: str | None = None) -> dict[str, Any]:
    """The click commands ``whichgpu.cli.<module>`` registers, by name; with ``root``, that
    root command alone is complete (the module's other request models are not bound: a
    ``memory`` question builds no options of ``speed`` and the five ``validate`` commands)."""
    import typer

    from whichgpu.cli.bind import only
    from whichgpu.cli.common import parse_given_options_only, refuse_non_finite_floats

    refuse_non_finite_floats()  # before any option of these commands is parsed
    parse_given_options_only()
    sub = typer.Typer(**typer_settings())
    sub.callback()(lambda: None)  # a group, even for a module with one command
    with only(root):
        import_module(f"whichgpu.cli.{module}").register(sub)
    group = typer.main.get_command(sub)
    return dict(group.commands)  # type: ignore[attr-defined]


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands: the indexed ones load (a module at a time) when read."""

    def __init__(self, index: dict[str, Entry], loaded: dict[str, Any]) -> None:
        self.index = index
        self.loaded = dict(loaded)

    def __getitem__(self, name: str) -> Any:
        if name not in self.loaded and name in self.index:
            # that command alone: its module's others were not bound (load_module)
            self.loaded[name] = load_module(self.index[name].module, name)[name]
        return self.loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self.index.pop(name, None)
        del self.loaded[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.index
        yield from (n for n in self.loaded if n not in self.index)

    def __len__(self) -> int:
        return len(self.index) + sum(n not in self.index for n in self.loaded)

    def __contains__(self, name: object) -> bool:
        return name in self.index or name in self.loaded


class LazyGroup(TyperGroup):
    """The root group: commands from the static table, each module imported when used."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from whichgpu.cli.commands_index import COMMANDS

        super().__init__(*args, **kwargs)
        index = {e.name: e for e in (Entry(*row) for row in COMMANDS)}
        self.commands = LazyCommands(index, dict(self.commands))
        self._listing = False

    @contextmanager
    def _listing_only(self) -> Iterator[None]:
        """While help or completion lists the commands, each is its name and one line."""
        self._listing, before = True, self._listing
        try:
            yield
        finally:
            self._listing = before

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        commands = self.commands
        if (self._listing and isinstance(commands, LazyCommands)
                and cmd_name not in commands.loaded and cmd_name in commands.index):
            return _stub(commands.index[cmd_name])
        return commands.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        with self._listing_only():
            super().format_help(ctx, formatter)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        with self._listing_only():
            return super().shell_complete(ctx, incomplete)


def _stub(entry: Entry) -> Any:
    """A stand-in that lists ``entry`` (name, one line, panel) and runs nothing."""
    from typer.core import TyperCommand

    return TyperCommand(entry.name, help=entry.help, hidden=entry.hidden,
                        rich_markup_mode="rich", rich_help_panel=entry.panel)


# One line per command module (keeps merges of new modules simple). Each registers its
# commands with ``register(app)`` (cli/app.py), called when one of them is first used; after
# adding or changing a command, regenerate the table --help lists them from (see above).
MODULES: tuple[str, ...] = (
    "advise_cmds",
    "catalog_cmds",
    "cost_cmds",
    "estimate_cmds",
    "fits_cmds",
    "model_cmds",
    "prices_cmds",
    "profile_cmds",
    "web_cmds",
    "bench_cmds",
    "mcp_cmds",
    "runs_cmds",
)


def index_rows() -> list[Entry]:
    """The table, from the commands themselves: every module of ``MODULES`` loaded, in the
    order typer lists them (commands, then groups, as the eager app did)."""
    import typer

    commands: dict[str, Any] = {}
    groups: dict[str, Any] = {}
    module_of: dict[str, str] = {}
    for module in MODULES:
        for name, command in load_module(module).items():
            (groups if isinstance(command, typer.core.TyperGroup) else commands)[name] = command
            module_of[name] = module
    rows = []
    for name, command in {**commands, **groups}.items():
        text = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
        panel = getattr(command, PANEL, None) or None  # typer's unset default reads false
        rows.append(Entry(name, module_of[name], text, panel, bool(command.hidden)))
    return rows


def render_index(rows: list[Entry]) -> str:
    """The source of :mod:`whichgpu.cli.commands_index` for ``rows``."""
    head = '''# ruff: noqa: E501
"""The root commands as ``whichgpu --help`` lists them, without importing them.

Generated by ``python -m whichgpu.cli.lazy > src/whichgpu/cli/commands_index.py``
(tests/test_cli_lazy_commands.py checks it matches the commands); edit the commands, not
this file."""

from __future__ import annotations

#: (name, module under whichgpu.cli, first paragraph of its help, help panel, hidden)
COMMANDS: tuple[tuple[str, str, str, str | None, bool], ...] = ('''
    lines = [head]
    lines += [f"    {tuple(row)!r}," for row in rows]
    lines.append(")")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_index(index_rows()), end="")
