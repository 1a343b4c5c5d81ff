"""How good the stated ranges are: per category and per engine, the share of measurements
inside the estimate's low..high interval (coverage), the median and 90th-percentile width of
that interval (high / low), beside the median absolute error of the typical value.

Rows whose measurement is above a physical ceiling (``validation_ceilings``) are left out of
every figure here and listed with their reason. A category's overall figure is also given
*balanced*: the median over engines of each engine's median, so that one engine's many rows
(llama.cpp's, in the speed data) cannot hide an engine that is far off.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from whichgpu.estimate.validation import Outcome, _p90

# The stated interval's nominal coverage (speed_constants band_ratios, make calibrate) and the
# issue's targets (issue 30): coverage 75-85 % for a category with at least 20 held-out rows;
# median width at most 2x for decode and memory, 3x for the rest; 5x is the widest a range
# may be without a stated reason.
NOMINAL_COVERAGE = 0.80
COVERAGE_TARGET = (0.75, 0.85)
COVERAGE_MIN_ROWS = 20


def width_target(category: str) -> float:
    """The issue's median-width target of a category (high / low)."""
    if category == "decode" or category.startswith("memory"):
        return 2.0
    return 3.0


def target_verdict(s: RangeStats, what: str = "speed") -> str:
    """Issue 30's targets for a category's ranges: 'coverage 78 % in 75-85 %: met; median width
    1.67x <= 2x: met', or why none applies (no stated range, or fewer than COVERAGE_MIN_ROWS
    rows). ``what``: the validation (memory's ranges have the 2x width target)."""
    if not s.n_ranged or s.coverage is None or s.median_width is None:
        return "no stated range"
    if s.n_ranged < COVERAGE_MIN_ROWS:
        return f"no target under {COVERAGE_MIN_ROWS} rows"
    lo, hi = COVERAGE_TARGET
    cov_ok = lo <= s.coverage <= hi
    goal = width_target("memory" if what == "memory" else s.key[0])
    width_ok = s.median_width <= goal
    return (f"coverage {s.coverage:.0%} in {lo:.0%}-{hi:.0%}: {'met' if cov_ok else 'missed'}; "
            f"median width {s.median_width:.2f}x <= {goal:g}x: {'met' if width_ok else 'missed'}")


def engine_group(engine: str) -> str:
    """The engine a row counts under in per-engine tables: llama.cpp's backends and wrappers
    (Vulkan, ROCm, Metal, SYCL, Ollama, LM Studio) are llama.cpp; NIM is TensorRT-LLM."""
    e = (engine or "").strip().lower()
    if e.startswith("llamacpp") or e in ("llama.cpp", "ollama", "lmstudio"):
        return "llamacpp"
    return {"nim": "trtllm", "tensorrt-llm": "trtllm", "exllama": "exllamav2",
            "mlc-llm": "mlc"}.get(e, e or "-")


def width_of(o: Outcome) -> float | None:
    """high / low of a row's stated interval (the same for a rate and its time)."""
    if o.low is None or o.high is None or o.low <= 0:
        return None
    return o.high / o.low


@dataclass(frozen=True)
class RangeStats:
    """Coverage and width of the stated intervals of a group of rows."""

    key: tuple[str, ...]
    n: int  # rows with an estimate
    n_ranged: int  # of which with a stated interval
    inside: int
    median_width: float | None
    p90_width: float | None
    widest: float | None
    median_abs_error: float | None

    @property
    def coverage(self) -> float | None:
        return self.inside / self.n_ranged if self.n_ranged else None

    def to_json(self) -> dict[str, Any]:
        return {"key": list(self.key), "n": self.n, "n_ranged": self.n_ranged,
                "inside": self.inside, "coverage": self.coverage,
                "median_width": self.median_width, "p90_width": self.p90_width,
                "widest": self.widest, "median_abs_error": self.median_abs_error}


def stats(key: tuple[str, ...], outcomes: Iterable[Outcome]) -> RangeStats:
    members = [o for o in outcomes if o.error is not None]
    ranged = [o for o in members if o.inside is not None]
    widths = [w for o in ranged if (w := width_of(o)) is not None]
    errs = [abs(o.error) for o in members if o.error is not None]
    return RangeStats(key, len(members), len(ranged), sum(1 for o in ranged if o.inside),
                      statistics.median(widths) if widths else None,
                      _p90(widths) if widths else None, max(widths) if widths else None,
                      statistics.median(errs) if errs else None)


def grouped(outcomes: Iterable[Outcome],
            key: Callable[[Outcome], tuple[str, ...]]) -> list[RangeStats]:
    groups: dict[tuple[str, ...], list[Outcome]] = {}
    for o in outcomes:
        if o.error is not None:
            groups.setdefault(key(o), []).append(o)
    return [stats(k, v) for k, v in sorted(groups.items())]


@dataclass(frozen=True)
class Balanced:
    """A category's figures with every engine weighing the same: the median over engines of
    each engine's median error and median width, and the mean of the engines' coverages."""

    category: str
    engines: int
    rows: int
    median_abs_error: float | None
    coverage: float | None
    median_width: float | None
    worst_engine: str  # the engine with the largest median error
    worst_error: float | None

    def to_json(self) -> dict[str, Any]:
        return {"category": self.category, "engines": self.engines, "rows": self.rows,
                "median_abs_error": self.median_abs_error, "coverage": self.coverage,
                "median_width": self.median_width, "worst_engine": self.worst_engine,
                "worst_error": self.worst_error}


def balanced(per_engine: list[RangeStats]) -> list[Balanced]:
    """``per_engine`` keyed (category, engine) -> one balanced figure per category."""
    by_cat: dict[str, list[RangeStats]] = {}
    for s in per_engine:
        by_cat.setdefault(s.key[0], []).append(s)
    out = []
    for cat, members in sorted(by_cat.items()):
        errs = [s.median_abs_error for s in members if s.median_abs_error is not None]
        covs = [c for s in members if (c := s.coverage) is not None]
        widths = [s.median_width for s in members if s.median_width is not None]
        worst = max(members, key=lambda s: s.median_abs_error or 0.0)
        out.append(Balanced(cat, len(members), sum(s.n for s in members),
                            statistics.median(errs) if errs else None,
                            statistics.fmean(covs) if covs else None,
                            statistics.median(widths) if widths else None,
                            worst.key[1], worst.median_abs_error))
    return out


@dataclass(frozen=True)
class RangeReport:
    """The range figures of one validation: by category, by category and engine, balanced,
    and the rows left out above a physical ceiling."""

    by_category: list[RangeStats]
    by_engine: list[RangeStats]
    balanced: list[Balanced]
    excluded: dict[str, str]  # row id -> why it is left out

    def category(self, name: str) -> RangeStats | None:
        return next((s for s in self.by_category if s.key[0] == name), None)

    def to_json(self) -> dict[str, Any]:
        return {"nominal_coverage": NOMINAL_COVERAGE,
                "by_category": [s.to_json() for s in self.by_category],
                "by_engine": [s.to_json() for s in self.by_engine],
                "balanced": [b.to_json() for b in self.balanced],
                "excluded": [{"id": k, "reason": v} for k, v in sorted(self.excluded.items())]}


def report(outcomes: list[Outcome], rows: dict[str, dict[str, str]],
           excluded: dict[str, str] | None = None,
           category: Callable[[Outcome], str] | None = None) -> RangeReport:
    """The range figures of ``outcomes`` (one split, or all) without the ``excluded`` rows;
    ``category`` maps an outcome to its reporting category (default: its own)."""
    excluded = {k: v for k, v in (excluded or {}).items()
                if any(o.id == k for o in outcomes)}
    kept = [o for o in outcomes if o.id not in excluded]
    cat = category or (lambda o: o.category)

    def engine(o: Outcome) -> str:
        return engine_group(rows.get(o.id, {}).get("engine", ""))

    by_engine = grouped(kept, lambda o: (cat(o), engine(o)))
    return RangeReport(grouped(kept, lambda o: (cat(o),)), by_engine, balanced(by_engine),
                       excluded)
