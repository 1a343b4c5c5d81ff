"""``whichgpu prices ...``: refresh, list, history, import, sources (and prune)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from whichgpu.cli.common import console, emit_json, err_console, note
from whichgpu.listing import join_some

if TYPE_CHECKING:
    from whichgpu.catalog.offers import Offer
    from whichgpu.catalog.prices import OfferSelection
    from whichgpu.catalog.prices.refresh import FeedOutcome

STORE_HELP = ("Price store file (default: $WHICHGPU_PRICE_STORE, else prices.sqlite in the "
              "whichgpu data directory).")
PRICES_HELP = ("Price source: a feed or source of the store ('whichgpu prices sources'), "
               "NAME@SNAPSHOT or NAME@DATE, or an offer file. Default: the latest of every "
               "source.")
CURRENCY_HELP = ("Show prices in this currency: converted where exchange rates are available, "
                 "otherwise only the offers quoted in it (never mixed).")

prices_app = typer.Typer(name="prices", no_args_is_help=True, rich_markup_mode="rich",
                         help="Live prices: sources, the local price store and its history.")
sources_app = typer.Typer(name="sources", rich_markup_mode="rich",
                          help="List price sources, or add and remove URL sources.")


def register(app: typer.Typer) -> None:
    prices_app.add_typer(sources_app, name="sources")
    app.add_typer(prices_app, name="prices")


# ------------------------------------------------------------------------ shared helpers

def currency_converter(rates=None):
    """``convert(money, currency)`` with the cost package's dated rates (and overrides)."""
    from whichgpu.cost.currency import convert

    return lambda money, currency: convert(money, currency, rates)


def apply_currency(selection: OfferSelection, currency: str | None,
                   rates=None) -> OfferSelection:
    """The selection in ``currency`` (see :func:`whichgpu.advise.build.apply_currency`);
    ``currency`` must be an ISO 4217 code or one of the rate table's."""
    from whichgpu.advise.build import apply_currency as shared
    from whichgpu.cost.currency import known_currency

    if currency:
        currency = known_currency(currency, rates)
    return shared(selection, currency, rates)


def describe_origin(selection: OfferSelection) -> str:
    """Where the prices come from and how old they are, grouped by source, in one line:
    'the SkyPilot catalog snapshot (7 providers: ...), observed 2026-12-01 (0 d old)'."""
    from whichgpu.catalog.prices import format_age

    parts = []
    for src in selection.sources():
        feeds = [f for f in selection.feeds if f.source == src]
        ages = [f.age_s for f in feeds if f.age_s is not None]
        oldest = max(ages) if len(ages) == len(feeds) and ages else None
        dates = sorted({f"{f.observed_at:%Y-%m-%d}" for f in feeds if f.observed_at})
        when = (f"observed {dates[0] if len(dates) == 1 else dates[0] + ' to ' + dates[-1]}"
                f" ({format_age(oldest)} old)" if oldest is not None else "undated")
        stale = any(f.stale and not f.undated for f in feeds)
        if src == "skypilot":
            label = (f"the SkyPilot catalog ({len(feeds)} provider feed(s): "
                     + ", ".join(f.feed.split("/", 1)[-1] for f in feeds) + ")")
        elif len(feeds) == 1 and feeds[0].feed == src:
            label = src
        else:
            label = f"{src} ({', '.join(f.feed for f in feeds)})"
        parts.append(f"{label}, {when}{', stale' if stale else ''}")
    return "; ".join(parts)


def print_price_origin(selection: OfferSelection, *, warnings: bool = True) -> None:
    """Where the prices come from and their age (one dim line) and the warnings (stderr)."""
    if selection.feeds:
        err_console.print(f"[dim]Prices from {describe_origin(selection)}[/dim]")
    if warnings:
        for w in selection.warnings:
            note(w)


def _gpu_ids(text: str | None) -> tuple[list[str] | None, str | None]:
    """Catalog ids a GPU argument covers (see :func:`whichgpu.catalog.gpus.family_ids`)."""
    from whichgpu.catalog.gpus import family_ids

    return family_ids(text)


def _store(path: Path | None):
    from whichgpu.catalog.prices import PriceStore

    return PriceStore(path)


def _offer_row(o: Offer, selection: OfferSelection) -> list[str]:
    from whichgpu.catalog.prices import format_age
    from whichgpu.units import format_money

    age = format_age(selection.age_s(o))
    if selection.is_stale(o) and o.observed_at:
        age = f"[yellow]{age}[/yellow]"
    whole = f"{o.gpu_count} × {format_money(o.price_per_hour)}" if o.gpu_count > 1 else ""
    return [o.gpu, o.provider, o.region or "",
            format_money(o.price_per_gpu_hour) + (" spot" if o.spot else ""), whole, age,
            o.offer_set or ""]


# ------------------------------------------------------------------------ list

@prices_app.command("list")
def list_prices(
    gpu: str | None = typer.Argument(None, metavar="[GPU]",
                                     help="A GPU or family (h100 covers SXM, PCIe and NVL)."),
    spot: bool = typer.Option(False, "--spot", help="Only spot (interruptible) offers."),
    on_demand: bool = typer.Option(False, "--on-demand", help="Only on-demand offers."),
    currency: str | None = typer.Option(None, "--currency", help=CURRENCY_HELP),
    prices: str | None = typer.Option(None, "--prices", help=PRICES_HELP),
    provider: str | None = typer.Option(None, "--provider", help="Only this provider."),
    limit: int = typer.Option(25, "--limit", help="Rows to show (0: all)."),
    max_age: float | None = typer.Option(None, "--max-age",
                                         help="Days after which prices are stale (30)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Offers, cheapest per GPU-hour first, with each price's age and source."""
    from rich import box
    from rich.table import Table

    from whichgpu.catalog.prices import current_offers
    from whichgpu.errors import InputError

    if spot and on_demand:
        raise InputError("--spot and --on-demand exclude each other")
    ids, gpu_note = _gpu_ids(gpu)
    selection = current_offers(prices, store=store, max_age_days=max_age, gpus=ids)
    if currency:
        selection = apply_currency(selection, currency)
    offers = [o for o in selection.sorted()
              if (ids is None or o.gpu in ids) and (not spot or o.spot)
              and (not on_demand or not o.spot)
              and (provider is None or o.provider.lower() == provider.lower())]
    shown = offers if limit <= 0 else offers[:limit]
    if as_json:
        emit_json({"gpu": gpu, "gpus": ids, "offers": [
            {**o.to_json(), "age_s": selection.age_s(o), "stale": selection.is_stale(o)}
            for o in shown], "total": len(offers), "prices": selection.to_json()})
        return
    if gpu_note:
        note(gpu_note)
    if not offers:
        console.print(f"No offer{' for ' + ', '.join(ids) if ids else ''} in "
                      f"{', '.join(f.feed for f in selection.feeds) or 'the store'}. "
                      "'whichgpu prices refresh' fetches live prices; 'whichgpu prices import "
                      "FILE' adds your own quotes.")
        print_price_origin(selection)
        return
    table = Table(pad_edge=False, title_justify="left", box=box.SIMPLE_HEAD,
                  title="Offers, cheapest per GPU-hour first"
                  + (" (within each currency)" if len(selection.currencies()) > 1 else ""))
    multi = any(o.gpu_count > 1 for o in shown)  # else the offer price is the GPU price
    for col, justify, min_width in (("GPU", "left", None), ("Provider", "left", 6),
                                    ("Region", "left", 6), ("Per GPU-h", "right", None),
                                    ("Offer /h", "right", None), ("Age", "right", None),
                                    ("Feed", "left", None)):
        if multi or col != "Offer /h":
            table.add_column(col, justify=justify, no_wrap=min_width is None,
                             min_width=min_width, overflow="fold")
    for o in shown:
        cells = _offer_row(o, selection)
        table.add_row(*(cells if multi else cells[:4] + cells[5:]))
    console.print(table)
    if len(shown) < len(offers):
        console.print(f"[dim]{len(offers) - len(shown)} more; --limit 0 shows all.[/dim]")
    if len(selection.currencies()) > 1:
        console.print("[dim]Currencies are listed apart, not compared: use --currency to "
                      "choose one.[/dim]")
    print_price_origin(selection)


# ------------------------------------------------------------------------ refresh

def _describe_outcome(o: FeedOutcome) -> tuple[str, str]:
    from whichgpu.units import Money, format_money

    if o.status == "unchanged":
        return "[dim]unchanged[/dim]", "same as the stored snapshot"
    if o.status in ("failed", "rejected"):
        kept = (f"previous snapshot #{o.previous.id} kept" if o.previous
                else "no previous data")
        return f"[red]{o.status}[/red]", f"{o.message}; {kept}"
    bits = []
    if o.previous is None:
        bits.append("first snapshot")
    if o.added and o.previous is not None:
        bits.append(f"new: {join_some(o.added, 4)}")
    if o.removed:
        bits.append(f"gone: {join_some(o.removed, 4)}")
    for c in o.moved[:3]:
        before, after = Money(c.before or 0, c.currency), Money(c.after or 0, c.currency)
        bits.append(f"{c.gpu}{' spot' if c.spot else ''} {format_money(before)}"
                    f"->{format_money(after)} ({(c.ratio or 1) - 1:+.0%})")
    if len(o.moved) > 3:
        bits.append(f"{len(o.moved) - 3} more price changes")
    if not bits:
        bits.append("no price change")
    return "[green]updated[/green]", "; ".join(bits)


@prices_app.command("refresh")
def refresh_cmd(
    source: list[str] = typer.Option(
        None, "--source", "-s",
        help="Source to refresh (repeatable): shipped, gpuhunt, gpuhunt/PROVIDER, a URL "
             "source's name or an https URL. Default: every source."),
    force: bool = typer.Option(False, "--force",
                               help="Accept a snapshot the sanity guards reject (not an "
                                    "empty one)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    wait: str = typer.Option("0s", "--wait", metavar="DURATION",
                             help="If another refresh of the store is running (any process or "
                                  "machine), wait up to this long (10m); by default this one "
                                  "is skipped, saying so."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Fetch prices from every source into the store; failures keep the previous data."""
    from rich.progress import BarColumn, Progress, TextColumn
    from rich.table import Table

    from whichgpu.catalog.prices.refresh import RefreshBusy, refresh
    from whichgpu.catalog.prices.selection import ensure_shipped
    from whichgpu.catalog.prices.sources import all_sources, get_source
    from whichgpu.units import parse_duration

    wait_s = parse_duration(wait)
    st = _store(store)
    ensure_shipped(st)
    if source:
        sources = [get_source(name, st) for name in source]
        for s in sources:
            why = s.available()
            if why:
                from whichgpu.errors import InputError

                raise InputError(f"price source {s.name!r}: {why}")
    else:
        sources = []
        for s in all_sources(st):
            why = s.available()
            if why:
                note(f"skipping {s.name}: {why}")
            else:
                sources.append(s)

    with Progress(TextColumn("{task.fields[source]:<18}"), BarColumn(),
                  TextColumn("{task.description}"), console=err_console,
                  disable=as_json) as bars:
        tasks = {}

        def progress_for(src):
            task = bars.add_task("", total=None, source=src.name)
            tasks[src.name] = task

            def update(message: str, done: int, total: int | None) -> None:
                bars.update(task, description=message, completed=done, total=total)
            return update

        try:
            report = refresh(sources, st, force=force, progress_for=progress_for,
                             wait_s=wait_s)
        except RefreshBusy as busy:  # another refresh is doing the work: not a failure
            report = None
            skipped = str(busy)
        for task in tasks.values():
            bars.update(task, completed=1, total=1, description="done")
    if report is None:
        if as_json:
            emit_json({"ok": True, "skipped": skipped, "feeds": [], "store": str(st.path)})
        else:
            note(skipped)
        return
    if as_json:
        emit_json({**report.to_json(), "store": str(st.path)})
        if not report.ok:
            raise typer.Exit(1)
        return
    table = Table(title="Refresh", title_justify="left", pad_edge=False)
    for col in ("Feed", "Result", "Offers", "What changed"):
        table.add_column(col, justify="right" if col == "Offers" else "left",
                         overflow="fold")
    for o in report.outcomes:
        status, text = _describe_outcome(o)
        table.add_row(o.feed, status, str(o.offers) if o.status != "failed" else "-", text)
    console.print(table)
    unmapped = [u for o in report.outcomes for u in o.unmapped]
    if unmapped:
        console.print("[bold]GPU names not mapped[/bold] (reported, not guessed; those rows "
                      "are left out):")
        for u in unmapped[:12]:
            where = f" {u.instance}" if u.instance else ""
            console.print(f"  {u.provider}{where}: {u.name!r} x{u.rows}: {u.reason}")
        if len(unmapped) > 12:
            console.print(f"  ... {len(unmapped) - 12} more ('whichgpu prices sources "
                          "--unmapped')")
    console.print(f"[dim]Store: {st.path}[/dim]")
    if not report.ok:
        err_console.print("[red]Some feeds failed or were rejected; their previous data is "
                          "kept.[/red]")
        raise typer.Exit(1)


# ------------------------------------------------------------------------ history

_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    if hi == lo:
        return _BARS[3] * len(values)
    return "".join(_BARS[round((v - lo) / (hi - lo) * (len(_BARS) - 1))] for v in values)


@prices_app.command("history")
def history(
    gpu: str = typer.Argument(..., metavar="GPU", help="A GPU or family."),
    feed: str | None = typer.Option(None, "--feed", help="Only this feed."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """How a GPU's cheapest price moved, snapshot by snapshot, per feed."""
    from rich import box
    from rich.table import Table

    from whichgpu.catalog.prices.selection import ensure_shipped
    from whichgpu.units import Money, format_money

    ids, gpu_note = _gpu_ids(gpu)
    st = _store(store)
    ensure_shipped(st)
    points = st.history(ids or [], feed=feed)
    if as_json:
        emit_json({"gpu": gpu, "gpus": ids, "points": [p.to_json() for p in points],
                   "store": str(st.path)})
        return
    if gpu_note:
        note(gpu_note)
    if not points:
        console.print(f"No stored price for {', '.join(ids or [])}"
                      f"{' in ' + feed if feed else ''}.")
        return
    series: dict[tuple, list] = {}
    for p in points:
        series.setdefault((p.feed, p.gpu, p.cheapest.currency, p.spot), []).append(p)
    table = Table(title=f"Price history: {gpu} (cheapest per GPU-hour, per snapshot)",
                  title_justify="left", pad_edge=False, box=box.SIMPLE_HEAD)
    for col in ("Feed", "GPU", "Snaps", "Trend", "First", "Latest", "Low", "High"):
        table.add_column(col, no_wrap=col != "Trend", justify="right" if col in (
            "Snaps", "First", "Latest", "Low", "High") else "left")
    for (fd, g, cur, sp), pts in sorted(series.items()):
        vals = [p.cheapest.amount for p in pts]
        table.add_row(fd, g + (" spot" if sp else ""), str(len(pts)), sparkline(vals),
                      format_money(Money(vals[0], cur)), format_money(Money(vals[-1], cur)),
                      format_money(Money(min(vals), cur)), format_money(Money(max(vals), cur)))
    console.print(table)
    detail = Table(title="Snapshots", title_justify="left", pad_edge=False,
                   box=box.SIMPLE_HEAD)
    for col in ("#", "Stored", "Observed", "Feed", "GPU", "Cheapest", "Median", "Offers",
                "Cheapest at"):
        wrap = col in ("Feed", "Cheapest at")
        detail.add_column(col, no_wrap=not wrap, min_width=8 if wrap else None,
                          overflow="fold")
    for p in points[-30:]:
        detail.add_row(str(p.snapshot_id), f"{p.fetched_at:%m-%d %H:%M}",
                       f"{p.observed_at:%Y-%m-%d}" if p.observed_at else "undated", p.feed,
                       p.gpu + (" spot" if p.spot else ""), format_money(p.cheapest),
                       format_money(p.median), str(p.offers), p.cheapest_provider)
    console.print(detail)


# ------------------------------------------------------------------------ import

@prices_app.command("import")
def import_cmd(
    file: Path = typer.Argument(..., metavar="FILE", help="A CSV or JSON offer file."),
    name: str | None = typer.Option(None, "--name", help="Feed name (default: the file's "
                                                         "name without extension)."),
    observed_at: str | None = typer.Option(
        None, "--observed-at", help="Date for rows without observed_at (default: now)."),
    force: bool = typer.Option(False, "--force", help="Accept prices the guards reject."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Store your own offers (private quotes, on-premise prices) as a dated snapshot."""
    from whichgpu.catalog.prices.imports import import_file

    outcome = import_file(file, name=name, observed_at=observed_at, force=force,
                          store=store)
    if as_json:
        emit_json(outcome.to_json())
        return
    snap = outcome.snapshot
    gpus = sorted({c.gpu for c in outcome.changes if c.after is not None})
    console.print(f"Imported {outcome.offers} offers from {file} as feed "
                  f"[bold]{outcome.feed}[/bold] (snapshot #{snap.id if snap else '?'}): "
                  f"{', '.join(gpus)}.")
    _status, text = _describe_outcome(outcome)
    if outcome.previous is not None:
        console.print(f"[dim]Against the previous import: {text}[/dim]")


# ------------------------------------------------------------------------ sources

@sources_app.callback(invoke_without_command=True)
def sources_list(
    ctx: typer.Context,
    unmapped: bool = typer.Option(False, "--unmapped",
                                  help="List the GPU names each feed could not map."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Every price source, its feeds, their age and the last problem."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table

    from whichgpu.catalog.prices import format_age
    from whichgpu.catalog.prices.selection import ensure_shipped
    from whichgpu.catalog.prices.sources import all_sources, utc_now

    st = _store(store)
    ensure_shipped(st)
    now = utc_now()
    current = st.current()
    last = st.last_attempts()
    rows = []
    listed = set()
    for src in all_sources(st):
        rows.append((src.name, src.kind, src.network, src.describe(), src.available()))
        listed.add(src.name)
    for snap in current:  # imported files
        if snap.source not in listed:
            rows.append((snap.source, snap.kind, False, "imported file", None))
            listed.add(snap.source)
    data = []
    for name, kind, network, describe, why in rows:
        feeds = [s for s in current if s.source == name]
        problems = [s for f, s in last.items() if s.source == name and s.status != "ok"]
        data.append({
            "name": name, "kind": kind, "network": network, "description": describe,
            "unavailable": why,
            "feeds": [{**s.to_json(), "age_s": (now - s.observed_at).total_seconds()
                       if s.observed_at else None,
                       "unmapped": [u.to_json() for u in st.unmapped(s.id)] if unmapped
                       else None} for s in feeds],
            "last_problems": [p.to_json() for p in problems]})
    if as_json:
        emit_json({"store": str(st.path), "schema_version": st.schema_version(),
                   "sources": data})
        return
    table = Table(title="Price sources", title_justify="left", pad_edge=False)
    for col in ("Source", "Kind", "Feed", "Offers", "Age", "Stored", "Notes"):
        table.add_column(col, overflow="fold")
    for d in data:
        label = d["name"] + (" [dim](network)[/dim]" if d["network"] else "")
        notes = [d["unavailable"]] if d["unavailable"] else []
        notes += [f"[red]last {p['status']}[/red]: {p['message']}" for p in d["last_problems"]]
        if not d["feeds"]:
            table.add_row(label, d["kind"], "-", "", "", "never",
                          "; ".join(notes) or d["description"])
        for i, f in enumerate(d["feeds"]):
            extra = f"{f['unmapped_count']} rows with unmapped GPU names" \
                if f["unmapped_count"] else ""
            table.add_row(label if i == 0 else "", d["kind"] if i == 0 else "", f["feed"],
                          str(f["offer_count"]), format_age(f["age_s"]),
                          f["fetched_at"][:16].replace("T", " "),
                          "; ".join([*(notes if i == 0 else []), *([extra] if extra else [])]))
    console.print(table)
    if unmapped:
        for d in data:
            for f in d["feeds"]:
                for u in f["unmapped"] or []:
                    where = f" {u['instance']}" if u["instance"] else ""
                    console.print(f"  {f['feed']}:{where} {u['name']!r} x{u['rows']}: "
                                  f"{u['reason']}")
    console.print(f"[dim]Store: {st.path} (schema {st.schema_version()}). "
                  "'whichgpu prices sources add NAME URL' adds a URL source.[/dim]")


@sources_app.command("add")
def sources_add(
    name: str = typer.Argument(..., help="A short name for the source."),
    url: str = typer.Argument(..., help="An https URL serving whichgpu's JSON offer schema."),
    allow_http: bool = typer.Option(False, "--allow-http",
                                    help="Allow plain http (a server on your own network)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """Register a URL price source; 'whichgpu prices refresh' then fetches it."""
    import re

    from whichgpu.catalog.prices.sources import builtin_sources
    from whichgpu.catalog.prices.url import check_url
    from whichgpu.errors import InputError

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise InputError(f"source name {name!r}: use letters, digits, '.', '_' and '-'")
    st = _store(store)
    taken = set(builtin_sources()) | {s.feed for s in st.current() if s.source != name}
    if name in taken:
        raise InputError(f"{name!r} is already a source or feed; choose another name")
    check_url(url, allow_http)
    st.add_url_source(name, url, allow_http)
    console.print(f"Added price source {name!r}: {url}. 'whichgpu prices refresh --source "
                  f"{name}' fetches it.")


@sources_app.command("remove")
def sources_remove(
    name: str = typer.Argument(..., help="A URL source's name."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """Forget a URL source (its stored snapshots stay, as history)."""
    from whichgpu.errors import NotFoundError

    st = _store(store)
    if not st.remove_url_source(name):
        raise NotFoundError("URL source", name, [n for n, _, _ in st.url_sources()])
    console.print(f"Removed price source {name!r}; its snapshots stay in the store.")


# ------------------------------------------------------------------------ prune

@prices_app.command("prune")
def prune(
    keep: int = typer.Option(30, "--keep", min=1, help="Snapshots to keep per feed."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """Delete old snapshots, keeping the newest per feed (and every current one)."""
    st = _store(store)
    removed = st.prune(keep)
    console.print(f"Deleted {removed} old snapshot(s) from {st.path}.")


# ------------------------------------------------------------------------ remove

@prices_app.command("remove")
def remove(
    feed: str = typer.Argument(..., metavar="FEED", help="An imported feed's name."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Undo 'prices import': delete an imported feed and its snapshots (its history too)."""
    from whichgpu.catalog.prices.imports import remove_import

    st = _store(store)
    deleted = remove_import(feed, store=st)
    if as_json:
        emit_json({"feed": feed, "snapshots_deleted": deleted, "store": str(st.path)})
        return
    console.print(f"Removed feed [bold]{feed}[/bold] and its {deleted} snapshot(s), history "
                  "included; the other feeds are unchanged.")
