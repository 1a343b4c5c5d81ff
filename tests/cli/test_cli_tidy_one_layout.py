"""cli/common.tidy lays a table out once when every column's words fit whole (issue 27: the
CLI's start-up): the result must be the one the column-at-a-time tries give, at any width."""

from __future__ import annotations

import io
import random
from typing import Any

import pytest
from rich.console import Console
from rich.table import Table

from random_tables import random_table
from whichgpu.cli import common
from whichgpu.cli.common import WORD_WIDTH, _plain, _width, tidy


def _reference(table: Table, console: Console) -> Table:
    """tidy's column-at-a-time tries alone (the code before the one-layout shortcut)."""
    wrapping = []
    for col in table.columns:
        if col.no_wrap:
            continue
        texts = [_plain(col.header) or "", *(_plain(c) or "" for c in col.cells)]
        longest = min(max((len(w) for t in texts for w in t.split()), default=0), WORD_WIDTH)
        if longest > (col.min_width or 0):
            wrapping.append((longest, col))
    first = table.columns[0] if table.columns else None
    for longest, col in sorted(wrapping, key=lambda lc: (lc[1] is not first, lc[0])):
        before = col.min_width
        col.min_width = longest
        if _width(table, console) > console.options.max_width:
            col.min_width = before
    return table


def _table(rng: random.Random) -> Table:
    return random_table(rng, ["a", "GPU", "headroom", "h100-sxm", "tensor-parallel", "x", "42.0",
                              "extraordinarily-long-identifier", "per", "usable", "memory", "2",
                              "of"])


def _render(table: Table, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, highlight=False, color_system=None).print(table)
    return out.getvalue()


@pytest.mark.parametrize("seed", range(40))
def test_one_layout_gives_the_same_table_as_the_tries(seed: int) -> None:
    rng = random.Random(seed)
    width = rng.choice([30, 40, 50, 60, 80, 100, 140])
    spec = rng.getstate()
    fast = _table(rng)
    rng.setstate(spec)
    slow = _table(rng)
    console = Console(file=io.StringIO(), width=width)
    tidy(fast, console)
    tidy(slow, None)  # the empty-column pruning alone, then the reference tries
    _reference(slow, console)
    assert [c.min_width for c in fast.columns] == [c.min_width for c in slow.columns]
    assert _render(fast, width) == _render(slow, width)


def test_a_wide_table_still_takes_the_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the words cannot all stay whole, the tries run (and keep what fits)."""
    calls: list[Any] = []
    real = common._width
    monkeypatch.setattr(common, "_width", lambda t, c: calls.append(1) or real(t, c))
    t = Table()
    for _ in range(6):
        t.add_column("extraordinarily-long-identifier")
    t.add_row(*["tensor-parallel extraordinarily-long-identifier"] * 6)
    tidy(t, Console(file=io.StringIO(), width=40))
    assert calls  # the shortcut did not apply: the tries ran


def test_a_narrow_table_is_laid_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = common._width
    monkeypatch.setattr(common, "_width", lambda t, c: calls.append(1) or real(t, c))
    t = Table()
    t.add_column("GPU")
    t.add_column("How", overflow="fold")
    t.add_row("h100-sxm", "weights per GPU over tensor-parallel ranks")
    tidy(t, Console(file=io.StringIO(), width=120))
    assert not calls
    assert [c.min_width for c in t.columns] == [8, 15]
