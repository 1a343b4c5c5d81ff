"""Memory first (S27): the peak memory per GPU of a workload, as named, explained terms."""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter
from typing import NamedTuple

from whichgpu.estimate.memo import Table, enabled
from whichgpu.estimate.memory.terms import MemoryEstimate, MemoryTerm, ordered
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Message, msg, silent
from whichgpu.vocabulary import Task

# equal workloads get the same estimate: a recommendation asks for the same layouts on every
# GPU (the fit, the batch search, the changes that would make it fit). Keyed by the model's
# identity (a ModelSpec hashes slowly) and every other setting by value, notes included.
_ESTIMATES = Table(1024)
_SETTINGS = attrgetter(*(f.name for f in fields(Workload) if f.name != "model"))


def estimate_memory(w: Workload) -> MemoryEstimate:
    """Peak memory on each of ``w.gpus`` GPUs, term by term, with assumptions and warnings."""
    try:
        key = (id(w.model), _SETTINGS(w))
        hit = _ESTIMATES.get(key)
    except TypeError:  # an unhashable setting: no memo
        return _estimate(w)
    if hit is not None and hit[0] is w.model:
        return hit[1]
    est = _estimate(w)
    _ESTIMATES.put(key, (w.model, est))
    return est


class MemoryNeed(NamedTuple):
    """What a fit check reads of an estimate: the peak per GPU, what the job keeps in host
    RAM and whether the host holds it."""

    total_bytes: int
    host_total_bytes: int
    host_fits: bool


# the needs probed without words, keyed as _ESTIMATES (a full estimate there is used first)
_NEEDS = Table(2048)


def memory_need(w: Workload) -> MemoryNeed:
    """:func:`estimate_memory`'s numbers alone, for the many estimates only compared with a
    GPU's memory (the GPUs that hold a job, the changes that make it fit, the largest batch):
    the same builders and terms, with :func:`~whichgpu.messages.silent` words. With the memos
    off (the reference path answers are compared with), the full estimate's numbers."""
    if not enabled():
        return _need_of(_estimate(w))
    try:
        key = (id(w.model), _SETTINGS(w))
        hit = _ESTIMATES.get(key) or _NEEDS.get(key)
    except TypeError:  # an unhashable setting: no memo
        return _probe(w)
    if hit is not None and hit[0] is w.model:
        est = hit[1]
        return est if isinstance(est, MemoryNeed) else _need_of(est)
    need = _probe(w)
    _NEEDS.put(key, (w.model, need))
    return need


def _need_of(est: MemoryEstimate) -> MemoryNeed:
    return MemoryNeed(est.total_bytes, est.host_total_bytes, est.host_fits)


def _probe(w: Workload) -> MemoryNeed:
    """The need worked out with silent words (a diffusion estimate: in full, memoized)."""
    if w.is_diffusion:
        return _need_of(estimate_memory(w))
    if w.is_training:
        from whichgpu.estimate.memory.training import training_terms as build
    else:
        from whichgpu.estimate.memory.inference import inference_terms as build
    terms, _, details = build(w, silent)
    host_terms = tuple(details.get("host_terms") or ())
    return _need_of(MemoryEstimate(
        task=w.task, engine=w.engine_name, quant=w.quant_name, gpus=w.gpus,
        terms=ordered(terms), host_terms=host_terms,
        host=w.host_spec if host_terms else None))


def _estimate(w: Workload) -> MemoryEstimate:
    if w.is_diffusion:
        from whichgpu.estimate.memory.diffusion import diffusion_terms as build
    elif w.is_training:
        from whichgpu.estimate.memory.training import training_terms as build
    else:
        from whichgpu.estimate.memory.inference import inference_terms as build
    terms, assumptions, details = build(w)
    host_terms = tuple(details.pop("host_terms", None) or ())
    warnings = list(w.notes)
    if w.model.approximate:
        warnings.append(msg("memory.approximate", "{model} is a generic approximation from a "
                            "bare size, not the real architecture: name the model for an exact "
                            "estimate", model=w.model.name))
    assumptions = [*_defaults(w), *assumptions]
    return MemoryEstimate(
        task=w.task, engine=w.engine_name, quant=w.quant_name, gpus=w.gpus,
        terms=ordered(terms), assumptions=tuple(assumptions), warnings=tuple(warnings),
        approximate=w.model.approximate, details=details, host_terms=host_terms,
        host=w.host_spec if host_terms else None, framework=w.framework)


def _defaults(w: Workload) -> list[Message]:
    out = []
    if w.quant is None:
        if w.task == Task.QLORA:
            why = msg("default.quant.qlora", "QLoRA's usual base format")
        elif w.model.quantization and w.quant_name == w.model.quantization:
            why = msg("default.quant.shipped", "the format the checkpoint ships in")
        else:
            why = msg("default.quant.dtype", "the checkpoint's dtype")
        out.append(msg("default.quant", "weights in {quant} ({why}; {flag} to change)",
                       quant=w.quant_name, why=why, flag=Field("quant")))
    if w.engine is None and not (w.is_training or w.is_diffusion):
        out.append(msg("default.engine", "engine {engine} ({flag} to change)",
                       engine=w.engine_name, flag=Field("engine")))
    if not w.is_diffusion:
        out.append(msg("default.sequence", "sequence length {n:,} tokens, batch {batch}",
                       n=w.seq_len, batch=w.batch) if w.is_training else
                   msg("default.context", "context {n:,} tokens, batch {batch}", n=w.seq_len,
                       batch=w.batch))
    if w.is_training and w.gradient_checkpointing is None:
        out.append(msg("default.checkpointing.on", "gradient checkpointing on ({flag} to "
                       "change)", flag=Field("gradient_checkpointing"))
                   if w.uses_checkpointing else
                   msg("default.checkpointing.off", "gradient checkpointing off ({flag} to "
                       "change)", flag=Field("gradient_checkpointing")))
    return out


__all__ = ["MemoryEstimate", "MemoryNeed", "MemoryTerm", "estimate_memory", "memory_need"]
