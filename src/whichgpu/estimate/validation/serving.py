"""``whichgpu validate serving``: the serving model against validation/serving.csv.

Each row is one published metric of one run (``group``). The run becomes a replica
(``ServingModel``: the row's model, weights, engine and version, GPU, TP x PP layout and the
engine settings it states) and a load (a Poisson rate, a closed loop of ``concurrency`` users,
or ``num_requests`` sent at once), and the metric is read off the replica's answer. Rows are
split by SOURCE (validation/serving_split.toml), never by id, so a run's throughput and its
latencies stay on one side.
"""

from __future__ import annotations

import math
import re
import statistics
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from whichgpu.catalog.gpus import default_catalog
from whichgpu.engines import engines_with
from whichgpu.errors import InputError
from whichgpu.estimate.speed.result import speed_family
from whichgpu.estimate.speed.serving import Load, ServingModel
from whichgpu.estimate.speed.serving_bands import band_offset_ms, offset_bounds, serving_band
from whichgpu.estimate.speed.serving_engine import Usage, engine_config, serving_value
from whichgpu.estimate.validation import Outcome, default_path, read_rows, scoring_memo
from whichgpu.estimate.validation.ceilings import excluded
from whichgpu.estimate.validation.ranges import report as range_report
from whichgpu.estimate.validation.rows import _model, engine_of, serving_build, settings
from whichgpu.estimate.workload import Workload

#: metric -> (family, what the replica's answer gives)
METRICS = {
    "output_tokens_per_s": ("throughput", "output"),
    "total_tokens_per_s": ("throughput", "total"),
    "input_tokens_per_s": ("throughput", "input"),
    "requests_per_s": ("throughput", "requests"),
    "ttft_ms_mean": ("ttft", "ttft"), "ttft_ms_median": ("ttft", "ttft"),
    "tpot_ms_mean": ("tpot", "tpot"), "tpot_ms_median": ("tpot", "tpot"),
    "itl_ms_mean": ("tpot", "itl"), "itl_ms_median": ("tpot", "itl"),
    "e2e_s_mean": ("e2e", "e2e"), "e2e_s_median": ("e2e", "e2e"),
    "output_tokens_per_s_per_user": ("tpot", "per_user"),
}
FAMILIES = ("throughput", "ttft", "tpot", "e2e")
#: Weight formats whose TensorRT-LLM engines keep the KV cache in FP8 when a row does not say:
#: NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md (commit 258c754, quoted in
#: serving.csv's trt017 conditions): "an FP8 build sets the KV cache to FP8 as well". Nothing
#: says so of NVFP4 builds, whose rows keep the model's 16-bit KV cache.
FP8_KV_QUANTS = ("fp8",)
_TAIL = re.compile(r"_p(9\d|99)$")
_SPLIT_FILE = "serving_split"


# ------------------------------------------------------------------ the split

@cache
def split_rule(path: str | None = None) -> frozenset[str]:
    """The held-out sources, from validation/serving_split.toml (decided before any fit)."""
    file = Path(path) if path else _split_path()
    data = tomllib.loads(file.read_text("utf-8"))
    return frozenset(data["split"]["holdout"])


def _split_path() -> Path:
    csv = default_path("serving")
    return csv.with_name(f"{_SPLIT_FILE}.toml")


def source_of(row: dict[str, str]) -> str:
    """A row's source: the prefix of its group before the first '-'."""
    return (row.get("group") or row["id"]).split("-", 1)[0]


def split_of_row(row: dict[str, str], holdout: frozenset[str] | None = None) -> str:
    held = split_rule() if holdout is None else holdout
    return "holdout" if source_of(row) in held else "calibration"


# ------------------------------------------------------------------ a row as a replica + load

@dataclass(frozen=True)
class Case:
    """One run of serving.csv as the model sees it."""

    model: Any  # ServingModel
    load: Any  # Load
    replicas: int
    prompt: int
    output: int
    per_gpu_divisor: int
    notes: tuple[str, ...]
    users_cap: int | None = None  # a rate-driven run's max-concurrency (benchmark semaphore)


def _num(row: dict[str, str], key: str) -> float | None:
    v = (row.get(key) or "").strip()
    if not v or v.lower() == "inf":
        return None
    return float(v)


def _gpu(gpu_id: str):
    for g in default_catalog().gpus:
        if g.id == gpu_id:
            return g
    raise InputError(f"unknown GPU {gpu_id!r} (not in this catalog yet)")


def _usage(row: dict[str, str], engine: str) -> Usage:
    text = (row.get("conditions") or "").lower()
    if engine == "trtllm" and "trtllm-bench" in text:
        return "bench"
    if engine == "vllm" and any(k in text for k in ("benchmark_throughput", "throughput tests",
                                                    "offline mode", "bench throughput")):
        return "offline"
    return "server"


def _lengths(row: dict[str, str]) -> tuple[int, int, str]:
    prompt, output = _num(row, "prompt_tokens"), _num(row, "output_tokens")
    how = (row.get("lengths") or "").strip() or "unknown"
    if prompt is None or output is None:
        dataset = (row.get("dataset") or "").strip()
        means = serving_value("dataset_mean_lengths").get(dataset)
        if means is None:
            raise InputError("the source gives no prompt and output lengths")
        prompt = prompt if prompt is not None else means[0]
        output = output if output is not None else means[1]
        how = "mean"
    return max(int(round(prompt)), 1), max(int(round(output)), 1), how


def range_ratio(row: dict[str, str]) -> float | None:
    """A random dataset's ``--random-range-ratio`` where the row states it (settings
    ``random_range_ratio``): each length uniform between ratio x and 1 x the stated one (the
    benchmark_serving.py of vLLM before 0.10 and of InferenceX); None where not stated."""
    value = settings(row).get("random_range_ratio")
    return float(value) if value else None


def case_of(row: dict[str, str], *, dep: bool = False) -> Case:
    """The replica and load a row describes (raises InputError when it cannot be modelled).
    ``dep``: model attention data parallelism with expert parallelism (DEP rows) with the
    expert-parallel speed model (issue 30; scripts/check_expert_parallel.py), which the
    validation and the serving calibration leave out for now."""
    extra = settings(row)
    if "unmodelled" in extra:
        raise InputError(extra["unmodelled"])
    conditions = (row.get("conditions") or "").lower()
    dep = dep and int(_num(row, "dp") or 1) > 1 and (_num(row, "ep") or 0) > 1
    if not dep and ("dp-attention" in conditions or "attention_dp" in conditions
                    or "attention data-parallel" in conditions or "attention dp" in conditions):
        raise InputError("attention data parallelism (DP attention) is not modelled")
    if (row.get("speculative") or "").strip():
        raise InputError(f"speculative decoding ({row['speculative']}) is not modelled")
    tp = int(_num(row, "tp") or 1)
    pp = int(_num(row, "pp") or 1)
    dp = int(_num(row, "dp") or 1)
    if pp > 1:
        raise InputError("pipeline-parallel serving is not modelled")
    if dp > 1 and (_num(row, "ep") or 0) > 1 and not dep:
        raise InputError("attention data parallelism with expert parallelism (DEP) is not "
                         "modelled")
    engine = engine_of(row)
    if engine not in engines_with("continuous_batching"):
        raise InputError(f"engine {row.get('engine')!r} is not a serving engine here")
    gpu = _gpu((row.get("gpu") or "").strip())
    prompt, output, how = _lengths(row)
    spread = range_ratio(row)
    if spread is not None:  # uniform between ratio x and 1 x the stated lengths: the mean
        prompt = max(int(round(prompt * (1 + spread) / 2)), 1)
        output = max(int(round(output * (1 + spread) / 2)), 1)
    model = _model(row["model"].strip())
    kw: dict[str, Any] = {"model": model, "engine": engine, "prompt_tokens": prompt,
                          "output_tokens": output, "context": prompt + output,
                          "gpus": tp * pp, "tp": tp, "allow_long_context": True}
    if dep:  # attention data-parallel over dp ranks, experts over all (estimate/speed/
        kw.update(gpus=tp * pp * dp, expert_parallel=True)  # expert_parallel.py)
    build = serving_build(row, engine)
    if build is not None:  # the speed model's constants and kernels of that build
        kw["engine_version"] = build
    quant = (row.get("quant") or "").strip()
    if quant:
        kw["quant"] = quant
    kv = (row.get("kv_dtype") or "").strip()
    notes = []
    if kv:
        kw["kv_dtype"] = kv
    elif engine == "trtllm" and quant in FP8_KV_QUANTS:
        kw["kv_dtype"] = "fp8"  # see FP8_KV_QUANTS
        notes.append("TensorRT-LLM FP8 build: FP8 KV cache")
    w = Workload(**kw)
    usage = _usage(row, engine)
    cfg = engine_config(w, gpu, version=row.get("engine_version"), usage=usage)
    changes: dict[str, Any] = {}
    for key in ("gpu_memory_utilization", "mem_fraction_static",
                "kv_cache_free_gpu_mem_fraction"):
        if key in extra:
            changes["memory_fraction"] = float(extra[key])
    seqs = _num(row, "max_num_seqs")
    if seqs:
        changes["max_num_seqs"] = int(seqs)
    budget = _num(row, "max_batched_tokens")
    if budget:
        changes["token_budget"] = int(budget)
    if (extra.get("cuda_graphs", "").lower() == "false"
            or extra.get("enforce_eager", "").lower() == "true"):
        changes["cuda_graphs"] = False  # eager: serving_steps.eager_floor
    steps = re.search(r"num-scheduler-steps (\d+)", conditions)
    if steps:
        changes["multi_step"] = int(steps.group(1))
    recv = int(float(extra.get("scheduler_recv_interval", 1)))
    if recv > 1:  # SGLang --scheduler-recv-interval k: new requests are taken in once per k
        changes["multi_step"] = recv  # decode steps (SchedulerRecvSkipper), multi-step's wait
    if changes:
        cfg = cfg.with_(**changes)
    gpu_count = int(_num(row, "gpu_count") or tp * pp)
    replicas = max(gpu_count // (tp * pp * (dp if dep else 1)), 1)
    sm = ServingModel(w, gpu, config=cfg, lengths=how)  # type: ignore[arg-type]  # CSV text
    rate = (row.get("request_rate") or "").strip().lower()
    conc = _num(row, "concurrency")
    n = _num(row, "num_requests")
    n_rep = int(math.ceil(n / replicas)) if n else None
    cap = None
    if rate and rate != "inf":
        load = Load("rate", float(rate) / replicas, n_rep)
        if conc:  # benchmark_serving --max-concurrency: at most conc requests in flight
            cap = max(int(round(conc / replicas)), 1)
    elif conc:
        load = Load("concurrency", max(int(round(conc / replicas)), 1), n_rep)
    elif n_rep:
        load = Load("backlog", n_rep, n_rep)
    else:
        load = Load("max-throughput")
        notes.append("no load stated: the replica's max throughput")
    per_gpu = gpu_count if (row.get("per_gpu") or "").strip().lower() == "true" else 1
    return Case(sm, load, replicas, prompt, output, per_gpu, tuple(notes), cap)


def answer(case: Case):
    """The replica's ServingPoint under the case's load."""
    sm, load = case.model, case.load
    if load.kind == "rate" and case.users_cap:
        # a rate with a max-concurrency: requests beyond the cap wait in the client, where
        # TTFT does not count them; if the capped users cannot keep up with the rate, the run
        # is that closed loop
        closed = sm.at_concurrency(case.users_cap, load.requests, utilisation=False)
        if closed.requests_per_s <= load.value:
            return closed
    if load.kind == "rate":
        return sm.at_rate(load.value, load.requests)
    if load.kind == "concurrency":
        return sm.at_concurrency(int(load.value), load.requests, utilisation=False)
    if load.kind == "backlog":
        return sm.backlog(int(load.value), utilisation=False)
    return sm.max_throughput()


def predict(row: dict[str, str], memo: dict | None = None, *, dep: bool = False
            ) -> tuple[float, str, tuple[float, float] | None]:
    """(estimate in the row's unit, note, (low, high)); ``memo`` keeps each run's answer for
    the other metrics of its group; ``dep`` as :func:`case_of`'s."""
    metric = row["metric"].strip()
    if _TAIL.search(metric):
        raise InputError("tail percentiles (p90, p99) are not modelled")
    if metric not in METRICS:
        raise InputError(f"metric {metric!r} has no serving estimate")
    family, what = METRICS[metric]
    key = row.get("group") or row["id"]
    if memo is not None and key in memo:
        case, pt = memo[key]
    else:
        case = case_of(row, dep=dep)
        pt = answer(case)
        if memo is not None:
            memo[key] = (case, pt)
    if what == "itl" and case.model.config.multi_step > 1:
        raise InputError(f"vLLM multi-step scheduling ({case.model.config.multi_step} steps) "
                         "streams tokens in bursts: ITL is not TPOT")
    scale = case.replicas / case.per_gpu_divisor
    value = {
        "output": pt.output_tokens_per_s * scale,
        "total": pt.requests_per_s * (case.prompt + case.output) * scale,
        "input": pt.requests_per_s * case.prompt * scale,
        "requests": pt.requests_per_s * scale,
        "ttft": pt.ttft_s * 1e3, "tpot": pt.tpot_s * 1e3, "itl": pt.tpot_s * 1e3,
        "e2e": pt.e2e_s, "per_user": 1 / pt.tpot_s if pt.tpot_s else math.inf,
    }[what]
    if what == "e2e" and metric.endswith("_median"):
        value = _median_e2e(row, case, pt, value)
    if not math.isfinite(value):
        raise InputError("the stated load is beyond what the replica serves (no steady state)")
    model_family = speed_family(case.model.workload.model)
    band_family = "throughput" if what == "per_user" else family
    lo, hi = serving_band(band_family, model_family)
    # TTFT's band has a fixed part in ms (serving_bands.offset_bounds); values here are in ms
    span = offset_bounds(value, lo, hi, band_offset_ms(band_family, model_family)
                         if family in ("ttft", "tpot") else 0.0)
    build = case.model.workload.engine_version
    note = (f"{case.model.config.engine} {case.model.config.generation}"
            + (f" ({build} build)" if build else "") + ", batch "
            + f"{pt.decode_batch:.0f} of {case.model.limit} ({case.model.limited_by})"
            + ("; saturated" if pt.saturated else "")
            + (f"; {case.replicas} replicas" if case.replicas > 1 else ""))
    return value, note, span


def _median_e2e(row: dict[str, str], case: Case, pt: Any, mean_e2e: float) -> float:
    """A median end-to-end latency of ShareGPT traffic (serve28, issue 28): the request at the
    median output length, not at the mean. The replica's answer is at the mean lengths, and
    ShareGPT's outputs are long-tailed (traffic.py's log-normal, sigma traffic_length_sigma,
    with the benchmark tools' filter), so their median is well under their mean; an e2e grows
    with its own output (TTFT + (output - 1) x TPOT), so its median is that of the median
    output. Other datasets' rows keep the mean."""
    if (row.get("dataset") or "").strip().lower() != "sharegpt":
        return mean_e2e
    import numpy as np

    from whichgpu.estimate.speed.traffic import sharegpt

    outputs = sorted(o for _, o in sharegpt(case.prompt, case.output)
                     .sample(4001, np.random.default_rng(0)))
    return float(pt.ttft_s + (outputs[len(outputs) // 2] - 1) * pt.tpot_s)


def measured(row: dict[str, str]) -> tuple[float, str]:
    return float(row["value"]), row["metric"]


def family_of(row: dict[str, str]) -> str:
    metric = row["metric"].strip()
    if metric in METRICS:
        return METRICS[metric][0]
    return "ttft" if metric.startswith("ttft") else "tpot" if metric.startswith(
        ("tpot", "itl")) else "e2e" if metric.startswith("e2e") else "throughput"


def evaluate_rows(rows: Iterable[dict[str, str]],
                  holdout: frozenset[str] | None = None) -> list[Outcome]:
    """Every row's outcome (category = metric family; split = the row's source side)."""
    held = split_rule() if holdout is None else holdout
    if scoring_memo.active():  # a refit scoring runs again: kept by value (scoring_memo.py)
        return scoring_memo.by_run(list(rows), held, _evaluate_rows)
    return _evaluate_rows(rows, held)


def _evaluate_rows(rows: Iterable[dict[str, str]], held: frozenset[str]) -> list[Outcome]:
    out = []
    memo: dict = {}
    for row in rows:
        value, unit = measured(row)
        span = None
        try:
            predicted, note, span = predict(row, memo)
        except (InputError, KeyError, ValueError, ZeroDivisionError) as exc:
            predicted, note = None, f"not modelled: {exc}"
        out.append(Outcome(row["id"], family_of(row), split_of_row(row, held), value,
                           predicted, unit, note, row.get("source_url", ""),
                           span[0] if span else None, span[1] if span else None))
    return out


def run(path: Path | None = None) -> list[Outcome]:
    rows = read_rows(path or default_path("serving"))
    return evaluate_rows(rows)


# ------------------------------------------------------------------ tables

@dataclass(frozen=True)
class Cell:
    """Median absolute error of a set of rows."""

    n: int
    median: float | None
    inside: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "median_abs_error": self.median, "inside_range": self.inside}


def cell(outcomes: list[Outcome]) -> Cell:
    errs = [abs(o.error) for o in outcomes if o.error is not None]
    inside = sum(1 for o in outcomes if o.inside)
    return Cell(len(errs), statistics.median(errs) if errs else None, inside)


def table(outcomes: list[Outcome], rows: list[dict[str, str]],
          by: tuple[str, ...] = ("split", "family")) -> dict[tuple[str, ...], Cell]:
    """Median absolute error grouped by any of: split, family, engine, gpu, source, kind."""
    info = {r["id"]: r for r in rows}
    groups: dict[tuple[str, ...], list[Outcome]] = {}
    for o in outcomes:
        if o.error is None:
            continue
        r = info.get(o.id, {})
        values = {"split": o.split, "family": o.category,
                  "engine": (r.get("engine") or "").strip(),
                  "gpu": (r.get("gpu") or "").strip(), "source": source_of(r) if r else "",
                  "kind": (r.get("kind") or "").strip()}
        groups.setdefault(tuple(values[k] for k in by), []).append(o)
    return {k: cell(v) for k, v in sorted(groups.items())}


def ranges_of(outcomes: list[Outcome], rows: list[dict[str, str]]) -> dict[str, Any]:
    """``ranges``: coverage and width of the stated intervals by metric family, by family and
    engine, and balanced over engines, without the rows above a physical ceiling
    (estimate/validation/ranges, estimate/validation/ceilings); ``ranges_holdout``: the same
    on the holdout sources alone; ``ranges_holdout_by_source``: the holdout's share inside per
    metric family and source, pooled and balanced over sources (coverage_by_source, issue 30:
    one source's table can carry the pooled share)."""
    info = {r["id"]: r for r in rows}
    above = excluded(rows)
    return {"ranges": range_report(outcomes, info, above).to_json(),
            "ranges_holdout": range_report([o for o in outcomes if o.split == "holdout"],
                                           info, above).to_json(),
            "ranges_holdout_by_source": holdout_by_source(
                [o for o in outcomes if o.id not in above], rows)}


def balanced(per_source: dict[str, list[bool]]) -> float | None:
    """The mean over sources of each source's share inside (each source one vote)."""
    shares = [sum(v) / len(v) for v in per_source.values() if v]
    return statistics.fmean(shares) if shares else None


def coverage_json(per_source: dict[str, list[bool]]) -> dict[str, Any]:
    """Pooled and balanced shares inside, and each source's count."""
    pooled = [x for v in per_source.values() for x in v]
    return {"inside": sum(pooled), "n": len(pooled),
            "pooled": sum(pooled) / len(pooled) if pooled else None,
            "balanced": balanced(per_source),
            "by_source": {s: {"inside": sum(v), "n": len(v)} for s, v in sorted(
                per_source.items())}}


def holdout_by_source(outcomes: list[Outcome], rows: list[dict[str, str]]
                      ) -> dict[str, dict[str, Any]]:
    """Per metric family: the holdout rows inside their range, per source, pooled and
    balanced over sources."""
    info = {r["id"]: r for r in rows}
    per: dict[str, dict[str, list[bool]]] = {}
    for o in outcomes:
        if o.split != "holdout" or o.inside is None or o.id not in info:
            continue
        per.setdefault(o.category, {}).setdefault(source_of(info[o.id]), []).append(o.inside)
    return {m: coverage_json(v) for m, v in sorted(per.items())}
