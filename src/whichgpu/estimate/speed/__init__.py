"""Speed second (S23, S25, S28): how fast a workload that fits runs on a GPU configuration."""

from __future__ import annotations

import dataclasses
from typing import Any

from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate.frameworks import Framework
from whichgpu.estimate.memo import by_identity, by_settings
from whichgpu.estimate.speed.lengths import inference_lengths
from whichgpu.estimate.speed.result import (
    Confidence,
    Later,
    SpeedEstimate,
    band,
    confidence_for,
)
from whichgpu.estimate.workload import Workload, layout_note
from whichgpu.messages import Field, msg
from whichgpu.units import Range
from whichgpu.vocabulary import Engine, Task

SATURATION_CAP = 4096  # sequences: the largest batch the saturation search considers


class DoesNotFit(InputError):
    """The workload does not fit in this GPU configuration: no speed is given."""

    def __init__(self, gpu: GPU, count: int, needed: int, usable: int) -> None:
        self.gpu, self.count, self.needed, self.usable = gpu, count, needed, usable
        where = gpu.id if count == 1 else f"{count} x {gpu.id}"
        super().__init__(f"does not fit on {where}: needs {needed / 1e9:.1f} GB per GPU, "
                         f"{gpu.id} has {usable / 1e9:.1f} GB usable")


def estimate_speed(w: Workload, gpu: GPU, count: int = 1, *, profile: Any | None = None,
                   check_fit: bool = True, framework: Framework | None = None,
                   compile: bool = False, saturation: bool = True) -> SpeedEstimate:
    """Rates (low/typical/high) for ``w`` on ``count`` x ``gpu``; raises DoesNotFit if it won't.

    ``framework`` describes a training run (MFU by framework: pytorch, torchtitan,
    llm-foundry, torchtune, megatron, transformers, axolotl, unsloth); ``compile`` says it runs
    under torch.compile (training: torch_compile_factor; diffusion: CUDA graphs remove the
    per-step launch overhead). ``saturation=False`` skips the serving-saturation search
    (about 3 ms) where only the rates are wanted.
    """
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import layout_for
    from whichgpu.estimate.platform import engine_for
    from whichgpu.estimate.speed.hardware import hardware
    from whichgpu.estimate.speed.training import check_framework

    # a diffusion LoRA trainer (diffusion_trainers.py) sets residency, not the LLM MFU profile
    framework = None if w.diffusion_trainer else framework or w.framework
    if framework is not None:
        check_framework(framework)
    if gpu.user_spec:
        from whichgpu.catalog.user_gpu import require_speed_figures

        require_speed_figures(gpu, w)
    layout_note = None
    if w.is_diffusion:  # fix9: a split only another engine runs, run by it (said)
        from whichgpu.estimate.diffusion_parallel import engine_for_layout

        w, layout_note = engine_for_layout(w)
    w, engine_note = engine_for(w, gpu)  # a card that cannot run the engine: refused or swapped
    lengths = None
    if not w.is_training and not w.is_diffusion:
        lengths = inference_lengths(w)
        prompt, output, _ = lengths
        # the memory check holds what the rates assume: prompt + output tokens per sequence
        held = max(w.context or 0, prompt + output)
        w = w.with_(prompt_tokens=prompt, output_tokens=output, context=held)
    wl = layout_for(w, count)
    fit_note = None
    if check_fit:
        mem = estimate_memory(wl).total_bytes
        if mem > gpu.usable_memory_bytes and wl.is_diffusion:
            # what the engine does by default on this card (offload, a split over the GPUs)
            from whichgpu.estimate.memory.diffusion_fit import fit_on

            wl, mem, fit_note = fit_on(wl, w, gpu)
        if mem > gpu.usable_memory_bytes:
            raise DoesNotFit(gpu, count, mem, gpu.usable_memory_bytes)
    runs = getattr(profile, "measured_runs", None)  # a store's measured runs (measured.py)
    # the hardware view reads the profile under the runs (none: the same path as no runs)
    hw = hardware(gpu, count, getattr(profile, "base", profile) if runs else profile,
                  wl.interconnect, wl.gpus_per_node)
    if wl.is_diffusion:
        est = (_image_lora(wl, hw, framework, compile) if wl.task == Task.IMAGE_LORA
               else _diffusion(wl, hw, compile))
    elif wl.is_training:
        est = _training(wl, hw, framework, compile)
    else:
        assert lengths is not None  # set above for every inference workload
        est = _inference(wl, hw, lengths, saturation)
        if wl.lora_adapters:  # adapters computed beside the base (estimate/multi_lora.py)
            from whichgpu.estimate.multi_lora import apply_cost

            est = apply_cost(est)
    notes = tuple(n for n in (layout_note, engine_note, fit_note) if n)
    if notes:
        said = est.assumptions  # still words to be made (Later): made when read
        est = dataclasses.replace(est, assumptions=Later(lambda: (*notes, *said)))
    if runs is not None and profile is not None:  # the store's runs move it (WithRuns)
        est = profile.apply_runs(est, wl, gpu.id, count)
    return est


def with_total(est: SpeedEstimate, *, steps: int | None = None,
               tokens: float | None = None) -> SpeedEstimate:
    """A training estimate with the time for ``steps`` optimizer steps or ``tokens`` tokens.

    Adds ``total_s`` (a range: the step time's range times the count) and says what it counts.
    """
    if steps is None and tokens is None:
        return est
    if steps is not None and tokens is not None:
        raise InputError(msg("flags.not_both", "give {a} or {b}, not both", a=Field("steps"),
                             b=Field("train_tokens")))
    if "step_s" not in est.times:
        raise InputError(msg("speed.totals_training", "{steps} and {tokens} are for training "
                             "tasks (lora, qlora, full-ft, pretrain, image-lora)",
                             steps=Field("steps"), tokens=Field("train_tokens")))
    if steps is not None:
        if steps < 1:
            raise InputError(msg("bound.steps", "steps must be >= 1, got {v}", v=steps))
        total = est.times["step_s"].scale(steps)
        what = f"{steps:,} optimizer steps"
        scalars: dict[str, float] = {"train_steps": steps}
    else:
        if not tokens or tokens <= 0:
            raise InputError(msg("speed.train_tokens_positive", "{field} must be positive, got "
                                 "{v}", field=Field("train_tokens"), v=str(tokens)))
        if "tokens_per_s" not in est.rates:
            raise InputError(msg("speed.train_tokens_llm", "{tokens} is for LLM training; use "
                                 "{steps} for image-lora", tokens=Field("train_tokens"),
                                 steps=Field("steps")))
        total = est.rates["tokens_per_s"].inverse(tokens)
        what = f"{tokens:,.0f} training tokens"
        scalars = {"train_tokens": tokens,
                   "train_steps": int(-(-tokens // est.scalars["tokens_per_step"]))}
    return dataclasses.replace(
        est, times={**est.times, "total_s": total}, scalars={**est.scalars, **scalars},
        assumptions=(*est.assumptions, f"total time for {what} at the step time above "
                                            "(no evaluation, checkpointing or start-up)"))


# ------------------------------------------------------------------ LLM inference

def _inference(w: Workload, hw, lengths: tuple[int, int, str],
               with_saturation: bool = True) -> SpeedEstimate:
    from whichgpu.estimate.speed.llm import decode_step, kernel_notes, prefill_time

    prompt, output, why_len = lengths
    batch = w.batch
    ctx = prompt + output // 2
    spec1 = spec = None
    if w.speculative is not None:  # a drafter: verify + draft steps over the tokens they yield
        from whichgpu.estimate.speed.speculative import speculative_step

        spec1 = speculative_step(w, hw, 1, ctx)
        spec = speculative_step(w, hw, batch, ctx) if batch > 1 else spec1
        step1, step = spec1.effective(), spec.effective()
    else:
        step1 = decode_step(w, hw, 1, ctx)
        step = decode_step(w, hw, batch, ctx) if batch > 1 else step1
    pre1 = prefill_time(w, hw, 1, prompt)
    pre = prefill_time(w, hw, batch, prompt) if batch > 1 else pre1
    wave = pre.seconds + output * step.seconds  # one batch of requests start to finish
    serving = batch * output / wave
    served = _continuous_batching(w, hw, batch)
    served_speedup = None
    if served is not None:  # vLLM, SGLang, TensorRT-LLM: the continuous-batching model
        serving = served.output_tokens_per_s
        if w.speculative is not None:  # its decode batch, sped up (or slowed) by the drafter
            from whichgpu.estimate.speed.speculative import speculative_step

            served_speedup = speculative_step(
                w, hw, max(1, round(served.decode_batch)), ctx).speedup()
            serving *= served_speedup
    engine = w.engine_name
    conf, key, precision, why = (_inference_terms(w, hw) if hw.gpu.user_spec
                                 else _inference_terms_kept(w, hw))
    rates = {
        "decode_tokens_per_s": _accepted(band(batch / step.seconds, conf["decode"][2],
                                              category=key["decode"]), spec),
        "decode_tokens_per_s_per_sequence": _accepted(band(1 / step.seconds,
                                                           conf["decode"][2],
                                                           category=key["decode"]), spec),
        "prefill_tokens_per_s": band(batch * prompt / pre.seconds, conf["prefill"][2],
                                     category=key["prefill"]),
        "output_tokens_per_s": _accepted(band(serving, conf["serving"][2],
                                              category=key["serving"]), spec),
    }
    times = {
        "ttft_s": band(pre1.seconds, conf["prefill"][2], inverse=True, category=key["prefill"]),
        "request_s": _accepted(band(pre1.seconds + output * step1.seconds, conf["decode"][2],
                                    inverse=True, category=key["decode"]), spec1, time=True),
    }
    sat = saturation(w, hw, prompt, output, conf["serving"][2]) if with_saturation else None
    if sat and served is not None:
        sat["output_tokens_per_s"] = band(_continuous_batching(w, hw, sat["batch"])
                                          .output_tokens_per_s, conf["serving"][2],
                                          category=key["serving"])
    def words() -> list[str]:  # the assumptions in words, made when read (Later)
        assumptions = [
            f"prompt {prompt:,} tokens, output {output:,} tokens ({why_len}), {batch} concurrent "
            "sequence(s); memory checked at the same lengths",
            f"engine {engine}; {why}",
            *kernel_notes(w, hw)[1],
            f"decode rates at the average context of a generation (prompt + output/2 = {ctx:,} "
            "tokens)",
            _confidence_note(conf["decode"]),
        ]
        if (layout := layout_note(w)) is not None:
            assumptions.append(layout)
        if spec1 is not None and spec is not None and w.speculative is not None:
            assumptions.append(_speculative_note(w, spec1, spec, batch, served_speedup))
        if served is not None:
            assumptions.append(f"output tokens/s: {batch} users kept in flight under continuous "
                               "batching (estimate/speed/serving.py; at most "
                               f"{served.decode_batch:.0f} decoding at once)")
        return assumptions

    warnings = []
    if spec is not None and spec.speedup() < 1:
        warnings.append(msg("speculative.slower", "at {batch} sequences the drafter slows "
                            "decoding down ({speedup:.2f}x): the verify step is compute-bound, "
                            "so drafted tokens cost more than they save", batch=batch,
                            speedup=spec.speedup()))
    if sat and sat["kv_limited_batch"] and batch > sat["kv_limited_batch"]:
        warnings.append(msg("speed.kv_full", "{batch} sequences of {tokens:,} tokens need more "
                            "KV cache than fits: at most {most} at once", batch=batch,
                            tokens=prompt + output, most=sat["kv_limited_batch"]))
    across: dict[str, Any] = {}
    if hw.servers > 1 and hw.fabric.kind == "network":
        # what the link between servers costs a decode step: against the same GPUs in one
        # server (tensor-parallel all-reduces and pipeline hops over the server's own link)
        from whichgpu.estimate.interconnect import network_effect

        one = dataclasses.replace(hw, per_server=hw.count, fabric=hw.link)
        added = step.seconds - decode_step(w, one, batch, ctx).seconds
        said, across["interconnect"] = network_effect(hw, max(added, 0.0), step.seconds,
                                                      "decode step")
        warnings.append(said)
    return SpeedEstimate(
        gpu=hw.gpu.id, count=hw.count, task=w.task, engine=engine, precision=precision,
        bound=step.bound, confidence=conf["decode"][0], rates=rates, times=times,
        scalars={"batch": batch, "prompt_tokens": prompt, "output_tokens": output,
                 "decode_context_tokens": ctx, "tp": w.tp_degree, "pp": w.pp_degree,
                 "link": hw.link.kind},
        components=Later(lambda: step.components + pre.components), assumptions=Later(words),
        warnings=tuple(warnings), calibration=hw.calibration,
        details={**({"saturation": sat} if sat else {}),
                 **({"speculative": _speculative_json(w, spec1, spec, served_speedup)}
                    if spec1 is not None and spec is not None else {}),
                 "confidence_by_category": {c: v[0] for c, v in conf.items()}, **across})


def _inference_terms(w: Workload, hw) -> tuple[dict[str, Confidence], dict[str, str], str, str]:
    """(the confidence of each category, its range group, the precision the matmuls run at,
    why): what an LLM inference estimate says of its configuration, whatever its batch."""
    from whichgpu.estimate.speed.hardware import compute_precision
    from whichgpu.estimate.speed.llm import kernel_precision

    engine = w.engine_name
    conf = {c: confidence_for(c, w, hw, engine) for c in ("decode", "prefill", "serving")}
    key = {c: v.band_key for c, v in conf.items()}  # the range group of each category
    precision, why = compute_precision(hw.gpu, w.quant_format, engine)
    if (by_kernel := kernel_precision(w, hw)) is not None:  # its words: in the assumptions
        precision, why = by_kernel, "the kernel paths below"
    return conf, key, precision, why


# _inference_terms once per configuration (by identity, then by every setting but the batch:
# estimate/memo.py); not for a card the user described, whose confidence confidence_for does
# not remember either (it compares the card with its nearest measured relative)
_inference_terms_kept = by_identity(identities=2)(by_settings()(_inference_terms))


def _accepted(r: Range, spec: Any, time: bool = False) -> Range:
    """A decode range widened by the drafter's acceptance range (low acceptance, fewer
    tokens per step; high, more); unchanged without a drafter."""
    if spec is None:
        return r
    lo, typ, hi = spec.tokens
    down, up = lo / typ, hi / typ
    if time:
        return Range(r.low / up, r.typical, r.high / down)
    return Range(r.low * down, r.typical, r.high * up)


def _speculative_note(w: Workload, spec1: Any, spec: Any, batch: int,
                      served_speedup: float | None) -> str:
    s = w.speculative
    assert s is not None
    a_lo, a_typ, a_hi = spec1.alpha
    text = (f"{s.describe()}: {spec1.tokens[1]:.2f} tokens per verify step at an acceptance "
            f"of {a_typ:.2f} per drafted token (range {a_lo:.2f}-{a_hi:.2f}, "
            f"estimate/data/speed_constants.toml); decode x{spec1.speedup():.2f} at 1 sequence")
    if batch > 1:
        text += f", x{spec.speedup():.2f} at {batch}"
    if served_speedup is not None:
        text += f"; output tokens/s x{served_speedup:.2f} at the serving decode batch"
    return text + "; prefill and time to first token unchanged"


def _speculative_json(w: Workload, spec1: Any, spec: Any,
                      served_speedup: float | None) -> dict[str, Any]:
    s = w.speculative
    assert s is not None
    return {**s.to_json(), "acceptance": list(spec1.alpha),
            "tokens_per_step": list(spec1.tokens),
            "speedup_batch_1": round(spec1.speedup(), 3),
            "speedup_at_batch": round(spec.speedup(), 3),
            "speedup_serving": round(served_speedup, 3) if served_speedup else None,
            "draft_s_per_step": spec1.draft_s, "verify_s_per_step": spec1.verify_s}


def _continuous_batching(w: Workload, hw, batch: int):
    """Where ``batch`` users in a closed loop settle under a serving engine's continuous
    batching (estimate/speed/serving.py); None for the other engines."""
    from whichgpu.estimate.speed.serving import ServingModel
    from whichgpu.estimate.speed.serving_engine import SERVING_ENGINES

    if w.engine_name not in SERVING_ENGINES:
        return None
    try:
        return ServingModel(w, hw.gpu, hardware_view=hw).at_concurrency(max(batch, 1),
                                                                        utilisation=False)
    except InputError:
        return None  # no KV room at all: the memory check says so


def saturation(w: Workload, hw, prompt: int, output: int, confidence: str) -> dict[str, Any]:
    """Where batched serving stops scaling: the batch at which a decode step turns
    compute-bound, and the most sequences of prompt + output tokens the KV cache holds.

    ``compute_bound_batch`` is None when the step never turns compute-bound below
    SATURATION_CAP sequences (long contexts: the KV read grows as fast as the compute).
    """
    from whichgpu.estimate.memory.fit import max_concurrency
    from whichgpu.estimate.speed.llm import decode_step, prefill_time

    ctx = prompt + output // 2

    def compute_bound(b: int) -> bool:
        parts = decode_step(w, hw, b, ctx).parts
        return parts["compute"] >= parts["memory-bandwidth"]

    compute_batch = None
    b = 1
    while b <= SATURATION_CAP:
        if compute_bound(b):
            lo, hi = b // 2, b
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if compute_bound(mid) else (mid, hi)
            compute_batch = hi
            break
        b *= 2
    kv_batch = max_concurrency(w.with_(batch=1), hw.gpu, hw.count, limit=SATURATION_CAP)
    candidates = [x for x in (compute_batch, kv_batch) if x]
    at = min(candidates) if candidates else 1
    limited_by = ("kv-memory" if kv_batch and (compute_batch is None or kv_batch <= compute_batch)
                  else "compute")
    step = decode_step(w, hw, at, ctx)
    pre = prefill_time(w, hw, at, prompt)
    rate = at * output / (pre.seconds + output * step.seconds)
    return {"compute_bound_batch": compute_batch, "kv_limited_batch": kv_batch,
            "batch": at, "limited_by": limited_by,
            "output_tokens_per_s": band(rate, confidence, category="serving"),
            "search_cap": SATURATION_CAP}


def _confidence_note(conf: Confidence) -> str:
    return f"confidence {conf[0]}: {conf[1]}"


# ------------------------------------------------------------------ training

def _training(w: Workload, hw, framework: Framework | None, compile_: bool) -> SpeedEstimate:
    from whichgpu.estimate.speed.training import check_framework, training_step

    fw = check_framework(framework)
    r = training_step(w, hw, fw, compile_)
    conf = confidence_for("training", w, hw, fw)
    level = conf[2]
    assumptions = [
        f"sequence length {w.seq_len:,}, micro-batch {w.batch} per data-parallel replica",
        f"compute at {r['precision']} ({r['why']})",
        f"MFU {r['mfu_assumed']:.3f} before communication: {r['mfu_why']}",
        _confidence_note(conf),
    ]
    warnings = []
    if w.gpus > 1:
        assumptions.append(f"layout tp={w.tp_degree} pp={w.pp_degree} dp={w.dp_degree} "
                           f"ZeRO-{w.zero_stage}, link {' + '.join(r['link'].kinds)}")
    if r["accumulation"] > 1:
        warnings.append(msg(
            "speed.accumulation", "the {link} link is slower than the compute: this estimate "
            "accumulates gradients over {n} micro-batches per synchronisation, so each optimizer "
            "step sees {n}x the batch you asked for ({tokens:,} tokens); without accumulation "
            "it would run slower", link=r["link"].kind, n=r["accumulation"],
            tokens=r["tokens_per_step"]))
    details = {}
    if hw.servers > 1 and hw.fabric.kind == "network":
        from whichgpu.estimate.interconnect import network_effect

        said, details["interconnect"] = network_effect(hw, r["network_s"], r["step_s"])
        warnings.append(said)
    return SpeedEstimate(
        gpu=hw.gpu.id, count=hw.count, task=w.task, engine=fw, precision=r["precision"],
        bound=r["bound"], confidence=conf[0],
        rates={"tokens_per_s": band(r["tokens_per_s"], level, category=conf.band_key)},
        times={"step_s": band(r["step_s"], level, inverse=True, category=conf.band_key)},
        scalars={"mfu": round(r["mfu"], 4), "mfu_assumed": round(r["mfu_assumed"], 4),
                 "tokens_per_step": r["tokens_per_step"], "link": hw.link.kind,
                 "gradient_accumulation": r["accumulation"], "framework": fw,
                 "compile": bool(compile_)},
        components=r["components"], assumptions=tuple(assumptions), warnings=tuple(warnings),
        calibration=hw.calibration, details=details)


# ------------------------------------------------------------------ diffusion

def _diffusion(w: Workload, hw, compiled: bool = False) -> SpeedEstimate:
    from whichgpu.estimate.speed.diffusion import diffusion_run, group_alternative

    r = diffusion_run(w, hw, compiled)
    video = w.diffusion_spec.is_video
    category = "video" if video else "diffusion"
    conf = confidence_for(category, w, hw, w.engine_name)
    level = conf[2]
    per_run = r["seconds_per_run"]
    pipelines = r["layout"].replicas
    rates = {"it_per_s": band(r["it_per_s"], level, category=conf.band_key)}
    times = {}
    if video:
        times["seconds_per_video"] = band(per_run, level, inverse=True, category=conf.band_key)
        # one video per pipeline at a time (ComfyUI: an instance per GPU)
        rates["videos_per_hour"] = band(3600 * pipelines / per_run, level,
                                        category=conf.band_key)
    else:
        rates["images_per_min"] = band(60 * w.batch * pipelines / per_run, level,
                                       category=conf.band_key)
        times["seconds_per_image"] = band(per_run / w.batch, level, inverse=True,
                                          category=conf.band_key)
    width, height = w.image_size
    assumptions = [f"{width}x{height}, {r['steps']} steps, {w.cfg_passes} pass(es) per step, "
                   f"batch {w.batch}" + (f", {w.video_frames} frames" if video else ""),
                   f"compute at {r['precision']} ({r['why']})", _confidence_note(conf),
                   f"memory: {r['residency']}"]
    # issue 29: where diffusers streams the weights by sequential offload, group offload's time
    group = group_alternative(w, hw, compiled, per_run)
    if group:
        assumptions.append(group)
    if r["attention_share"] >= 0.5:  # long sequences: attention grows with tokens squared
        assumptions.append(f"attention over {r['tokens']:,} tokens is {r['attention_share']:.0%} "
                           "of each denoising step: time grows with the square of the frames "
                           "x resolution")
    if compiled:
        assumptions.append("compiled with CUDA graphs (torch.compile max-autotune, TensorRT): "
                           "no per-step launch overhead")
    if hw.count > 1:
        assumptions.append(
            f"sequence parallelism across GPUs at {r['sequence_parallel_efficiency']:.0%} "
            "efficiency (video)" if r["layout"].measured_context_parallel else
            f"layout: {r['layout'].describe()}"
            + (f", link {hw.link.kind}" if r["layout"].per_pipeline > 1 else ""))
    return SpeedEstimate(
        gpu=hw.gpu.id, count=hw.count, task=w.task, engine=w.engine_name,
        precision=r["precision"], bound=r["bound"], confidence=conf[0], rates=rates,
        times=times, scalars={"steps": r["steps"], "tokens": r["tokens"],
                                         **{f"layout_{k}": v for k, v in
                                            r["layout"].to_json().items()}},
        components=r["components"], assumptions=tuple(assumptions),
        calibration=hw.calibration)


def _image_lora(w: Workload, hw, framework: Framework | None, compile_: bool) -> SpeedEstimate:
    """LoRA training of a denoiser: forward + input-gradient backward (+ recompute) of the
    denoiser's pass FLOPs per sample, at the LoRA training MFU of this GPU and framework."""
    from whichgpu.estimate.constants import speed_value
    from whichgpu.estimate.speed.diffusion import pass_flops_split
    from whichgpu.estimate.speed.hardware import compute_precision
    from whichgpu.estimate.speed.result import Component
    from whichgpu.estimate.speed.training import base_mfu, check_framework

    fw = check_framework(framework)
    precision, why = compute_precision(hw.gpu, w.quant_format, Engine.TRANSFORMERS,
                                      training=True)
    from whichgpu.estimate.speed.sustained import sustained_scale

    peak = (hw.peak(precision) or hw.peak("fp16")) * sustained_scale(hw.gpu)[0]
    lin, attn, tokens, formula = pass_flops_split(w)
    # As for an LLM's LoRA (training.py): the frozen linears cost a forward and an
    # input-gradient pass (no weight gradients), attention a forward and a full backward;
    # checkpointing adds one more forward of each
    ckpt = 1 if w.uses_checkpointing else 0
    factor = 2 + ckpt
    flops = lin * factor + attn * (3 + ckpt)
    den = w.diffusion_spec.component(w.diffusion_spec.denoiser)
    mfu, mfu_why = base_mfu(Task.IMAGE_LORA, hw, den.hidden_size or 0, fw, compile_,
                            denoiser=den.kind)
    dequant = 1.0
    if w.quant_format.linear_bits < 8:  # a 4-bit base (QLoRA-style): dequantized twice a step
        dequant = speed_value("qlora_dequant_factor")
        mfu_why += f", 4-bit base dequantization x1/{dequant:g}"
    step = flops * w.batch / (hw.count * peak * mfu) * dequant
    from whichgpu.estimate.speed.diffusion import block_swap_seconds

    swap, swap_why = block_swap_seconds(w, hw)  # the copies overlap the compute
    if swap > step:
        mfu_why += f"; {swap_why}: the copies bound the step"
    step = max(step, swap)
    conf = confidence_for("training", w, hw, fw)
    level = conf[2]
    return SpeedEstimate(
        gpu=hw.gpu.id, count=hw.count, task=w.task, engine=fw, precision=precision,
        bound="compute", confidence=conf[0],
        rates={"steps_per_s": band(1 / step, level, category=conf.band_key)},
        times={"step_s": band(step, level, inverse=True, category=conf.band_key)},
        scalars={"mfu_assumed": round(mfu, 4), "tokens": tokens, "framework": fw,
                 "compile": bool(compile_)},
        components=(Component("step", step, f"({formula}) with linears x {factor}, attention "
                                            f"x {3 + ckpt}, x batch {w.batch} / "
                                            f"({hw.count} x {peak / 1e12:,.0f} TFLOPS "
                                            f"{precision} x MFU {mfu:.2f})"),),
        assumptions=(f"LoRA step = the denoiser's linear FLOPs x {factor} (forward, "
                     "input-gradient backward" + (", recompute" if ckpt else "")
                     + f") and attention x {3 + ckpt}, at MFU {mfu:.3f}: {mfu_why}",
                     f"compute at {precision} ({why})", _confidence_note(conf)),
        calibration=hw.calibration)


__all__ = ["DoesNotFit", "SpeedEstimate", "Range", "estimate_speed", "inference_lengths",
           "saturation", "with_total"]
