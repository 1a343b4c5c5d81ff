"""Reading the files benchmark tools write into runs.

Where each layout comes from (the field names are the tools' own):

- llama-bench ``-o json`` / ``-o jsonl`` / ``-o csv``: one object (row) per test with
  ``build_commit``, ``build_number``, ``gpu_info``, ``backends``, ``model_filename``,
  ``model_type`` ("llama 8B Q4_K - Medium"), ``model_n_params``, ``n_gpu_layers``,
  ``n_prompt``, ``n_gen``, ``n_depth``, ``test_time``, ``avg_ts``, ``stddev_ts``
  (llama.cpp tools/llama-bench/llama-bench.cpp, ``test::get_fields``). A test with
  ``n_prompt`` > 0 and ``n_gen`` = 0 is prompt processing (prefill, one sequence); ``n_gen``
  > 0 and ``n_prompt`` = 0 is generation (decode of one sequence after ``n_depth`` tokens);
  a ``-pg`` test mixes both in one figure and is left out, said.
- vLLM ``vllm bench serve --save-result`` (benchmarks/benchmark_serving.py before it): one
  JSON object with ``date``, ``backend``, ``model_id``, ``num_prompts``, ``request_rate``,
  ``max_concurrency``, ``completed``, ``total_input_tokens``, ``total_output_tokens``,
  ``output_throughput`` (vllm/benchmarks/serve.py, ``result_json``).
- SGLang ``python -m sglang.bench_serving --output-file F``: one JSON object per line with
  ``backend``, ``dataset_name``, ``request_rate``, ``max_concurrency``, ``completed``,
  ``total_input_tokens``, ``total_output_tokens``, ``output_throughput`` (sglang
  python/sglang/bench_serving.py, ``result``); it names no model, so ``--model`` does.
- ``whichgpu bench model --json``: ``model``, ``gpu``, ``settings`` and ``results`` lines
  (bench/model_bench.py); engine ``transformers`` (eager PyTorch).
- whichgpu's own CSV: the columns of :data:`CSV_COLUMNS`, one run a row.
- ``whichgpu runs export``: ``{"schema": "whichgpu-runs/1", "runs": [...]}``.

A reader returns drafts (the fields the file gives, and where in the file); the caller fills
what the file lacks from the options and checks the rest.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whichgpu.catalog.runs.record import EXPORT_SCHEMA, RunFormat, RunMetric, bad, number
from whichgpu.errors import InputError
from whichgpu.messages import msg

MAX_FILE_BYTES = 20_000_000  # a results file is kilobytes; this keeps a wrong file out
MAX_RUNS = 10_000  # runs in one file

#: whichgpu's own CSV (docs/guide.md): required gpu, engine, model, precision, metric, value
CSV_COLUMNS = ("gpu", "gpu_count", "engine", "engine_version", "model", "precision", "metric",
               "value", "unit", "batch", "prompt_tokens", "output_tokens", "context",
               "spread", "date", "source", "conditions")

# llama.cpp's file-type names (llama_model_ftype_name) -> whichgpu's quantization ids
_FTYPE = re.compile(r"\b(I?Q\d(?:_[0-9A-Z]+)*|BF16|F16|F32|MXFP4)\b(?:\s*-\s*(Small|Medium|Large)"
                    r")?", re.IGNORECASE)
_SIZE = {"small": "_s", "medium": "_m", "large": "_l"}
_FILE_QUANT = re.compile(r"[-_.](I?Q\d(?:_[0-9A-Z]+)*|BF16|F16|FP16|F32)$", re.IGNORECASE)


@dataclass
class Draft:
    """The fields one run of a file gives; ``where`` names it in refusals."""

    where: str
    fields: dict[str, Any]
    format: RunFormat


@dataclass
class Reading:
    """What a file gave: its format, its runs, and what was left out of it and why."""

    format: RunFormat
    drafts: list[Draft]
    skipped: list[str] = field(default_factory=list)


def read_runs(path: Path, fmt: RunFormat | None = None) -> Reading:
    """The runs of ``path`` in ``fmt`` (found from the content when None)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(msg("runs.too_big", "{file}: {size:,} bytes, more than a results "
                                 "file holds (at most {limit:,})", file=path.name, size=size,
                                 limit=MAX_FILE_BYTES))
        text = path.read_text("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(msg("runs.unreadable", "{file} cannot be read: {why}", file=path.name,
                             why=type(exc).__name__)) from None
    return read_text(text, path.name, fmt)


def read_text(text: str, name: str, fmt: RunFormat | None = None) -> Reading:
    """The runs of a file's ``text`` (``name`` says it in refusals)."""
    fmt = fmt or detect(text, name)
    reader = _READERS[fmt]
    reading = reader(text, name)
    if not reading.drafts:
        raise InputError(msg("runs.none", "{file} holds no run whichgpu can use ({format})"
                             "{skipped}", file=name, format=fmt.value,
                             skipped=(": " + "; ".join(reading.skipped[:3]))
                             if reading.skipped else ""))
    if len(reading.drafts) > MAX_RUNS:
        raise InputError(msg("runs.too_many", "{file}: {n:,} runs, more than {limit:,} in one "
                             "file", file=name, n=len(reading.drafts), limit=MAX_RUNS))
    return reading


def detect(text: str, name: str) -> RunFormat:
    """Which tool wrote ``text``: by its JSON keys or CSV header."""
    stripped = text.lstrip()
    objects = _json_objects(stripped)
    if objects is not None:
        first = objects[0] if objects else {}
        if isinstance(first, dict):
            if first.get("schema") == EXPORT_SCHEMA:
                return RunFormat.EXPORT
            if "avg_ts" in first and "n_prompt" in first:
                return RunFormat.LLAMA_BENCH_JSON
            if "output_throughput" in first:
                return RunFormat.VLLM if "model_id" in first and "dataset_name" not in first \
                    else RunFormat.SGLANG
            if "results" in first and "settings" in first and "gpu" in first:
                return RunFormat.WHICHGPU_BENCH
    else:
        header = stripped.splitlines()[0] if stripped else ""
        columns = {c.strip().strip('"') for c in header.split(",")}
        if {"avg_ts", "n_prompt", "n_gen"} <= columns:
            return RunFormat.LLAMA_BENCH_CSV
        if {"gpu", "metric", "value"} <= columns:
            return RunFormat.CSV
    raise InputError(msg("runs.unknown_format", "{file} is not a results file whichgpu reads "
                         "(llama-bench JSON or CSV, vLLM or SGLang serving benchmark JSON, "
                         "whichgpu bench JSON, the runs CSV or a runs export)", file=name))


def _json_objects(text: str) -> list[Any] | None:
    """The JSON value(s) of ``text``: a list, one object, or JSON lines; None if not JSON."""
    if not text or text[0] not in "[{":
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError:
            return None
    return value if isinstance(value, list) else [value]


def _objects(text: str, name: str) -> list[dict[str, Any]]:
    objects = _json_objects(text.lstrip())
    if objects is None:
        raise InputError(msg("runs.not_json", "{file} is not JSON", file=name))
    for i, o in enumerate(objects):
        if not isinstance(o, dict):
            raise InputError(msg("runs.not_object", "{where}: a run must be a JSON object",
                                 where=f"{name} item {i + 1}"))
    return objects


# ------------------------------------------------------------------ llama-bench

def llama_quant(model_type: str | None, filename: str | None) -> str | None:
    """The quantization of a llama-bench row: from ``model_type`` ("llama 8B Q4_K - Medium"
    -> q4_k_m), else the file name's suffix ("...-Q4_K_M.gguf")."""
    if model_type:
        found = _FTYPE.search(model_type.split(" ", 1)[-1] if " " in model_type else model_type)
        if found:
            base = found.group(1).lower()
            size = _SIZE.get((found.group(2) or "").lower(), "")
            return "f32" if base == "f32" else base + size
    stem = _stem(filename)
    if stem:
        found = _FILE_QUANT.search(stem)
        if found:
            q = found.group(1).lower()
            return "f16" if q == "fp16" else q
    return None


def _stem(filename: str | None) -> str | None:
    if not filename:
        return None
    stem = re.split(r"[\\/]", filename.strip())[-1]
    stem = re.sub(r"\.gguf$", "", stem, flags=re.IGNORECASE)
    return re.sub(r"-\d{5}-of-\d{5}$", "", stem)  # a split GGUF's first part


def llama_model(filename: str | None) -> str | None:
    """The model a GGUF file name names, without its quantization suffix."""
    stem = _stem(filename)
    if not stem:
        return None
    return _FILE_QUANT.sub("", stem) or stem


def _gpus(info: str | None) -> tuple[str | None, int | None]:
    """(GPU name, count) from llama-bench's ``gpu_info`` ("NVIDIA GeForce RTX 3090, NVIDIA
    GeForce RTX 3090" is two of one card); mixed cards are refused."""
    if not info or not info.strip():
        return None, None
    names = [n.strip() for n in re.split(r"[,/]", info) if n.strip()]
    if len(set(names)) > 1:
        raise InputError(msg("runs.mixed_gpus", "gpu_info {info!r} names different cards: "
                             "whichgpu keeps runs of one kind of card (give the card)",
                             info=info))
    return names[0], len(names)


def _llama_rows(rows: list[dict[str, Any]], name: str, fmt: RunFormat) -> Reading:
    drafts, skipped = [], []
    for i, row in enumerate(rows):
        where = f"{name} row {i + 1}"
        n_prompt = int(number(row.get("n_prompt", 0), "n_prompt", where, whole=True,
                              positive=False))
        n_gen = int(number(row.get("n_gen", 0), "n_gen", where, whole=True, positive=False))
        depth = int(number(row.get("n_depth") or 0, "n_depth", where, whole=True,
                           positive=False))
        if n_prompt and n_gen:
            skipped.append(f"{where}: a pp{n_prompt}+tg{n_gen} test mixes prefill and decode "
                           "in one figure")
            continue
        ngl = row.get("n_gpu_layers")
        if ngl is not None and str(ngl).strip() in ("0", "0.0"):
            skipped.append(f"{where}: n_gpu_layers = 0 ran on the CPU")
            continue
        prompt: int | None
        output: int | None
        if n_prompt:
            metric, prompt, output = RunMetric.PREFILL, n_prompt, None
        elif n_gen:
            metric, prompt, output = RunMetric.DECODE, depth or None, n_gen
        else:
            skipped.append(f"{where}: neither n_prompt nor n_gen")
            continue
        gpu, count = _gpus(row.get("gpu_info"))
        build = str(row.get("build_number") or "").strip()
        conditions = "; ".join(f"{k}={row[k]}" for k in (
            "backends", "n_gpu_layers", "flash_attn", "type_k", "type_v", "n_batch", "n_ubatch",
            "split_mode", "build_commit") if str(row.get(k, "")).strip() not in ("",))
        drafts.append(Draft(where, {
            "gpu": gpu, "gpu_count": count, "engine": "llamacpp",
            "engine_version": f"b{build}" if build and build != "0" else None,
            "model": llama_model(row.get("model_filename")),
            "precision": llama_quant(row.get("model_type"), row.get("model_filename")),
            "metric": metric.value, "value": row.get("avg_ts"), "batch": 1,
            "prompt_tokens": prompt, "output_tokens": output,
            "spread": row.get("stddev_ts") or None,
            "date": str(row.get("test_time") or "") or None, "conditions": conditions or None,
        }, fmt))
    return Reading(fmt, drafts, skipped)


def _llama_json(text: str, name: str) -> Reading:
    return _llama_rows(_objects(text, name), name, RunFormat.LLAMA_BENCH_JSON)


def _llama_csv(text: str, name: str) -> Reading:
    return _llama_rows(list(csv.DictReader(io.StringIO(text))), name, RunFormat.LLAMA_BENCH_CSV)


# ------------------------------------------------------------------ serving benchmarks

_BACKEND_ENGINES = (("sglang", "sglang"), ("vllm", "vllm"), ("trt", "trtllm"),
                    ("tensorrt", "trtllm"))


def serving_engine(backend: str | None) -> str | None:
    """The engine a serving benchmark's ``backend`` names (None: an OpenAI-compatible server
    of any engine, or an engine whichgpu does not model)."""
    text = (backend or "").strip().lower()
    return next((engine for prefix, engine in _BACKEND_ENGINES if text.startswith(prefix)),
                None)


def _serving(obj: dict[str, Any], where: str, fmt: RunFormat) -> Draft:
    completed = number(obj.get("completed"), "completed", where, whole=True)
    total_in = number(obj.get("total_input_tokens"), "total_input_tokens", where)
    total_out = number(obj.get("total_output_tokens"), "total_output_tokens", where)
    concurrency = obj.get("max_concurrency")
    prompts = obj.get("num_prompts") or completed
    if concurrency in (None, ""):  # no cap: every request at once (request rate inf) or paced
        rate = str(obj.get("request_rate", "inf")).strip().lower()
        if rate not in ("inf", "infinity"):
            raise InputError(bad("max_concurrency", where, None, "a paced benchmark (request "
                                 f"rate {rate}/s) without a concurrency cap has no fixed "
                                 "batch: run it with --max-concurrency"))
        concurrency = prompts
    batch = int(number(concurrency, "max_concurrency", where, whole=True))
    conditions = "; ".join(f"{k}={obj[k]}" for k in ("backend", "dataset_name", "num_prompts",
                                                     "request_rate", "label")
                           if obj.get(k) not in (None, ""))
    return Draft(where, {
        "engine": serving_engine(obj.get("backend") or obj.get("endpoint_type")),
        "model": obj.get("model_id") or obj.get("model") or None,
        "metric": RunMetric.OUTPUT.value, "value": obj.get("output_throughput"),
        "batch": min(batch, int(completed)),
        "prompt_tokens": max(1, round(total_in / completed)),
        "output_tokens": max(1, round(total_out / completed)),
        "date": _vllm_date(obj.get("date")), "conditions": conditions or None}, fmt)


def _vllm_date(value: Any) -> str | None:
    """vLLM writes ``20250310-141523``: as ISO 2025-03-10T14:15:23."""
    text = str(value or "").strip()
    m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})", text)
    return f"{m[1]}-{m[2]}-{m[3]}T{m[4]}:{m[5]}:{m[6]}" if m else (text or None)


def _vllm(text: str, name: str) -> Reading:
    objects = _objects(text, name)
    return Reading(RunFormat.VLLM, [_serving(o, f"{name} item {i + 1}", RunFormat.VLLM)
                                    for i, o in enumerate(objects)])


def _sglang(text: str, name: str) -> Reading:
    objects = _objects(text, name)
    return Reading(RunFormat.SGLANG, [_serving(o, f"{name} line {i + 1}", RunFormat.SGLANG)
                                      for i, o in enumerate(objects)])


# ------------------------------------------------------------------ whichgpu's own

_BENCH_METRICS = {"prefill_tokens_per_s": RunMetric.PREFILL,
                  "decode_tokens_per_s": RunMetric.DECODE}


def _whichgpu_bench(text: str, name: str) -> Reading:
    drafts, skipped = [], []
    for i, obj in enumerate(_objects(text, name)):
        s = obj.get("settings") or {}
        for line in obj.get("results") or []:
            metric = _BENCH_METRICS.get(str(line.get("name")))
            where = f"{name} item {i + 1} {line.get('name')}"
            if metric is None:
                skipped.append(f"{where}: not an inference speed")
                continue
            if line.get("measured") is None:
                skipped.append(f"{where}: not measured")
                continue
            drafts.append(Draft(where, {
                "gpu": obj.get("gpu"), "engine": "transformers", "model": obj.get("model"),
                "precision": s.get("dtype"), "metric": metric.value,
                "value": line.get("measured"), "batch": s.get("batch") or 1,
                "prompt_tokens": s.get("prompt_tokens"),
                "output_tokens": s.get("output_tokens"),
                "conditions": "whichgpu bench model (eager PyTorch)"}, RunFormat.WHICHGPU_BENCH))
    return Reading(RunFormat.WHICHGPU_BENCH, drafts, skipped)


def _own_csv(text: str, name: str) -> Reading:
    reader = csv.DictReader(io.StringIO(text))
    unknown = [c for c in reader.fieldnames or [] if c and c.strip() not in CSV_COLUMNS]
    if unknown:
        raise InputError(msg("runs.csv_columns", "{file}: unknown column(s) {columns}; the "
                             "columns are {known}", file=name, columns=", ".join(unknown),
                             known=", ".join(CSV_COLUMNS)))
    drafts = []
    for i, row in enumerate(reader):
        where = f"{name} row {i + 2}"
        clean = {k.strip(): (v.strip() if isinstance(v, str) else v) for k, v in row.items()
                 if k}
        unit = clean.pop("unit", "") or "tok/s"
        if unit.lower() not in ("tok/s", "tokens/s", "t/s"):
            raise InputError(bad("unit", where, unit, "runs are in tok/s"))
        context = clean.pop("context", "")
        if context and not clean.get("prompt_tokens"):
            clean["prompt_tokens"] = context
        drafts.append(Draft(where, {k: (v if v != "" else None) for k, v in clean.items()},
                            RunFormat.CSV))
    return Reading(RunFormat.CSV, drafts)


def _export(text: str, name: str) -> Reading:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise InputError(msg("runs.not_json", "{file} is not JSON", file=name)) from None
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, list):
        raise InputError(msg("runs.missing", "{where}: field '{field}' is missing",
                             where=name, field="runs"))
    return Reading(RunFormat.EXPORT, [Draft(f"{name} run {i + 1}", r if isinstance(r, dict)
                                            else {"_not_object": r}, RunFormat.EXPORT)
                                      for i, r in enumerate(runs)])


_READERS = {RunFormat.LLAMA_BENCH_JSON: _llama_json, RunFormat.LLAMA_BENCH_CSV: _llama_csv,
            RunFormat.VLLM: _vllm, RunFormat.SGLANG: _sglang,
            RunFormat.WHICHGPU_BENCH: _whichgpu_bench, RunFormat.CSV: _own_csv,
            RunFormat.EXPORT: _export}


def iter_fields(reading: Reading) -> Iterator[tuple[str, dict[str, Any]]]:
    for d in reading.drafts:
        yield d.where, d.fields
