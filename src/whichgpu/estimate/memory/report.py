"""Everything the VRAM selector shows for one workload: breakdown, fits, fixes, rule of thumb."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.catalog.gpus import GPU, Catalog, default_catalog
from whichgpu.estimate.memory import MemoryEstimate, estimate_memory
from whichgpu.estimate.memory.fit import (
    Change,
    Fit,
    fits,
    max_concurrency,
    max_context,
    smallest_fits,
    suggestions,
)
from whichgpu.estimate.workload import Workload
from whichgpu.units import GB


@dataclass(frozen=True)
class RuleOfThumb:
    """S15: inference in FP16 ~ 2 x N GB, training ~ 4 x N GB; INT8/INT4 cut it 2-4x."""

    bytes: int
    formula: str
    source: str = "S15"

    def to_json(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "formula": self.formula, "source": self.source}


def rule_of_thumb(w: Workload) -> RuleOfThumb:
    n = w.model.params_total / 1e9
    if w.is_training:
        return RuleOfThumb(int(4 * n * GB), f"4 x {n:.1f}B params = {4 * n:.0f} GB (training)")
    bits = min(w.quant_format.linear_bits, 16)
    factor = 2 * bits / 16
    return RuleOfThumb(int(factor * n * GB),
                       f"2 x {n:.1f}B params x {bits:g}/16 bits = {factor * n:.1f} GB")


@dataclass(frozen=True)
class MemoryReport:
    estimate: MemoryEstimate
    fits: list[Fit]  # the fewest GPUs of each kind that hold it
    target: Fit | None  # the --gpu the user asked about
    changes: list[Change]
    rule: RuleOfThumb
    model_name: str
    capacity: dict[str, Any] | None = None  # serving capacity on the --gpu configuration

    def to_json(self) -> dict[str, Any]:
        data = self.estimate.to_json()
        data["model"] = self.model_name
        data["fits"] = [f.to_json() for f in self.fits]
        data["target"] = self.target.to_json() if self.target else None
        data["suggestions"] = [c.to_json() for c in self.changes]
        data["rule_of_thumb"] = self.rule.to_json()
        data["capacity"] = self.capacity
        return data


def memory_report(w: Workload, gpu: GPU | None = None, *,
                  catalog: Catalog | None = None) -> MemoryReport:
    """The estimate, which GPUs hold it (with headroom), and what would make it fit."""
    catalog = catalog or default_catalog()
    est = estimate_memory(w)
    best = smallest_fits(w, catalog)
    target = None
    if gpu is not None:
        target = next((f for f in fits(w, catalog=catalog, counts=(w.gpus,), gpus=[gpu])), None)
    needs_help = (target is not None and not target.fits) or not any(
        f.count == 1 for f in best)
    changes = suggestions(w, gpu if target is not None and not target.fits else None,
                          catalog=catalog) if needs_help else []
    capacity = None
    if gpu is not None and w.task == "inference":
        capacity = {
            "gpu": gpu.id, "count": w.gpus, "context": w.seq_len, "batch": w.batch,
            "max_concurrent_sequences": max_concurrency(w, gpu, w.gpus),
            "max_context_tokens": max_context(w, gpu, w.gpus),
        }
    return MemoryReport(est, best, target, changes, rule_of_thumb(w), w.model.name, capacity)
