"""The serving model's answers as the CLI, the REST API and the web give them
(``speed --max-throughput``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, msg

if TYPE_CHECKING:
    from whichgpu.estimate.speed.traffic import LengthRule, Lengths

_POLICY = {"mixed": "prefill inside the decode steps", "separate": "prefill in steps of its own"}


def max_throughput_answer(w: Workload, gpu: GPU, count: int = 1, *,
                          profile: Any = None) -> dict[str, Any]:
    """Output tokens/s of one replica of ``count`` x ``gpu`` at the largest batch that fits
    (low / typical / high), the batch, what bounds it, and the TTFT and TPOT there."""
    from whichgpu.estimate.speed.kernel_db import step_notes
    from whichgpu.estimate.speed.result import speed_family
    from whichgpu.estimate.speed.serving import ServingModel
    from whichgpu.estimate.speed.serving_bands import serving_range, wide_range_reasons
    from whichgpu.estimate.speed.serving_engine import SERVING_ENGINES

    if w.engine_name not in SERVING_ENGINES:
        raise InputError(msg("serving.max_throughput", "{field} is for serving engines: {flag} "
                             "vllm, sglang or trtllm (got {engine})",
                             field=Field("max_throughput"), flag=Field("engine"),
                             engine=w.engine_name))
    wl, need, where = _one_sequence_fits(w, gpu, count)
    sm = ServingModel(wl, gpu, profile=profile, lengths="mean")
    point = sm.max_throughput()
    family = speed_family(w.model)
    step_bound = sm.step_bound(point.decode_batch)
    bound = "compute" if step_bound == "compute" else sm.limited_by
    tput = serving_range(point.output_tokens_per_s, "throughput", family)
    ttft = serving_range(point.ttft_s, "ttft", family)
    tpot = serving_range(point.tpot_s, "tpot", family)
    raised = raised_cap(wl, gpu, sm, point.output_tokens_per_s, profile)  # fix9
    return {
        "gpu": gpu.id, "count": count, "where": where, "model": w.model.name,
        "engine": sm.config.to_json(), "prompt_tokens": sm.prompt,
        "output_tokens": sm.output, "tp": wl.tp_degree, "pp": wl.pp_degree,
        "throughput_tokens_per_s": tput.to_json(),
        "requests_per_s": tput.scale(1 / sm.output).to_json(),
        "batch": int(round(point.decode_batch)), "bound": bound, "limited_by": sm.limited_by,
        "step_bound": step_bound,
        "ttft_s": ttft.to_json(), "tpot_s": tpot.to_json(),
        "kv_capacity": sm.capacity.to_json(), "memory_bytes": need,
        **({"raised_cap": raised[0]} if raised else {}),
        "assumptions": [
            *([raised[1]] if raised else []),
            f"{sm.prompt:,} prompt + {sm.output:,} output tokens per request, kept in flight "
            f"as long as the engine admits them (a closed loop at {sm.limit:,} sequences)",
            f"{sm.config.engine} defaults ({sm.config.generation}): max_num_seqs "
            f"{sm.config.max_num_seqs:,}, {sm.config.token_budget:,} tokens per step, "
            f"{_POLICY[sm.config.policy]}, KV held at the {sm.config.reservation} length",
            "ranges: 80 % prediction intervals of published serving measurements "
            "(validation/serving.csv, leave-one-source-out)",
            # issue 30: a range over 5x wide says why
            *wide_range_reasons(family, {"throughput": tput, "ttft": ttft, "tpot": tpot}),
            *sm.config.notes,
            *step_notes(sm.steps),  # issue 28: which path timed the steps, when opted in
            "not modelled: speculative decoding, prefix-cache hits, preemption when the paged "
            "cache overflows",
        ],
    }


# ------------------------------------------------------------------ fix9: a raised cap

#: each serving engine's launch option for its cap on running sequences (vLLM
#: ``--max-num-seqs``, SGLang ``--max-running-requests``, TensorRT-LLM ``--max_batch_size``:
#: their server options' own names)
CAP_FLAG = {"vllm": "--max-num-seqs", "sglang": "--max-running-requests",
            "trtllm": "--max_batch_size"}


def raised_cap(w: Workload, gpu: GPU, sm: Any, typical: float,
               profile: Any = None) -> tuple[dict[str, Any], str] | None:
    """When the engine's default cap on running sequences, not the KV cache, bounds the
    batch: the throughput with the cap raised to what the KV cache holds, and the launch
    option that does it (the default is what an engine launched without it runs)."""
    from dataclasses import replace

    from whichgpu.estimate.speed.serving import ServingModel

    default, holds = sm.config.max_num_seqs, sm.capacity.sequences
    flag = CAP_FLAG.get(str(sm.config.engine))
    if sm.limited_by != "max-num-seqs" or holds <= default or flag is None:
        return None
    up = ServingModel(w, gpu, profile=profile, lengths="mean",
                      config=replace(sm.config, max_num_seqs=holds))
    got = up.max_throughput().output_tokens_per_s
    said = (f"the batch is held at {sm.config.engine}'s default cap of {default:,} running "
            f"sequences, not by the KV cache ({holds:,}): launched with {flag} {holds:,}, "
            f"about {got:,.0f} output tokens/s (typical, {got / typical - 1:+.0%}; bounded "
            f"then by {up.limited_by})")
    return {"flag": flag, "default": default, "raised_to": holds,
            "output_tokens_per_s_typical": round(got, 1), "limited_by": up.limited_by}, said


# ------------------------------------------------------------------ traffic (issue 28)

def traffic_answer(w: Workload, gpu: GPU, count: int, rate: float,
                   lengths: Lengths | LengthRule | None = None,
                   prefix_hit: float | None = None, *, profile: Any = None) -> dict[str, Any]:
    """One replica of ``count`` x ``gpu`` under Poisson arrivals at a request rate: its
    throughput and TTFT, TPOT, inter-token and end-to-end latency at p50/p90/p95/p99, from
    the step-by-step simulation (serving_sim.py) over 1,000 requests. ``lengths``: a
    histogram, or a rule over the job's mean lengths (None: fixed; answers/inputs/traffic.py
    reads the request's text)."""
    from whichgpu.estimate.speed.kernel_db import step_notes
    from whichgpu.estimate.speed.serving import ServingModel
    from whichgpu.estimate.speed.serving_engine import SERVING_ENGINES
    from whichgpu.estimate.speed.serving_sim import Arrival, Traffic, simulate
    from whichgpu.estimate.speed.traffic import lengths_for

    if w.engine_name not in SERVING_ENGINES:
        raise InputError(msg("serving.traffic_engines", "{field} is for serving engines: "
                             "{flag} vllm, sglang or trtllm (got {engine})",
                             field=Field("requests_per_s"), flag=Field("engine"),
                             engine=w.engine_name))
    wl, _, where = _one_sequence_fits(w, gpu, count)
    sm = ServingModel(wl, gpu, profile=profile, lengths="mean")
    traffic = Traffic(lengths_for(lengths, sm.prompt, sm.output), Arrival.POISSON, rate, 1000,
                      float(prefix_hit or 0.0))
    res = simulate(sm, traffic)
    most = sm.max_requests_per_s
    notes = []
    if rate >= most:
        notes.append(f"{rate:g} requests/s is at or above the {most:.3g} requests/s this "
                     "replica serves at most: the queue grows over the run, so the "
                     "latencies are those of a 1,000-request run, not a steady state")
    return {
        "traffic": traffic.describe(), "gpu": gpu.id, "count": count, "where": where,
        "model": w.model.name, "engine": sm.config.to_json(), "tp": wl.tp_degree,
        "requests_per_s_asked": rate, **res.to_json(),
        "max_requests_per_s": most, "utilisation": min(rate / most, 1.0) if most else None,
        "batch_limit": sm.limit, "limited_by": sm.limited_by, "notes": notes,
        "assumptions": [
            traffic.describe(),
            f"{sm.config.engine} defaults ({sm.config.generation}): max_num_seqs "
            f"{sm.config.max_num_seqs:,}, {sm.config.token_budget:,} tokens per step"
            + (" (chunked prefill)" if sm.config.chunked_prefill else "")
            + f", {_POLICY[sm.config.policy]}",
            "each step timed by the serving model (the mean model's step times); checked "
            "against published p50/p99 rows: python scripts/check_serving_traffic.py",
            *step_notes(sm.steps),  # issue 28: which path timed the steps, when opted in
            "not modelled: preemption when the KV cache overflows (admission waits instead), "
            "each request's own context in the KV read, speculative decoding",
        ],
    }


def _one_sequence_fits(w: Workload, gpu: GPU, count: int) -> tuple[Workload, int, str]:
    """``w`` at one sequence laid out on ``count`` x ``gpu``, its bytes per GPU and where it
    runs; refused when even that does not fit (GB = 10^9 bytes per GPU)."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import layout_for

    wl = layout_for(w.with_(batch=1), count) if count != w.gpus else w.with_(batch=1)
    need = estimate_memory(wl).total_bytes
    where = gpu.id if count == 1 else f"{count} x {gpu.id}"
    if need > gpu.usable_memory_bytes:
        raise InputError(msg("serving.no_fit", "does not fit on {where}: needs {need:.1f} GB "
                             "per GPU, {gpu} has {usable:.1f} GB usable", where=where,
                             need=need / 1e9, gpu=gpu.id, usable=gpu.usable_memory_bytes / 1e9))
    return wl, need, where
