"""``whichgpu validate speed``: the speed model against validation/speed.csv."""

from __future__ import annotations

from pathlib import Path

from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.validation import Outcome, default_path, evaluate, read_rows
from whichgpu.estimate.validation_rows import gpu_of, workload_of

MAX_LOAD_BATCH_CAP = 1024  # max-load runs: as many sequences as the KV cache holds, capped

# metric -> (estimate field, kind, divide by GPU count)
METRICS = {
    "decode_tokens_per_s": ("decode_tokens_per_s_per_sequence", "rate", False),
    "prefill_tokens_per_s": ("prefill_tokens_per_s", "rate", False),
    "output_tokens_per_s": ("output_tokens_per_s", "rate", False),
    "ttft_s": ("ttft_s", "time", False),
    "train_tokens_per_s": ("tokens_per_s", "rate", False),
    "train_tokens_per_s_per_gpu": ("tokens_per_s", "rate", True),
    "mfu": ("mfu", "scalar", False),
    "seconds_per_step": ("step_s", "time", False),
    "seconds_per_image": ("seconds_per_image", "time", False),
    "images_per_min": ("images_per_min", "rate", False),
    "it_per_s": ("it_per_s", "rate", False),
    "seconds_per_video": ("seconds_per_video", "time", False),
}


def predict(row: dict[str, str]) -> tuple[float | None, str]:
    from whichgpu.estimate.memory.fit import max_concurrency

    metric = row["metric"].strip()
    field, kind, per_gpu = METRICS[metric]
    w = workload_of(row, global_batch=True)
    gpu = gpu_of(row)
    count = w.gpus
    note = ""
    if metric == "output_tokens_per_s" and not (row.get("batch") or "").strip():
        batch = min(max_concurrency(w, gpu, count, limit=MAX_LOAD_BATCH_CAP),
                    MAX_LOAD_BATCH_CAP)
        w = w.with_(batch=max(batch, 1))
        note = f"max load: batch {w.batch} (what the KV cache holds)"
    est = estimate_speed(w, gpu, count, check_fit=False)
    if kind == "rate":
        value = est.rates[field].typical
    elif kind == "time":
        value = est.times[field].typical
    else:
        value = est.scalars[field]
    if per_gpu:
        value /= count
    return value, note or f"{est.bound}-bound"


def measured(row: dict[str, str]) -> tuple[float, str]:
    return float(row["value"]), row["metric"]


def run(path: Path | None = None) -> list[Outcome]:
    rows = read_rows(path or default_path("speed"))
    return evaluate(rows, predict, measured)
