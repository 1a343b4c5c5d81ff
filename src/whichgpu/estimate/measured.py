"""Measured runs in the speed answers: checking a run, matching it, moving the range.

**Checking** (:func:`check_run`): a run names a catalog card (an unknown one is refused with
the closest names), an engine whichgpu models, a model it knows offline and a precision; its
numbers are finite and positive; and it stays under the card's physical ceiling (decode:
bandwidth / weight bytes; prefill and serving: peak FLOPs / 2 x active parameters, as the
validation applies them, :mod:`whichgpu.estimate.validation.ceilings`). Each refusal names
the field.

**Matching** (:func:`match`): a run speaks for a question on the same card id, GPU count and
engine (the engine the estimate ran, after any swap), for the same precision class (16, 8 or
4 bits), in the category its metric measures (decode, prefill, serving throughput). How well:

- ``exact``: the same model (the same preset) at the same precision;
- ``same-model``: the same model at another precision of the same class;
- ``family``: a model of the same speed family (dense, MoE, MoE with MLA: what the roofline
  treats alike) and size class (total parameters within a factor :data:`SIZE_CLASS`).

**Moving the range** (:func:`apply_runs`): each run is compared with whichgpu's estimate *at
the run's own conditions* (its batch, prompt and output lengths, predicted as the validation
predicts a published row), so a pp512 run informs a 4,000-token prompt through the model
rather than being copied. The log of measured / estimated is a measurement of the estimate's
error with a spread of :data:`MATCH_SIGMA` (by match quality; the tool's own standard deviation
added in quadrature). The prior is the stated 80 % range (its log-width / 2.563 is one sigma);
the runs update it as independent normal measurements would (precision-weighted mean in log
space), so the typical value moves toward the measurements by their weight, and the range
narrows by the added precision, never below the runs' own scatter (sd / sqrt(n)) nor below
:data:`FLOOR_SIGMA`, and never wider than it was. Why this rule: it is the least-assumption
way to combine a stated interval with a few noisy measurements, it weighs an exact run more
than a family one and many runs more than one, and with no runs it is the identity (answers
do not change).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from whichgpu.catalog.gpus import resolve_gpu
from whichgpu.catalog.runs.record import MeasuredRun, RunMetric, bad, checked, missing
from whichgpu.errors import InputError, WhichGPUError
from whichgpu.estimate.calibration import Calibration
from whichgpu.estimate.speed.result import LEVELS, label_for, precision_class, speed_family
from whichgpu.estimate.workload import LLM_ENGINES
from whichgpu.messages import Join, msg
from whichgpu.models.quant import get_quant
from whichgpu.models.resolve import resolve_model
from whichgpu.units import Range

Z80 = 1.2816  # the 90th percentile of a standard normal: an 80 % interval is +- Z80 sigma
SIZE_CLASS = 1.5  # a family match: total parameters within this factor of the question's
#: the narrowest a range gets (one sigma, log space: 80 % within about +-7 %), however many
#: runs: runs at their conditions leave the model's step from them to the question's
#: (other lengths, batch, build), which more runs at the same conditions do not remove
FLOOR_SIGMA = 0.05
#: added (log space) when decode runs move a batched server's throughput, which they measure
#: only in part (its prefill share and batching are the model's)
TRANSFER_SIGMA = 0.10


class Match(StrEnum):
    """How a stored run matched a question."""

    EXACT = "exact"
    SAME_MODEL = "same-model"
    FAMILY = "family"


#: one sigma (log space) of a run as evidence of the estimate's error at the question, by how
#: it matched: run-to-run noise of a benchmark (a few %), plus what differs between the run's
#: model or precision and the question's
MATCH_SIGMA = {Match.EXACT: 0.08, Match.SAME_MODEL: 0.12, Match.FAMILY: 0.20}

#: the estimate's figures each metric informs: rates, and times (inverse)
RATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    RunMetric.DECODE: (("decode_tokens_per_s", "decode_tokens_per_s_per_sequence"), ()),
    RunMetric.PREFILL: (("prefill_tokens_per_s",), ("ttft_s",)),
    RunMetric.OUTPUT: (("output_tokens_per_s",), ()),
}

def _rate_word(name: str) -> Any:
    """A rate as an answer says it (the web translates it)."""
    words = {"decode_tokens_per_s_per_sequence": msg("runs.rate.decode",
                                                     "decode of one sequence"),
             "prefill_tokens_per_s": msg("runs.rate.prefill", "prefill"),
             "output_tokens_per_s": msg("runs.rate.output", "output throughput")}
    return words.get(name, name)


def _match_word(how: Match) -> Any:
    return {Match.EXACT: msg("runs.match.exact", "the same model and precision"),
            Match.SAME_MODEL: msg("runs.match.same_model", "the same model, another precision"),
            Match.FAMILY: msg("runs.match.family", "same family and size class")}[how]


def _refs(evidence: Sequence[Matched], via_decode: bool = False) -> Any:
    """'#2 (the same model), #5 (same family and size class)'."""
    items = [msg("runs.ref.decode", "#{id} ({match}, a decode run)", id=m.run.id,
                 match=_match_word(m.match)) if via_decode else
             msg("runs.ref", "#{id} ({match})", id=m.run.id, match=_match_word(m.match))
             for m in evidence]
    return Join(items)


_ENGINE_ALIASES = {"llama.cpp": "llamacpp", "llama-cpp": "llamacpp", "tensorrt-llm": "trtllm",
                   "tensorrt": "trtllm", "trt-llm": "trtllm", "hf": "transformers"}


# ------------------------------------------------------------------ checking

def _field_error(where: str, name: str, exc: Exception) -> InputError:
    return InputError(msg("runs.field_error", "{where}: field '{field}': {error}", where=where,
                          field=name, error=str(exc)))


def resolve_run_model(name: str):
    """The ModelSpec a run's model names (offline: presets and known Hub ids), trying the
    forms files use: 'Meta-Llama-3.1-8B-Instruct' as 'meta-llama/Meta-Llama-3.1-8B-Instruct'."""
    text = name.strip()
    tries = [text]
    if "/" not in text:
        tries += [f"meta-llama/{text}", text.lower().removeprefix("meta-"),
                  text.lower().removesuffix("-instruct").removesuffix("-chat")]
    first: WhichGPUError | None = None
    for candidate in tries:
        try:
            return resolve_model(candidate, offline=True, files=False)
        except WhichGPUError as exc:
            first = first or exc
    assert first is not None
    # a Hub id without its organisation ('Mistral-7B-Instruct-v0.3'): the one known id that
    # ends with it exactly
    tails = [n for n in getattr(first, "suggestions", ()) if "/" in n
             and n.split("/", 1)[1].lower() == text.lower()]
    if len(tails) == 1:
        return resolve_model(tails[0], offline=True, files=False)
    raise first


def row_of(run: MeasuredRun) -> dict[str, str]:
    """The run as a validation row (validation/speed.csv's columns)."""
    return {"model": run.model_key or run.model, "task": "inference", "quant": run.precision,
            "engine": run.engine, "engine_version": run.engine_version or "",
            "date": run.date or "", "gpu": run.gpu, "gpu_count": str(run.gpu_count),
            "batch": str(run.batch), "prompt_tokens": str(run.prompt_tokens or ""),
            "output_tokens": str(run.output_tokens or ""), "metric": run.metric,
            "value": repr(run.value), "category": run.metric.split("_")[0]}


def check_run(fields: dict[str, Any], where: str, options: dict[str, Any],
              fmt: str) -> MeasuredRun:
    """A run from a file's ``fields``, what the file lacks filled from ``options`` (gpu,
    gpu_count, engine, engine_version, model, precision, source; an option given wins over
    the file), checked; refused naming the field."""
    # lazily, as predict below: only a run being checked or matched reads the validation's
    # row model, not every speed answer that asks this module for a store's runs
    from whichgpu.estimate.validation.ceilings import ceiling_reason

    if "_not_object" in fields:
        raise InputError(msg("runs.not_object", "{where}: a run must be a JSON object",
                             where=where))
    data = {**fields, **{k: v for k, v in options.items() if v not in (None, "")}}
    for name in ("gpu", "engine", "model"):
        if data.get(name) in (None, ""):
            raise InputError(missing(name, where))
    try:
        gpu = resolve_gpu(str(data["gpu"]), strict=True).gpu
    except InputError as exc:
        raise _field_error(where, "gpu", exc) from None
    if gpu.user_spec:
        raise InputError(bad("gpu", where, data["gpu"], "a card of the catalog"))
    engine = str(data["engine"]).strip().lower()
    engine = _ENGINE_ALIASES.get(engine, engine)
    if engine not in LLM_ENGINES:
        raise InputError(bad("engine", where, data["engine"],
                             "one of " + ", ".join(LLM_ENGINES)))
    try:
        spec = resolve_run_model(str(data["model"]))
    except WhichGPUError as exc:
        raise _field_error(where, "model", exc) from None
    if spec.diffusion is not None:
        raise InputError(bad("model", where, data["model"], "runs are of language models"))
    precision = data.get("precision")
    if precision in (None, ""):  # a server loads the checkpoint as it ships
        precision = spec.quantization or (spec.native_dtype if spec.native_dtype in
                                          ("bf16", "fp16", "fp32") else "bf16")
    try:
        get_quant(str(precision).strip().lower())
    except WhichGPUError as exc:
        raise _field_error(where, "precision", exc) from None
    for name in ("metric", "value"):
        if data.get(name) in (None, ""):
            raise InputError(missing(name, where))
    run = checked(MeasuredRun(
        gpu=gpu.id, engine=engine, model=str(data["model"]).strip(),
        precision=str(precision).strip().lower(), metric=str(data["metric"]).strip(),
        value=data["value"], gpu_count=data.get("gpu_count") or 1,
        engine_version=(str(data["engine_version"]).strip()
                        if data.get("engine_version") else None),
        model_key=spec.id, batch=data.get("batch") or 1,
        prompt_tokens=data.get("prompt_tokens"), output_tokens=data.get("output_tokens"),
        spread=data.get("spread"), date=str(data["date"]) if data.get("date") else None,
        source=str(data["source"]) if data.get("source") else None, format=fmt,
        conditions=str(data["conditions"]) if data.get("conditions") else None), where)
    try:
        predicted(run)
    except WhichGPUError as exc:
        raise InputError(msg("runs.not_modelled", "{where}: whichgpu cannot estimate this run "
                             "to compare with it: {error}", where=where, error=str(exc))
                         ) from None
    reason = ceiling_reason(row_of(run))
    if reason:
        raise InputError(bad("value", where, f"{run.value:g}", reason))
    return run


@lru_cache(maxsize=4096)
def predicted(run: MeasuredRun) -> float:
    """whichgpu's typical estimate at the run's own conditions (no runs, no profile)."""
    from whichgpu.estimate.validation.speed import predict

    value, _, _ = predict(row_of(run))
    if value is None or not value > 0 or not math.isfinite(value):
        raise WhichGPUError(msg("runs.no_estimate", "no estimate for {run}", run=run.label()))
    return float(value)


# ------------------------------------------------------------------ matching

@dataclass(frozen=True)
class Matched:
    """A run that speaks for a question, how, and its log(measured / estimated)."""

    run: MeasuredRun
    match: Match
    log_ratio: float
    sigma: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.run.id, "run": self.run.label(), "match": self.match.value,
                "metric": self.run.metric, "measured": self.run.value,
                "estimated_at_its_conditions": round(self.run.value / math.exp(self.log_ratio),
                                                     4),
                "ratio": round(math.exp(self.log_ratio), 4), "weight_sigma": self.sigma,
                "date": self.run.date, "source": self.run.source}


def match(run: MeasuredRun, w, gpu_id: str, count: int, engine: str) -> Match | None:
    """How ``run`` matches the question ``w`` on ``count`` x ``gpu_id`` under ``engine``."""
    if (run.gpu != gpu_id or run.gpu_count != count or run.engine != engine
            or w.is_training or w.is_diffusion):
        return None
    try:
        run_quant = get_quant(run.precision)
    except WhichGPUError:
        return None
    if precision_class(run_quant) != precision_class(w.quant_format):
        return None
    if run.model_key == w.model.id:
        return Match.EXACT if run.precision == w.quant_name else Match.SAME_MODEL
    try:
        spec = resolve_run_model(run.model_key or run.model)
    except WhichGPUError:
        return None
    if speed_family(spec) != speed_family(w.model):
        return None
    a, b = spec.params_total, w.model.params_total
    if a and b and max(a, b) / min(a, b) <= SIZE_CLASS:
        return Match.FAMILY
    return None


def matched_runs(runs: Iterable[MeasuredRun], w, gpu_id: str, count: int,
                 engine: str) -> list[Matched]:
    out = []
    for run in runs:
        how = match(run, w, gpu_id, count, engine)
        if how is None:
            continue
        try:
            estimate = predicted(run)
        except WhichGPUError:
            continue
        rel = (run.spread / run.value) if run.spread else 0.0
        out.append(Matched(run, how, math.log(run.value / estimate),
                           math.hypot(MATCH_SIGMA[how], rel)))
    return out


# ------------------------------------------------------------------ moving the range

def combine(prior: Range, evidence: Sequence[Matched]) -> tuple[Range, float]:
    """``prior`` moved by the runs (the module's rule); and the log shift applied."""
    lo, typ, hi = prior.low, prior.typical, prior.high
    width = math.log(hi / lo) if lo > 0 and hi > lo else 0.0
    sigma0 = max(width / (2 * Z80), 1e-6)
    precision = 1 / sigma0 ** 2 + sum(1 / m.sigma ** 2 for m in evidence)
    mu = sum(m.log_ratio / m.sigma ** 2 for m in evidence) / precision
    sigma = 1 / math.sqrt(precision)
    if len(evidence) >= 2:
        mean = sum(m.log_ratio for m in evidence) / len(evidence)
        sd = math.sqrt(sum((m.log_ratio - mean) ** 2 for m in evidence) / (len(evidence) - 1))
        sigma = max(sigma, sd / math.sqrt(len(evidence)))
    sigma = min(max(sigma, FLOOR_SIGMA), sigma0)
    centre = typ * math.exp(mu)
    half = math.exp(Z80 * sigma)
    return Range(centre / half, centre, centre * half), mu


def _moved(r: Range, shift: float, new_width: float, inverse: bool) -> Range:
    """Another figure of the same metric moved alike: the same shift, the same width."""
    centre = r.typical * (math.exp(-shift) if inverse else math.exp(shift))
    half = math.sqrt(new_width)
    return Range(centre / half, centre, centre * half)


def apply_runs(est, w, gpu_id: str, count: int, runs: Iterable[MeasuredRun]):
    """``est`` with the rates the matching runs measure moved toward them (the module's
    rule), the runs named in ``details['measured_runs']`` and an assumption; unchanged when
    no run matches."""
    runs = list(runs)
    if not runs:
        return est
    found = matched_runs(runs, w, gpu_id, count, est.engine)
    if not found:
        return est
    rates, times = dict(est.rates), dict(est.times)
    said, per_metric = [], {}
    for metric, (rate_names, time_names) in RATES.items():
        evidence = [m for m in found if m.run.metric == metric]
        present = [n for n in rate_names if n in rates]
        if not evidence or not present:
            continue
        main = present[-1]  # decode: per sequence, what a run measures
        before = rates[main]
        after, shift = combine(before, evidence)
        width = after.high / after.low
        for name in present:
            rates[name] = after if name == main else _moved(rates[name], shift, width, False)
        for name in time_names:
            if name in times:
                times[name] = _moved(times[name], shift, width, True)
        said.append(msg("runs.used", "{rate} from {n} run(s) of this store ({runs}): typical "
                        "{before:,.1f} -> {after:,.1f} tok/s, range {wb:.2f}x -> {wa:.2f}x wide",
                        rate=_rate_word(main), n=len(evidence), runs=_refs(evidence),
                        before=before.typical,
                        after=after.typical, wb=before.high / before.low, wa=width))
        per_metric[main] = {"before": before.to_json(), "after": after.to_json(),
                            "runs": [m.to_json() for m in evidence]}
    # a server's throughput with no run of its own moves with the decode runs: its time is
    # decode steps (batched), so their error carries over, less surely (TRANSFER_SIGMA added)
    decode = [replace(m, sigma=math.hypot(m.sigma, TRANSFER_SIGMA)) for m in found
              if m.run.metric == RunMetric.DECODE]
    name = "output_tokens_per_s"
    if decode and name in rates and name not in per_metric:
        before = rates[name]
        after, _ = combine(before, decode)
        rates[name] = after
        said.append(msg("runs.used", "{rate} from {n} run(s) of this store ({runs}): typical "
                        "{before:,.1f} -> {after:,.1f} tok/s, range {wb:.2f}x -> {wa:.2f}x wide",
                        rate=_rate_word(name), n=len(decode), runs=_refs(decode, True),
                        before=before.typical,
                        after=after.typical, wb=before.high / before.low,
                        wa=after.high / after.low))
        per_metric[name] = {"before": before.to_json(), "after": after.to_json(),
                            "runs": [m.to_json() for m in decode]}
    if not said:
        return est
    used = sorted({r["id"] for v in per_metric.values() for r in v["runs"]})
    summary = msg("runs.summary", "from {n} run(s) of this store", n=len(used))
    # the label of the widest range moved (the least sure), by the one rule of every answer;
    # family runs alone are evidence of the family, not of the model; never lowered by runs
    widest = max(v["after"]["high"] / v["after"]["low"] for v in per_metric.values())
    exact = any(m.match is not Match.FAMILY for m in found)
    label = label_for(widest, 2 if exact else 1)
    confidence = max(est.confidence, label, key=LEVELS.index) if est.confidence in LEVELS \
        else label
    details = {**est.details, "measured_runs": {
        "summary": str(summary), "runs": used, "rates": per_metric,
        "rule": "each run's measured / estimated at its own conditions, weighted by how it "
                "matched (the same model and precision, the same model, the same family and "
                "size class) and by their count, moves the typical value and narrows the 80 % "
                "range (estimate/measured.py)"}}
    return replace(est, rates=rates, times=times, details=details, confidence=confidence,
                   assumptions=(*est.assumptions, *said))


# ------------------------------------------------------------------ the profile with runs

@runtime_checkable
class RunsSource(Protocol):
    """A calibration that also holds measured runs (:class:`WithRuns`)."""

    def measured_runs(self, gpu_id: str) -> tuple[Any, ...]:
        """The stored runs measured on this catalog id (MeasuredRun)."""
        ...

    def apply_runs(self, est: Any, w: Any, gpu_id: str, count: int) -> Any:
        """The speed estimate moved by those runs."""
        ...


class WithRuns:
    """A calibration profile (or none) together with the measured runs of the store.

    The profile's answers pass through unchanged (hardware scales, links, its description);
    :meth:`measured_runs` adds the runs, which the speed model applies after its estimate
    (:meth:`apply_runs`). With no runs it is never built (see
    :func:`with_store_runs`), so an empty store changes no answer.
    """

    def __init__(self, base: Calibration | None, runs: tuple[Any, ...], where: str) -> None:
        self.base = base
        self.runs = runs
        self.where = where  # the store, for people (no password)

    def entries(self, gpu_id: str) -> list[dict[str, Any]]:
        return self.base.entries(gpu_id) if self.base is not None else []

    def scales_for(self, gpu_id: str, ref_matmul: float,
                   ref_bandwidth: float) -> tuple[float, float]:
        if self.base is None:
            return 1.0, 1.0
        return self.base.scales_for(gpu_id, ref_matmul, ref_bandwidth)

    def link_for(self, gpu_id: str, count: int) -> dict[str, Any] | None:
        return self.base.link_for(gpu_id, count) if self.base is not None else None

    def describe(self) -> str | None:
        return self.base.describe() if self.base is not None else None

    def measured_runs(self, gpu_id: str) -> tuple[Any, ...]:
        return tuple(r for r in self.runs if r.gpu == gpu_id)

    def apply_runs(self, est: Any, w: Any, gpu_id: str, count: int) -> Any:
        """``est`` (of ``w`` on ``count`` x ``gpu_id``) moved by the runs measured on that card
        (:func:`apply_runs`). The speed model calls it on the profile it was given: applying
        a run predicts the run through the speed model, so the speed model does not import
        this module."""
        return apply_runs(est, w, gpu_id, count, self.measured_runs(gpu_id))

    def __getattr__(self, name: str) -> Any:  # the profile's own fields (path, data)
        if name in ("base", "runs", "where"):
            raise AttributeError(name)
        return getattr(self.base, name)


def with_store_runs(base: Calibration | None, store: Any = None) -> Calibration | None:
    """``base`` with the measured runs of the price store (``store``: a PriceStore, a
    location, or None for the default); ``base`` itself when the store holds none, or when it
    does not exist yet (asking never creates a store)."""
    # lazily: the store (and sqlite3) loads only when a command asks for its runs
    from whichgpu.catalog.prices.backends import parse_target
    from whichgpu.catalog.prices.store import PriceStore
    from whichgpu.catalog.runs.store import RunStore

    try:
        if not isinstance(store, PriceStore):
            target = parse_target(store)
            if target.kind == "sqlite" and (target.path is None or not target.path.exists()):
                return base
            store = PriceStore(store)
        runs = tuple(RunStore(store).list())
    except WhichGPUError as exc:  # a store that cannot be read (down, newer): no runs, said
        import logging

        logging.getLogger("whichgpu").warning("measured runs not used: %s", exc)
        return base
    if not runs:
        return base
    return WithRuns(base, runs, store.location)
