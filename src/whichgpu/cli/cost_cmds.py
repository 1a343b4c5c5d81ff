"""``whichgpu tco GPU`` (owning vs renting) and ``whichgpu cost`` (what a run costs)."""

from __future__ import annotations

import typer

from whichgpu.cli.common import console, emit_json, note

PRICES_HELP = ("Price source for the rental price: a feed or source of the price store "
               "(article-000, vramfarm-2026-11, gpuhunt ...), NAME@SNAPSHOT or NAME@DATE, or an "
               "offer file. Default: the latest prices of every source in the store.")
MAX_AGE_HELP = "Days after which prices are flagged as stale (30)."


def register(app: typer.Typer) -> None:
    app.command("tco")(tco)
    app.command("cost")(cost)


# ---------------------------------------------------------------- tco

def tco(
    gpu_id: str | None = typer.Argument(
        None, metavar="[GPU]", help="A catalog id, e.g. h100 or rtx-4090, or your card's "
                                    "memory such as 24GB (then give --purchase-price and --tdp, "
                                    "or --gpu-spec)."),
    gpu_spec: str | None = typer.Option(
        None, "--gpu-spec", metavar="KEY=VALUE,...",
        help="Your own card: memory=24GB,tdp=350W,price=700USD (see 'whichgpu memory --help')."),
    purchase_price: str | None = typer.Option(
        None, "--purchase-price", help="Price paid per GPU, e.g. 25000USD. Default: the "
        "midpoint of the catalog's purchase range."),
    resale_value: str | None = typer.Option(
        None, "--resale-value", help="What the GPU sells for at the end, e.g. 5000USD. "
        "Default: nothing."),
    years: float | None = typer.Option(
        None, "--years", help="How long you own it; also the horizon of the advice. Default 3 "
        "(S9/S11)."),
    host_share: str | None = typer.Option(
        None, "--host-share", help="Share of the host/server per GPU, e.g. 2000USD. Default: "
        "nothing."),
    tdp: str | None = typer.Option(None, "--tdp", help="Board power, e.g. 350W (a bare number "
                                   "is watts). Default: the catalog's TDP."),
    load_factor: float | None = typer.Option(
        None, "--load-factor", help="Share of TDP drawn while busy (0-1). Default 1 (S9)."),
    utilization: str | None = typer.Option(
        None, "--utilization", "--utilisation", help="Share of the time it works: 0.6 or 60%. "
        "Default 0.6 (S9)."),
    hours_per_month: float | None = typer.Option(
        None, "--hours-per-month", help="Hours of use per month (instead of --utilization; "
        "730 = 24/7)."),
    kwh_price: str | None = typer.Option(
        None, "--kwh-price", help="Electricity per kWh, e.g. 0.10USD or 0.25EUR. Default "
        "0.10USD (S9)."),
    pue: float | None = typer.Option(
        None, "--pue", help="Facility power overhead (cooling as a factor on power, 1-3). "
        "Default 1."),
    cooling_per_hour: str | None = typer.Option(
        None, "--cooling-per-hour", help="Cooling per hour of use, e.g. 0.02USD (S11). "
        "Default: nothing."),
    maintenance_per_year: str | None = typer.Option(
        None, "--maintenance-per-year", help="e.g. 250USD. Default: nothing."),
    rent_price: str | None = typer.Option(
        None, "--rent-price", help="Rental price per GPU-hour to compare with, e.g. 3.15USD. "
        "Default: the cheapest on-demand offer in the prices (see --prices)."),
    prices: str | None = typer.Option(None, "--prices", help=PRICES_HELP),
    max_age: float | None = typer.Option(None, "--max-age", help=MAX_AGE_HELP),
    currency: str | None = typer.Option(
        None, "--currency", help="Show amounts in this currency (default: the purchase "
        "price's)."),
    rate: list[str] | None = typer.Option(
        None, "--rate", help="Exchange rate override, e.g. EURUSD=1.08 (repeatable)."),
    curve: bool = typer.Option(False, "--curve", help="Also print the month-by-month "
                               "cumulative cost of renting vs owning."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """What owning a GPU costs, when it breaks even against renting, and whether to rent or buy.

    The article's H100 case (S11): whichgpu tco h100 --purchase-price 25000USD
    --rent-price 3.15USD --utilization 1 --cooling-per-hour 0.02USD (or --prices article-000
    for the article's rent).
    """
    from whichgpu.cost.build import tco as run
    from whichgpu.units import parse_power

    result = run(gpu_id, purchase_price=purchase_price, resale_value=resale_value, years=years,
                 host_share=host_share, tdp=(parse_power(tdp, what="--tdp", positive=False)
                                               if tdp is not None else None),
                 load_factor=load_factor,
                 utilization=utilization, hours_per_month=hours_per_month,
                 kwh_price=kwh_price, pue=pue, cooling_per_hour=cooling_per_hour,
                 maintenance_per_year=maintenance_per_year, rent_price=rent_price,
                 prices=prices, currency=currency, rate=rate, max_age=max_age,
                 gpu_spec=gpu_spec)
    if result.resolution_note:
        note(result.resolution_note)
    if result.selection is not None:
        from whichgpu.cli.prices_cmds import print_price_origin

        print_price_origin(result.selection)
    if result.advice is None:
        where = prices or "the current prices"
        note(f"no on-demand offer for {result.gpu.id} in {where}: give --rent-price for the "
             "break-even and the advice")
    if as_json:
        emit_json(result.to_json())
        return
    _print_tco(result.ownership, result.advice, curve, result.gpu.name)


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

    row("Purchase price", fm(o.purchase_price, 0), "purchase_price")
    row("Host share per GPU", fm(o.host_share, 0), "host_share")
    row("Resale value at the end", fm(o.resale_value, 0), "resale_value")
    row("Years", f"{i.years:g}", "years")
    row("Utilisation", f"{i.utilization:.0%} ({o.hours_used_per_month:,.0f} h/month)",
        "utilization")
    row("TDP", f"{i.tdp_watts:,.0f} W", "tdp_watts")
    row("Load factor", f"{i.load_factor:g}", "load_factor")
    row("Electricity", f"{fm(o.kwh_price)}/kWh", "kwh_price")
    row("PUE", f"{i.pue:g}", "pue")
    row("Cooling per hour of use", fm(o.cooling_per_hour), "cooling_per_hour")
    row("Maintenance per year", fm(o.maintenance_per_year, 0), "maintenance_per_year")
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
    r.add_row(f"Total over {i.years:g} years", fm(o.total_cost, 0))
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
        console.print(f"[bold]Advice: {verdict}[/bold] (saves {fm(advice.saving, 0)} over "
                      f"{advice.thresholds.horizon_months:g} months)")
        for reason in advice.reasons:
            console.print(f"  - {reason}")
    if show_curve:
        c = Table(title="Cumulative cost", title_justify="left", pad_edge=False)
        for col in ("Month", "Hours used", "Rent", "Own"):
            c.add_column(col, justify="right")
        for p in o.curve():
            c.add_row(f"{p.month:g}", f"{p.hours_used:,.0f}",
                      fm(p.rent, 0) if p.rent else "-", fm(p.own, 0))
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

def cost(
    gpu_id: str = typer.Option(..., "--gpu", help="A catalog id, e.g. rtx-4090 or h100."),
    duration: str | None = typer.Option(
        None, "--duration", help="How long the run lasts: 3h20m, or a range 2h..4h "
        "(low..high) or 2h..3h..4h (low..typical..high). Or give --work and --rate-of-work."),
    count: int = typer.Option(1, "--count", help="How many GPUs the job needs."),
    prices: str | None = typer.Option(None, "--prices", help=PRICES_HELP),
    max_age: float | None = typer.Option(None, "--max-age", help=MAX_AGE_HELP),
    spot: bool = typer.Option(False, "--spot", help="Use spot offers (on-demand by default)."),
    work: str | None = typer.Option(
        None, "--work", help="How much the run produces (1000, 1M), for a cost per unit."),
    rate_of_work: str | None = typer.Option(
        None, "--rate-of-work", help="How fast the work goes, instead of --duration: 4/min, "
        "4..6/min (S25: images a minute) or 300..700/s (tokens a second)."),
    unit: str = typer.Option("task", "--unit", help="What one unit of --work is: image, "
                             "token, run ..."),
    per: str | None = typer.Option(None, "--per", help="Cost per this many units of --work "
                                   "(1M: per million). Default 1."),
    currency: str | None = typer.Option(
        None, "--currency", help="Show amounts in this currency (default: the GPU's offers' "
        "currency)."),
    rate: list[str] | None = typer.Option(
        None, "--rate", help="Exchange rate override, e.g. EURUSD=1.08 (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """What a run costs on the cheapest offer for a GPU, under the offer's billing rule.

    S25: whichgpu cost --gpu rtx-4090 --work 1000 --unit image --rate-of-work 4..6/min
    --prices vramfarm-2026-11
    """
    from whichgpu.cli.prices_cmds import print_price_origin
    from whichgpu.cost.build import cost as run
    from whichgpu.units import format_duration

    result = run(gpu_id, duration, count=count, prices=prices, spot=spot, work=work, unit=unit,
                 per=per, rate_of_work=rate_of_work, currency=currency, rate=rate,
                 max_age=max_age)
    if result.resolution_note:
        note(result.resolution_note)
    print_price_origin(result.selection)
    if as_json:
        emit_json(result.to_json())
        return
    shown, g = result.shown, result.gpu
    d = shown.duration_s
    when = (format_duration(d.typical) if d.low == d.high else
            f"{format_duration(d.typical)} ({format_duration(d.low)} to "
            f"{format_duration(d.high)})")
    console.print(f"[bold]{count} x {g.id}[/bold] for {when}: [bold]{shown.cost}[/bold]")
    notes = result.assumptions()
    if d.low == d.high:  # the duration line repeats the headline
        notes = [n for n in notes if not n.startswith("duration ")]
    for a in notes:
        console.print(f"  - {a}")
    if shown.cost_per_unit is not None:
        console.print(f"  per {shown.unit_label()}: {shown.cost_per_unit}")
