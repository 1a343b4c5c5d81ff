"""The calls behind every endpoint and page: the answers of the command line (answers/),
asked with the web's context, remembered per question and price snapshot.

Each service returns the typed answer (the pages render it; the REST API sends its
``to_json()``, the command line's ``--json``), so the CLI, the API and the pages cannot
disagree.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from whichgpu.answers import advice, estimates, money
from whichgpu.answers import catalog as catalog_answers
from whichgpu.answers import prices as price_answers
from whichgpu.answers import requests as r
from whichgpu.answers.advice import ChecklistAnswer, RecommendAnswer
from whichgpu.answers.catalog import GpuAnswer, GpusAnswer, ModelAnswer, ModelsAnswer
from whichgpu.answers.context import Context
from whichgpu.answers.estimates import MemoryAnswer, SpeedResult
from whichgpu.answers.inputs.ownership import CostResult, TcoResult
from whichgpu.answers.mixed import MixedCardsAnswer
from whichgpu.answers.prices import HistoryAnswer, PricesAnswer
from whichgpu.answers.rl import RLRecommendAnswer
from whichgpu.catalog.prices import OfferSelection, current_offers
from whichgpu.errors import InputError
from whichgpu.estimate.calibration import Calibration
from whichgpu.messages import msg
from whichgpu.models.resolve import looks_like_path
from whichgpu.vocabulary import Task
from whichgpu.web.resolve import web_model

OFFER_CACHE_S = 10.0  # the store is checked for new snapshots at most this often
MEMO_SIZE = 1024  # results kept for repeated questions (the same prices, the same answer)
MEMO_BYTES = 64 * 1024 * 1024  # and at most this many bytes of them (pages, JSON), measured
OFFER_SETS = 16  # price selections kept per snapshot generation (prices x max_age asked)
#: and at most this many offers in them all (a stored offer takes ~0.8 kB: about 40 MB), so
#: that asking for many variants of a large price list cannot hold many copies of it
OFFER_SET_OFFERS = 50_000


# ------------------------------------------------------------------ prices

_FEED_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+\-]*(?:/[A-Za-z0-9][A-Za-z0-9_.+\-]*)?")
NO_OFFER_FILES = msg("web.no_offer_files", "the web server reads no offer files: name a price "
                     "source (the 'prices' page lists them), e.g. vramfarm-2026-11")


def check_prices(prices: str | None) -> str | None:
    """A price source the store knows (a feed, a source, NAME@SNAPSHOT or NAME@DATE), never an
    offer file: judged from the text and the store's own names, nothing on disk is looked up
    (current_offers would read a file of that name)."""
    if prices is None:
        return None
    p = prices.strip()
    if not p:
        return None
    name = p.split("@", 1)[0]
    if looks_like_path(name) or not _FEED_NAME.fullmatch(name) or name.lower().endswith(
            (".csv", ".json")):
        raise InputError(NO_OFFER_FILES)
    known = price_names()
    if name not in known:
        from whichgpu.errors import NotFoundError

        raise NotFoundError("price source", name, sorted(known),
                            hint=msg("web.prices_hint", "the 'prices' page lists them"))
    return p


def price_names() -> set[str]:
    """Every feed and source the store (or the shipped sets) can price with."""
    from whichgpu.catalog.offers import shipped_offer_sets

    selection = offers(None, cheapest_only=True)
    return {*shipped_offer_sets(), "shipped", *(fi.feed for fi in selection.feeds),
            *(fi.source for fi in selection.feeds)}


_cache: OrderedDict[tuple, OfferSelection] = OrderedDict()  # one selection per question
_cache_lock = threading.Lock()
_generation: list[Any] = [None, -1e9]  # [store path + current snapshot ids, checked at]


def generation() -> tuple:
    """The store's current snapshots (checked at most every OFFER_CACHE_S): answers are kept
    while it stays the same, and all of them are dropped when a new snapshot arrives."""
    from whichgpu.catalog.prices import PriceStore

    now = time.monotonic()
    if now - _generation[1] >= OFFER_CACHE_S:
        try:  # the file, or the database of WHICHGPU_DATABASE_URL
            store = PriceStore(None)
            gen: tuple[Any, ...] = (store.location, store.generation(), _runs_stamp(store))
        except Exception:  # an unusable store: current_offers says why (503 or fallback)
            gen = (None, None)
        with _memo_lock:
            changed = gen != _generation[0]
            dropped = changed and bool(_memo or _cache)
            if changed:
                _memo.clear()
                _memo_bytes[0] = 0
                with _cache_lock:
                    _cache.clear()
            _generation[0], _generation[1] = gen, now
        if dropped:  # nothing held (a server's first question, after clear_cache): no trim
            release_memory()
        if changed:
            # a question refused for its work was refused on the old prices: its work (how many
            # offers it prices) may differ now, so it gets one more try
            from whichgpu.web import work

            work.clear_refused()
    return _generation[0]


def release_memory() -> None:
    """Hand the dropped price lists' memory back to the system. CPython frees them into the C
    allocator, which keeps the pages (one arena per worker thread): without a trim a server
    that refreshes keeps each period's price lists' pages until the arenas happen to be reused
    (benchmarks/server_rss.py, benchmarks/price_cache_rss.py). glibc only."""
    import gc

    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes

    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def offers(prices: str | None, max_age: float | None = None, *,
           gpus: Sequence[str] | None = None, cheapest_only: bool = False) -> OfferSelection:
    """``current_offers`` for the web: one shared, path-free selection per question and
    snapshot generation (a new snapshot drops the old selections and answers).

    Priced answers ask for ``cheapest_only`` (the cheapest offer of each kind, all a job can
    be priced on: one small list shared by every question on the same prices); the price
    list and a GPU's page ask for every offer of their ``gpus``.
    """
    prices = check_prices(prices)
    ids = tuple(sorted(set(gpus))) if gpus is not None else None
    key = (generation(), prices, max_age, ids, cheapest_only)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    with _cache_lock:  # one reader fills; the others wait for its answer
        hit = _cache.get(key)
        if hit is not None:
            return hit
        selection = current_offers(prices, max_age_days=max_age,
                                   gpus=list(ids) if ids is not None else None,
                                   cheapest_only=cheapest_only).public()
        _cache[key] = selection
        while len(_cache) > 1 and (len(_cache) > OFFER_SETS or sum(
                len(v.offers) for v in _cache.values()) > OFFER_SET_OFFERS):
            _cache.popitem(last=False)
        return selection


def clear_cache() -> None:
    with _memo_lock:
        _cache.clear()
        _memo.clear()
        _memo_bytes[0] = 0
        _generation[0], _generation[1] = None, -1e9


# ------------------------------------------------------------------ calibration

_calibration_setting: list[str | None] = ["default"]
_profiles: dict[tuple, Any] = {}


def set_calibration(option: str | None) -> None:
    """Which profile ``calibration=default`` means on this server (``whichgpu serve
    --calibration``): 'default' (the one 'whichgpu bench' saved in the user's data folder), a
    file the operator named, or None (none at all). Never a file named in a request."""
    value = (option or "").strip()
    _calibration_setting[0] = None if value.lower() in ("", "none") else \
        "default" if value.lower() == "default" else value
    _profiles.clear()


def _calibration_file() -> Path | None:
    from whichgpu.bench.profile import default_profile_path

    setting = _calibration_setting[0]
    if setting is None:
        return None
    return default_profile_path() if setting == "default" else Path(setting)


def _calibration_stamp() -> tuple:
    """Identifies the server's profile as it is now (answers change when it is re-saved)."""
    path = _calibration_path_text()
    if path is None:
        return ()
    try:
        return (path, os.stat(path).st_mtime_ns)
    except OSError:
        return (path, None)


#: (setting, the environment the default profile's folder is read from) -> its path as text
_PROFILE_PATHS: dict[tuple, str | None] = {}


def _calibration_path_text() -> str | None:
    """``str(_calibration_file())``, kept per setting and the environment variables that
    place the data folder (paths.data_dir): every question's memo key holds the profile's
    stamp (~5 per request), and building the path took ~30 us of its ~85."""
    env = os.environ
    key = (_calibration_setting[0], env.get("WHICHGPU_HOME"), env.get("XDG_DATA_HOME"),
           env.get("HOME"))
    try:
        return _PROFILE_PATHS[key]
    except KeyError:
        pass
    path = _calibration_file()
    text = None if path is None else str(path)
    if len(_PROFILE_PATHS) >= 64:
        _PROFILE_PATHS.clear()
    _PROFILE_PATHS[key] = text
    return text


def has_calibration() -> bool:
    """Whether ``calibration=default`` can be answered now (the forms offer it only then)."""
    stamp = _calibration_stamp()
    return bool(stamp) and stamp[1] is not None


def calibration_profile(requested: str | None) -> Calibration | None:
    """The server's calibration profile when a request asks for it ('default'), else None.

    The profile is shown by its file name only (the server's paths are not the visitor's
    business); a profile that cannot be read is the server's problem (503), logged in full.
    """
    import dataclasses
    import logging

    from whichgpu.bench.profile import load_profile
    from whichgpu.errors import DataError, WhichGPUError

    if requested is None:
        return None
    path = _calibration_file()
    if path is None:
        raise InputError(msg("web.no_calibration", "this server uses no calibration profile "
                             "(its operator turned calibration off): ask without calibration"))
    stamp = _calibration_stamp()
    if stamp[1] is None:
        raise InputError(msg("web.calibration_missing", "this server has no calibration "
                             "profile yet (its operator measures its GPU with 'whichgpu "
                             "bench'): ask without calibration"))
    profile = _profiles.get(stamp)
    if profile is None:
        try:
            profile = dataclasses.replace(load_profile(path), path=path.name)
        except DataError as exc:
            logging.getLogger("whichgpu.web").error("calibration profile: %s", exc)
            raise WhichGPUError(msg("web.calibration_unreadable", "this server's calibration "
                                    "profile cannot be read; the server log says why")) from None
        _profiles.clear()  # one profile at a time: the file as it is now
        _profiles[stamp] = profile
    return profile


# ------------------------------------------------------------------ measured runs

_runs: dict[tuple, Any] = {}  # (store, runs stamp) -> the runs, one entry at a time


def _runs_stamp(store: Any) -> tuple[int, int] | None:
    """The store's runs as they are now (count, highest id); None if it has no runs table
    it can read (an answer then uses none)."""
    from whichgpu.catalog.runs.store import RunStore

    try:
        return RunStore(store).stamp()
    except Exception:  # an unusable store: current_offers says why (503 or fallback)
        return None


def runs_changed() -> None:
    """A run was added here: look at the store again at the next question."""
    _generation[1] = -1e9


def web_calibration(requested: str | None) -> Calibration | None:
    """The server's calibration profile (when asked for) with the measured runs of its
    store, which every answer uses (``whichgpu runs add``, ``POST /api/v1/runs``)."""
    from whichgpu.estimate.measured import WithRuns

    base = calibration_profile(requested)
    gen = generation()
    stamp = gen[2] if gen and len(gen) > 2 else None
    if not stamp or not stamp[0]:
        return base
    key = (gen[0], stamp)
    held = _runs.get(key)
    if held is None:
        from whichgpu.catalog.prices import PriceStore
        from whichgpu.catalog.runs.store import RunStore

        store = PriceStore(None)
        held = WithRuns(None, tuple(RunStore(store).list()), store.location)
        _runs.clear()
        _runs[key] = held
    return WithRuns(base, held.runs, held.where) if held.runs else base


# ------------------------------------------------------------------ repeated questions

_memo: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()  # key -> (answer, its bytes)
_memo_lock = threading.RLock()
_memo_bytes = [0]


def _epoch() -> tuple:
    """Results are kept while the prices they used are: per store snapshot generation."""
    return (generation(), _calibration_stamp())


MAX_WALK = 200_000  # objects visited when sizing one answer (past it, the count is a floor)


@functools.cache
def _shared_types() -> tuple[type, ...]:
    """Objects every answer shares (the catalog's GPUs, the selection and its offers, rate
    tables): counted once elsewhere, not per answer. A model spec is shared only when a
    preset or the Hub cache owns it (:func:`_owned_elsewhere`); a pasted config's belongs to
    its one answer and is counted with it."""
    from whichgpu.catalog.billing import BillingRule
    from whichgpu.catalog.gpus import GPU, Catalog
    from whichgpu.catalog.offers import Offer
    from whichgpu.currency import RateTable

    return (GPU, Catalog, Offer, BillingRule, OfferSelection, RateTable)


@functools.cache
def _spec_type() -> type:
    from whichgpu.models.spec import ModelSpec

    return ModelSpec


#: Where a model spec comes from when something other than one answer keeps it: the presets
#: (loaded once per process) and the Hub's bounded cache of looked-up ids.
SHARED_SPEC_SOURCES = ("preset:", "hub:")


def _owned_elsewhere(obj: Any) -> bool:
    return isinstance(obj, _spec_type()) and str(getattr(obj, "source", "")).startswith(
        SHARED_SPEC_SOURCES)


def _size(value: Any) -> int:
    """How many bytes an answer holds in memory: a page's HTML or an answer's JSON bytes, else
    the objects it alone holds, walked with ``sys.getsizeof`` (the JSON of a recommendation is
    ~20x smaller than its objects, so JSON length would let the memo hold far more than
    MEMO_BYTES). Shared objects (:func:`_shared_types`) are not counted.

    What to do with an object is decided once per type (:func:`_kind`): a typed
    recommendation holds tens of thousands of objects, and deciding each with a chain of
    ``isinstance`` tests took about as long as the web's own work on the question."""
    import sys

    if isinstance(value, tuple) and value and isinstance(value[0], bytes):
        return len(value[0]) + 64
    kinds = _KINDS
    sizeof, absent = sys.getsizeof, _ABSENT
    seen: set[int] = set()
    stack = [value]
    total = 0
    while stack and len(seen) < MAX_WALK:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        cls = type(obj)
        kind = kinds.get(cls) or _kind(cls)
        if kind is _Walk.SKIP or (kind is _Walk.SPEC and _owned_elsewhere(obj)):
            continue
        seen.add(id(obj))
        try:
            total += sizeof(obj)
        except TypeError:
            continue
        if kind is _Walk.LEAF:
            continue
        if kind is _Walk.MAP:
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif kind is _Walk.ITEMS:
            stack.extend(obj)
        else:
            attrs = getattr(obj, "__dict__", None)
            if isinstance(attrs, dict):
                stack.append(attrs)
            for name in _SLOTS[cls]:
                item = getattr(obj, name, absent)
                if item is not absent:
                    stack.append(item)
    return total + 64


class _Walk(Enum):
    """What :func:`_size` does with an object of a type."""

    SKIP = "skip"  # shared with other answers, or code: not counted
    LEAF = "leaf"  # counted, holds nothing
    MAP = "map"  # a dict: its keys and values
    ITEMS = "items"  # a list, tuple, set or frozenset: its items
    OBJECT = "object"  # its __dict__ and its class's own __slots__
    SPEC = "spec"  # a model spec: skipped when a preset or the Hub cache owns it


_KINDS: dict[type, _Walk] = {}
_SLOTS: dict[type, tuple[str, ...]] = {}
_ABSENT = object()


def _kind(cls: type) -> _Walk:
    """How :func:`_size` walks objects of ``cls`` (decided once per type)."""
    import types

    skip = (*_shared_types(), type, types.ModuleType, types.FunctionType, types.MethodType)
    if issubclass(cls, skip):
        kind = _Walk.SKIP
    elif issubclass(cls, _spec_type()):
        kind = _Walk.SPEC
    elif issubclass(cls, str | bytes | int | float | bool | type(None)):
        kind = _Walk.LEAF
    elif issubclass(cls, dict):
        kind = _Walk.MAP
    elif issubclass(cls, list | tuple | set | frozenset):
        kind = _Walk.ITEMS
    else:
        kind = _Walk.OBJECT
    _SLOTS[cls] = tuple(getattr(cls, "__slots__", ()))
    _KINDS[cls] = kind
    return kind


MISSING = object()


@dataclass(frozen=True)
class _Raised:
    """A remembered bad-input answer: the same question gets the same reason."""

    error: InputError


def _key(name: str, args: tuple) -> tuple:
    return (name, _epoch(), *(a.model_dump_json() if isinstance(a, BaseModel) else a
                             for a in args))


def recalled(name: str, args: tuple) -> Any:
    """The remembered answer, or MISSING."""
    return _recalled(_key(name, args))


def _recalled(key: tuple) -> Any:
    with _memo_lock:
        if key not in _memo:
            return MISSING
        _memo.move_to_end(key)
        value = _memo[key][0]
    if isinstance(value, _Raised):
        raise value.error
    return value


#: False while a REST answer is written (:func:`unkept`): the typed answers it asks for are
#: looked up in the memo but not added to it
_keep_typed: ContextVar[bool] = ContextVar("keep_typed", default=True)


def unkept(compute: Callable[[], Any]) -> Any:
    """``compute()``, keeping none of the typed answers it makes: the REST API keeps the JSON
    bytes it sends (web/api.py), and a typed recommendation kept beside them held ~15x their
    bytes and took 4-5 ms to measure (a page's answer, kept, is still reused)."""
    token = _keep_typed.set(False)
    try:
        return compute()
    finally:
        _keep_typed.reset(token)


def remember(name: str, args: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per question and price epoch (an LRU of MEMO_SIZE answers).

    Every result is a pure function of the request, the catalog, the presets and the prices,
    so a repeated question gets the same object back (bad input: the same InputError).
    Inside :func:`unkept`, a typed answer (not JSON bytes, not a page) is made, not kept.
    """
    key = _key(name, args)  # (once: a question's JSON and the store's state, ~60 us)
    value = _recalled(key)
    if value is not MISSING:
        return value
    try:
        value = compute()
    except InputError as exc:
        value = _Raised(exc)
    if not _keep_typed.get() and not name.startswith(("json:", "page:")):
        if isinstance(value, _Raised):
            raise value.error
        return value
    size = _size(value) + _size(key)  # the key holds the request (a pasted config's JSON)
    with _memo_lock:
        if key[1] == _epoch() and size <= MEMO_BYTES // 8:  # never keep a stale generation
            old = _memo.pop(key, None)
            if old is not None:
                _memo_bytes[0] -= old[1]
            _memo[key] = (value, size)
            _memo_bytes[0] += size
            while len(_memo) > MEMO_SIZE or _memo_bytes[0] > MEMO_BYTES:
                _memo_bytes[0] -= _memo.popitem(last=False)[1][1]
    if isinstance(value, _Raised):
        raise value.error
    return value


def memo(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a service: its answers are remembered (see :func:`remember`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        return remember(fn.__name__, args, lambda: fn(*args))

    return wrapper


def price_sources() -> list[str]:
    """The forms' choices: the market's feeds the store holds now, then the articles' sets
    (priced only when named)."""
    from whichgpu.catalog.offers import shipped_offer_sets

    market = sorted({fi.feed for fi in offers(None, cheapest_only=True).feeds})
    return market + [n for n in shipped_offer_sets() if n not in market]


def main_currency(prices: str | None) -> str | None:
    """The currency most of a price source's offers use (None: no offer)."""
    return offers(prices, cheapest_only=True).main_currency()


# ------------------------------------------------------------------ the web's context

#: how the answers reach models, offers and profiles on this server: the model through the
#: web's resolver (never a file, the Hub bounded), offers shared per snapshot, only the
#: server's own calibration profile, and no path of the server in the JSON
WEB = Context(model=web_model, offers=offers, calibration=web_calibration, public=True)


# ------------------------------------------------------------------ the answers

@memo
def gpus(q: r.Gpus) -> GpusAnswer:
    """``whichgpu gpus --json``."""
    return catalog_answers.gpus(q, WEB)


@memo
def gpu(q: r.Gpu) -> GpuAnswer:
    """``whichgpu gpu ID --json``."""
    return catalog_answers.gpu(q, WEB)


@memo
def models(q: r.Models) -> ModelsAnswer:
    """``whichgpu models --json``."""
    return catalog_answers.models(q, WEB)


@memo
def model(q: r.Model) -> ModelAnswer:
    """``whichgpu model MODEL --json``."""
    return catalog_answers.model(q, WEB)


@memo
def memory(q: r.Memory) -> MemoryAnswer | MixedCardsAnswer:
    """``whichgpu memory --json``: the VRAM selector (a list of cards: the mixed answer)."""
    return estimates.memory(q, WEB)


@memo
def card_speed(q: r.Memory) -> dict[str, Any] | None:
    """The VRAM selector's card, when it holds the model for inference: the decode speed per
    sequence (low / typical / high) and the longest context per sequence that still fits, as
    ``whichgpu fits`` computes them (the same estimate functions)."""
    from whichgpu.estimate.memory.fit import layout_for, max_context
    from whichgpu.estimate.speed import estimate_speed

    answer = memory(q)
    t = answer.report.target
    if t is None or not t.fits or q.task != Task.INFERENCE or getattr(q, "config", None):
        return None
    w = estimates.workload(q, WEB)
    if w.is_diffusion:
        return None
    try:
        rate = estimate_speed(layout_for(w, t.count), t.gpu, t.count, check_fit=False,
                              saturation=False).rates.get("decode_tokens_per_s_per_sequence")
    except (InputError, ValueError):  # a card known by its memory only has no speed
        rate = None
    return {"longest": max_context(w, t.gpu, t.count), "decode": rate}


@memo
def fits(q: r.Fits) -> Any:
    """``whichgpu fits --json``: what runs on the card."""
    from whichgpu.answers.fitting import fits as answer

    return answer(q, WEB)


@memo
def speed(q: r.Speed) -> SpeedResult | MixedCardsAnswer:
    """``whichgpu speed --json`` (a list of cards: the mixed answer)."""
    return estimates.speed(q, WEB)


@memo
def recommend(q: r.Recommend) -> RecommendAnswer | RLRecommendAnswer:
    """``whichgpu recommend --json`` (``only`` narrows the GPUs compared)."""
    return advice.recommend(q, WEB)


@memo
def checklist(q: r.Checklist) -> ChecklistAnswer:
    """``whichgpu checklist --json``: the five questions of S13."""
    return advice.checklist(q, WEB)


@memo
def tco(q: r.Tco) -> TcoResult:
    """``whichgpu tco --json``: owning vs renting, the curve, the advice."""
    return money.tco(q, WEB)


@memo
def cost(q: r.Cost) -> CostResult:
    """``whichgpu cost --json``: a run's cost on the cheapest offer for a GPU."""
    return money.cost(q, WEB)


@memo
def prices_latest(q: r.PricesList) -> PricesAnswer:
    """``whichgpu prices list --json``."""
    return price_answers.prices_list(q, WEB)


@memo
def prices_history(q: r.PricesHistory) -> HistoryAnswer:
    """``whichgpu prices history --json`` (without the store's path); an unknown ``feed`` is
    bad input, not an empty history."""
    return price_answers.prices_history(q, WEB)
