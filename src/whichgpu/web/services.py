"""The calls behind every endpoint and page: typed requests in, the Python API's results out.

Each function returns the result objects (for the pages) and builds the same JSON as the
CLI's ``--json`` (for the REST API), so the CLI, the API and the pages cannot disagree.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from whichgpu.advise.build import only_gpus  # the API's `only` is the CLI's `--only`
from whichgpu.catalog.gpus import GPU, default_catalog, resolve_gpu
from whichgpu.catalog.prices import OfferSelection, current_offers
from whichgpu.catalog.user_gpu import resolve_gpu_arg
from whichgpu.errors import InputError
from whichgpu.models.resolve import looks_like_path
from whichgpu.web import forms as f
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
NO_OFFER_FILES = ("the web server reads no offer files: name a price source (the 'prices' "
                  "page lists them), e.g. vramfarm-2026-11")


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
                            hint="the 'prices' page lists them")
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
            gen = (store.location, store.generation())
        except Exception:  # an unusable store: current_offers says why (503 or fallback)
            gen = (None, None)
        with _memo_lock:
            if gen != _generation[0]:
                _memo.clear()
                _memo_bytes[0] = 0
                with _cache_lock:
                    _cache.clear()
            _generation[0], _generation[1] = gen, now
    return _generation[0]


def offers(prices: str | None, max_age: float | None = None, *,
           gpus: tuple[str, ...] | None = None, cheapest_only: bool = False) -> OfferSelection:
    """``current_offers`` for the web: one shared, path-free selection per question and
    snapshot generation (a new snapshot drops the old selections and answers).

    Priced answers ask for ``cheapest_only`` (the cheapest offer of each kind, all a job can
    be priced on: one small list shared by every question on the same prices); the price
    list and a GPU's page ask for every offer of their ``gpus``.
    """
    prices = check_prices(prices)
    gpus = tuple(sorted(set(gpus))) if gpus is not None else None
    key = (generation(), prices, max_age, gpus, cheapest_only)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    with _cache_lock:  # one reader fills; the others wait for its answer
        hit = _cache.get(key)
        if hit is not None:
            return hit
        selection = current_offers(prices, max_age_days=max_age, gpus=gpus,
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
    path = _calibration_file()
    if path is None:
        return ()
    try:
        return (str(path), path.stat().st_mtime_ns)
    except OSError:
        return (str(path), None)


def has_calibration() -> bool:
    """Whether ``calibration=default`` can be answered now (the forms offer it only then)."""
    stamp = _calibration_stamp()
    return bool(stamp) and stamp[1] is not None


def calibration_profile(requested: str | None):
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
        raise InputError("this server uses no calibration profile (it was started with "
                         "--calibration none): ask without calibration")
    stamp = _calibration_stamp()
    if stamp[1] is None:
        raise InputError("this server has no calibration profile yet: run 'whichgpu bench' "
                         "on its GPU (or start it with 'whichgpu serve --calibration FILE'), "
                         "or ask without calibration")
    profile = _profiles.get(stamp)
    if profile is None:
        try:
            profile = dataclasses.replace(load_profile(path), path=path.name)
        except DataError as exc:
            logging.getLogger("whichgpu.web").error("calibration profile: %s", exc)
            raise WhichGPUError("this server's calibration profile cannot be read; the "
                                "server log says why") from None
        _profiles.clear()  # one profile at a time: the file as it is now
        _profiles[stamp] = profile
    return profile


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
    """Objects every answer shares (the catalog's GPUs, the selection and its offers, model
    specs, rate tables): counted once elsewhere, not per answer."""
    from whichgpu.catalog.gpus import GPU, Catalog
    from whichgpu.catalog.offers import BillingRule, Offer
    from whichgpu.currency import RateTable
    from whichgpu.models.spec import ModelSpec

    return (GPU, Catalog, Offer, BillingRule, OfferSelection, RateTable, ModelSpec)


def _size(value: Any) -> int:
    """How many bytes an answer holds in memory: a page's HTML, else the objects it alone
    holds, walked with ``sys.getsizeof`` (the JSON of a recommendation is ~20x smaller than
    its objects, so JSON length would let the memo hold far more than MEMO_BYTES). Shared
    objects (:func:`_shared_types`) are not counted."""
    import sys
    import types

    if isinstance(value, tuple) and value and isinstance(value[0], bytes):
        return len(value[0]) + 64
    skip = (*_shared_types(), type, types.ModuleType, types.FunctionType, types.MethodType)
    seen: set[int] = set()
    stack = [value]
    total = 0
    while stack and len(seen) < MAX_WALK:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        try:
            total += sys.getsizeof(obj)
        except TypeError:
            continue
        if isinstance(obj, str | bytes | int | float | bool | type(None)):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
        else:
            attrs = getattr(obj, "__dict__", None)
            if isinstance(attrs, dict):
                stack.append(attrs)
            for name in getattr(type(obj), "__slots__", ()):
                if hasattr(obj, name):
                    stack.append(getattr(obj, name))
    return total + 64


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
    key = _key(name, args)
    with _memo_lock:
        if key not in _memo:
            return MISSING
        _memo.move_to_end(key)
        value = _memo[key][0]
    if isinstance(value, _Raised):
        raise value.error
    return value


def remember(name: str, args: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per question and price epoch (an LRU of MEMO_SIZE answers).

    Every result is a pure function of the request, the catalog, the presets and the prices,
    so a repeated question gets the same object back (bad input: the same InputError).
    """
    value = recalled(name, args)
    if value is not MISSING:
        return value
    key = _key(name, args)
    try:
        value = compute()
    except InputError as exc:
        value = _Raised(exc)
    size = _size(value)
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


def priced(prices: str | None, currency: str | None, rate: list[str],
           max_age: float | None = None, gpus: list[GPU] | None = None):
    """The cheapest offer of each kind (of ``gpus``; None: every GPU) in ``currency``
    (converted at the dated rates), and the rate table."""
    from whichgpu.advise.build import apply_currency
    from whichgpu.cost.currency import rates_from

    rates = rates_from(rate)
    selection = offers(prices, max_age, cheapest_only=True,
                       gpus=tuple(g.id for g in gpus) if gpus else None)
    if currency:
        selection = apply_currency(selection, currency, rates)
    return selection, rates


def price_sources() -> list[str]:
    """The forms' choices: the market's feeds the store holds now, then the articles' sets
    (priced only when named)."""
    from whichgpu.catalog.offers import shipped_offer_sets

    market = sorted({fi.feed for fi in offers(None, cheapest_only=True).feeds})
    return market + [n for n in shipped_offer_sets() if n not in market]


def main_currency(prices: str | None) -> str | None:
    """The currency most of a price source's offers use (None: no offer)."""
    return offers(prices, cheapest_only=True).main_currency()


def priced_for(prices: str | None, gpus: list[str]) -> OfferSelection:
    """What ``cost`` and ``tco`` read, as the CLI does: the cheapest offer of each kind of
    their GPU (one small selection per GPU asked, shared by every question about it)."""
    return offers(prices, gpus=tuple(gpus), cheapest_only=True)


# ------------------------------------------------------------------ catalog

@dataclass
class GpusResult:
    query: f.GpusQuery
    rows: list
    selection: OfferSelection

    def to_json(self) -> dict[str, Any]:
        return {"precision": self.query.precision, "prices": self.query.prices,
                "currency": self.selection.main_currency(),
                "price_selection": self.selection.to_json(),
                "gpus": [r.to_json() for r in self.rows]}


@memo
def gpus(q: f.GpusQuery) -> GpusResult:
    from whichgpu.advise.build import apply_currency
    from whichgpu.cost.currency import rates_from
    from whichgpu.cost.per_tflop import catalog_rows
    from whichgpu.units import check_currency, parse_size

    rates = rates_from(q.rate)
    selection = apply_currency(offers(q.prices, q.max_age, cheapest_only=True), q.currency,
                               rates)
    rows = catalog_rows(
        precision=q.precision, offers=list(selection.offers), vendor=q.vendor,
        min_memory_bytes=parse_size(q.min_memory) if q.min_memory else None,
        form_factor=q.form_factor, priced_only=q.priced_only, sort=q.sort,
        currency=check_currency(q.currency) if q.currency else selection.main_currency(),
        rates=rates)
    return GpusResult(q, rows, selection)


@dataclass
class GpuResult:
    gpu: GPU
    offers: list
    selection: OfferSelection
    note: str | None
    lang: str

    def to_json(self) -> dict[str, Any]:
        from whichgpu.catalog.describe import gpu_to_json

        return gpu_to_json(self.gpu, default_catalog(), self.offers, self.lang, self.note)


@memo
def gpu(gpu_id: str, lang: str = "en") -> GpuResult:
    res = resolve_gpu(gpu_id, default_catalog())
    selection = offers(None, gpus=(res.gpu.id,))
    return GpuResult(res.gpu, [o for o in selection.offers if o.gpu == res.gpu.id], selection,
                     res.note, lang)


# ------------------------------------------------------------------ models

@memo
def models(family: str | None = None) -> dict[str, Any]:
    from whichgpu.models.preset_index import list_presets

    if family not in (None, "decoder", "diffusion"):
        raise InputError(f"unknown family {family!r}; use decoder or diffusion")
    return {"models": [r.to_json() for r in list_presets()
                       if family is None or r.family == family]}


@memo
def model(name: str, params: str | None = None) -> dict[str, Any]:
    from whichgpu.models.describe import spec_to_json

    return spec_to_json(web_model(name, params=params))


# ------------------------------------------------------------------ workloads

_WORKLOAD = ("task", "quant", "kv_dtype", "context", "batch", "engine", "optimizer",
             "gradient_checkpointing", "lora_rank", "lora_targets", "resolution", "frames",
             "cfg", "offload", "vae_tiling", "framework", "activation_offloading", "loss",
             "fp8_training", "host_ram", "host_memory", "host_bandwidth")
_OFFLOAD = ("gpu_layers", "n_cpu_moe", "cpu_moe", "override_tensor")


def workload(q: f.WorkloadQuery, *extra: str, **overrides: Any):
    """A Workload from a request: the model resolved safely, then the CLI's builder."""
    from whichgpu.estimate.build import build_workload

    spec = web_model(q.model, config=getattr(q, "config", None), params=q.params)
    return build_workload(spec, **q.fields(*_WORKLOAD, *extra), **overrides)


@memo
def memory(q: f.MemoryQuery):
    """``whichgpu memory --json``: the VRAM selector."""
    from whichgpu.estimate.memory.report import memory_report

    w = workload(q, "master_weights", "fused_loss", "flash_attention", "gpus", "tp", "pp",
                 "zero", "allow_long_context", *_OFFLOAD)
    res = resolve_gpu_arg(q.gpu, q.gpu_spec)
    return memory_report(w, res.gpu if res else None)


@memo
def speed(q: f.SpeedQuery) -> dict[str, Any]:
    """``whichgpu speed --json``."""
    from whichgpu.estimate.build import speed_answer
    from whichgpu.estimate.workload import TRAINING_TASKS

    res = resolve_gpu_arg(q.gpu, q.gpu_spec)
    if res is None:
        raise InputError("speed needs a GPU: gpu (e.g. rtx-4090) or gpu_spec "
                         "(memory=...,bandwidth=...,fp16=...)")
    training = q.task in TRAINING_TASKS  # steps: optimizer steps to time, not diffusion steps
    w = workload(q, "prompt_tokens", "output_tokens", "tp", "pp", "zero", *_OFFLOAD,
                 gpus=q.count,
                 steps=None if training else q.steps)
    profile = calibration_profile(q.calibration)
    if q.max_throughput:  # whichgpu speed --max-throughput --json
        from whichgpu.estimate.speed.serving_answers import max_throughput_answer

        return max_throughput_answer(w, res.gpu, q.count, profile=profile)
    return speed_answer(w, res.gpu, q.count, profile=profile, framework=q.framework,
                        compile=q.compile, steps=q.steps if training else None,
                        train_tokens=q.train_tokens).to_json()


@dataclass
class RecommendResult:
    rec: Any  # advise.recommend.Recommendation
    selection: OfferSelection
    top: int
    rates: Any = None
    exported: Any = None  # export.Export when the request asked for one

    def to_json(self) -> dict[str, Any]:
        data = self.rec.to_json()
        data["options"] = data["options"][:self.top] if self.top else data["options"]
        data["prices"] = self.selection.to_json()
        if self.exported is not None:
            data["export"] = self.exported.to_json()
        return data


@memo
def recommend(q: f.RecommendQuery) -> RecommendResult:
    """``whichgpu recommend --json`` (``only`` narrows the GPUs compared)."""
    from whichgpu.advise.build import build_job
    from whichgpu.advise.recommend import recommend as run

    w = workload(q, "prompt_tokens", "output_tokens", steps=q.sampling_steps)
    job = build_job(w, **q.fields(
        "tokens", "images", "videos", "steps", "train_tokens", "users", "tokens_per_s_each",
        "tokens_per_day", "concurrency", "requests_per_s", "ttft", "tpot", "objective",
        "deadline", "max_price_per_hour",
        "budget", "currency", "spot", "checkpoint_every"))
    gpus = only_gpus(q.only)
    selection, rates = priced(q.prices, job.currency, q.rate, q.max_age, gpus)
    mine = resolve_gpu_arg(q.gpu, q.gpu_spec)
    rec = run(job, list(selection.offers), rates=rates, gpus=gpus,
              max_gpus=q.max_gpus, profile=calibration_profile(q.calibration),
              owned=mine.gpu if mine else None, owned_count=q.count)
    exported = None
    if q.export:
        from whichgpu.export import export_option

        exported = export_option(rec, q.export, q.export_option, selection=selection,
                                 rates=rates)
    return RecommendResult(rec, selection, q.top, rates, exported)


# ------------------------------------------------------------------ money

@memo
def tco(q: f.TcoQuery):
    """``whichgpu tco --json``: owning vs renting, the curve, the advice."""
    from whichgpu.cost.build import tco as run

    return run(q.gpu, **q.fields(
        "purchase_price", "resale_value", "years", "host_share", "tdp", "load_factor",
        "utilization", "hours_per_month", "kwh_price", "pue", "cooling_per_hour",
        "maintenance_per_year", "rent_price", "currency"),
        prices=check_prices(q.prices), rate=q.rate, selection_for=priced_for,
        gpu_spec=q.gpu_spec)


@memo
def cost(q: f.CostQuery) -> dict[str, Any]:
    """``whichgpu cost --json``: a run's cost on the cheapest offer for a GPU."""
    from whichgpu.cost.build import cost as run

    return run(q.gpu, q.duration, count=q.count, prices=check_prices(q.prices), spot=q.spot,
               work=q.work, unit=q.unit, per=q.per, currency=q.currency, rate=q.rate,
               selection_for=priced_for).to_json()


@dataclass
class ChecklistOut:
    result: Any  # advise.checklist.ChecklistResult
    selection: OfferSelection

    def to_json(self) -> dict[str, Any]:
        data = self.result.to_json()
        data["prices"] = self.selection.to_json()
        return data


@memo
def checklist(q: f.ChecklistQuery) -> ChecklistOut:
    """``whichgpu checklist --json``: the five questions of S13."""
    from whichgpu.advise.checklist import parse_answers, run_checklist
    from whichgpu.units import check_currency

    spec = web_model(q.model)  # the web's resolver: never a file, the Hub bounded
    cur = check_currency(q.currency) if q.currency else None
    answers = parse_answers(q.workload, q.model, q.budget_per_hour, q.hours_per_month,
                            q.horizon_months, currency=cur or "USD")
    gpus = only_gpus(q.only)
    selection, rates = priced(q.prices, cur, q.rate, q.max_age, gpus)

    result = run_checklist(answers, list(selection.offers), currency=cur, rates=rates,
                           gpus=gpus, spec=spec)
    return ChecklistOut(result, selection)


# ------------------------------------------------------------------ price list and history

@dataclass
class PricesOut:
    query: f.PricesQuery
    ids: list[str] | None
    offers: list
    total: int
    selection: OfferSelection
    note: str | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        s = self.selection
        return {"gpu": self.query.gpu, "gpus": self.ids, "offers": [
            {**o.to_json(), "age_s": s.age_s(o), "stale": s.is_stale(o)} for o in self.offers],
            "total": self.total, "prices": s.to_json()}


def gpu_ids(text: str | None) -> tuple[list[str] | None, str | None]:
    """Catalog ids a GPU argument covers: a family name covers all its variants."""
    from whichgpu.catalog.gpus import family_ids

    return family_ids(text)


@memo
def prices_latest(q: f.PricesQuery) -> PricesOut:
    """``whichgpu prices list --json``."""
    from whichgpu.advise.build import apply_currency

    if q.spot and q.on_demand:
        raise InputError("--spot and --on-demand exclude each other")
    ids, gnote = gpu_ids(q.gpu)
    selection = offers(q.prices, q.max_age, gpus=tuple(ids) if ids is not None else None)
    if q.currency:
        selection = apply_currency(selection, q.currency)
    chosen = [o for o in selection.sorted()
              if (ids is None or o.gpu in ids) and (not q.spot or o.spot)
              and (not q.on_demand or not o.spot)
              and (q.provider is None or o.provider.lower() == q.provider.lower())]
    shown = chosen if q.limit <= 0 else chosen[:q.limit]
    return PricesOut(q, ids, shown, len(chosen), selection, gnote)


@dataclass
class HistoryOut:
    gpu: str
    ids: list[str] | None
    points: list
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON less ``store``: a visitor has no business with the server's paths."""
        return {"gpu": self.gpu, "gpus": self.ids, "points": [p.to_json() for p in self.points]}


@memo
def prices_history(q: f.HistoryQuery) -> HistoryOut:
    """``whichgpu prices history --json`` (without the store's path); an unknown ``feed`` is
    bad input, not an empty history."""
    from whichgpu.catalog.prices import PriceStore
    from whichgpu.catalog.prices.selection import ensure_shipped
    from whichgpu.errors import closest

    ids, gnote = gpu_ids(q.gpu)
    st = PriceStore(None)
    ensure_shipped(st)
    if q.feed is not None:
        feeds = sorted({snap.feed for snap in st.current()})
        if q.feed not in feeds:
            near = closest(q.feed, feeds)
            hint = f"did you mean {', '.join(near)}?" if near else \
                f"the store has {', '.join(feeds) or 'no feed'}"
            raise InputError(f"unknown price feed {q.feed!r}; {hint}")
    return HistoryOut(q.gpu, ids, st.history(ids or [], feed=q.feed), gnote)
