"""Shared pieces of the CLI: consoles, strict JSON output, option parsing that reports bad
input, and the one-line reasons for failures of the machine (a full disk, no memory)."""

from __future__ import annotations

import errno
import json
import math
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console

from whichgpu.strict_json import finite

#: a word up to this long is never broken across lines in a table (longer ones fold)
WORD_WIDTH = 16


def _plain(cell: Any) -> str | None:
    """A cell's text (None: a renderable that is not text)."""
    from rich.text import Text

    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        try:
            return Text.from_markup(cell).plain
        except Exception:  # not markup after all: its own characters
            return cell
    return None


def tidy(table: Any, console: Console | None = None) -> Any:
    """A table as people read it: no column that is empty in every row, and, as far as the
    console's width allows, no word broken across lines in a column that wraps (the first
    column, then those with the shortest longest word, are kept whole first; rich's own
    layout decides each try)."""
    if console is not None:
        _parse_cells_once(table, console)
    columns = list(table.columns)
    if table.row_count and len(columns) > 1:
        for col in columns:
            cells = [_plain(c) for c in col.cells]
            if cells and all(t is not None and not t.strip() for t in cells):
                table.columns.remove(col)
        for i, col in enumerate(table.columns):  # rich lays columns out by their index
            col._index = i
    if console is None:
        return table
    wrapping = []
    for col in table.columns:
        if col.no_wrap:
            continue
        texts = [_plain(col.header) or "", *(_plain(c) or "" for c in col.cells)]
        longest = min(max((len(w) for t in texts for w in t.split()), default=0), WORD_WIDTH)
        if longest > (col.min_width or 0):
            wrapping.append((longest, col))
    if not wrapping:
        return table
    # every column's words whole at once: when the table then fits without rich narrowing any
    # column (the usual case), each try below would keep its minimum too (a column's width
    # only grows with its minimum), so the result is the same for one layout instead of many
    before_all = [col.min_width for _, col in wrapping]
    for longest, col in wrapping:
        col.min_width = longest
    if _fits_unnarrowed(table, console):
        return table
    for (_, col), before in zip(wrapping, before_all, strict=True):
        col.min_width = before
    first = table.columns[0] if table.columns else None  # a row's name: kept whole first
    for longest, col in sorted(wrapping, key=lambda lc: (lc[1] is not first, lc[0])):
        before = col.min_width
        col.min_width = longest
        if _width(table, console) > console.options.max_width:
            col.min_width = before
    return table


def _parse_cells_once(table: Any, console: Console) -> None:
    """Each text cell read as markup once, as ``console`` reads a text it renders
    (``render_str``), instead of at every measure, layout try and render (issue 27: about
    a third of the time a table took to print)."""
    for col in table.columns:
        cells = col._cells  # rich's own list (private, as in _width)
        for i, cell in enumerate(cells):
            if isinstance(cell, str):
                try:
                    cells[i] = console.render_str(cell)
                except Exception:  # bad markup: rich says so when it prints, as before
                    pass


def _fits_unnarrowed(table: Any, console: Console) -> bool:
    """Whether ``table`` fits the console with every column at its widest (rich narrows
    none); False where that cannot be told (an expanding table, a table minimum)."""
    if table.expand or table.min_width is not None:
        return False
    try:  # rich's own measure (private, as in _width)
        widths = [table._measure_column(console, console.options, col).maximum or 1
                  for col in table.columns]
        return int(sum(widths) + table._extra_width) <= console.options.max_width
    except Exception:
        return False


def _width(table: Any, console: Console) -> int:
    """The width rich lays ``table`` out at (more than the console's: it would be cropped)."""
    try:  # rich's own layout (private, stable since rich 10); without it, nothing is raised
        widths = table._calculate_column_widths(console, console.options)
        return int(sum(widths) + table._extra_width)
    except Exception:
        return console.options.max_width + 1


class Spinner:
    """A spinner on stderr while an answer is computed, shown only after ``delay`` seconds and
    only when stdout and stderr are a terminal; it stops before anything is printed."""

    active: Spinner | None = None

    def __init__(self, text: str = "working ...", delay: float = 1.0) -> None:
        import threading

        self.text, self.delay = text, delay
        self._lock = threading.Lock()
        self._timer: Any = None
        self._status: Any = None
        self._stopped = False

    @staticmethod
    def wanted() -> bool:
        import os

        return (sys.stdout.isatty() and sys.stderr.isatty()
                and os.environ.get("TERM") != "dumb")

    def __enter__(self) -> Spinner:
        import threading

        Spinner.active = self
        self._timer = threading.Timer(self.delay, self._start)
        self._timer.daemon = True
        self._timer.start()
        return self

    def _start(self) -> None:
        with self._lock:
            if self._stopped:
                return
            # its own console: the shared ones stop the spinner when they print
            self._status = Console(stderr=True).status(self.text)
            self._status.start()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._timer is not None:
                self._timer.cancel()
            if self._status is not None:
                self._status.stop()
                self._status = None
        if Spinner.active is self:
            Spinner.active = None

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Console(Console):
    """rich's console, with every table printed through :func:`tidy`; a spinner stops first."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        from rich.table import Table

        if Spinner.active is not None:
            Spinner.active.stop()
        super().print(*(tidy(o, self) if isinstance(o, Table) else o for o in objects), **kwargs)


console = _Console(highlight=False)
err_console = _Console(stderr=True, highlight=False)


def emit_json(data: Any) -> None:
    """Machine-readable output: strict JSON on stdout and nothing else (a non-finite number,
    which JSON cannot write, becomes null rather than NaN)."""
    if Spinner.active is not None:
        Spinner.active.stop()
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, default=_default,
                          allow_nan=False)
    except ValueError:
        text = json.dumps(finite(json.loads(json.dumps(data, default=_default))), indent=2,
                          ensure_ascii=False, allow_nan=False)
    sys.stdout.write(text + "\n")


def _default(obj: Any) -> Any:
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return to_json()
    model_dump = getattr(obj, "model_dump", None)
    if callable(model_dump):
        return model_dump(mode="json")
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def note(text: str) -> None:
    """A remark for people (stderr, so --json output stays clean)."""
    err_console.print(f"[yellow]note:[/yellow] {text}")


def show(answer: Any, as_json: bool, printer: Callable[[Any], None]) -> None:
    """An answer: its notes on stderr, then its JSON (``--json``) or ``printer``'s tables."""
    for text in getattr(answer, "notes", ()) or ():
        note(text)
    if as_json:
        emit_json(answer.to_json())
    else:
        printer(answer)


def _not_denormal(value: float) -> float:
    """A float option's value, unless it is a denormal (1e-320: below the smallest normal
    float, 2.2e-308), which no quantity here means and which reads as 0 in every sum."""
    if value != 0 and abs(value) < sys.float_info.min:
        from pydantic_core import PydanticCustomError

        raise PydanticCustomError("denormal", f"{value!r} is too small to compute with (the "
                                  f"smallest is {sys.float_info.min:.3g}); give a plausible "
                                  "amount")
    return value


def refuse_non_finite_floats() -> None:
    """The CLI's parsers read 'nan', 'inf' and '1e999' as floats, and a range check lets NaN
    through (every comparison with NaN is false): no whichgpu option means any of them, so
    every float option refuses them as a usage error (exit 2), like any unreadable number.

    typer parses options with pydantic adapters (typer 0.17+, ``typer._adapters``) or with
    click's FloatParamType (earlier releases); whichever this typer uses is made strict.
    """
    try:
        from typer import _adapters
    except ImportError:
        _adapters = None  # type: ignore[assignment]  # typer before 0.17 has no _adapters
    build = getattr(_adapters, "_build_number_adapter", None)
    if build is not None and not getattr(build, "_whichgpu_finite", False):
        from typing import Annotated

        from pydantic import AfterValidator, Field, TypeAdapter

        def finite_numbers(number_class, *, min=None, max=None, clamp=None):
            if number_class is not float or clamp:
                return build(number_class, min=min, max=max, clamp=clamp)
            bounds = {k: v for k, v in (("ge", min), ("le", max)) if v is not None}
            return TypeAdapter(Annotated[float, Field(allow_inf_nan=False, **bounds),
                                         AfterValidator(_not_denormal)])

        finite_numbers._whichgpu_finite = True  # type: ignore[attr-defined]  # our marker
        _adapters._build_number_adapter = finite_numbers
        return
    try:
        import click
    except ImportError:  # pragma: no cover - typer without click and without adapters
        return
    base = click.types.FloatParamType
    if getattr(base, "_whichgpu_finite", False):
        return
    original = base.convert

    def convert(self, value, param, ctx):
        result = original(self, value, param, ctx)
        if isinstance(result, float) and not math.isfinite(result):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        if isinstance(result, float):
            if result != 0 and abs(result) < sys.float_info.min:
                self.fail(f"{value!r} is too small to compute with.", param, ctx)
        return result

    base.convert = convert  # type: ignore[method-assign]  # made strict on purpose (above)
    base._whichgpu_finite = True  # type: ignore[attr-defined]  # our marker on click's class


def parse_given_options_only() -> None:
    """typer (0.17+) builds a pydantic adapter for every option of a command when it parses
    the command line, the thirty a question leaves out included (``memory``: 36 adapters,
    about 80 ms CPU measured in-process on a shared machine, against about 1 ms for the 9
    with a value): each is built when its option has a value. An option without one gets what
    typer itself gives it (its no-value branch, which needs no adapter)."""
    try:
        from typer import _coercion, core
    except ImportError:  # typer before 0.17 parses with click's types
        return
    passthrough = getattr(_coercion, "PassThroughRuntimeParam", None)
    built = getattr(core, "build_runtime_param", None)
    if passthrough is None or built is None or getattr(built, "_whichgpu_lazy", False):
        return
    no_value: Any = passthrough

    class GivenOnly:
        """typer's runtime parameter for one option, built when a value comes."""

        _whichgpu_lazy = True

        def __init__(self, descriptor: Any) -> None:
            self.descriptor = descriptor
            self.real: Any = None

        def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
            if value is None:
                return no_value(parameter_info=self.descriptor.parameter_info,
                                   annotation=self.descriptor.annotation).coerce(
                    value, param=param, ctx=ctx)
            if self.real is None:
                self.real = _coercion.build_runtime_param(self.descriptor)
            return self.real.coerce(value, param=param, ctx=ctx)

    core.build_runtime_param = GivenOnly  # type: ignore[assignment]  # lazier, same answers


def input_failure(exc: BaseException) -> str | None:
    """A one-line reason when an exception can only come from what the user typed: a file
    name the system cannot take, a number too large to compute with, input nested too deeply
    to read (exit 2). None for anything else."""
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        name = str(exc.filename or "")[:80]
        return f"file name too long: {name}..." if name else "a file name is too long"
    if isinstance(exc, ValueError) and "embedded null" in str(exc):
        return "a file name cannot contain a NUL character"
    if isinstance(exc, OverflowError):
        return (f"a number in the input is too large to compute with ({str(exc)[:120]}); "
                "use a realistic value")
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read"
    import csv

    if isinstance(exc, csv.Error):  # only a CSV file the user gave can be malformed this way
        return f"a CSV file cannot be read: {str(exc)[:150]}"
    return None


def machine_failure(exc: BaseException) -> str | None:
    """A one-line reason for a failure of this machine rather than of whichgpu: a full or
    read-only disk, a missing permission, no memory. None for anything else (a bug)."""
    import sqlite3

    if isinstance(exc, MemoryError):
        return "out of memory: close other programs or ask a smaller question"
    if isinstance(exc, OSError) and exc.errno is not None:
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        if exc.errno == errno.ENOSPC:
            return f"the disk is full{where}: free some space and run it again"
        if exc.errno == errno.EROFS:
            return f"the file system is read-only{where}"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"permission denied{where}"
        if exc.errno == errno.EDQUOT:
            return f"the disk quota is exceeded{where}"
        return f"{exc.strerror or exc}{where}"
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        if "disk is full" in text or "disk i/o error" in text:
            return f"the disk is full or failing ({exc}): free some space and run it again"
        if "readonly" in text or "read-only" in text:
            return f"the price store is on a read-only file system ({exc})"
    return None
