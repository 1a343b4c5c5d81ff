"""``whichgpu tco GPU`` (owning vs renting) and ``whichgpu cost`` (what a run costs)."""

from __future__ import annotations

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, emit_json, note


def register(app: typer.Typer) -> None:
    bind(app, req.Tco, tco)
    bind(app, req.Cost, cost)


# ---------------------------------------------------------------- tco

def tco(q: req.Tco) -> None:
    from whichgpu.answers.money import tco as answer

    result = answer(q)
    if result.resolution_note:
        note(result.resolution_note)
    vs = getattr(result, "vs", None)  # --vs: which rented card set the rent, and how
    if vs is not None:
        note(vs["assumption"])
    if result.selection is not None:
        from whichgpu.cli.prices_cmds import print_price_origin

        print_price_origin(result.selection)
    if result.advice is None:
        where = q.prices or "the current prices"
        note(f"no on-demand offer for {result.gpu.id} in {where}: give --rent-price for the "
             "break-even and the advice")
    if q.as_json:
        emit_json(result.to_json())
        return
    _print_tco(result.ownership, result.advice, q.curve, result.gpu.name)


def _print_tco(o, advice, show_curve: bool, name: str) -> None:
    from rich.table import Table

    from whichgpu.units import format_money as fm

    i = o.inputs
    console.print(f"[bold]Owning one {name}[/bold] ({i.gpu}) for {i.years:g} years, "
                  f"amounts in {o.currency}")
    t = Table(show_header=True, pad_edge=False)
    t.add_column("Input")
    t.add_column("Value", justify="right")
    t.add_column("Source", overflow="fold")
    src = i.sources

    def row(label: str, value: str, key: str) -> None:
        t.add_row(label, value, src.get(key, ""))

    row("Purchase price", fm(o.purchase_price), "purchase_price")
    row("Host share per GPU", fm(o.host_share), "host_share")
    row("Resale value at the end", fm(o.resale_value), "resale_value")
    row("Years", f"{i.years:g}", "years")
    row("Utilisation", f"{i.utilization:.0%} ({o.hours_used_per_month:,.0f} h/month)",
        "utilization")
    row("TDP", f"{i.tdp_watts:,.0f} W", "tdp_watts")
    row("Load factor", f"{i.load_factor:g}", "load_factor")
    row("Electricity", f"{fm(o.kwh_price)}/kWh", "kwh_price")
    row("PUE", f"{i.pue:g}", "pue")
    row("Cooling per hour of use", fm(o.cooling_per_hour), "cooling_per_hour")
    row("Maintenance per year", fm(o.maintenance_per_year), "maintenance_per_year")
    if o.rent_price is not None:
        row("Rental price per GPU-hour", fm(o.rent_price), "rent_price")
    console.print(t)

    r = Table(show_header=True, pad_edge=False)
    r.add_column("Result")
    r.add_column("Value", justify="right")
    r.add_row("Energy per year", f"{o.energy_kwh_per_year:,.0f} kWh")
    r.add_row("Electricity per year", fm(o.electricity_per_year))
    r.add_row("Cooling per year", fm(o.cooling_per_year))
    r.add_row("Running cost per hour of use", fm(o.running_cost_per_used_hour))
    r.add_row(f"Total over {i.years:g} years", fm(o.total_cost))
    r.add_row("Effective cost per hour owned", fm(o.effective_cost_per_hour))
    r.add_row("Effective cost per hour used", fm(o.effective_cost_per_used_hour))
    if o.rent_price is not None:
        r.add_row("Break-even (hours of use)",
                  _hours(o.break_even_hours)
                  + f" [dim](capital / rent: {_hours(o.break_even_hours_capital_only)})[/dim]")
        r.add_row("Break-even at 24/7", _months(o.break_even_months_24x7))
        r.add_row(f"Break-even at {i.utilization:.0%}", _months(o.break_even_months()))
    console.print(r)
    for a in o.assumptions():
        console.print(f"[dim]- {a}[/dim]")
    if advice is not None:
        verdict = "BUY" if advice.decision == "buy" else "RENT"
        console.print(f"[bold]Advice: {verdict}[/bold] (saves {fm(advice.saving)} over "
                      f"{advice.thresholds.horizon_months:g} months)")
        for reason in advice.reasons:
            console.print(f"  - {reason}")
    if show_curve:
        c = Table(title="Cumulative cost", title_justify="left", pad_edge=False)
        for col in ("Month", "Hours used", "Rent", "Own"):
            c.add_column(col, justify="right")
        for p in o.curve():
            c.add_row(f"{p.month:g}", f"{p.hours_used:,.0f}",
                      fm(p.rent) if p.rent else "-", fm(p.own))
        console.print(c)


def _hours(x: float | None) -> str:
    import math

    if x is None:
        return "-"
    return "never" if not math.isfinite(x) else f"{x:,.0f} h"


def _months(x: float | None) -> str:
    import math

    if x is None:
        return "-"
    return "never" if not math.isfinite(x) else f"{x:.1f} months"


# ---------------------------------------------------------------- cost

def cost(q: req.Cost) -> None:
    from rich.markup import escape

    from whichgpu.answers.money import cost as answer
    from whichgpu.cli.prices_cmds import print_price_origin
    from whichgpu.units import format_duration

    result = answer(q)
    count = q.count
    if result.resolution_note:
        note(result.resolution_note)
    print_price_origin(result.selection)
    if q.as_json:
        emit_json(result.to_json())
        return
    shown, g = result.shown, result.gpu
    d = shown.duration_s
    when = (format_duration(d.typical) if d.low == d.high else
            f"{format_duration(d.typical)} ({format_duration(d.low)} to "
            f"{format_duration(d.high)})")
    console.print(f"[bold]{count} x {g.id}[/bold] on {escape(result.shape())} for {when}: "
                  f"[bold]{shown.cost}[/bold]")
    notes = result.assumptions()
    if d.low == d.high:  # the duration line repeats the headline
        notes = [n for n in notes if not n.startswith("duration ")]
    for a in notes:
        console.print(f"  - {a}")
    if shown.cost_per_unit is not None:
        console.print(f"  per {shown.unit_label()}: {shown.cost_per_unit}")
    if result.vs_api is not None:
        from whichgpu.cli.vs_api_view import print_vs_api_rate

        print_vs_api_rate(result.vs_api)
