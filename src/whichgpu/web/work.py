"""A work budget per request: heavy answers in a small bounded pool, off the event loop, each
with a CPU-time limit; a fast 503 when the pool and its queue are full.

The pool has ``WORKERS`` threads (the answers are pure Python, so more threads than cores only
share the interpreter) and at most ``QUEUE`` requests waiting for one; a request that finds the
queue full, or waits more than ``QUEUE_WAIT_S``, gets a 503 at once with ``Retry-After``
instead of joining a queue that only grows.

The CPU-time limit is enforced, not hoped for: a watchdog thread reads each worker's own CPU
clock (``pthread_getcpuclockid``) and, past ``CPU_LIMIT_S``, raises an exception inside that
worker (``PyThreadState_SetAsyncExc``), which stops the computation at its next bytecode. An
ordinary question is not light: a recommendation for llama-3.1-8b AWQ tokens over the whole
catalog took 0.8-1.1 s of CPU on the shipped prices and 1.7-2.0 s on a 10-period 20k-offer
store (measured 2026-12-01 on this project's loaded 2-core machine, /api/v1/recommend in
process), so the limit is 6 s: with the model bounds of ``models.bounds`` it is a backstop for
what nobody foresaw, not a cap on ordinary questions (at 2 s, benchmarks/server_rss.py saw
such questions refused). A question stopped this way is remembered for a while and
refused at once when asked again.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from whichgpu.errors import InputError, WhichGPUError
from whichgpu.messages import Message, msg

WORKERS = int(os.environ.get("WHICHGPU_WEB_WORKERS", "4"))  # threads computing answers
#: threads for the answers that span the whole catalog (HEAVY), apart from WORKERS: a quick
#: question (a price list, a TCO, one speed) never waits for a slot behind them. Two, not
#: one nor three: benchmarks/web_load.py --requests 300 --concurrency 50 --vary (shared 2-core
#: machine, load 3-7, 2026-12-07, after fast7/fast8/checklist7): p99 1573/1629 ms with one
#: thread, 934-1228 with two, 1036/1133 with three (server CPU per request 9.7-10.3 ms at three
#: against 8.1-9.0: more switching); with --heavy-rate 2 (pasted configs at the model bounds,
#: one over the CPU limit) one thread answered 49 requests 503 after the 10 s queue wait (p99
#: 10 s), two answered every one (p99 1.25 s)
HEAVY_WORKERS = int(os.environ.get("WHICHGPU_WEB_HEAVY_WORKERS", "2"))
#: services whose answer weighs every GPU (x count) of the catalog: 40-400 ms of CPU each
#: on the load test's questions, against 2-40 ms for the others (measured 2026-12-07 on the
#: shared 2-core machine, in process); their pages too (PAGES_HEAVY)
HEAVY = frozenset({"recommend", "checklist", "memory", "fits"})
PAGES_HEAVY = frozenset({"/", "/memory", "/fits"})
QUEUE = int(os.environ.get("WHICHGPU_WEB_QUEUE", "64"))  # waiting; beyond this: 503 at once
QUEUE_WAIT_S = 10.0
CPU_LIMIT_S = 6.0  # see the module docstring for what ordinary questions take
RETRY_AFTER_S = 2
REFUSED_KEEP = 1024  # questions refused for their work, remembered (and refused at once)
#: how long (s) a thread computing an answer keeps the interpreter lock while another waits
#: for it, on a server (:func:`share_the_interpreter`). Python's 5 ms made every step of the
#: event loop (read a request, send an answer) and every quick answer wait up to 5 ms per
#: whole-catalog answer in progress. benchmarks/web_load.py --vary (300 requests, 50
#: concurrent, shared 2-core machine at load 7-10, three rounds each): quick questions' p50
#: 52/66/81 ms at 5 ms, 36/40/47 ms at 0.5 ms; the throughput stayed within the load's noise.
SWITCH_INTERVAL_S = 0.0005
T = TypeVar("T")
log = logging.getLogger("whichgpu.web")


class ServerBusy(WhichGPUError):
    """Every worker is busy and the queue is full (HTTP 503 with Retry-After)."""

    retry_after = RETRY_AFTER_S


class TooMuchWork(InputError):
    """The question needs more computing than one request may use (HTTP 422)."""


class _OverBudget(BaseException):
    """Raised inside a worker by the watchdog (a BaseException: no ``except Exception`` in the
    engine swallows it)."""


def too_much_work_text() -> Message:
    return msg("web.too_much_work", "this question needs more than {s:g} s of computing, the "
               "most one web request may use: narrow it (fewer GPUs with only or max_gpus, a "
               "smaller model or context) or run the same question with the whichgpu command "
               "line, which has no such limit", s=CPU_LIMIT_S)


# ------------------------------------------------------------------ the CPU-time watchdog

class _Task:
    __slots__ = ("clock", "injected", "lock", "running", "start", "started", "tid")

    def __init__(self) -> None:
        self.tid = threading.get_ident()
        self.lock = threading.Lock()
        self.running = True
        self.injected = False
        self.started = time.monotonic()
        try:
            self.clock: int | None = time.pthread_getcpuclockid(self.tid)
            self.start = time.clock_gettime(self.clock)
        except (AttributeError, OSError):  # no per-thread CPU clock: wall time, 3x the limit
            self.clock, self.start = None, 0.0

    def spent(self) -> float:
        if self.clock is None:
            return (time.monotonic() - self.started) / 3
        try:
            return time.clock_gettime(self.clock) - self.start
        except OSError:  # the thread is gone
            return 0.0


def _raise_in(tid: int, exc: type[BaseException] | None) -> None:
    set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async(ctypes.c_ulong(tid), ctypes.py_object(exc) if exc is not None else None)


class _Watchdog:
    """One daemon thread that stops workers past their CPU budget (idle while none runs)."""

    def __init__(self) -> None:
        self.tasks: set[_Task] = set()
        self.cond = threading.Condition()
        self.thread: threading.Thread | None = None

    def add(self, task: _Task) -> None:
        with self.cond:
            self.tasks.add(task)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._loop, name="work-watchdog",
                                               daemon=True)
                self.thread.start()
            self.cond.notify()

    def remove(self, task: _Task) -> None:
        with self.cond:
            self.tasks.discard(task)

    def _loop(self) -> None:
        while True:
            with self.cond:
                while not self.tasks:
                    self.cond.wait()
                tasks = list(self.tasks)
            for task in tasks:
                if task.injected or task.spent() <= CPU_LIMIT_S:
                    continue
                with task.lock:
                    if task.running and not task.injected:
                        task.injected = True
                        _raise_in(task.tid, _OverBudget)
            time.sleep(0.02)


_watchdog = _Watchdog()


def _finish(task: _Task) -> None:
    """Idempotent: the task no longer runs, and an exception not yet delivered is dropped."""
    with task.lock:
        if task.running:
            task.running = False
            if task.injected:
                _raise_in(task.tid, None)
    _watchdog.remove(task)


def budgeted(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in this thread under the CPU-time limit (TooMuchWork past it)."""
    task = _Task()
    _watchdog.add(task)
    try:
        try:
            return fn(*args)
        finally:
            _finish(task)
    except _OverBudget:
        _finish(task)
        raise TooMuchWork(too_much_work_text()) from None


# ------------------------------------------------------------------ the pool

class _Pool:
    def __init__(self) -> None:
        self.pending = 0  # waiting or running; touched on the event loop only
        self.limiters: dict[int, dict[bool, tuple[Any, Any]]] = {}

    def limiter(self, heavy: bool = False) -> tuple[Any, Any]:
        """(slots, threads) CapacityLimiters of the running event loop, for the heavy lane
        (HEAVY_WORKERS) or the other (WORKERS)."""
        import asyncio

        import anyio

        loop = id(asyncio.get_running_loop())
        if loop not in self.limiters:
            self.limiters = {loop: {
                lane: (anyio.CapacityLimiter(n), anyio.CapacityLimiter(n))
                for lane, n in ((False, WORKERS), (True, HEAVY_WORKERS))}}
        return self.limiters[loop][heavy]


_pool = _Pool()
_refused: OrderedDict[str, str] = OrderedDict()
_refused_lock = threading.Lock()


def clear_refused() -> None:
    """Forget the questions refused for their work (tests; a new calibration; a new price
    snapshot, see services.generation)."""
    with _refused_lock:
        _refused.clear()


def busy_text() -> Message:
    return msg("web.busy", "the server is busy ({n} questions in progress or waiting): retry "
               "in {s} s", n=_pool.pending, s=RETRY_AFTER_S)


def share_the_interpreter() -> None:
    """Hand the interpreter lock over every SWITCH_INTERVAL_S (process-wide: a server's
    start-up calls it, an app built for a test does not)."""
    import sys

    sys.setswitchinterval(SWITCH_INTERVAL_S)


def load() -> dict[str, int]:
    """What the pool is doing (for the health endpoint)."""
    return {"workers": WORKERS, "heavy_workers": HEAVY_WORKERS, "queue": QUEUE,
            "in_progress_or_waiting": _pool.pending}


async def run(fn: Callable[..., T], *args: Any, key: str | None = None,
              heavy: bool = False) -> T:
    """``fn(*args)`` in the bounded pool under the CPU-time limit.

    ``key`` names the question: one refused for its work is refused again at once. ``heavy``
    (a whole-catalog answer, see HEAVY) takes a slot of its own lane. Raises ServerBusy (503)
    when the queue is full or the wait for a worker passes QUEUE_WAIT_S.
    """
    import anyio

    if key is not None:
        with _refused_lock:
            text = _refused.get(key)
        if text is not None:
            raise TooMuchWork(text)
    if _pool.pending >= WORKERS + QUEUE:
        raise ServerBusy(busy_text())
    slots, threads = _pool.limiter(heavy)
    _pool.pending += 1
    try:
        try:
            with anyio.fail_after(QUEUE_WAIT_S):
                await slots.acquire()
        except TimeoutError:
            raise ServerBusy(busy_text()) from None
        try:
            return await anyio.to_thread.run_sync(budgeted, fn, *args, limiter=threads)
        except TooMuchWork as exc:
            if key is not None:
                log.warning("refused for its work (over %.1f s CPU): %s", CPU_LIMIT_S,
                            key[:300])
                with _refused_lock:
                    _refused[key] = str(exc)
                    while len(_refused) > REFUSED_KEEP:
                        _refused.popitem(last=False)
            raise
        finally:
            slots.release()
    finally:
        _pool.pending -= 1
