"""Speed second (S23, S25, S28): how fast a workload that fits runs on a GPU configuration."""

from __future__ import annotations

from typing import Any

from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate.speed.result import SpeedEstimate, band
from whichgpu.estimate.workload import Workload

DEFAULT_PROMPT = 512
DEFAULT_OUTPUT = 256


class DoesNotFit(InputError):
    """The workload does not fit in this GPU configuration: no speed is given."""

    def __init__(self, gpu: GPU, count: int, needed: int, usable: int) -> None:
        self.gpu, self.count, self.needed, self.usable = gpu, count, needed, usable
        where = gpu.id if count == 1 else f"{count} x {gpu.id}"
        super().__init__(f"does not fit on {where}: needs {needed / 1e9:.1f} GB per GPU, "
                         f"{gpu.id} has {usable / 1e9:.1f} GB usable")


def estimate_speed(w: Workload, gpu: GPU, count: int = 1, *, profile: Any | None = None,
                   check_fit: bool = True) -> SpeedEstimate:
    """Rates (low/typical/high) for ``w`` on ``count`` x ``gpu``; raises DoesNotFit if it won't."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import layout_for
    from whichgpu.estimate.speed.hardware import hardware

    wl = layout_for(w, count)
    if check_fit:
        mem = estimate_memory(wl).total_bytes
        if mem > gpu.usable_memory_bytes:
            raise DoesNotFit(gpu, count, mem, gpu.usable_memory_bytes)
    hw = hardware(gpu, count, profile)
    if wl.is_diffusion:
        return _diffusion(wl, hw)
    if wl.is_training:
        return _training(wl, hw)
    return _inference(wl, hw)


def _confidence(w: Workload, hw, base: str) -> str:
    levels = ["low", "medium", "high"]
    i = levels.index(base)
    if w.model.approximate:
        i = 0
    if hw.link.kind == "pcie_host":
        i = min(i, 0)
    if hw.calibration:
        i = min(i + 1, 2)
    return levels[i]


def _inference(w: Workload, hw) -> SpeedEstimate:
    from whichgpu.estimate.speed.hardware import compute_precision
    from whichgpu.estimate.speed.llm import decode_step, prefill_time

    prompt = w.prompt_tokens or DEFAULT_PROMPT
    output = w.output_tokens or DEFAULT_OUTPUT
    batch = w.batch
    ctx = prompt + output // 2
    step1 = decode_step(w, hw, 1, ctx)
    step = decode_step(w, hw, batch, ctx) if batch > 1 else step1
    pre1 = prefill_time(w, hw, 1, prompt)
    pre = prefill_time(w, hw, batch, prompt) if batch > 1 else pre1
    wave = pre.seconds + output * step.seconds  # one batch of requests start to finish
    serving = batch * output / wave
    engine = w.engine_name
    base = "high" if engine in ("llamacpp", "vllm", "trtllm", "exllamav2") else "medium"
    conf = _confidence(w, hw, base)
    precision, why = compute_precision(hw.gpu, w.quant_format, engine)
    rates = {
        "decode_tokens_per_s": band(batch / step.seconds, conf),
        "decode_tokens_per_s_per_sequence": band(1 / step.seconds, conf),
        "prefill_tokens_per_s": band(batch * prompt / pre.seconds,
                                     "medium" if conf == "high" else conf),
        "output_tokens_per_s": band(serving, "medium" if conf == "high" else conf),
    }
    times = {
        "ttft_s": band(pre1.seconds, "medium" if conf == "high" else conf, inverse=True),
        "request_s": band(pre1.seconds + output * step1.seconds, conf, inverse=True),
    }
    assumptions = [
        f"prompt {prompt:,} tokens, output {output:,} tokens, {batch} concurrent sequence(s)",
        f"engine {engine}; {why}",
        "decode rates at the average context of a generation (prompt + output/2)",
    ]
    return SpeedEstimate(
        gpu=hw.gpu.id, count=hw.count, task=w.task, engine=engine, precision=precision,
        bound=step.bound, confidence=conf, rates=rates, times=times,
        scalars={"batch": batch, "prompt_tokens": prompt, "output_tokens": output,
                 "tp": w.tp_degree, "link": hw.link.kind},
        components=step.components + pre.components, assumptions=tuple(assumptions),
        calibration=hw.calibration)


def _training(w: Workload, hw) -> SpeedEstimate:
    from whichgpu.estimate.speed.training import training_step

    r = training_step(w, hw)
    base = "medium" if w.task in ("full-ft", "pretrain") else "low"
    conf = _confidence(w, hw, base)
    assumptions = [
        f"sequence length {w.seq_len:,}, micro-batch {w.batch} per data-parallel replica",
        f"compute at {r['precision']} ({r['why']})",
        f"MFU {r['mfu_assumed']:.2f} before communication (constant training_mfu for "
        f"{w.task}, scaled for model size)",
    ]
    if w.gpus > 1:
        assumptions.append(f"layout tp={w.tp_degree} pp={w.pp_degree} dp={w.dp_degree} "
                           f"ZeRO-{w.zero_stage}, link {hw.link.kind}")
    if r["accumulation"] > 1:
        assumptions.append(f"the link is slower than the compute: {r['accumulation']} "
                           "micro-batches of gradient accumulation per synchronisation")
    return SpeedEstimate(
        gpu=hw.gpu.id, count=hw.count, task=w.task, engine="pytorch", precision=r["precision"],
        bound=r["bound"], confidence=conf,
        rates={"tokens_per_s": band(r["tokens_per_s"], conf)},
        times={"step_s": band(r["step_s"], conf, inverse=True)},
        scalars={"mfu": round(r["mfu"], 4), "mfu_assumed": round(r["mfu_assumed"], 4),
                 "tokens_per_step": r["tokens_per_step"], "link": hw.link.kind},
        components=r["components"], assumptions=tuple(assumptions), calibration=hw.calibration)


def _diffusion(w: Workload, hw) -> SpeedEstimate:
    from whichgpu.estimate.speed.diffusion import diffusion_run

    if w.task == "image-lora":
        return _image_lora(w, hw)
    r = diffusion_run(w, hw)
    conf = _confidence(w, hw, "medium")
    video = w.model.diffusion.is_video
    per_run = r["seconds_per_run"]
    pipelines = 1 if video else hw.count
    rates = {"it_per_s": band(r["it_per_s"], conf)}
    times = {}
    if video:
        times["seconds_per_video"] = band(per_run, conf, inverse=True)
        rates["videos_per_hour"] = band(3600 / per_run, conf)
    else:
        rates["images_per_min"] = band(60 * w.batch * pipelines / per_run, conf)
        times["seconds_per_image"] = band(per_run / w.batch, conf, inverse=True)
    width, height = w.image_size
    assumptions = [f"{width}x{height}, {r['steps']} steps, {w.cfg_passes} pass(es) per step, "
                   f"batch {w.batch}" + (f", {w.video_frames} frames" if video else ""),
                   f"compute at {r['precision']} ({r['why']})"]
    if hw.count > 1:
        assumptions.append("one pipeline per GPU (images)" if not video else
                           "sequence parallelism across GPUs (video)")
    return SpeedEstimate(
        gpu=hw.gpu.id, count=hw.count, task=w.task, engine=w.engine_name,
        precision=r["precision"], bound=r["bound"], confidence=conf, rates=rates, times=times,
        scalars={"steps": r["steps"], "tokens": r["tokens"]}, components=r["components"],
        assumptions=tuple(assumptions), calibration=hw.calibration)


def _image_lora(w: Workload, hw) -> SpeedEstimate:
    """LoRA training of a denoiser: 3 passes' worth of FLOPs per step (forward + backward)."""
    from whichgpu.estimate.constants import per_key
    from whichgpu.estimate.speed.diffusion import pass_flops
    from whichgpu.estimate.speed.hardware import compute_precision
    from whichgpu.estimate.speed.result import Component

    precision, why = compute_precision(hw.gpu, w.quant_format, "transformers", training=True)
    peak = hw.peak(precision) or hw.peak("fp16")
    flops, tokens, formula = pass_flops(w)
    factor = 3 + (1 if w.uses_checkpointing else 0)  # fwd + bwd(2x) (+ recompute)
    mfu = per_key("training_mfu", "image-lora")
    step = factor * flops * w.batch / (hw.count * peak * mfu)
    conf = _confidence(w, hw, "low")
    return SpeedEstimate(
        gpu=hw.gpu.id, count=hw.count, task=w.task, engine="pytorch", precision=precision,
        bound="compute", confidence=conf,
        rates={"steps_per_s": band(1 / step, conf)},
        times={"step_s": band(step, conf, inverse=True)},
        scalars={"mfu_assumed": mfu, "tokens": tokens},
        components=(Component("step", step, f"{factor} x ({formula}) x batch {w.batch}"),),
        assumptions=(f"LoRA step = {factor} denoiser passes of FLOPs at MFU {mfu}",
                     f"compute at {precision} ({why})"),
        calibration=hw.calibration)


__all__ = ["DoesNotFit", "SpeedEstimate", "estimate_speed"]
