"""The result of a speed estimate: rates as low/typical/high, the bound, the confidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from whichgpu.estimate.constants import speed_constant, speed_value
from whichgpu.messages import Message
from whichgpu.units import Range

BOUNDS = ("memory-bandwidth", "compute", "interconnect", "fixed-overhead", "host-memory",
          "pcie")
LEVELS = ("low", "medium", "high")
CATEGORIES = ("decode", "prefill", "serving", "training", "diffusion", "video")


def band_ratios(category: str | None, confidence: str) -> tuple[float, float]:
    """(low, high) multipliers of a typical rate.

    For a category with calibration rows: a 90 % prediction interval of measured / estimated
    from the calibration split (``band_ratios``, written by ``make calibrate``), widened in log
    space for lower confidence (``confidence_widening``). A category with too few rows for a
    band gets the prior ``confidence_factors`` at low confidence.
    """
    table = speed_value("band_ratios")
    if category not in table:
        # no category band (too few calibration rows): the prior, at low confidence whenever
        # the category is named, since its error is unknown
        lo, hi = speed_constant("confidence_factors").value["low" if category else confidence]
        return float(lo), float(hi)
    lo, hi = table[category]
    k = float(speed_value("confidence_widening")[confidence])
    return min(float(lo), 1.0) ** k, max(float(hi), 1.0) ** k


def band(typical: float, confidence: str, inverse: bool = False,
         category: str | None = None) -> Range:
    """A range around ``typical`` at a confidence level (rates; ``inverse`` for times)."""
    lo, hi = band_ratios(category, confidence)
    if inverse:
        lo, hi = 1 / hi, 1 / lo
    return Range(typical * lo, typical, typical * hi)


def speed_family(model) -> str:
    """The family calibration evidence is kept by: the diffusers pipeline class for image and
    video models; for LLMs dense or MoE (with -mla), since the roofline treats every dense
    decoder alike and MoE routing and MLA change what is read per token."""
    if model.diffusion is not None:
        return str(model.architecture)
    family = "moe" if model.is_moe else "dense"
    return family + ("-mla" if model.mla is not None else "")


def evidence(category: str, family: str, engine: str) -> tuple[int, str]:
    """How much calibration evidence backs (family, engine) in a category: 2, 1 or 0 and why."""
    rows = speed_value("calibration_evidence").get(category, {})
    n = int(rows.get(f"{family}/{engine}", 0))
    if n:
        return 2, f"{n} calibration row(s) of {family} on {engine} ({category})"
    same_family = sum(int(v) for k, v in rows.items() if k.split("/")[0] == family)
    if same_family:
        return 1, (f"{family} has {same_family} calibration row(s) on other engines, none on "
                   f"{engine} ({category})")
    return 0, f"no calibration rows of {family} ({category})"


def confidence_for(category: str, w, hw, engine: str) -> tuple[str, str, str]:
    """(label, why, band level).

    The band level is the evidence for (family, engine) in the category, lowered for a generic
    model or GPUs without peer-to-peer and raised by a calibration profile; it chooses how far
    the category's band is widened. The label shown is the band level, capped by how accurate
    the category is on its calibration rows (a wide band already says so for video).
    """
    level, why = evidence(category, speed_family(w.model), engine)
    if w.model.approximate:
        level, why = 0, why + "; a generic model from a bare size"
    if hw.link.kind == "pcie_host" and level > 0:
        level, why = 0, why + "; GPUs without peer-to-peer (S28: scaling varies)"
    if hw.calibration:
        level = min(level + 1, 2)
        why += "; hardware measured by a calibration profile"
    label = level
    cap = speed_value("category_confidence_cap").get(category, "low")
    if LEVELS.index(cap) < label:
        label = LEVELS.index(cap)
        why += f"; {category} estimates are at most {cap} confidence (calibration error)"
    return LEVELS[label], why, LEVELS[level]


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
    # mfu, batch used ... and a few words (link kind, framework) and flags (compile)
    scalars: dict[str, Any] = field(default_factory=dict)
    components: tuple[Component, ...] = ()
    assumptions: tuple[str, ...] = ()
    warnings: tuple[Message, ...] = ()
    calibration: str | None = None
    details: dict[str, Any] = field(default_factory=dict)  # nested results (saturation ...)

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
        for k, v in self.details.items():
            data[k] = _jsonable(v)
        return data


def _jsonable(value: Any) -> Any:
    if isinstance(value, Range):
        return value.to_json()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def dominant(parts: dict[str, float]) -> str:
    """The bound whose time is largest."""
    return max(parts, key=parts.__getitem__) if parts else "fixed-overhead"
