"""What operators run the web app with: /healthz, /readyz, /metrics, and access logs.

* ``/healthz``: the process answers (never touches the store): for a liveness probe.
* ``/readyz``: the price store answers, holds market prices, and how old they are; 503 when
  the store cannot be read or holds no market price (stale prices still serve, and say so).
  It also says what this process keeps in memory: the caches are per process.
* ``/metrics``: Prometheus's text format (prometheus-client). Requests, latency histograms and
  errors by method and **route template** (``/api/v1/gpus/{gpu_id}``, never the raw path, so
  the label set stays bounded), requests in progress; and, read from the store at scrape time
  (so a refresh job in another process or on another machine shows up), the age and size of
  every feed's current prices and the outcomes of recorded refreshes. Under
  ``whichgpu serve --workers N`` the request metrics of every worker are summed through
  prometheus-client's multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, which ``serve`` sets).
* Access logs: one JSON line per request on stderr (logger ``whichgpu.access``) when
  ``WHICHGPU_ACCESS_LOG=1`` (``whichgpu serve --access-log``): time, method, route, path
  (never the query string, which carries what a visitor typed), status, duration, bytes, the
  request id (``X-Request-ID``, kept from the request when it is a plain token, else made;
  echoed in the response) and the worker's pid.

``install(app)`` adds all of it: the one line web/app.py needs.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from whichgpu.web.metrics_registry import REGISTRY
from whichgpu.web.metrics_registry import probe_store as _probe_store

ACCESS_LOG_ENV = "WHICHGPU_ACCESS_LOG"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
SUPERVISOR_ENV = "WHICHGPU_SUPERVISOR_PID"  # set by 'serve --workers N' for its workers

access_log = logging.getLogger("whichgpu.access")
log = logging.getLogger("whichgpu.web")

_METHODS = frozenset({"GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"})
# Latency buckets (s): cached answers take ~1 ms, new questions up to the 2 s CPU budget of
# web/work.py, and a queue ahead of them more.
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

REQUESTS = Counter("whichgpu_http_requests", "HTTP requests answered, by method, route "
                   "template and status code", ["method", "route", "status"],
                   registry=REGISTRY)
LATENCY = Histogram("whichgpu_http_request_duration_seconds", "Time to answer a request "
                    "(first byte of the request to the last of the answer), by route template",
                    ["method", "route"], buckets=_BUCKETS, registry=REGISTRY)
ERRORS = Counter("whichgpu_http_request_errors", "Requests answered with an error: kind "
                 "'server' (5xx: a fault, the store down, the server busy) or 'client' (4xx: "
                 "bad input)", ["method", "route", "kind"], registry=REGISTRY)
IN_PROGRESS = Gauge("whichgpu_http_requests_in_progress", "Requests being answered now",
                    multiprocess_mode="livesum", registry=REGISTRY)


def multiprocess() -> bool:
    """Whether this process writes its metrics for several workers (see module doc)."""
    return bool(os.environ.get(MULTIPROC_ENV))


# ------------------------------------------------------------------ endpoints

router = APIRouter(include_in_schema=False)


@router.get("/healthz")
async def healthz() -> JSONResponse:
    """The process is up (liveness): nothing else is checked."""
    return JSONResponse({"status": "ok", "pid": os.getpid(), "version": _version()})


@router.get("/readyz")
def readyz() -> JSONResponse:
    """The store is reachable and holds market prices (readiness), with their age."""
    from whichgpu.catalog.prices import default_max_age_days
    from whichgpu.catalog.prices.selection import is_market
    from whichgpu.web import services

    caches = {
        "scope": f"this worker process only (pid {os.getpid()}); every worker keeps its own",
        "price_selections_recheck_s": services.OFFER_CACHE_S,
        "answers_kept": services.MEMO_SIZE, "answers_bytes_max": services.MEMO_BYTES,
        "shared": "the price store: a new snapshot reaches every worker within "
                  f"{services.OFFER_CACHE_S:g} s"}
    t0 = time.perf_counter()
    try:
        store = _probe_store()
        current = store.current()
        version = store.schema_version()
    except Exception as exc:
        reason = getattr(exc, "reason", None) or f"{type(exc).__name__}"
        log.error("readiness: price store: %s", exc)
        return JSONResponse({"ready": False, "store": {"reachable": False, "reason": reason},
                             "caches": caches}, status_code=503)
    read_ms = (time.perf_counter() - t0) * 1000
    from whichgpu.web.schedule import status as refresh_status

    refresh = refresh_status(store)  # the schedule and the last refresh (whoever ran it)
    now = datetime.now(UTC)
    max_age_s = default_max_age_days() * 86400
    feeds = []
    for s in current:
        if not is_market(s):
            continue
        age = (now - s.observed_at).total_seconds() if s.observed_at else None
        feeds.append({"feed": s.feed, "source": s.source, "offers": s.offer_count,
                      "observed_at": s.observed_at.isoformat() if s.observed_at else None,
                      "age_s": round(age) if age is not None else None,
                      "stale": age is None or age > max_age_s})
    ages = [f["age_s"] for f in feeds if f["age_s"] is not None]
    ready = bool(feeds) and any(f["offers"] for f in feeds)
    body = {
        "ready": ready,
        "store": {"reachable": True, "engine": store.dialect, "schema_version": version,
                  "read_ms": round(read_ms, 1)},
        "prices": {"feeds": len(feeds), "offers": sum(f["offers"] for f in feeds),
                   "oldest_age_s": max(ages) if ages else None,
                   "newest_age_s": min(ages) if ages else None,
                   "max_age_s": max_age_s,
                   "stale_feeds": [f["feed"] for f in feeds if f["stale"]],
                   "by_feed": feeds},
        "refresh": refresh,
        "caches": caches}
    if not ready:
        body["reason"] = ("the store holds no market prices yet: 'whichgpu serve' seeds it at "
                          "start, 'whichgpu prices refresh' fills it")
    return JSONResponse(body, status_code=200 if ready else 503)


@router.get("/metrics")
def metrics() -> Response:
    """Prometheus's text format: every worker's request metrics, and the store's state."""
    if multiprocess():
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        registry.register(_STORE)
        from whichgpu.web.schedule import COLLECTOR

        registry.register(COLLECTOR)
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)


class StoreCollector(Collector):
    """The price store's state at scrape time: the same in every worker, and it includes
    refreshes run by any process sharing the store (the scheduled job)."""

    def collect(self):
        up = GaugeMetricFamily("whichgpu_price_store_up", "1 if the price store could be read "
                               "for this scrape, else 0")
        t0 = time.perf_counter()
        try:
            store = _probe_store()
            current = store.current()
            counts = store.fetch_counts()
            last = store.last_attempts()
        except Exception as exc:
            log.error("metrics: price store: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        read = GaugeMetricFamily("whichgpu_price_store_read_seconds", "Time this scrape took "
                                 "to read the store's state")
        read.add_metric([], time.perf_counter() - t0)
        yield read
        now = datetime.now(UTC)
        age = GaugeMetricFamily("whichgpu_price_age_seconds", "Age of each feed's current "
                                "prices: now minus its oldest offer's observation time (undated "
                                "feeds are left out)", labels=["feed", "source", "kind"])
        offers = GaugeMetricFamily("whichgpu_price_offers", "Offers in each feed's current "
                                   "snapshot", labels=["feed", "source", "kind"])
        stored = GaugeMetricFamily("whichgpu_price_snapshot_stored_timestamp_seconds", "When "
                                   "each feed's current snapshot was stored (Unix time)",
                                   labels=["feed", "source", "kind"])
        for s in current:
            if s.kind == "history":  # published price points: a trend, never a price to rent
                continue
            labels = [s.feed, s.source, s.kind]
            offers.add_metric(labels, s.offer_count)
            stored.add_metric(labels, s.fetched_at.timestamp())
            if s.observed_at is not None:
                age.add_metric(labels, (now - s.observed_at).total_seconds())
        yield from (age, offers, stored)
        fetches = GaugeMetricFamily("whichgpu_price_fetches", "Fetches the store keeps, by "
                                    "feed and outcome (ok, failed, rejected); 'prices prune' "
                                    "lowers it", labels=["feed", "status"])
        latest = GaugeMetricFamily("whichgpu_price_last_fetch_timestamp_seconds", "When the "
                                   "latest fetch of each outcome was stored, per feed (Unix "
                                   "time)", labels=["feed", "status"])
        for feed, status, n, when in counts:
            if feed.startswith("history/"):
                continue
            fetches.add_metric([feed, status], n)
            if when is not None:
                latest.add_metric([feed, status], when.timestamp())
        ok = GaugeMetricFamily("whichgpu_price_last_fetch_ok", "1 if the latest fetch of the "
                               "feed succeeded, 0 if it failed or was rejected (its previous "
                               "prices are kept)", labels=["feed"])
        for feed, snap in sorted(last.items()):
            if not feed.startswith("history/"):
                ok.add_metric([feed], 1 if snap.status == "ok" else 0)
        yield from (fetches, latest, ok)


_STORE = StoreCollector()
REGISTRY.register(_STORE)
if not multiprocess():
    from prometheus_client import GCCollector, PlatformCollector, ProcessCollector

    ProcessCollector(registry=REGISTRY)
    PlatformCollector(registry=REGISTRY)
    GCCollector(registry=REGISTRY)


# ------------------------------------------------------------------ telemetry middleware

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class Telemetry:
    """ASGI middleware (outermost): counts, times and logs every HTTP request, the ones the
    app refuses before routing (413, 414) included."""

    def __init__(self, app, owner: Any = None) -> None:
        self.app = app
        self.app_ref = owner  # the FastAPI app, for its OpenAPI paths
        self.templates: list | None = None
        self.log = os.environ.get(ACCESS_LOG_ENV, "").strip().lower() in ("1", "true", "yes")

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        given = _header(scope, b"x-request-id")
        request_id = given if given and _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        state = {"status": 500, "bytes": 0}

        async def tracked(message) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"],
                                      (b"x-request-id", request_id.encode())]
            elif message["type"] == "http.response.body":
                state["bytes"] += len(message.get("body", b""))
            await send(message)

        IN_PROGRESS.inc()
        try:
            await self.app(scope, receive, tracked)
        finally:
            IN_PROGRESS.dec()
            elapsed = time.perf_counter() - t0
            method = scope.get("method", "GET")
            method = method if method in _METHODS else "OTHER"
            route = self._route(scope)
            status = state["status"]
            REQUESTS.labels(method, route, str(status)).inc()
            LATENCY.labels(method, route).observe(elapsed)
            if status >= 400:
                ERRORS.labels(method, route, "server" if status >= 500 else "client").inc()
            if self.log:
                client = scope.get("client")
                access_log.info(json.dumps({
                    "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
                    "event": "request", "method": method, "route": route,
                    "path": scope.get("path", "")[:300], "status": status,
                    "duration_ms": round(elapsed * 1000, 2), "bytes": state["bytes"],
                    "request_id": request_id, "client": client[0] if client else None,
                    "user_agent": (_header(scope, b"user-agent") or "")[:200],
                    "pid": os.getpid()}))  # ASCII: no character a reader splits lines on

    def _route(self, scope) -> str:
        """The route template that answered, or would have (a request refused before
        routing: 413, 414), from the OpenAPI paths; 'unmatched' for paths no route knows."""
        route = scope.get("route")
        path = getattr(route, "path", None)
        if path:
            return path
        if self.templates is None:
            self.templates = _templates(self.app_ref)
        method, target = scope.get("method", "GET").lower(), scope.get("path", "")
        for regex, methods, template in self.templates:
            if method in methods and regex.match(target):
                return template
        return "unmatched"


def _templates(app: Any) -> list[tuple[re.Pattern, set[str], str]]:
    """(regex, methods, template) of every documented route."""
    from starlette.routing import compile_path

    out: list[tuple[re.Pattern, set[str], str]] = []
    try:
        paths = app.openapi().get("paths", {}) if app is not None else {}
    except Exception:
        return out
    for template, item in paths.items():
        out.append((compile_path(template)[0], set(item), template))
    return out


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("whichgpu")
    except PackageNotFoundError:
        return "0"


class _Stderr(logging.Handler):
    """Each record as one line on whatever ``sys.stderr`` is when it is written."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


class _JsonRecord(logging.Formatter):
    """A log record as one JSON object (event "log"): a multi-line message or traceback
    stays on its line."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        return json.dumps({
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds"),
            "event": "log", "level": record.levelname, "logger": record.name,
            "message": message[:8000], "pid": os.getpid()})


@contextmanager
def _json_logs() -> Iterator[None]:
    """While the app runs with the access log on, every other record on stderr is a JSON
    line too: uvicorn's (its handler replaced) and whatever reaches the root logger (the
    database pool's warnings, whichgpu's errors), which would otherwise print plain text."""
    handler = _Stderr()
    handler.setFormatter(_JsonRecord())
    root, server = logging.getLogger(), logging.getLogger("uvicorn")
    saved = list(server.handlers)
    root.addHandler(handler)
    server.handlers = [handler]
    try:
        yield
    finally:
        root.removeHandler(handler)
        server.handlers = saved


def _configure_access_log() -> None:
    """JSON lines on stderr, one per request, apart from uvicorn's own logging."""
    if access_log.handlers:
        return
    handler = _Stderr()
    handler.setFormatter(logging.Formatter("%(message)s"))
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False


# ------------------------------------------------------------------ serve --workers N

def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (ours or not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _metrics_base() -> Path | None:
    """``$TMPDIR/whichgpu-metrics-<uid>``, made private to this user; None if someone else
    made it (the caller then takes a fresh private folder instead)."""
    base = Path(tempfile.gettempdir()) / f"whichgpu-metrics-{os.getuid()}"
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(base)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return base


@contextmanager
def workers_environment() -> Iterator[str]:
    """What ``whichgpu serve --workers N`` sets up around uvicorn's supervisor; yields the
    metrics folder.

    * prometheus-client's multiprocess mode: a folder for the workers' metric files
      (``PROMETHEUS_MULTIPROC_DIR``: the operator's, emptied, or ``serve-<pid>`` under
      ``$TMPDIR/whichgpu-metrics-<uid>``), so that /metrics, whichever worker answers, sums
      them all. The folders of earlier runs whose ``serve`` is gone (killed, so it could not
      clean up) are deleted first: restarts never pile them up. This run's folder goes when
      it stops.
    * ``WHICHGPU_SUPERVISOR_PID``: each worker ends when this process ends, however it ends
      (:func:`follow_supervisor`), so that no orphan keeps serving on the port.
    """
    given = os.environ.get(MULTIPROC_ENV)
    made: str | None = None
    if given:
        folder = given
        for stale in glob.glob(os.path.join(folder, "*.db")):  # files of an earlier run
            os.remove(stale)
    else:
        base = _metrics_base()
        if base is None:
            made = folder = tempfile.mkdtemp(prefix="whichgpu-metrics-")
        else:
            for old in base.glob("serve-*"):
                pid = old.name.removeprefix("serve-")
                if not pid.isdigit() or int(pid) == os.getpid() or not _alive(int(pid)):
                    shutil.rmtree(old, ignore_errors=True)
            made = folder = str(base / f"serve-{os.getpid()}")
            os.makedirs(folder, mode=0o700, exist_ok=True)
    saved = {k: os.environ.get(k) for k in (MULTIPROC_ENV, SUPERVISOR_ENV)}
    os.environ[MULTIPROC_ENV] = folder
    os.environ[SUPERVISOR_ENV] = str(os.getpid())
    try:
        yield folder
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if made:
            shutil.rmtree(made, ignore_errors=True)


def follow_supervisor() -> None:
    """In a worker of ``serve --workers N``: get SIGTERM (uvicorn's graceful stop) when the
    supervisor dies, even by SIGKILL. Linux: ``PR_SET_PDEATHSIG``; elsewhere a thread that
    watches the parent. No-op outside such a worker."""
    text = os.environ.get(SUPERVISOR_ENV, "")
    if not text.isdigit() or int(text) == os.getpid():
        return
    supervisor = int(text)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != supervisor:  # it died before the line above ran
            os.kill(os.getpid(), signal.SIGTERM)
        return

    def watch() -> None:
        while os.getppid() == supervisor:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="whichgpu-follow-supervisor", daemon=True).start()


def forget_dead_workers(folder: str) -> list[int]:
    """Mark dead the workers whose live gauges are still in ``folder`` (a worker killed
    without its shutdown: uvicorn replaces a hung one with SIGKILL), so that
    ``whichgpu_http_requests_in_progress`` counts live workers only. Their counters stay:
    a counter never goes back."""
    from prometheus_client.multiprocess import mark_process_dead

    dead = set()
    for path in glob.glob(os.path.join(folder, "gauge_live*_*.db")):
        pid = Path(path).stem.rsplit("_", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            dead.add(int(pid))
    for dead_pid in sorted(dead):
        mark_process_dead(dead_pid, folder)
    return sorted(dead)


def install(app: FastAPI) -> None:
    """Add the endpoints, the telemetry middleware (outermost) and, in multiprocess mode,
    the bookkeeping of a worker that stops."""
    app.include_router(router)
    app.add_middleware(Telemetry, owner=app)
    if os.environ.get(ACCESS_LOG_ENV, "").strip().lower() in ("1", "true", "yes"):
        _configure_access_log()
    inner = app.router.lifespan_context

    logs_json = os.environ.get(ACCESS_LOG_ENV, "").strip().lower() in ("1", "true", "yes")

    @asynccontextmanager
    async def lifespan(application: Any):
        with _json_logs() if logs_json else nullcontext():
            async with inner(application) as state:
                yield state
        if multiprocess():
            from prometheus_client.multiprocess import mark_process_dead

            mark_process_dead(os.getpid())

    app.router.lifespan_context = lifespan
    if multiprocess():  # a worker of 'serve --workers N'
        follow_supervisor()
        forget_dead_workers(os.environ[MULTIPROC_ENV])
