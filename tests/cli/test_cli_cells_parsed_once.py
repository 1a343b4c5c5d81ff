"""cli/common.tidy reads each text cell's markup once (``_parse_cells_once``, issue 27: a third
of the time a table took to print): the printed table, styles included, is the one rich prints
from the text cells themselves, at any width."""

from __future__ import annotations

import io
import random

import pytest
from rich.table import Table

from random_tables import random_table
from whichgpu.cli import common

_WORDS = ["GPU", "[bold]h100-sxm[/bold]", "[red]does not fit[/red]", "x", "42.0 GB",
          "[dim]tensor-parallel[/dim]", "\\[not markup]", "per", "[green]fits[/]",
          "extraordinarily-long-identifier", "[yellow]note:[/yellow] of", "2"]


def _table(seed: int) -> Table:
    return random_table(random.Random(seed), _WORDS, title="[bold]t[/bold]", max_columns=5,
                        max_words=5)


def _printed(seed: int, width: int) -> str:
    out = io.StringIO()
    console = common._Console(file=out, width=width, highlight=False,
                              color_system="truecolor", force_terminal=True)
    console.print(_table(seed))
    return out.getvalue()


@pytest.mark.parametrize("seed", range(30))
def test_the_table_prints_as_from_its_text_cells(seed: int, monkeypatch) -> None:
    width = random.Random(seed).choice([30, 50, 80, 140])
    once = _printed(seed, width)
    monkeypatch.setattr(common, "_parse_cells_once", lambda table, console: None)
    assert once == _printed(seed, width)
    assert "\x1b[1m" in once  # styles are printed: the markup was read


def test_bad_markup_is_left_for_rich_to_refuse() -> None:
    t = Table()
    t.add_column("a")
    t.add_row("[/bold] closes nothing")
    console = common._Console(file=io.StringIO(), width=40)
    with pytest.raises(Exception, match="closing tag"):
        console.print(t)
