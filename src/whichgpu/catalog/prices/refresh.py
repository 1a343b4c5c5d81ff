"""Refreshing the store: fetch each source, judge each feed, keep the last good data.

A feed's new snapshot replaces the current one only if it passes the guards:

* it has offers (an empty answer is a failure, not "no GPUs today");
* it keeps at least :attr:`Guards.min_kept_fraction` of the previous offer count;
* no GPU's median per-GPU-hour price moved by more than :attr:`Guards.max_price_factor`
  (cents read as dollars, a per-GPU price read as per-instance ...);
* for a catalog file (the SkyPilot source): it keeps its shape against the last good refresh
  of the same feed: at least :attr:`Guards.min_rows_kept` of its GPU rows, of its instance
  types and of its GPUs (a file cut at a row boundary passes every per-row check, and only
  a comparison with the previous file shows what it lost). The expected columns are checked
  when the file is read (:data:`.skypilot.EXPECTED`).

A feed that fails or is rejected is recorded with the reason, and its previous snapshot
stays current. ``force`` accepts a snapshot the guards reject (never an empty one).

One refresh runs at a time per store (its refresh lock), and writes everything it stores in
one transaction.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.sources import FeedResult, PriceSource, Progress, Unmapped
from whichgpu.catalog.prices.store import PendingWrite, PriceStore, RefreshBusy, Snapshot
from whichgpu.errors import WhichGPUError

__all__ = ["FeedOutcome", "Guards", "PriceChange", "RefreshBusy", "RefreshReport", "judge",
           "judge_shape", "plan", "price_changes", "record", "refresh"]


@dataclass(frozen=True)
class Guards:
    """Limits a new snapshot must respect against the previous one of the same feed."""

    max_price_factor: float = 10.0
    min_kept_fraction: float = 0.2
    #: A catalog file keeps at least this fraction of the last good refresh's GPU rows,
    #: instance types and GPUs. SkyPilot's catalog jobs rewrite a whole file from the
    #: provider's API, and its files are sorted (RunPod's by GPU type), so a file cut short
    #: loses its tail: whole instance types and GPUs. Availability-listed clouds (Vast lists
    #: only what is rentable now) legitimately move by tens of percent between runs, so the
    #: bound is a loss of more than a third, not any loss; ``--force`` takes a file anyway.
    min_rows_kept: float = 2 / 3


@dataclass(frozen=True)
class PriceChange:
    """How the cheapest per-GPU-hour price of one GPU moved (None: absent on that side)."""

    gpu: str
    currency: str
    spot: bool
    before: float | None
    after: float | None

    @property
    def ratio(self) -> float | None:
        return self.after / self.before if self.before and self.after else None

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "currency": self.currency, "spot": self.spot,
                "before": self.before, "after": self.after}


@dataclass
class FeedOutcome:
    """What a refresh did with one feed."""

    feed: str
    source: str
    status: str  # updated | unchanged | rejected | failed
    message: str | None = None
    snapshot: Snapshot | None = None
    previous: Snapshot | None = None
    offers: int = 0
    changes: list[PriceChange] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status in ("updated", "unchanged")

    @property
    def added(self) -> list[str]:
        return sorted({c.gpu for c in self.changes if c.before is None})

    @property
    def removed(self) -> list[str]:
        return sorted({c.gpu for c in self.changes if c.after is None})

    @property
    def moved(self) -> list[PriceChange]:
        """Price moves of GPUs present before and after, largest first."""
        moves = [c for c in self.changes if c.ratio is not None and abs(c.ratio - 1) > 1e-9]
        return sorted(moves, key=lambda c: -abs((c.ratio or 1) - 1))

    def to_json(self) -> dict[str, Any]:
        return {
            "feed": self.feed, "source": self.source, "status": self.status,
            "message": self.message, "offers": self.offers,
            "offers_before": self.previous.offer_count if self.previous else None,
            "snapshot": self.snapshot.to_json() if self.snapshot else None,
            "previous_snapshot_id": self.previous.id if self.previous else None,
            "gpus_added": self.added, "gpus_removed": self.removed,
            "price_changes": [c.to_json() for c in self.moved],
            "unmapped": [u.to_json() for u in self.unmapped], "skipped": self.skipped}


@dataclass
class RefreshReport:
    outcomes: list[FeedOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "feeds": [o.to_json() for o in self.outcomes]}


# ------------------------------------------------------------------------ judging a feed

def _medians(offers: Iterable[Offer]) -> dict[tuple[str, str, bool], float]:
    groups: dict[tuple[str, str, bool], list[float]] = {}
    for o in offers:
        key = (o.gpu, o.price_per_hour.currency, o.spot)
        groups.setdefault(key, []).append(o.price_per_gpu_hour.amount)
    return {k: statistics.median(v) for k, v in groups.items()}


def _cheapest(offers: Iterable[Offer]) -> dict[tuple[str, str, bool], float]:
    best: dict[tuple[str, str, bool], float] = {}
    for o in offers:
        key = (o.gpu, o.price_per_hour.currency, o.spot)
        best[key] = min(best.get(key, float("inf")), o.price_per_gpu_hour.amount)
    return best


def judge_shape(new: list[Offer], previous: list[Offer], guards: Guards, *,
                new_rows: int | None = None, previous_rows: int | None = None) -> str | None:
    """Why a catalog file lost too much of its shape against the last good refresh (rows,
    instance types, GPUs), or None."""
    keep = guards.min_rows_kept
    if new_rows is not None and previous_rows and new_rows < keep * previous_rows:
        return (f"the file has {new_rows} GPU rows against {previous_rows} at the last good "
                f"refresh (fewer than {keep:.0%}): cut short?")
    for what, key in (("instance types", lambda o: o.instance_type),
                      ("GPUs", lambda o: o.gpu)):
        before = {key(o) for o in previous if key(o)}
        after = {key(o) for o in new if key(o)}
        lost = sorted(before - after)
        if before and len(before & after) < keep * len(before):
            return (f"{len(lost)} of the {len(before)} {what} of the last good refresh are "
                    f"missing ({', '.join(lost[:5])}{' ...' if len(lost) > 5 else ''}; more "
                    f"than {1 - keep:.0%} gone): cut short?")
    return None


def judge(new: list[Offer], previous: list[Offer] | None, guards: Guards) -> str | None:
    """Why a new snapshot must not replace the previous one, or None if it may."""
    if previous:
        if len(new) < guards.min_kept_fraction * len(previous):
            return (f"returned {len(new)} offers against {len(previous)} in the last good "
                    f"snapshot (fewer than {guards.min_kept_fraction:.0%})")
        before, after = _medians(previous), _medians(new)
        worst = None
        for key in before.keys() & after.keys():
            ratio = after[key] / before[key]
            factor = max(ratio, 1 / ratio)
            if factor > guards.max_price_factor and (worst is None or factor > worst[0]):
                worst = (factor, key, before[key], after[key])
        if worst:
            factor, (gpu, cur, spot), b, a = worst
            return (f"{gpu}{' spot' if spot else ''}: median {a:,.4g} {cur}/GPU-h against "
                    f"{b:,.4g} in the last good snapshot ({factor:,.0f}x, more than the "
                    f"{guards.max_price_factor:g}x allowed); a unit error?")
    return None


def price_changes(previous: list[Offer], new: list[Offer]) -> list[PriceChange]:
    before, after = _cheapest(previous), _cheapest(new)
    return [PriceChange(g, c, s, before.get((g, c, s)), after.get((g, c, s)))
            for (g, c, s) in sorted(before.keys() | after.keys())]


def plan(store: PriceStore, result: FeedResult, *, force: bool = False,
         guards: Guards = Guards(), skip_unchanged: bool = False,
         current: dict[str, Snapshot] | None = None,
         pending: dict[str, FeedResult] | None = None,
         ) -> tuple[FeedOutcome, PendingWrite | None]:
    """Judge one fetched feed: its outcome, and what to store (None: nothing). ``current``:
    the store's current snapshots (read once per refresh); ``pending``: feeds this refresh
    already accepted, which a second result of the same feed is judged against."""
    out = FeedOutcome(result.feed, result.source, "failed", offers=len(result.offers),
                      unmapped=result.unmapped, skipped=result.skipped)
    if current is None:
        current = {s.feed: s for s in store.current()}
    out.previous = previous = current.get(result.feed)
    if result.error:
        out.message = result.error
    elif previous is not None and previous.source != result.source:
        out.message = (f"feed {result.feed!r} belongs to source {previous.source!r}; "
                       "give this one another name")
    if out.message:
        return out, PendingWrite(result, "failed", out.message)
    if skip_unchanged and previous is not None and result.digest \
            and previous.digest == result.digest:
        out.status, out.snapshot = "unchanged", previous
        return out, None
    earlier = (pending or {}).get(result.feed)
    if earlier is not None:
        old = earlier.offers
    else:
        old = store.read([previous.id])[1] if previous else []
    problem: str | None
    if not result.offers:
        problem = "returned no offers"
        if result.unmapped:
            problem += (f" that map to a catalog GPU ({sum(u.rows for u in result.unmapped)} "
                        "rows with GPU names we could not map)")
    else:
        problem = None if force else judge(result.offers, old, guards)
        # a live catalog file (it counts its rows; the shipped snapshot does not)
        if problem is None and not force and result.rows is not None and old:
            problem = judge_shape(result.offers, old, guards, new_rows=result.rows,
                                  previous_rows=earlier.rows if earlier is not None
                                  else (previous.source_rows if previous else None))
    if problem:
        out.status, out.message = "rejected", problem
        return out, PendingWrite(result, "rejected", out.message)
    out.status = "updated"
    out.changes = price_changes(old, result.offers)
    if pending is not None:
        pending[result.feed] = result
    return out, PendingWrite(result, only_if_changed=skip_unchanged)


def _settle(store: PriceStore, planned: list[tuple[FeedOutcome, PendingWrite | None]]
            ) -> list[FeedOutcome]:
    """Store every planned write in one transaction and fill in each outcome's snapshot."""
    writes = [w for _, w in planned if w is not None]
    stored = iter(store.commit(writes) if writes else [])
    outcomes = []
    for out, w in planned:
        if w is not None:
            snap = next(stored)
            if snap is None:  # another process stored the same content meanwhile
                out.status, out.snapshot, out.changes = "unchanged", \
                    store.current_of(out.feed), []
            else:
                out.snapshot = snap
        outcomes.append(out)
    return outcomes


def record(store: PriceStore, result: FeedResult, *, force: bool = False,
           guards: Guards = Guards(), skip_unchanged: bool = False) -> FeedOutcome:
    """Judge one fetched feed and store it: as the new current snapshot, or as a problem."""
    (out,) = _settle(store, [plan(store, result, force=force, guards=guards,
                                  skip_unchanged=skip_unchanged)])
    return out


# ------------------------------------------------------------------------ refreshing sources

def refresh(sources: Iterable[PriceSource], store: PriceStore, *, force: bool = False,
            guards: Guards = Guards(),
            progress_for: Callable[[PriceSource], Progress | None] | None = None,
            wait_s: float = 0.0) -> RefreshReport:
    """Fetch every source and record each feed. A source that raises is recorded as failed
    and the others go on: one failing provider never holds back the rest.

    The whole refresh holds the store's refresh lock (one refresh at a time, whatever the
    process or machine: a second one waits up to ``wait_s`` seconds, then raises
    :class:`RefreshBusy`), and everything it stores is written in one transaction at the
    end: readers see the prices before it or after it, never a mix, and a store that fails
    mid-write (a full disk, a lost database connection) keeps exactly what it had."""
    report = RefreshReport()
    with store.refresh_lock(wait_s):
        current = {s.feed: s for s in store.current()}
        pending: dict[str, FeedResult] = {}
        planned: list[tuple[FeedOutcome, PendingWrite | None]] = []
        for source in sources:
            progress = progress_for(source) if progress_for else None
            try:
                for result in source.fetch(progress):
                    planned.append(plan(store, result, force=force, guards=guards,
                                        skip_unchanged=source.kind == "shipped",
                                        current=current, pending=pending))
            except Exception as exc:
                message = str(exc) if isinstance(exc, WhichGPUError | OSError) else \
                    f"{type(exc).__name__}: {exc}"
                failed = FeedResult(feed=source.name, source=source.name, kind=source.kind,
                                    error=message)
                planned.append(plan(store, failed, current=current))
        report.outcomes = _settle(store, planned)
    return report
