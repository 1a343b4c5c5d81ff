"""``recommend --vs-api``: the self-hosted cost per million tokens against per-token APIs."""

from __future__ import annotations

from typing import Any

from whichgpu.cli.common import console
from whichgpu.cost.vs_api import HOURS_PER_MONTH
from whichgpu.units import format_money


def print_vs_api(v: Any) -> None:
    from rich.table import Table

    m = v.self_per_million
    mo = v.monthly
    if mo is not None:  # a daily volume: the two monthly totals first, then the verdict
        console.print(
            f"A month ({HOURS_PER_MONTH:g} h): self-hosted {format_money(mo.self_per_month)} "
            f"({mo.replicas} x {v.gpus_per_replica} x {v.gpu} kept up, used at "
            f"{v.utilisation:.2%} of its maximum throughput: {mo.requests_per_day:,.0f} "
            "requests a day)"
            + (f"; cheapest API {format_money(mo.cheapest.per_month)} "
               f"({mo.cheapest.price.provider})"
               if mo.cheapest is not None and mo.cheapest.per_month is not None else ""))
        if mo.said is not None:
            console.print(f"[bold]{mo.said}[/bold]")
    console.print(
        f"Self-hosted on {v.gpus_per_replica} x {v.gpu} ({format_money(v.replica_price_per_hour)}"
        f"/h per replica) at {v.utilisation:.0%} of its {v.max_requests_per_s:.3g} requests/s: "
        f"per 1M input {format_money(m['input'])}, cached input {format_money(m['cached_input'])}"
        f", output {format_money(m['output'])}; {format_money(v.self_per_request)} a request of "
        f"{v.prompt_tokens:,} prompt + {v.cached_tokens:,} cached + {v.output_tokens:,} output "
        "tokens.")
    if not v.rows:
        console.print("No provider in the API price table lists this model.")
    else:
        t = Table(title="Per-token APIs for the same model (USD per 1M tokens)"
                  if v.prices_of is None else f"Per-token APIs for {v.prices_of}, standing in"
                  " (USD per 1M tokens; see the first note)",
                  title_justify="left", pad_edge=False)
        cols = ("Provider", "Input", "Cached", "Output", "Per request") \
            + (("A month",) if mo is not None else ()) + ("Break-even", "Date")
        for col in cols:
            t.add_column(col, justify="left" if col in ("Provider", "Date") else "right")
        for r in v.rows:
            p = r.price
            be = r.break_even_utilisation
            month = (format_money(r.per_month),) if mo is not None and r.per_month else \
                ("",) if mo is not None else ()
            t.add_row(p.provider, f"{p.input_per_mtok:g}",
                      "" if p.cached_input_per_mtok is None else f"{p.cached_input_per_mtok:g}",
                      f"{p.output_per_mtok:g}", format_money(r.per_request), *month,
                      f"{be:.0%}" if be <= 1 else "never", p.date)
        console.print(t)
    for a in v.assumptions:
        console.print(f"[dim]- {a}[/dim]")
    if v.rows:
        console.print("[dim]- prices: " + "; ".join(sorted({r.price.url for r in v.rows}))
                      + "[/dim]")


def print_vs_api_rate(v: Any) -> None:
    """``cost --vs-api MODEL``: the run's cost per 1M tokens against the APIs' output prices."""
    console.print(f"Against per-token APIs for {v.model} (self-hosted "
                  f"{format_money(v.self_per_million.typical)} per 1M tokens):")
    for r in v.rows:
        be = r.break_even_utilisation
        console.print(f"  {r.price.provider}: {format_money(r.output_per_mtok)} per 1M output "
                      f"({r.price.date}); breaks even at "
                      + (f"{be:.0%} busy" if be <= 1 else "never (above 100 %)"))
    for a in v.assumptions:
        console.print(f"[dim]  - {a}[/dim]")
