"""Memory first (S27): the peak memory per GPU of a workload, as named, explained terms."""

from __future__ import annotations

from whichgpu.estimate.memory.terms import MemoryEstimate, MemoryTerm, ordered
from whichgpu.estimate.workload import Workload


def estimate_memory(w: Workload) -> MemoryEstimate:
    """Peak memory on each of ``w.gpus`` GPUs, term by term, with assumptions and warnings."""
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
        warnings.append(f"{w.model.name} is a generic approximation from a bare size, not the "
                        "real architecture: name the model for an exact estimate")
    assumptions = [*_defaults(w), *assumptions]
    return MemoryEstimate(
        task=w.task, engine=w.engine_name, quant=w.quant_name, gpus=w.gpus,
        terms=ordered(terms), assumptions=tuple(assumptions), warnings=tuple(warnings),
        approximate=w.model.approximate, details=details, host_terms=host_terms,
        host=w.host_spec if host_terms else None)


def _defaults(w: Workload) -> list[str]:
    out = []
    if w.quant is None:
        if w.task == "qlora":
            why = "QLoRA's usual base format"
        elif w.model.quantization and w.quant_name == w.model.quantization:
            why = "the format the checkpoint ships in"
        else:
            why = "the checkpoint's dtype"
        out.append(f"weights in {w.quant_name} ({why}; --quant to change)")
    if w.engine is None and not (w.is_training or w.is_diffusion):
        out.append(f"engine {w.engine_name} (--engine to change)")
    if not w.is_diffusion:
        what = "sequence length" if w.is_training else "context"
        out.append(f"{what} {w.seq_len:,} tokens, batch {w.batch}")
    if w.is_training and w.gradient_checkpointing is None:
        out.append("gradient checkpointing " + ("on" if w.uses_checkpointing else "off")
                   + " (--gradient-checkpointing to change)")
    return out


__all__ = ["MemoryEstimate", "MemoryTerm", "estimate_memory"]
