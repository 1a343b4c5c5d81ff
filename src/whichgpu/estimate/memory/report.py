"""Everything the VRAM selector shows for one workload: breakdown, fits, fixes, rule of thumb."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.catalog.gpus import GPU, Catalog, default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate.memory import MemoryEstimate, estimate_memory
from whichgpu.estimate.memory.changes import Change, suggestions
from whichgpu.estimate.memory.diffusion_fit import split_to_fit
from whichgpu.estimate.memory.fit import (
    Fit,
    fits,
    max_concurrency,
    max_context,
    smallest_fits,
)
from whichgpu.estimate.memory.offload_plan import no_offload_reason, offload_plan
from whichgpu.estimate.platform import engine_for
from whichgpu.estimate.workload import Workload
from whichgpu.units import GB
from whichgpu.vocabulary import Task


@dataclass(frozen=True)
class RuleOfThumb:
    """S15: inference in FP16 ~ 2 x N GB, training ~ 4 x N GB; INT8/INT4 cut it 2-4x."""

    bytes: int
    formula: str
    source: str = "S15"
    explanation: str = ""  # why our estimate differs, in one line

    def to_json(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "formula": self.formula, "source": self.source,
                "explanation": self.explanation}


_STATES = ("weights", "adapter_weights", "master_weights", "gradients", "optimizer_states")


def rule_of_thumb(w: Workload, est: MemoryEstimate | None = None) -> RuleOfThumb:
    """The S15 figure for this workload, and one line on how our estimate differs from it."""
    n = w.model.params_total / 1e9
    if w.is_training:
        rule = RuleOfThumb(int(4 * n * GB), f"4 x {n:.1f}B params = {4 * n:.0f} GB (training)")
    else:
        bits = min(w.quant_format.linear_bits, 16)
        factor = 2 * bits / 16
        rule = RuleOfThumb(int(factor * n * GB),
                           f"2 x {n:.1f}B params x {bits:g}/16 bits = {factor * n:.1f} GB")
    if est is None:
        return rule
    return RuleOfThumb(rule.bytes, rule.formula, rule.source, _explain(w, est, rule.bytes))


def _explain(w: Workload, est: MemoryEstimate, rule_bytes: int) -> str:
    # the rule sizes the whole job; a split model's per-GPU terms add up over its GPUs
    scale = 1 if w.is_diffusion else est.gpus
    total = est.total_bytes * scale
    diff = total - rule_bytes
    sign = "+" if diff >= 0 else "-"
    head = (f"ours is {sign}{abs(diff) / GB:.1f} GB"
            + (f" over the {scale} GPUs" if scale > 1 else "") + ": ")
    n = max(w.model.params_total, 1)
    if w.is_training:
        states = sum(est.term(t) for t in _STATES)
        per_param = states * scale / n
        if w.task in (Task.LORA, Task.QLORA, Task.IMAGE_LORA):
            what = (f"a frozen {w.quant_name} base plus trainable adapters keep "
                    f"{per_param:.1f} bytes per parameter in model states (the rule assumes 4)")
        else:
            what = (f"{w.optimizer} with {'fp32 master weights, ' if w.uses_master_weights else ''}"
                    f"gradients and weights keeps {per_param:.1f} bytes per parameter (the rule "
                    "assumes 4; mixed-precision AdamW needs 16)")
        rest = [t for t in est.terms if t.name not in _STATES]
    else:
        weights = est.term("weights") * scale
        what = (f"weights {weights / GB:.1f} GB (the rule: {rule_bytes / GB:.1f} GB"
                + (", counting every parameter at the linear layers' bits" if not w.is_diffusion
                   else ", counting every component at the denoiser's bits") + ")")
        rest = [t for t in est.terms if t.name != "weights"]
    rest = sorted((t for t in rest if t.bytes * scale >= 0.01 * total),
                  key=lambda t: -t.bytes)[:3]
    if rest:
        what += "; plus " + ", ".join(
            f"{t.name.replace('_', ' ')} {t.bytes * scale / GB:.1f} GB" for t in rest
        ) + ", which the rule leaves out"
    return head + what


@dataclass(frozen=True)
class MemoryReport:
    estimate: MemoryEstimate
    fits: list[Fit]  # the fewest GPUs of each kind that hold it
    target: Fit | None  # the --gpu the user asked about
    changes: list[Change]
    rule: RuleOfThumb
    model_name: str
    capacity: dict[str, Any] | None = None  # serving capacity on the --gpu configuration
    notes: tuple[str, ...] = ()  # e.g. the engine swapped for one the --gpu runs
    offload: dict[str, Any] | None = None  # llama.cpp: the layout that fits the --gpu
    no_offload: str | None = None  # why a job that does not fit cannot spill to host RAM

    def to_json(self) -> dict[str, Any]:
        data = self.estimate.to_json()
        data["model"] = self.model_name
        # one shape for 'fits' in every answer (speed, the target, each GPU): a boolean. Here:
        # the GPU asked about holds it; without one, some catalog GPU configuration does
        data["fits"] = self.target.fits if self.target else bool(self.fits)
        data["gpus_that_fit"] = [f.to_json() for f in self.fits]
        data["target"] = self.target.to_json() if self.target else None
        data["suggestions"] = [c.to_json() for c in self.changes]
        data["rule_of_thumb"] = self.rule.to_json()
        data["capacity"] = self.capacity
        data["notes"] = list(self.notes)
        data["offload"] = self.offload
        data["no_offload_reason"] = self.no_offload
        return data


def memory_report(w: Workload, gpu: GPU | None = None, *,
                  catalog: Catalog | None = None) -> MemoryReport:
    """The estimate, which GPUs hold it (with headroom), and what would make it fit."""
    catalog = catalog or default_catalog()
    notes: tuple[str, ...] = ()
    if w.is_diffusion:  # fix9: a split only another engine runs, run by it (said)
        from whichgpu.estimate.diffusion_parallel import engine_for_layout

        w, moved = engine_for_layout(w)
        notes = (moved,) if moved else ()
    if gpu is not None:  # the engine the --gpu runs (a named one it cannot run is refused)
        w, why = engine_for(w, gpu, catalog)
        notes += (why,) if why else ()
        split = split_to_fit(w, gpu)  # diffusion over several GPUs: split as speed does
        if split is not None:
            w, said = split
            notes += (said,)
    est = estimate_memory(w)
    best = smallest_fits(w, catalog)
    target = None
    if gpu is not None:
        target = next((f for f in fits(w, catalog=catalog, counts=(w.gpus,), gpus=[gpu])), None)
    needs_help = (target is not None and not target.fits) or not any(
        f.count == 1 for f in best)
    changes = suggestions(w, gpu if target is not None and not target.fits else None,
                          catalog=catalog) if needs_help else []
    offload = no_offload = None
    if gpu is not None and target is not None and not target.fits:  # target is gpu's
        offload = offload_answer(w, gpu)
        no_offload = no_offload_reason(w)
    capacity = None
    if gpu is not None and w.task == Task.INFERENCE:
        wc = offload["workload"] if offload else w
        capacity = {
            "gpu": gpu.id, "count": w.gpus, "context": w.seq_len, "batch": w.batch,
            "max_concurrent_sequences": max_concurrency(wc, gpu, w.gpus),
            "max_context_tokens": max_context(wc, gpu, w.gpus),
            "with_offload": bool(offload),
        }
    if offload:
        offload = {k: v for k, v in offload.items() if k != "workload"}
    return MemoryReport(est, best, target, changes, rule_of_thumb(w, est), w.model.name,
                        capacity, notes, offload, no_offload)


def offload_answer(w: Workload, gpu: GPU) -> dict[str, Any] | None:
    """llama.cpp's layout that fits ``gpu`` with part of the model in host RAM, with its
    memory per GPU, the host RAM it needs and its speed (None when none fits or the engine
    cannot offload); ``workload`` holds the job with the flags set (not JSON)."""
    # lazily: the speed model loads only for an offload answer, not for every memory answer
    from whichgpu.estimate.speed import estimate_speed

    plan = offload_plan(w, gpu, w.gpus)
    if plan is None:
        return None
    data = plan.to_json()
    data["workload"] = plan.workload
    try:
        est = estimate_speed(plan.workload, gpu, plan.count, check_fit=False, saturation=False)
    except InputError:
        return data
    for key in ("decode_tokens_per_s_per_sequence", "prefill_tokens_per_s"):
        data[key] = est.rates[key].to_json()
    data["memory"] = plan.memory.to_json()
    return data
