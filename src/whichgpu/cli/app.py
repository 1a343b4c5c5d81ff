"""The typer application: one module per command group registers its commands, loaded on
first use (``MODULES`` in cli/lazy.py, the table in cli/commands_index.py)."""

from __future__ import annotations

import typer

from whichgpu.cli.lazy import LazyGroup
from whichgpu.cli.strict import StrictGroup


class RootGroup(LazyGroup, StrictGroup):
    """The root group: each command's module imported when it is used (cli/lazy.py); its own
    options refused when repeated and its help rendered like every command's (cli/strict.py)."""


app = typer.Typer(
    name="whichgpu",
    cls=RootGroup,
    help="Which GPU to rent or buy for an AI job, what it will cost, and how sure that is.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion: bash, zsh, fish
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _print_version(value: bool) -> None:
    """``--version``: the installed package's version (package metadata), then exit."""
    if not value:
        return
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as pkg_version

    try:
        typer.echo(f"whichgpu {pkg_version('whichgpu')}")
    except PackageNotFoundError:  # a source tree that was never installed
        typer.echo("whichgpu (version unknown: the package is not installed)")
    raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                 is_eager=True, callback=_print_version),
    database_url: str | None = typer.Option(
        None, "--database-url", metavar="URL",
        help="The price store: postgresql://... (a shared database) or a SQLite file. "
             "Default: $WHICHGPU_DATABASE_URL, else the local prices.sqlite."),
) -> None:
    """Which GPU to rent or buy for an AI job, what it will cost, and how sure that is."""
    if database_url is not None:
        _use_database(database_url)


def _use_database(url: str) -> None:
    """Every store this process (and the workers 'serve' starts) opens is ``url``."""
    import os

    from whichgpu.catalog.prices.backends import DATABASE_URL_ENV, parse_target

    parse_target(url)  # an unsupported URL is bad input: said now, in one line
    os.environ[DATABASE_URL_ENV] = url
