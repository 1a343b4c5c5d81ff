"""``whichgpu validate memory``: the memory model against validation/memory.csv."""

from __future__ import annotations

from pathlib import Path

from whichgpu.estimate.constants import memory_value
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.validation import Outcome, default_path, evaluate, read_rows
from whichgpu.estimate.validation.rows import gpu_of, measured_bytes, settings, workload_of

# What each kind of measurement sees of our breakdown.
_NOT_ALLOCATED = ("runtime", "fragmentation", "engine_reserve", "nccl")  # outside torch's count
_NOT_RESERVED = ("runtime", "engine_reserve", "nccl")


# what a whole-job measurement is: the estimate's stated 80 % range (memory_range) applies;
# terms (file, weights, KV) are not given one
_WHOLE_JOB = ("peak_allocated_bytes", "peak_reserved_bytes", "nvidia_smi_bytes",
              "engine_total_bytes")


def predict_ranged(row: dict[str, str]
                   ) -> tuple[float | None, str, tuple[float, float] | None]:
    """:func:`predict`, and for a whole-job measurement its range: the estimate times the
    stated 80 % range of its task group (``memory_range``)."""
    from whichgpu.estimate.memory.confidence import memory_range, task_group

    value, note = predict(row)
    span = None
    if value is not None and row["measured"].strip() in _WHOLE_JOB:
        clean = "; ".join(f"{k}={v}" for k, v in settings(row).items()
                          if k != "measured_over")
        lo, hi = memory_range(task_group(workload_of({**row, "settings": clean}).task))
        span = (value * lo, value * hi)
    return value, note, span


def predict(row: dict[str, str]) -> tuple[float | None, str]:
    """The estimate of what the row measured; ``measured_over=all_gpus`` in its settings means
    the published figure sums every GPU of the job (the per-GPU estimate times the count)."""
    extra = settings(row)
    over = extra.pop("measured_over", "one_gpu")
    if over not in ("one_gpu", "all_gpus"):
        raise ValueError(f"measured_over must be one_gpu or all_gpus, got {over!r}")
    row = {**row, "settings": "; ".join(f"{k}={v}" for k, v in extra.items())}
    value, note = _predict_one_gpu(row)
    if over == "all_gpus" and value is not None:
        gpus = int(float(row.get("gpu_count") or 1))
        return value * gpus, f"{note}, x {gpus} GPUs (the figure sums them)"
    return value, note


def _predict_one_gpu(row: dict[str, str]) -> tuple[float | None, str]:
    w = workload_of(row)
    e = estimate_memory(w)
    kind = row["measured"].strip()
    if kind in ("file_bytes", "weights_bytes"):
        # the whole model, wherever it sits (llama.cpp keeps the token embedding in host RAM)
        whole = e.details.get("model_weight_bytes")
        if whole and e.host_terms:
            return float(whole), "the model's weight bytes (GPU and host RAM)"
        return float(e.term("weights")), "weights term"
    if kind == "gpu_weights_bytes":
        return float(e.term("weights")), "weights term (on the GPU)"
    if kind == "kv_cache_bytes":
        return float(e.term("kv_cache")), "kv_cache term"
    if kind == "peak_allocated_bytes":
        return float(e.total_bytes - sum(e.term(t) for t in _NOT_ALLOCATED)), \
            "total without CUDA context, allocator slack and engine reserve"
    if kind == "peak_reserved_bytes":
        return float(e.total_bytes - sum(e.term(t) for t in _NOT_RESERVED)), \
            "total without CUDA context and engine reserve"
    if kind == "engine_total_bytes" and e.engine == "llamacpp":
        return float(e.total_bytes + e.host_total_bytes), "total on the GPU and in host RAM"
    if kind in ("nvidia_smi_bytes", "engine_total_bytes"):
        if e.engine == "vllm" and row.get("gpu"):
            # vLLM takes its utilisation fraction of the whole card whatever the model needs
            util = memory_value("vllm_gpu_memory_utilization")
            return float(max(e.total_bytes - e.term("engine_reserve"),
                             util * gpu_of(row).usable_memory_bytes)), "vLLM pre-allocation"
        return float(e.total_bytes), "total"
    raise ValueError(f"unknown measurement kind {kind!r}")


def run(path: Path | None = None) -> list[Outcome]:
    rows = read_rows(path or default_path("memory"))
    return evaluate(rows, predict_ranged, measured_bytes)


def verdicts(rows: list[dict[str, str]]) -> dict:
    """The memory model's fit verdict for each measured run on its own card (a run that
    happened fits): {'counts': {verdict: n}, 'rows': [{'id', 'verdict', 'detail'}]}.
    Borderline: within the estimate's uncertainty of the card's usable memory."""
    from whichgpu.errors import InputError
    from whichgpu.estimate.memory.fit import memory_band, verdict

    counts: dict[str, int] = {}
    out = []
    for row in rows:
        if not (row.get("gpu") or "").strip() or row.get("measured") in (
                "file_bytes", "weights_bytes", "gpu_weights_bytes", "kv_cache_bytes"):
            continue
        try:
            w = workload_of({**row, "settings": "; ".join(
                f"{k}={v}" for k, v in settings(row).items() if k != "measured_over")})
            gpu = gpu_of(row)
            e = estimate_memory(w)
        except (InputError, KeyError, ValueError):
            continue
        usable = gpu.usable_memory_bytes
        v = verdict(e.total_bytes, usable, memory_band(w), e.host_fits)
        counts[v] = counts.get(v, 0) + 1
        out.append({"id": row["id"], "verdict": v,
                    "detail": f"estimate {e.total_bytes / 1e9:.1f} GB per GPU of "
                              f"{usable / 1e9:.1f} GB usable on {gpu.id}"})
    return {"counts": counts, "rows": out}
