"""The result of a speed estimate: rates as low/typical/high, the bound, the confidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from whichgpu.estimate.constants import speed_constant
from whichgpu.units import Range

BOUNDS = ("memory-bandwidth", "compute", "interconnect", "fixed-overhead")


def band(typical: float, confidence: str, inverse: bool = False) -> Range:
    """A range around ``typical`` at a confidence level (rates; ``inverse`` for times)."""
    lo, hi = speed_constant("confidence_factors").value[confidence]
    if inverse:
        lo, hi = 1 / hi, 1 / lo
    return Range(typical * lo, typical, typical * hi)


@dataclass(frozen=True)
class Component:
    """One term of a time: what it is and how long it takes (seconds)."""

    name: str
    seconds: float
    formula: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": self.seconds, "formula": self.formula}


@dataclass(frozen=True)
class SpeedEstimate:
    """How fast a workload runs on ``count`` x ``gpu``; rates are aggregate over the batch."""

    gpu: str
    count: int
    task: str
    engine: str
    precision: str  # compute precision key used
    bound: str
    confidence: str
    rates: dict[str, Range]  # name -> range (tokens_per_s, images_per_min ...)
    times: dict[str, Range] = field(default_factory=dict)  # name -> seconds range
    scalars: dict[str, float] = field(default_factory=dict)  # mfu, batch used ...
    components: tuple[Component, ...] = ()
    assumptions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    calibration: str | None = None

    def rate(self, name: str) -> Range:
        return self.rates[name]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "gpu": self.gpu, "count": self.count, "task": self.task, "engine": self.engine,
            "precision": self.precision, "bound": self.bound, "confidence": self.confidence,
        }
        for k, r in self.rates.items():
            data[k] = r.to_json()
        for k, r in self.times.items():
            data[k] = r.to_json()
        data.update(self.scalars)
        data["components"] = [c.to_json() for c in self.components]
        data["assumptions"] = list(self.assumptions)
        data["warnings"] = list(self.warnings)
        data["calibration"] = self.calibration
        return data


def dominant(parts: dict[str, float]) -> str:
    """The bound whose time is largest."""
    return max(parts, key=parts.get) if parts else "fixed-overhead"
