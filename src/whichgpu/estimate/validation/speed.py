"""``whichgpu validate speed``: the speed model against validation/speed.csv."""

from __future__ import annotations

from pathlib import Path

from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.validation import Outcome, default_path, evaluate, read_rows
from whichgpu.estimate.validation.rows import gpu_of, workload_of

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

# Training frameworks named in published measurements -> the framework the MFU model knows
# (constant training_framework_factor). vectorlm trains Hugging Face models under FSDP.
FRAMEWORKS = {
    "torchtitan": "torchtitan", "llm-foundry": "llm-foundry", "torchtune": "torchtune",
    "megatron": "megatron", "vectorlm": "transformers", "transformers": "transformers",
    "trl": "transformers", "peft": "transformers", "deepspeed": "transformers",
    "litgpt": "pytorch", "axolotl": "axolotl", "unsloth": "unsloth",
    "whichgpu-bench": "pytorch",  # whichgpu bench model --train: a plain PyTorch AMP step
}
TRAINING_TASKS = ("lora", "qlora", "full-ft", "pretrain", "image-lora")
# settings the speed model reads itself (not Workload fields): torch.compile / CUDA graphs,
# the training framework, and a stated difference between the measured card and the catalog's
# (torchtitan's H100s: 96 GB HBM2e at 500 W, "peak between SXM and NVL")
SPEED_SETTINGS = ("compile", "framework", "compute_scale", "bandwidth_scale", "latency_mode")
# How a benchmark client turned a prompt's time to first response into a prefill rate, where
# it is not prompt tokens / that time. llama-benchy's ``--latency-mode generation``
# (https://github.com/eugr/llama-benchy README, "Latency Adjustment") subtracts the time of a
# one-token request on a short, prefix-cached prompt, which costs the server one forward pass
# over a token or so: a decode step. Its pp rate is prompt / (prefill - one decode step).
LATENCY_MODES = ("generation",)


class RowHardware:
    """The measured card's stated difference from its catalog entry, as a profile would give
    it (not a calibration: it raises no confidence and names no profile)."""

    def __init__(self, compute: float, bandwidth: float) -> None:
        self.compute, self.bandwidth = compute, bandwidth

    def scales_for(self, gpu_id, ref_matmul, ref_bandwidth):
        return self.compute, self.bandwidth

    def entries(self, gpu_id: str) -> list[dict[str, str]]:
        return []  # names no profile: the estimate's calibration source stays empty

    def link_for(self, gpu_id: str, count: int) -> None:
        return None

    def describe(self) -> str | None:
        return None


def speed_settings(row: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(row without the speed-only settings, those settings)."""
    kept, taken = [], {}
    for part in (row.get("settings") or "").split(";"):
        if "=" in part and part.split("=", 1)[0].strip() in SPEED_SETTINGS:
            k, v = part.split("=", 1)
            taken[k.strip()] = v.strip()
        elif part.strip():
            kept.append(part.strip())
    return {**row, "settings": "; ".join(kept)}, taken


def framework_of(row: dict[str, str]) -> tuple[str | None, bool]:
    """(framework, compiled) of a row: the training framework (None for inference rows) and
    whether it ran under torch.compile / CUDA graphs (settings ``compile=true``)."""
    _, extra = speed_settings(row)
    compiled = extra.get("compile", "").lower() in ("true", "1", "yes", "on")
    if (row.get("task") or "").strip() not in TRAINING_TASKS:
        return None, compiled
    engine = (row.get("engine") or "").strip().lower()
    return extra.get("framework") or FRAMEWORKS.get(engine, "pytorch"), compiled


def row_hardware(row: dict[str, str]) -> RowHardware | None:
    _, extra = speed_settings(row)
    if "compute_scale" not in extra and "bandwidth_scale" not in extra:
        return None
    return RowHardware(float(extra.get("compute_scale", 1)),
                       float(extra.get("bandwidth_scale", 1)))


def estimate_of(row: dict[str, str]):
    """(workload, GPU, the row's estimate, note) as ``predict`` scores it."""
    from whichgpu.estimate.memory.fit import max_concurrency

    metric = row["metric"].strip()
    framework, compiled = framework_of(row)
    clean, _ = speed_settings(row)
    w = workload_of(clean, global_batch=True)
    gpu = gpu_of(row)
    count = w.gpus
    note = ""
    if metric == "output_tokens_per_s" and not (row.get("batch") or "").strip():
        batch = min(max_concurrency(w, gpu, count, limit=MAX_LOAD_BATCH_CAP),
                    MAX_LOAD_BATCH_CAP)
        w = w.with_(batch=max(batch, 1))
        note = f"max load: batch {w.batch} (what the KV cache holds)"
    from whichgpu.estimate.frameworks import framework_id

    # the row's name read as a profile (a diffusion trainer's row keeps its own residency)
    fw = framework_id(framework) if framework and not w.diffusion_trainer else None
    est = estimate_speed(w, gpu, count, check_fit=False, framework=fw,
                         compile=compiled, profile=row_hardware(row), saturation=False)
    return w, gpu, est, note


def predict(row: dict[str, str]) -> tuple[float | None, str, tuple[float, float] | None]:
    metric = row["metric"].strip()
    field, kind, per_gpu = METRICS[metric]
    _, _, est, note = estimate_of(row)
    count = est.count
    span = None
    if kind == "rate":
        r = est.rates[field]
        value, span = r.typical, (r.low, r.high)
    elif kind == "time":
        r = est.times[field]
        value, span = r.typical, (r.low, r.high)
    else:  # MFU: the training rate's range, as MFU is proportional to it
        value = est.scalars[field]
        r = est.rates["tokens_per_s"]
        span = (value * r.low / r.typical, value * r.high / r.typical)
    if per_gpu:
        value /= count
        span = (span[0] / count, span[1] / count)
    mode = speed_settings(row)[1].get("latency_mode")
    if mode is not None and metric == "prefill_tokens_per_s":
        value, span, said = _less_latency(row, mode, est, value, span)
        note = "; ".join(x for x in (note, said) if x)
    return value, note or f"{est.bound}-bound, confidence {est.confidence}", span


def _less_latency(row: dict[str, str], mode: str, est, value: float,
                  span: tuple[float, float]) -> tuple[float, tuple[float, float], str]:
    """(rate, range, why) of a prefill rate whose client subtracted a measured latency
    (``latency_mode``, :data:`LATENCY_MODES`) from the time to first response."""
    if mode not in LATENCY_MODES:
        raise ValueError(f"{row['id']}: latency_mode={mode} is not one of "
                         f"{', '.join(LATENCY_MODES)}")
    prompt = float(row.get("prompt_tokens") or 0) * float(row.get("batch") or 1)
    step = 1 / est.rates["decode_tokens_per_s_per_sequence"].typical
    if prompt <= 0:
        return value, span, ""

    def less(rate: float) -> float:
        left = prompt / rate - step
        return prompt / left if left > 0 else rate

    return (less(value), (less(span[0]), less(span[1])),
            f"client subtracted a one-token request: prefill less a {step * 1e3:.1f} ms "
            "decode step")


def row_key(row: dict[str, str]) -> tuple[str, str, str]:
    """(category, family, engine) under which a row counts as calibration evidence."""
    from whichgpu.estimate.speed.result import speed_family

    category = (row.get("category") or "").strip()
    clean, _ = speed_settings(row)
    w = workload_of(clean, global_batch=True)
    framework, _ = framework_of(row)
    engine = framework if framework else w.engine_name
    return category, speed_family(w.model), engine


def measured(row: dict[str, str]) -> tuple[float, str]:
    return float(row["value"]), row["metric"]


def run(path: Path | None = None) -> list[Outcome]:
    rows = read_rows(path or default_path("speed"))
    return evaluate(rows, predict, measured)


def band_key_of(row: dict[str, str]) -> str:
    """The range group a row's residual counts in (category/engine/hardware class/precision,
    estimate/speed/result.band_key), as the estimate of the row names it."""
    from whichgpu.estimate.speed.result import band_key

    category, _, engine = row_key(row)
    clean, _ = speed_settings(row)
    w = workload_of(clean, global_batch=True)
    return band_key(category, engine, gpu_of(row), w.quant_format)
