"""The range tables of ``whichgpu validate``: coverage and width beside the error, per
category, per engine and balanced over engines, and the rows left out above a ceiling."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from whichgpu.cli.common import console
from whichgpu.estimate.validation.ranges import RangeStats, target_verdict


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _times(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def print_ranges(ranges: dict[str, Any], what: str) -> None:
    """Print ``ranges`` (estimate/validation/ranges.RangeReport.to_json())."""
    nominal = ranges.get("nominal_coverage", 0.8)
    for key, title, names in (
            ("by_category", "by category", ("Category",)),
            ("by_engine", "by category and engine", ("Category", "Engine"))):
        t = Table(title=f"{what} validation: ranges {title} (rows of the chosen split)",
                  title_justify="left", pad_edge=False)
        for col in (*names, "Rows", "Inside range", "Width median", "Width p90", "Widest",
                    "Median error"):
            t.add_column(col, justify="left" if col in names else "right")
        for s in ranges[key]:
            if not s["n_ranged"]:
                continue
            t.add_row(*[escape(k) for k in s["key"]], str(s["n"]),
                      f"{s['inside']}/{s['n_ranged']} ({_pct(s['coverage'])})",
                      _times(s["median_width"]), _times(s["p90_width"]), _times(s["widest"]),
                      _pct(s["median_abs_error"]))
        console.print(t)
    b = Table(title=f"{what} validation: balanced over engines (each engine weighs the same)",
              title_justify="left", pad_edge=False)
    for col in ("Category", "Engines", "Rows", "Median error", "Inside range",
                "Width median", "Worst engine"):
        b.add_column(col, justify="left" if col in ("Category", "Worst engine") else "right")
    for x in ranges["balanced"]:
        b.add_row(x["category"], str(x["engines"]), str(x["rows"]), _pct(x["median_abs_error"]),
                  _pct(x["coverage"]), _times(x["median_width"]),
                  f"{escape(x['worst_engine'])} ({_pct(x['worst_error'])})")
    console.print(b)
    for s in ranges["by_category"]:
        stats = RangeStats(tuple(s["key"]), s["n"], s["n_ranged"], s["inside"],
                           s["median_width"], s["p90_width"], s["widest"],
                           s["median_abs_error"])
        console.print(f"{escape(s['key'][0])}: {target_verdict(stats, what)}")
    console.print(f"[dim]Inside range: measurements within the estimate's low..high, a stated "
                  f"{nominal:.0%} interval; width: high / low. Balanced: the median over "
                  "engines of each engine's median (coverage: their mean).[/dim]")
    for x in ranges.get("excluded", []):
        console.print(f"[dim]left out: {escape(x['id'])}: {escape(x['reason'])}[/dim]")
