"""``whichgpu prices ...``: refresh, list, history, import, sources (and prune)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, emit_json, err_console, note
from whichgpu.listing import join_some

if TYPE_CHECKING:
    from rich.console import JustifyMethod

    from whichgpu.catalog.offers import Offer
    from whichgpu.catalog.prices import OfferSelection
    from whichgpu.catalog.prices.refresh import FeedOutcome

prices_app = typer.Typer(name="prices", no_args_is_help=True, rich_markup_mode="rich",
                         help="Live prices: sources, the local price store and its history.")
sources_app = typer.Typer(name="sources", rich_markup_mode="rich",
                          help="List price sources, or add and remove URL sources.")


def register(app: typer.Typer) -> None:
    bind(prices_app, req.PricesList, list_prices)
    bind(prices_app, req.PricesRefresh, refresh_cmd)
    bind(prices_app, req.PricesHistory, history)
    bind(prices_app, req.PricesImport, import_cmd)
    bind(sources_app, req.PricesSources, sources_list, callback=True)
    bind(sources_app, req.SourcesAdd, sources_add)
    bind(sources_app, req.SourcesRemove, sources_remove)
    bind(prices_app, req.PricesPrune, prune)
    bind(prices_app, req.PricesRemove, remove)
    bind(prices_app, req.PricesApi, api_cmd)  # per-token API prices (issue 33)
    prices_app.add_typer(sources_app, name="sources")
    app.add_typer(prices_app, name="prices")


# ------------------------------------------------------------------------ shared helpers

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
        span = (dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}") if dates else ""
        if oldest is None:
            when = "undated"
        elif src == "skypilot" and all(f.version for f in feeds):
            # the shipped snapshot: dated by the day its files were read at their commits,
            # not by the commits' own dates (not recorded); say what the age is
            when = (f"catalog files read {span} ({format_age(oldest)} ago; the prices are at "
                    "most as new)")
        else:
            when = f"observed {span} ({format_age(oldest)} old)"
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

def list_prices(q: req.PricesList) -> None:
    from whichgpu.answers.prices import prices_list as answer

    result = answer(q)
    if q.as_json:
        emit_json(result.to_json())
        return
    _print_prices(result)


_FEED_WIDTH = 16  # a feed cell below 100 columns: 'primeintellect' whole, longer ones cut


def _feed_prefix(feeds: list[str]) -> str:
    """The source every feed shown shares ('skypilot' of 'skypilot/vast'), said once in the
    caption so that a narrow table shows the feed's own name; '' when they differ."""
    heads = {f.split("/", 1)[0] for f in feeds if "/" in f}
    if len(heads) == 1 and all("/" in f for f in feeds):
        return heads.pop()
    return ""


def _print_prices(result) -> None:
    from rich import box
    from rich.table import Table

    ids, selection, shown = result.ids, result.selection, result.offers
    offers_total = result.total
    gpu_note = result.note
    if gpu_note:
        note(gpu_note)
    if not offers_total:
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
    columns: tuple[tuple[str, JustifyMethod, int | None], ...] = (
        ("GPU", "left", None), ("Provider", "left", 6), ("Region", "left", 6),
        ("Per GPU-h", "right", None), ("Offer /h", "right", None), ("Age", "right", None),
        ("Feed", "left", None))
    # Below 100 columns the region gives way (--json has it): words are not broken instead.
    keep = [(multi or col != "Offer /h") and (col != "Region" or console.width >= 100)
            for col, _, _ in columns]
    rows = [_offer_row(o, selection) for o in shown]
    narrow = console.width < 120  # 'skypilot/primeintellect' beside a region needs about 120
    prefix = _feed_prefix([r[-1] for r in rows]) if narrow else ""
    for (col, justify, _), kept in zip(columns, keep, strict=True):
        if kept:
            feed = col == "Feed"  # cut with an ellipsis if need be, never broken mid-word
            table.add_column(col, justify=justify, overflow="ellipsis" if feed else "fold",
                             no_wrap=col in ("GPU", "Age", "Feed"),  # tidy() sizes them
                             max_width=_FEED_WIDTH if feed and narrow else None)
    if prefix:
        table.caption = f"Feed: {prefix}/<feed> (--json gives every feed in full)"
        table.caption_justify = "left"
    for cells in rows:
        if prefix:
            cells[-1] = cells[-1].removeprefix(prefix + "/")
        table.add_row(*(c for c, kept in zip(cells, keep, strict=True) if kept))
    console.print(table)
    if len(shown) < offers_total:
        console.print(f"[dim]{offers_total - len(shown)} more; --limit 0 shows all.[/dim]")
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


def refresh_cmd(q: req.PricesRefresh) -> None:
    from rich.progress import BarColumn, Progress, TextColumn

    from whichgpu.answers.prices import prices_refresh

    with Progress(TextColumn("{task.fields[source]:<18}"), BarColumn(),
                  TextColumn("{task.description}"), console=err_console,
                  disable=q.as_json) as bars:
        tasks = {}

        def progress_for(src):
            task = bars.add_task("", total=None, source=src.name)
            tasks[src.name] = task

            def update(message: str, done: int, total: int | None) -> None:
                bars.update(task, description=message, completed=done, total=total)
            return update

        answer = prices_refresh(q, progress_for=progress_for)
        for task in tasks.values():
            bars.update(task, completed=1, total=1, description="done")
    for text in answer.skipped:
        note(text)
    if answer.report is None:  # another refresh of the store was doing the work
        if q.as_json:
            emit_json(answer.to_json())
        else:
            note(answer.busy or "")
        return
    if q.as_json:
        emit_json(answer.to_json())
        if not answer.ok:
            raise typer.Exit(1)
        return
    _print_refresh(answer)


def _print_refresh(answer) -> None:
    from rich.table import Table

    report = answer.report
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
    console.print(f"[dim]Store: {answer.store_path}[/dim]")
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


def history(q: req.PricesHistory) -> None:
    from whichgpu.answers.prices import prices_history

    result = prices_history(q)
    if q.as_json:
        emit_json(result.to_json())
        return
    _print_history(result)


def _print_history(result) -> None:
    from rich import box
    from rich.table import Table

    from whichgpu.units import Money, format_money

    ids, points, gpu_note, feed, gpu = (result.ids, result.points, result.note,
                                        result.request.feed, result.request.gpu)
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

def import_cmd(q: req.PricesImport) -> None:
    from whichgpu.answers.prices import prices_import

    answer = prices_import(q)
    if q.as_json:
        emit_json(answer.to_json())
        return
    outcome, file = answer.outcome, answer.file
    snap = outcome.snapshot
    gpus = sorted({c.gpu for c in outcome.changes if c.after is not None})
    console.print(f"Imported {outcome.offers} offers from {file} as feed "
                  f"[bold]{outcome.feed}[/bold] (snapshot #{snap.id if snap else '?'}): "
                  f"{', '.join(gpus)}.")
    _status, text = _describe_outcome(outcome)
    if outcome.previous is not None:
        console.print(f"[dim]Against the previous import: {text}[/dim]")


# ------------------------------------------------------------------------ sources

def sources_list(q: req.PricesSources, ctx: typer.Context) -> None:
    from whichgpu.answers.prices import prices_sources

    answer = prices_sources(q)
    if q.as_json:
        emit_json(answer.to_json())
        return
    _print_sources(answer, q.unmapped)


def _print_sources(answer, unmapped: bool) -> None:
    from rich.table import Table

    from whichgpu.catalog.prices import format_age

    data = answer.sources
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
    console.print(f"[dim]Store: {answer.store_path} (schema {answer.schema_version}). "
                  "'whichgpu prices sources add NAME URL' adds a URL source.[/dim]")


def sources_add(q: req.SourcesAdd) -> None:
    from whichgpu.answers.prices import sources_add as add

    add(q)
    console.print(f"Added price source {q.name!r}: {q.url}. 'whichgpu prices refresh --source "
                  f"{q.name}' fetches it.")


def sources_remove(q: req.SourcesRemove) -> None:
    from whichgpu.answers.prices import sources_remove as forget

    forget(q)
    console.print(f"Removed price source {q.name!r}; its snapshots stay in the store.")


# ------------------------------------------------------------------------ prune

def prune(q: req.PricesPrune) -> None:
    from whichgpu.answers.prices import prices_prune

    answer = prices_prune(q)
    console.print(f"Deleted {answer.removed} old snapshot(s) from {answer.store_path}.")


# ------------------------------------------------------------------------ remove

def remove(q: req.PricesRemove) -> None:
    from whichgpu.answers.prices import prices_remove

    answer = prices_remove(q)
    if q.as_json:
        emit_json(answer.to_json())
        return
    console.print(f"Removed feed [bold]{answer.feed}[/bold] and its {answer.deleted} "
                  "snapshot(s), history included; the other feeds are unchanged.")


# ------------------------------------------------------------------------ per-token APIs

def api_cmd(q: req.PricesApi) -> None:
    """The per-token API prices --vs-api uses (and, with --refresh, fetch them first)."""
    from rich.table import Table

    from whichgpu.answers.api_prices import prices_api

    answer = prices_api(q)
    for text in answer.notes:
        note(text)
    if q.as_json:
        emit_json(answer.to_json())
    else:
        t = answer.table
        r = answer.refreshed
        if r is not None and r.ok:
            c = r.converted
            console.print(f"Refreshed: {c.found} of {c.mapped} mapped model prices found "
                          f"upstream; {len(c.rows)} rows stored as snapshot {r.snapshot.id}.")
            if c.missing:
                console.print(f"[dim]No longer listed upstream: {', '.join(c.missing)}[/dim]")
        when = f", fetched {t.fetched_at}" if t.fetched_at else ""
        console.print(f"API prices from the {t.origin} table: {t.source}{when}.")
        tab = Table(title="Per-token API prices (USD per 1M tokens)", title_justify="left",
                    pad_edge=False)
        for col in ("Model", "Provider", "Input", "Cached", "Output", "Date"):
            tab.add_column(col, justify="right" if col in ("Input", "Cached", "Output")
                           else "left")
        for p in answer.rows:
            tab.add_row(p.model, p.provider, f"{p.input_per_mtok:g}",
                        "" if p.cached_input_per_mtok is None else
                        f"{p.cached_input_per_mtok:g}", f"{p.output_per_mtok:g}", p.date)
        console.print(tab)
    if answer.refreshed is not None and not answer.refreshed.ok:
        raise typer.Exit(1)
