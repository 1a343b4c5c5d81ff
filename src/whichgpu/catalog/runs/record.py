"""One measured run: what was measured, on what, with what, and where it came from."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any

from whichgpu.errors import InputError
from whichgpu.messages import Field, msg


class RunMetric(StrEnum):
    """What a run measured, in tokens per second (the names of validation/speed.csv)."""

    DECODE = "decode_tokens_per_s"  # new tokens/s of ONE sequence, at ``batch`` sequences
    PREFILL = "prefill_tokens_per_s"  # prompt tokens/s, all ``batch`` sequences together
    OUTPUT = "output_tokens_per_s"  # a server's output tokens/s at ``batch`` concurrent requests


class RunFormat(StrEnum):
    """The file a run was read from (``runs add --format``; found by its content if not
    given)."""

    LLAMA_BENCH_JSON = "llama-bench-json"  # llama-bench -o json (or -o jsonl)
    LLAMA_BENCH_CSV = "llama-bench-csv"  # llama-bench -o csv
    VLLM = "vllm"  # vllm bench serve --save-result (benchmark_serving.py)
    SGLANG = "sglang"  # python -m sglang.bench_serving --output-file (JSON lines)
    WHICHGPU_BENCH = "whichgpu-bench"  # whichgpu bench model --json
    CSV = "csv"  # the documented CSV (docs/guide.md, "Measured runs")
    EXPORT = "whichgpu-runs"  # whichgpu runs export (JSON): what runs import reads back


UNITS = ("tok/s", "tokens/s", "t/s")  # the one unit of every metric, as files spell it
EXPORT_SCHEMA = "whichgpu-runs/1"


@dataclass(frozen=True)
class MeasuredRun:
    """One measurement: ``value`` tok/s of ``metric`` for ``model`` at ``precision`` on
    ``gpu_count`` x ``gpu`` under ``engine``, at ``batch`` sequences of ``prompt_tokens`` +
    ``output_tokens``. ``id`` is the store's (None before it is stored)."""

    gpu: str  # a catalog id
    engine: str  # an Engine value
    model: str  # as the file names it (a Hub id, a GGUF file's stem, a preset)
    precision: str  # a quantization format (q4_k_m, bf16, fp8 ...)
    metric: str  # a RunMetric value
    value: float  # tokens per second
    gpu_count: int = 1
    engine_version: str | None = None
    model_key: str | None = None  # whichgpu's preset the model resolved to (matching)
    batch: int = 1
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    spread: float | None = None  # the tool's standard deviation of ``value`` (same unit)
    date: str | None = None  # when it was measured (ISO date or time), as the file says
    source: str | None = None  # the file it came from, or where the figure was published
    format: str = RunFormat.CSV.value
    conditions: str | None = None  # what else the file says about the run (flags, backend)
    id: int | None = None
    added_at: str | None = None

    @property
    def unit(self) -> str:
        return "tok/s"

    def label(self) -> str:
        """How an answer names it: '#3 llama-bench: llama-3.1-8b q4_k_m decode 131 tok/s'."""
        where = f"#{self.id} " if self.id is not None else ""
        return (f"{where}{self.format}: {self.model} {self.precision} "
                f"{self.metric.removesuffix('_tokens_per_s')} {self.value:,.4g} tok/s"
                f" at batch {self.batch}")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["unit"] = self.unit
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> MeasuredRun:
        """A run as ``to_json`` wrote it (``runs export``); a missing or malformed field is
        refused naming it and ``where``."""
        if not isinstance(data, dict):
            raise InputError(msg("runs.not_object", "{where}: a run must be a JSON object",
                                 where=where))
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in data.items() if k in known and k not in ("id", "added_at")}
        for name in ("gpu", "engine", "model", "precision", "metric", "value"):
            if kw.get(name) in (None, ""):
                raise InputError(missing(name, where))
        try:
            return checked(cls(**kw), where)
        except TypeError as exc:
            raise InputError(msg("runs.bad_fields", "{where}: {reason}", where=where,
                                 reason=str(exc))) from None


#: a field the file may lack that an option gives (its request field)
_OPTIONS = {"gpu": "gpu", "engine": "engine", "model": "model"}


def missing(name: str, where: str) -> Any:
    if name in _OPTIONS:
        return msg("runs.missing.option", "{where}: field '{field}' is missing: the file does "
                   "not say it, so give {option}", where=where, field=name,
                   option=Field(_OPTIONS[name]))
    return msg("runs.missing", "{where}: field '{field}' is missing", where=where, field=name)


def bad(name: str, where: str, value: Any, why: str) -> Any:
    return msg("runs.bad_value", "{where}: field '{field}' = {value!r}: {why}", where=where,
               field=name, value=str(value), why=why)


def number(value: Any, name: str, where: str, *, whole: bool = False,
           positive: bool = True) -> float:
    """A finite (positive) number from a file's field, refused naming the field."""
    if isinstance(value, bool):
        raise InputError(bad(name, where, value, "not a number"))
    try:
        out = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise InputError(bad(name, where, value, "not a number")) from None
    if not math.isfinite(out):
        raise InputError(bad(name, where, value, "not a finite number"))
    if positive and out <= 0:
        raise InputError(bad(name, where, value, "must be above 0"))
    if whole and not out.is_integer():
        raise InputError(bad(name, where, value, "must be a whole number"))
    return out


def checked(run: MeasuredRun, where: str) -> MeasuredRun:
    """The run with its numbers checked (finite, positive, whole where counted) and its
    metric known; what the catalog and the models say about it is checked later
    (:func:`whichgpu.estimate.measured.check_run`)."""
    if run.metric not in {m.value for m in RunMetric}:
        raise InputError(bad("metric", where, run.metric, "one of "
                             + ", ".join(m.value for m in RunMetric)))
    value = number(run.value, "value", where)
    counts: dict[str, int | None] = {}
    for name in ("gpu_count", "batch", "prompt_tokens", "output_tokens"):
        v = getattr(run, name)
        if v is not None and v != "":
            counts[name] = int(number(v, name, where, whole=True))
        else:
            counts[name] = None
    spread = run.spread
    if spread is not None and spread != "":
        spread = number(spread, "spread", where, positive=False)
        if spread < 0:
            raise InputError(bad("spread", where, spread, "must be 0 or more"))
    else:
        spread = None
    return replace(run, value=value, spread=spread, gpu_count=counts["gpu_count"] or 1,
                   batch=counts["batch"] or 1, prompt_tokens=counts["prompt_tokens"],
                   output_tokens=counts["output_tokens"])
