"""``whichgpu fits``: what runs on my card (issue 31)."""

from __future__ import annotations

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, show


def register(app: typer.Typer) -> None:
    bind(app, req.Fits, fits)


def fits(q: req.Fits) -> None:
    from whichgpu.answers.fitting import fits as answer

    show(answer(q), q.as_json, _print)


def _range(r) -> str:
    if r is None:
        return "-"
    return f"{r.low:,.0f}-{r.typical:,.0f}-{r.high:,.0f}"


def _print(a) -> None:
    from rich.table import Table
    from rich.text import Text

    from whichgpu.units import GB, format_count

    where = a.where
    by = {"size": "on the GPU first, then with offload; the largest first",
          "speed": "the fastest first", "context": "the longest context first"}[
        str(a.request.sort)]
    title = Text(f"What runs on {where} ({a.usable_bytes / GB:,.1f} GB usable): "
                 f"{a.request.task}, at least {a.context:,} tokens of context; {by}")
    if not a.rows:
        console.print(title)
        console.print("[red]No model of those tried fits[/red]: try a smaller one, a shorter "
                      "context (--context), or your host RAM (--host-ram) for llama.cpp's "
                      "offload.")
        return
    t = Table(title=title, title_justify="left", pad_edge=False)
    for col, justify in (("#", "right"), ("Model", "left"), ("Params", "right"),
                         ("Format", "left"), ("GPU GB", "right"), ("Longest context", "right"),
                         ("tokens/s", "right"), ("Where", "left")):
        t.add_column(col, justify=justify)  # type: ignore[arg-type]  # rich's literal
    for i, r in enumerate(a.shown(), start=1):
        where_run = "GPU" if r.offload is None else (
            f"offload: {r.offload['flags']}, {r.offload['host_bytes'] / GB:,.1f} GB host RAM")
        t.add_row(str(i), Text(r.model), format_count(r.params), r.quant,
                  f"{r.gpu_bytes / GB:,.1f}",
                  f"{r.longest_context:,}" if r.longest_context else "-", _range(r.decode),
                  Text(where_run))
    console.print(t)
    more = len(a.rows) - len(a.shown())
    if more:
        console.print(f"[dim]... and {more} more (--top 0 shows all; --json lists all)[/dim]")
    console.print("[dim]Format: the most precise weight format that fits, down to 4 bits "
                  "(llama.cpp GGUF unless --engine); tokens/s: decode per sequence, "
                  "low-typical-high; longest context: at one sequence.[/dim]")
    if a.not_run:
        from whichgpu.listing import join_some

        console.print(Text(f"Does not fit, or not with this engine ({len(a.not_run)}): "
                           + join_some(a.not_run, 12)))
