"""The price refresh on a schedule, inside the web service: ``WHICHGPU_REFRESH_EVERY=6h``.

Every worker of ``whichgpu serve`` (and every machine sharing the store) runs the same small
loop: every CHECK_S seconds or so (with jitter) it reads from the store when any refreshed
feed was last fetched (by anyone: a worker, the ``prices refresh`` cron job, another
machine); when that is ``every`` or longer ago, it runs ``prices refresh`` without waiting
for the store's refresh lock. So one refresh runs at a time across workers and machines
(the lock: a flock on SQLite, an advisory lock on PostgreSQL), the others skip, and a
worker that restarts does not refresh again before it is due.

What the last refresh did is read from the store at each probe (whichever process ran it):
``/readyz`` says it under ``refresh`` and ``/metrics`` as ``whichgpu_price_refresh_*``;
each worker also says what its own loop did last (``this_worker``) and counts its runs by
outcome (summed across workers in /metrics).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from fastapi import FastAPI
from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from whichgpu.errors import InputError
from whichgpu.web.metrics_registry import REGISTRY, probe_store

EVERY_ENV = "WHICHGPU_REFRESH_EVERY"
MIN_EVERY_S = 600.0  # no schedule fetches the providers more often than every 10 minutes
CHECK_S = 300.0  # how often a worker looks whether a refresh is due (at most)
START_DELAY_S = 15.0  # the first look waits this long (plus jitter): the start stays quick
#: feeds a refresh does not fetch (seeded from the package, imported, published history)
NOT_REFRESHED = frozenset({"shipped", "file", "history"})

log = logging.getLogger("whichgpu.web")


class Outcome(StrEnum):
    """What one look of a worker's loop did."""

    REFRESHED = "refreshed"  # it ran the refresh (its feeds' statuses say how it went)
    BUSY = "busy"  # another process held the refresh lock: that one did the work
    NOT_DUE = "not_due"  # the store's prices were fetched less than 'every' ago
    FAILED = "failed"  # the refresh could not run (the store unusable, a bug): logged


RUNS = Counter("whichgpu_price_refresh_runs", "Looks of the scheduled refresh, by outcome "
               "(refreshed, busy: another process held the lock, not_due, failed)",
               ["outcome"], registry=REGISTRY)


def every_s() -> float | None:
    """The configured period in seconds (None: no schedule); InputError for a bad value."""
    from whichgpu.units import parse_duration

    text = os.environ.get(EVERY_ENV, "").strip()
    if text.lower() in ("", "0", "off", "none"):
        return None
    try:
        seconds = parse_duration(text)
    except (InputError, ValueError, OverflowError):
        raise InputError(f"{EVERY_ENV}={text!r} is not a duration: write e.g. 6h, 30m or "
                         "off") from None
    if not seconds >= MIN_EVERY_S:
        raise InputError(f"{EVERY_ENV}={text!r}: refresh at most every "
                         f"{MIN_EVERY_S / 60:g} minutes (the providers' catalogs change "
                         "hourly at most)")
    return seconds


@dataclass
class Run:
    """What this worker's loop did last."""

    outcome: Outcome
    at: datetime
    duration_s: float
    detail: str | None = None
    feeds: dict[str, int] = field(default_factory=dict)  # refresh statuses -> count

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "at": self.at.isoformat(timespec="seconds"),
                "duration_s": round(self.duration_s, 3), "detail": self.detail,
                "feeds": self.feeds, "pid": os.getpid()}


_last: list[Run | None] = [None]


def _refreshed(store: Any) -> dict[str, Any]:
    """The latest fetch of each feed a refresh fetches, from the store; the market snapshot
    shipped with the package (seeded at start, never fetched) is not one."""
    from whichgpu.catalog.prices.market import market_feeds

    seeded = {(f.feed, f.digest) for f in market_feeds()}
    return {feed: snap for feed, snap in store.last_attempts().items()
            if snap.kind not in NOT_REFRESHED and not feed.startswith("history/")
            and (feed, snap.digest) not in seeded}


def last_fetch(store: Any) -> datetime | None:
    """When a refresh last fetched any feed (whichever process ran it)."""
    times = [s.fetched_at for s in _refreshed(store).values() if s.fetched_at is not None]
    return max(times) if times else None


def due(store: Any, every: float, now: datetime | None = None) -> bool:
    last = last_fetch(store)
    mine = _last[0]
    if mine is not None and mine.outcome is Outcome.REFRESHED:  # its feeds may be unchanged
        last = max(last, mine.at) if last else mine.at
    now = now or datetime.now(UTC)
    return last is None or (now - last).total_seconds() >= every


def run_once(every: float) -> Run:
    """One look: refresh if due, without waiting for another process's refresh."""
    from whichgpu.answers.prices import prices_refresh
    from whichgpu.answers.requests import PricesRefresh
    from whichgpu.catalog.prices import PriceStore

    started, t0 = datetime.now(UTC), time.perf_counter()
    try:
        if not due(PriceStore(None), every):
            return Run(Outcome.NOT_DUE, started, time.perf_counter() - t0)
        answer = prices_refresh(PricesRefresh())
    except Exception as exc:  # the loop goes on: the next look may find the store back
        log.error("scheduled price refresh: %s", exc)
        return Run(Outcome.FAILED, started, time.perf_counter() - t0, str(exc)[:300])
    if answer.report is None:
        return Run(Outcome.BUSY, started, time.perf_counter() - t0, answer.busy)
    feeds: dict[str, int] = {}
    for o in answer.report.outcomes:
        feeds[o.status] = feeds.get(o.status, 0) + 1
    skipped = "; ".join(answer.skipped) or None
    log.info("scheduled price refresh: %s", ", ".join(f"{n} {s}" for s, n in feeds.items())
             or "no source available")
    return Run(Outcome.REFRESHED, started, time.perf_counter() - t0, skipped, feeds)


async def loop(every: float) -> None:
    """Look every CHECK_S (or every/4, if shorter) seconds, jittered, until cancelled."""
    import anyio

    pause = min(CHECK_S, every / 4)
    await asyncio.sleep(START_DELAY_S + random.uniform(0, pause / 4))
    while True:
        run = await anyio.to_thread.run_sync(run_once, every, abandon_on_cancel=True)
        _last[0] = run
        RUNS.labels(run.outcome.value).inc()
        await asyncio.sleep(pause * random.uniform(0.8, 1.2))


def status(store: Any) -> dict[str, Any]:
    """/readyz's ``refresh``: the schedule, the last refresh (from the store: whoever ran
    it) with each feed's status, and what this worker's loop did last."""
    try:
        every = every_s()
    except InputError as exc:
        return {"every_s": None, "problem": str(exc)}
    try:
        feeds = _refreshed(store)
    except Exception as exc:  # the store went away since the probe: said, not a 500
        return {"every_s": every, "problem": getattr(exc, "reason", None) or type(exc).__name__}
    times = [s.fetched_at for s in feeds.values() if s.fetched_at is not None]
    last = max(times) if times else None
    age = (datetime.now(UTC) - last).total_seconds() if last else None
    by_status: dict[str, list[str]] = {}
    for feed, snap in sorted(feeds.items()):
        by_status.setdefault(snap.status, []).append(feed)
    mine = _last[0]
    return {"every_s": every, "last_fetch_at": last.isoformat() if last else None,
            "last_fetch_age_s": round(age) if age is not None else None,
            "due": every is not None and (age is None or age >= every),
            "feeds": {s: len(f) for s, f in by_status.items()},
            "failed_feeds": by_status.get("failed", []) + by_status.get("rejected", []),
            "this_worker": mine.to_json() if mine else None}


class RefreshCollector(Collector):
    """The schedule and the last refresh's result, read from the store at scrape time."""

    def collect(self):
        interval = GaugeMetricFamily("whichgpu_price_refresh_interval_seconds", "The "
                                     "scheduled refresh's period (0: no schedule)")
        try:
            every = every_s()
        except InputError:
            every = None
        interval.add_metric([], every or 0)
        yield interval
        try:
            store = probe_store()
            feeds = _refreshed(store)
        except Exception:  # whichgpu_price_store_up says the store is down
            return
        last = max((s.fetched_at for s in feeds.values() if s.fetched_at), default=None)
        when = GaugeMetricFamily("whichgpu_price_refresh_last_fetch_timestamp_seconds",
                                 "When a refresh last fetched any feed, whichever process "
                                 "ran it (Unix time)")
        if last is not None:
            when.add_metric([], last.timestamp())
        yield when
        statuses = GaugeMetricFamily("whichgpu_price_refresh_last_feeds", "Refreshed feeds "
                                     "by the status of their latest fetch (ok, failed, "
                                     "rejected)", labels=["status"])
        counts: dict[str, int] = {}
        for snap in feeds.values():
            counts[snap.status] = counts.get(snap.status, 0) + 1
        for name in ("ok", "failed", "rejected"):
            statuses.add_metric([name], counts.get(name, 0))
        yield statuses


COLLECTOR = RefreshCollector()
REGISTRY.register(COLLECTOR)


def install(app: FastAPI) -> None:
    """Run the loop in the app's lifespan when WHICHGPU_REFRESH_EVERY sets a schedule."""
    every = every_s()  # a bad value stops the start, saying why
    if every is None:
        return
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any):
        task = asyncio.get_running_loop().create_task(loop(every))
        log.info("price refresh scheduled every %g s", every)
        try:
            async with inner(application) as state:
                yield state
        finally:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    app.router.lifespan_context = lifespan
