"""``whichgpu bench model``: run a model's prefill, decode and a training step, measured.

The model is built from its preset config with random weights (:mod:`whichgpu.bench.decoder`),
so nothing is downloaded. What it measures is set beside whichgpu's own estimate for the same
settings, made from the same validation rows that ``--append`` writes (so ``whichgpu validate``
sees exactly what this command compared).

- prefill: one forward pass over ``batch x prompt`` tokens into a KV cache (logits of the last
  position only, as serving engines do);
- decode: ``output`` steps of one token per sequence, greedy, through the cache;
- training (``--train``): one AdamW step under bf16 autocast with fp32 weights (PyTorch AMP),
  forward + backward + optimizer, after one warm-up step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from whichgpu.bench.buildable import check_buildable  # re-exported: answers/bench.py asks here
from whichgpu.errors import InputError
from whichgpu.models.spec import ModelSpec
from whichgpu.units import Range

ENGINE = "whichgpu-bench"  # validation/*.csv engine name; validates as "transformers"
SOURCE = "local:whichgpu-bench-model"


@dataclass(frozen=True)
class Settings:
    batch: int = 1
    prompt_tokens: int = 512
    output_tokens: int = 128
    train: bool = False
    train_seq: int = 1024
    dtype: str = "bf16"
    warmup: int = 1
    repeat: int = 3

    def __post_init__(self) -> None:
        for name in ("batch", "prompt_tokens", "output_tokens", "train_seq", "repeat"):
            if getattr(self, name) < 1:
                raise InputError(f"{name.replace('_', ' ')} must be at least 1")
        if self.dtype not in ("bf16", "fp16", "fp32"):
            raise InputError(f"--dtype must be bf16, fp16 or fp32, got {self.dtype!r}")


@dataclass(frozen=True)
class Line:
    """One measured quantity beside the estimate for it."""

    name: str
    unit: str
    measured: float | None
    estimate: Range | None = None
    calibrated: Range | None = None
    note: str = ""

    def error(self, est: Range | None) -> float | None:
        if est is None or not self.measured:
            return None
        return est.typical / self.measured - 1

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "unit": self.unit, "measured": self.measured,
                "estimate": self.estimate.to_json() if self.estimate else None,
                "error": self.error(self.estimate),
                "calibrated_estimate": self.calibrated.to_json() if self.calibrated else None,
                "calibrated_error": self.error(self.calibrated), "note": self.note}


@dataclass
class ModelBench:
    spec: ModelSpec
    settings: Settings
    device: str
    gpu_id: str | None
    params_built: int
    lines: list[Line] = field(default_factory=list)
    conditions: dict[str, Any] = field(default_factory=dict)
    rows: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        s = self.settings
        return {"model": self.spec.id, "model_name": self.spec.name, "device": self.device,
                "gpu": self.gpu_id, "params_built": self.params_built,
                "params_model": self.spec.params.total,
                "settings": {"batch": s.batch, "prompt_tokens": s.prompt_tokens,
                             "output_tokens": s.output_tokens, "train": s.train,
                             "train_seq": s.train_seq, "dtype": s.dtype},
                "results": [ln.to_json() for ln in self.lines],
                "conditions": self.conditions,
                "validation_rows": self.rows}


def check_fits(torch, device: str, spec: ModelSpec, s: Settings) -> None:
    """Refuse, before building anything, a run the GPU's free memory cannot hold."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.workload import Workload
    from whichgpu.vocabulary import Engine, Task

    free, _ = torch.cuda.mem_get_info(torch.device(device))
    runs = [("inference", Workload(model=spec, task=Task.INFERENCE, quant=s.dtype,
                                   batch=s.batch, engine=Engine.TRANSFORMERS,
                                   context=s.prompt_tokens + s.output_tokens,
                                   prompt_tokens=s.prompt_tokens,
                                   output_tokens=s.output_tokens))]
    if s.train:
        runs.append(("the training step", Workload(
            model=spec, task=Task.FULL_FT, batch=s.batch, context=s.train_seq,
            gradient_checkpointing=False)))
    for what, w in runs:
        need = estimate_memory(w).total_bytes
        if w.is_training:  # autocast keeps a bf16 copy of each fp32 weight during the step
            need += 2 * spec.params.total
        if need > free:
            raise InputError(f"{spec.name}: {what} needs about {need / 1e9:,.1f} GB and the "
                             f"GPU has {free / 1e9:,.1f} GB free; try a smaller model, batch or"
                             " context")


# ------------------------------------------------------------------ validation rows

def _model_id(spec: ModelSpec) -> str:
    return spec.hub_id or spec.id


def validation_rows(spec: ModelSpec, s: Settings, gpu_id: str, measured: dict[str, float],
                    conditions: str, day: str | None = None) -> dict[str, list[dict[str, str]]]:
    """Rows in validation/speed.csv's and memory.csv's schemas for what was measured."""
    day = day or datetime.now(UTC).strftime("%Y%m%d")
    slug = _model_id(spec).split("/")[-1].lower()
    base = f"bench-{slug}-{gpu_id}-b{s.batch}"
    infer = {"model": _model_id(spec), "task": "inference", "quant": s.dtype, "engine": ENGINE,
             "gpu": gpu_id, "gpu_count": "1", "batch": str(s.batch),
             "source_url": SOURCE, "conditions": conditions}
    train = {"model": _model_id(spec), "task": "full-ft", "quant": "bf16", "engine": ENGINE,
             "gpu": gpu_id, "gpu_count": "1", "batch": str(s.batch),
             "source_url": SOURCE, "conditions": conditions + "; AMP: fp32 weights, bf16 "
                                                             "autocast, AdamW"}
    speed, memory = [], []
    lengths = {"prompt_tokens": str(s.prompt_tokens), "output_tokens": str(s.output_tokens)}
    for metric, category in (("prefill_tokens_per_s", "prefill"),
                             ("decode_tokens_per_s", "decode")):
        if measured.get(metric):
            speed.append(infer | lengths | {
                "id": f"{base}-p{s.prompt_tokens}-o{s.output_tokens}-{category}-{day}",
                "category": category, "metric": metric, "value": f"{measured[metric]:.6g}"})
    if measured.get("train_tokens_per_s"):
        speed.append(train | {"id": f"{base}-s{s.train_seq}-train-{day}", "category": "training",
                              "seq_len": str(s.train_seq), "metric": "train_tokens_per_s",
                              "value": f"{measured['train_tokens_per_s']:.6g}"})
    if measured.get("inference_peak_bytes"):
        v = int(measured["inference_peak_bytes"])
        memory.append(infer | {
            "id": f"{base}-c{s.prompt_tokens + s.output_tokens}-inference-peak-{day}",
            "category": "inference", "context": str(s.prompt_tokens + s.output_tokens),
            "measured": "peak_allocated_bytes", "value": str(v), "unit": "B", "bytes": str(v)})
    if measured.get("train_peak_bytes"):
        v = int(measured["train_peak_bytes"])
        memory.append(train | {
            "id": f"{base}-s{s.train_seq}-train-peak-{day}", "category": "full-ft",
            "seq_len": str(s.train_seq), "optimizer": "adamw",
            "gradient_checkpointing": "false", "measured": "peak_allocated_bytes",
            "value": str(v), "unit": "B", "bytes": str(v)})
    return {"speed": speed, "memory": memory}


# speed metric -> (line name, estimate rate/time key)
_SPEED_LINES = {"prefill_tokens_per_s": ("prefill_tokens_per_s", "prefill_tokens_per_s"),
                "decode_tokens_per_s": ("decode_tokens_per_s_per_sequence",
                                        "decode_tokens_per_s_per_sequence"),
                "train_tokens_per_s": ("train_tokens_per_s", "tokens_per_s")}


def compare_lines(rows: dict[str, list[dict[str, str]]], measured: dict[str, float],
                  gpu_id: str | None, profile: Any | None = None) -> list[Line]:
    """Each measurement beside whichgpu's estimate for its validation row (and calibrated)."""
    from whichgpu.catalog.gpus import get_gpu
    from whichgpu.estimate.speed import estimate_speed
    from whichgpu.estimate.validation import memory as validation_memory
    from whichgpu.estimate.validation.rows import workload_of

    lines = []
    for row in rows.get("speed", []):
        name, key = _SPEED_LINES[row["metric"]]
        est = cal = None
        if gpu_id:
            w = workload_of(row)
            est = estimate_speed(w, get_gpu(gpu_id), check_fit=False).rates[key]
            if profile is not None:
                cal = estimate_speed(w, get_gpu(gpu_id), profile=profile,
                                     check_fit=False).rates[key]
        lines.append(Line(name, "tokens/s", measured[row["metric"]], est, cal))
    for row in rows.get("memory", []):
        est = None
        note = ""
        if gpu_id:
            value, note = validation_memory.predict(row)
            est = Range.point(value) if value is not None else None  # None: not modelled
        name = "inference_peak_bytes" if row["task"] == "inference" else "train_peak_bytes"
        lines.append(Line(name, "bytes", float(row["bytes"]), est, None, note))
    return lines


# ------------------------------------------------------------------ measuring

def _measure_inference(torch: Any, model: Any, dev: Any, s: Settings) -> dict[str, float]:
    b, p, o = s.batch, s.prompt_tokens, s.output_tokens
    vocab = model.spec.vocab_size
    prompt = torch.randint(0, vocab, (b, p), device=dev.device)
    cache = model.new_cache(b, p + o)
    with torch.inference_mode():
        pre = dev.time(lambda: model(prompt, cache, 0, last_only=True), warmup=s.warmup,
                       repeat=s.repeat)
        first = model(prompt, cache, 0, last_only=True).argmax(-1)

        def decode():
            tok = first
            for i in range(o):
                tok = model(tok, cache, p + i, last_only=True).argmax(-1)
            return tok

        dec = dev.time(decode, warmup=min(1, s.warmup), repeat=max(1, s.repeat - 1))
    step = dec.median / o
    return {"prefill_tokens_per_s": b * p / pre.median, "decode_tokens_per_s": 1 / step,
            "decode_tokens_per_s_aggregate": b / step}


def _measure_training(torch: Any, spec: ModelSpec, dev: Any, s: Settings) -> dict[str, float]:
    import torch.nn.functional as F

    from whichgpu.bench.decoder import Decoder

    model = Decoder(spec, device=dev.device, dtype=torch.float32)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=dev.is_cuda)
    tokens = torch.randint(0, spec.vocab_size, (s.batch, s.train_seq + 1), device=dev.device)

    def step():
        with torch.autocast(dev.device.type, dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, spec.vocab_size),
                               tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    t = dev.time(step, warmup=max(1, s.warmup), repeat=s.repeat)
    return {"train_tokens_per_s": s.batch * s.train_seq / t.median, "train_step_s": t.median}


def _reset_peak(torch: Any, dev: Any) -> None:
    if dev.is_cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(dev.device)


def _peak(torch: Any, dev: Any) -> float | None:
    return float(torch.cuda.max_memory_allocated(dev.device)) if dev.is_cuda else None


def run_model_bench(torch: Any, spec: ModelSpec, settings: Settings, *, device: str = "cuda:0",
                    gpu_id: str | None = None, profile: Any | None = None,
                    reporter: Any | None = None, conditions: dict[str, Any] | None = None
                    ) -> ModelBench:
    """Build ``spec`` with random weights on ``device``, measure, and compare with estimates."""
    from whichgpu.bench.decoder import Decoder
    from whichgpu.bench.kernels import Device
    from whichgpu.bench.run import Silent

    check_buildable(spec)
    rep = reporter or Silent()
    dev = Device(torch, device)
    s = settings
    rep.start(3 + (2 if s.train else 0))
    rep.step(f"build {spec.name} with random weights")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[s.dtype]
    _reset_peak(torch, dev)
    model = Decoder(spec, device=dev.device, dtype=dtype).eval()
    params = sum(p.numel() for p in model.parameters())
    rep.step(f"prefill and decode, batch {s.batch}, {s.prompt_tokens} + {s.output_tokens} "
             "tokens")
    measured = _measure_inference(torch, model, dev, s)
    peak = _peak(torch, dev)
    if peak:
        measured["inference_peak_bytes"] = peak
    del model
    if s.train:
        rep.step(f"training step, batch {s.batch} x {s.train_seq} tokens")
        _reset_peak(torch, dev)
        measured |= _measure_training(torch, spec, dev, s)
        peak = _peak(torch, dev)
        if peak:
            measured["train_peak_bytes"] = peak
        _reset_peak(torch, dev)
    rep.step("compare with the estimates")
    cond = dict(conditions or {})
    cond_text = "; ".join(f"{k} {v}" for k, v in cond.items() if v) + (
        f"; whichgpu bench model: random weights, eager PyTorch, SDPA attention, greedy decode, "
        f"median of {s.repeat} runs")
    rows = validation_rows(spec, s, gpu_id, measured, cond_text) if gpu_id else {}
    lines = compare_lines(rows, measured, gpu_id, profile) if gpu_id else [
        Line(name, "tokens/s", measured[metric])
        for metric, (name, _) in _SPEED_LINES.items() if metric in measured]
    extra = measured.get("decode_tokens_per_s_aggregate")
    if extra and s.batch > 1:
        lines.append(Line("decode_tokens_per_s (all sequences)", "tokens/s", extra))
    rep.done()
    return ModelBench(spec, s, str(dev.device), gpu_id, params, lines, cond, rows)


# ------------------------------------------------------------------ appending

SPEED_HEADER = ("id", "category", "model", "task", "quant", "engine", "gpu", "gpu_count", "tp",
                "batch", "prompt_tokens", "output_tokens", "seq_len", "resolution", "frames",
                "steps", "cfg", "metric", "value", "source_url", "conditions")
MEMORY_HEADER = ("id", "category", "model", "task", "quant", "engine", "gpu", "gpu_count",
                 "context", "batch", "seq_len", "kv_dtype", "optimizer",
                 "gradient_checkpointing", "lora_rank", "lora_targets", "resolution", "frames",
                 "measured", "value", "unit", "bytes", "source_url", "conditions", "settings")


def append_rows(folder: str, rows: dict[str, list[dict[str, str]]]) -> list[str]:
    """Append rows to ``folder``/speed.csv and memory.csv (created with their header if new).

    A row whose id is already in the file is not written twice. Returns the ids written.
    """
    import csv
    from pathlib import Path

    from whichgpu.errors import DataError

    written = []
    base = Path(folder)
    if not base.is_dir():
        raise InputError(f"--append {folder}: not a folder (give the folder that holds "
                         "speed.csv and memory.csv, e.g. validation)")
    header: tuple[str, ...]
    for name, header in (("speed", SPEED_HEADER), ("memory", MEMORY_HEADER)):
        new = rows.get(name) or []
        if not new:
            continue
        path = base / f"{name}.csv"
        existing: set[str] = set()
        if path.exists():
            with path.open(newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                found: tuple[str, ...] = tuple(reader.fieldnames or ())
                header = found
                existing = {r.get("id", "") for r in reader}
            unknown = {k for r in new for k in r} - set(header)
            if unknown:
                raise DataError(path, f"has no column(s) {', '.join(sorted(unknown))}")
        else:
            path.write_text(",".join(header) + "\n", "utf-8")
        with path.open("a", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(header), restval="", lineterminator="\n")
            for r in new:
                if r["id"] in existing:
                    continue
                w.writerow(r)
                written.append(r["id"])
    return written
