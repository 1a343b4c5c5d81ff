"""Model names from the web: presets, sizes, Hub ids and pasted config.json, never paths.

Every endpoint and page resolves a visitor's model here, through the one resolver of the
models package with local files off (``resolve_model`` inside ``no_local_files``): a name is
never looked up on the server's disk, not even to see whether it exists, and a name shaped
like a path is refused from its text alone.

Hub look-ups run in a small pool of their own (``HUB_WORKERS`` threads, ``HUB_QUEUE`` waiting;
beyond that a 503 at once) under ``models.hub.hub_limits``: ``HUB_TIMEOUT_S`` for the whole
look-up, every request and every chunk of every download included, a byte cap per file, a
short connect timeout and no retries. Answers are kept (``KEEP_S``); failures too (an unknown
id for ``MISS_S``, a slow or failing repository for 10 s, that id only; a Hub that cannot be
connected to for ``DOWN_S``, during which every uncached id is answered at once instead of
waiting for the same timeout again). Pages and endpoints await
the look-up before they take a compute worker (:func:`prefetch`), so a slow Hub never holds
the pool that answers everyone else.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextvars
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from whichgpu.answers.inputs.workload import PARAMS_WORDS
from whichgpu.errors import InputError, WhichGPUError
from whichgpu.messages import msg
from whichgpu.models.generic import parse_bare_size
from whichgpu.models.hub import (
    HubDeadlineExceeded,
    HubNotReached,
    HubUnavailable,
    hub_limits,
    hub_offline,
    looks_like_hub_id,
)
from whichgpu.models.preset_index import find_preset
from whichgpu.models.resolve import looks_like_path, no_local_files, resolve_model
from whichgpu.models.spec import ModelSpec
from whichgpu.units import parse_count

HUB_TIMEOUT_S = 20.0
HUB_CONNECT_S = 5.0
HUB_WORKERS = 4
HUB_QUEUE = 8
KEEP_S = 3600.0  # a Hub model's spec is kept this long (configs rarely change)
KEEP = 128
MISS_S = 600.0  # a Hub answer that the id is wrong (not found, gated, not a model)
DOWN_S = 30.0  # after the Hub could not be reached, uncached ids fail at once this long
NO_FILES = msg("web.no_files", "the web server reads no files: give a preset alias, a Hub id "
               "(org/name) or a size such as 70B, or paste the contents of a config.json")
T = TypeVar("T")

__all__ = ["HubDeadlineExceeded", "NO_FILES", "check_name", "hub_status", "is_hub_lookup",
           "prefetch", "web_model", "with_timeout"]


class HubBusy(WhichGPUError):
    """Every Hub worker is busy and its queue is full (HTTP 503)."""

    retry_after = 5


def check_name(text: str) -> str:
    """A visitor's model name, refused if it looks like a path (nothing is looked up)."""
    t = text.strip()
    if looks_like_path(t):
        raise InputError(NO_FILES)
    return t


# ------------------------------------------------------------------ the Hub look-ups

class _Outcome:
    __slots__ = ("error", "spec", "until")

    def __init__(self, spec: ModelSpec | None, error: WhichGPUError | None, until: float):
        self.spec, self.error, self.until = spec, error, until


class HubLookups:
    """The web's Hub look-ups: a bounded pool, kept answers and failures, one look-up per id
    at a time, and a short pause after the Hub was unreachable."""

    def __init__(self) -> None:
        self.pool = cf.ThreadPoolExecutor(max_workers=HUB_WORKERS, thread_name_prefix="hub")
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(HUB_WORKERS + HUB_QUEUE)
        self.known: OrderedDict[str, _Outcome] = OrderedDict()
        self.running: dict[str, tuple[cf.Future, float]] = {}  # future, when it started
        self.down_until = 0.0
        self.down_reason = ""

    def clear(self) -> None:
        with self.lock:
            self.known.clear()
            self.down_until = 0.0

    def cached(self, repo_id: str) -> _Outcome | None:
        now = time.monotonic()
        with self.lock:
            hit = self.known.get(repo_id)
            if hit is not None and hit.until > now:
                self.known.move_to_end(repo_id)
                return hit
            if now < self.down_until:
                left = self.down_until - now
                return _Outcome(None, HubUnavailable(
                    f"{repo_id}: {self.down_reason} (the Hugging Face Hub could not be reached "
                    f"a moment ago; the server tries again in {left:.0f} s): use a preset or "
                    "paste the config.json"), now + left)
        return None

    def _store(self, repo_id: str, outcome: _Outcome, down: bool, reason: str = "") -> None:
        with self.lock:
            self.known[repo_id] = outcome
            self.known.move_to_end(repo_id)
            while len(self.known) > KEEP:
                self.known.popitem(last=False)
            if down:
                self.down_until = time.monotonic() + DOWN_S
                self.down_reason = reason

    def _lookup(self, repo_id: str) -> ModelSpec:
        from whichgpu.models.hub import spec_from_hub

        with hub_limits(HUB_TIMEOUT_S, retries=False, connect_s=HUB_CONNECT_S):
            return spec_from_hub(repo_id)

    def _done(self, repo_id: str, future: cf.Future) -> None:
        with self.lock:
            self.running.pop(repo_id, None)
        self.slots.release()
        exc = future.exception()
        now = time.monotonic()
        if exc is None and isinstance(future.result(), ModelSpec):
            self._store(repo_id, _Outcome(future.result(), None, now + KEEP_S), False)
        elif isinstance(exc, InputError):
            self._store(repo_id, _Outcome(None, exc, now + MISS_S), False)
        elif isinstance(exc, WhichGPUError):
            # Only a Hub that cannot be connected to is down for every id; a repository that
            # is slow (its deadline passed) or fails costs only its own id, for a while.
            down = isinstance(exc, HubNotReached)
            reason = "not reachable" if down else "failed"
            self._store(repo_id, _Outcome(None, exc, now + (DOWN_S if down else 10.0)), down,
                        reason)
        # anything else is a bug: not kept, raised to the caller

    def submit(self, repo_id: str) -> tuple[cf.Future, float]:
        """The running look-up of ``repo_id`` and the seconds it has left, or a new one
        (HubBusy when the queue is full)."""
        with self.lock:
            running = self.running.get(repo_id)
            if running is not None:
                return running[0], HUB_TIMEOUT_S - (time.monotonic() - running[1])
            if not self.slots.acquire(blocking=False):
                raise HubBusy(f"{repo_id}: too many Hugging Face Hub look-ups are in progress; "
                              "retry in a few seconds, or use a preset or a pasted config.json")
            ctx = contextvars.copy_context()
            future = self.pool.submit(ctx.run, self._lookup, repo_id)
            self.running[repo_id] = (future, time.monotonic())
        future.add_done_callback(lambda f: self._done(repo_id, f))
        return future, HUB_TIMEOUT_S

    def spec(self, repo_id: str) -> ModelSpec:
        """The spec of a Hub id: kept, or looked up now (waiting at most HUB_TIMEOUT_S)."""
        hit = self.cached(repo_id)
        if hit is None:
            future, left = self.submit(repo_id)
            try:
                spec = future.result(timeout=max(left, 0.0))
            except cf.TimeoutError:
                raise _too_slow(repo_id, HUB_TIMEOUT_S) from None
        elif hit.error is not None:
            raise hit.error
        else:
            spec = hit.spec
        if not isinstance(spec, ModelSpec):
            raise HubUnavailable(f"{repo_id}: the Hub look-up gave no model; retry later")
        return spec

    async def prefetch(self, repo_id: str) -> None:
        """Look ``repo_id`` up without holding a thread (its outcome is kept for spec())."""
        if self.cached(repo_id) is not None:
            return
        try:
            future, left = self.submit(repo_id)
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), max(left, 0))
        except (WhichGPUError, TimeoutError):
            pass  # kept by _done (or timed out): spec() in the request's worker says which
        except Exception:  # a bug in the look-up: spec() raises it in the worker, logged there
            pass


_hub = HubLookups()


def _too_slow(what: str, limit: float) -> WhichGPUError:
    return HubUnavailable(f"{what}: the Hugging Face Hub did not answer within {limit:g} s; "
                          "retry later, or use a preset or a pasted config.json")


def with_timeout(fn: Callable[[], T], what: str, timeout_s: float | None = None) -> T:
    """Run ``fn`` (which may reach the Hugging Face Hub) in the Hub pool for at most
    ``timeout_s`` (``HUB_TIMEOUT_S``); its Hub requests stop at the same deadline."""
    limit = HUB_TIMEOUT_S if timeout_s is None else timeout_s
    end = time.monotonic() + limit

    def bounded() -> T:
        with hub_limits(limit, retries=False, connect_s=HUB_CONNECT_S):
            try:
                return fn()
            except WhichGPUError:
                if time.monotonic() >= end:  # stopped by the deadline: say so
                    raise _too_slow(what, limit) from None
                raise

    future = _hub.pool.submit(contextvars.copy_context().run, bounded)
    try:
        return future.result(timeout=limit)
    except cf.TimeoutError:
        raise _too_slow(what, limit) from None


def hub_status() -> dict[str, Any]:
    """How this server reaches the Hub (the health endpoint and the start-up line)."""
    offline = hub_offline()
    return {"mode": "offline" if offline else "online",
            "detail": ("HF_HUB_OFFLINE is set: Hub ids resolve only from the local Hugging "
                       "Face cache, at once" if offline else
                       f"uncached Hub ids are fetched (configs and safetensors headers only), "
                       f"each look-up at most {HUB_TIMEOUT_S:g} s, {HUB_WORKERS} at a time"),
            "reachable": time.monotonic() >= _hub.down_until}


def clear_hub_cache() -> None:
    _hub.clear()


def is_hub_lookup(name: str | None) -> bool:
    """Whether resolving ``name`` would ask the Hub (not a preset, not a size)."""
    if not name:
        return False
    t = name.strip()
    return find_preset(t) is None and parse_bare_size(t) is None and looks_like_hub_id(t)


async def prefetch(name: str | None) -> None:
    """Look a request's Hub id up before the request takes a compute worker."""
    if is_hub_lookup(name):
        assert name is not None
        await _hub.prefetch(name.strip())


def web_model(name: str | None, *, params: str | float | None = None,
              config: dict[str, Any] | None = None, offline: bool | None = None) -> ModelSpec:
    """The ModelSpec of a preset, a size, a Hub id or a pasted config.json: the one resolver
    (models/resolve.py) with local files off and the Hub asked through this server's pool
    (``offline`` is the command line's: a visitor cannot turn the Hub off or on)."""
    count = float(parse_count(params, what=PARAMS_WORDS)) if params else None
    if count is None and config is None and name is not None and name.strip():
        name = check_name(name)
    with no_local_files(NO_FILES):
        return resolve_model(name, params=count, config=config, hub=_hub.spec)
