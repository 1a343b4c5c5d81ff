"""``validate memory|speed|fits|serving``: the estimates against published measurements."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whichgpu.answers.requests import (
    ValidateFits,
    ValidateMemory,
    ValidateQuestions,
    ValidateServing,
    ValidateSpeed,
)
from whichgpu.errors import InputError
from whichgpu.estimate.validation import (
    Outcome,
    Summary,
    default_path,
    read_rows,
    serving_report,
    summarize,
)
from whichgpu.estimate.validation import (
    ceilings as validation_ceilings,
)
from whichgpu.estimate.validation import (
    cv as validation_cv,
)
from whichgpu.estimate.validation import (
    fits as validation_fits,
)
from whichgpu.estimate.validation import (
    memory as validation_memory,
)
from whichgpu.estimate.validation import (
    ranges as validation_ranges,
)
from whichgpu.estimate.validation import (
    speed as validation_speed,
)
from whichgpu.estimate.validation.report import engine_arch_key, group_errors

SPLITS = ("all", "calibration", "holdout")


@dataclass(frozen=True)
class ValidationAnswer:
    """Each row's error, the summary by category, and the extra tables of its kind."""

    what: str  # memory or speed
    rows: list[Outcome]
    summary: list[Summary]
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "rows": [x.to_json() for x in self.rows],
                "summary": [s.to_json() for s in self.summary], **self.extra}


def _chosen(outcomes: list[Outcome], split: str, excluded: dict[str, str] | None = None
            ) -> tuple[list[Outcome], list[Summary]]:
    """The rows of ``split`` and their summary, without the ``excluded`` rows (above a
    physical ceiling: listed, not scored)."""
    if split not in SPLITS:
        raise InputError("--split must be calibration, holdout or all")
    rows = [x for x in outcomes if split == "all" or x.split == split]
    scored = [x for x in rows if x.id not in (excluded or {})]
    return rows, [s for s in summarize(scored) if split == "all" or s.split == split]


def validate_memory(q: ValidateMemory) -> ValidationAnswer:
    """Each memory measurement against the estimate, the error by category and engine, and
    the fit verdict on each measured card (a run that happened fits)."""
    path = Path(q.file) if q.file else default_path("memory")
    outcomes = validation_memory.run(path)
    rows, summary = _chosen(outcomes, q.split)
    by_id = {r["id"]: r for r in read_rows(path)}
    extra = {"by_engine": [g.to_json() for g in group_errors(
        rows, by_id, lambda r: (r.get("category", ""), (r.get("engine") or "-").strip()))],
        "verdicts": validation_memory.verdicts([by_id[x.id] for x in rows]),
        "ranges": validation_ranges.report(rows, by_id).to_json()}
    return ValidationAnswer("memory", rows, summary, extra)


def validate_speed(q: ValidateSpeed) -> ValidationAnswer:
    """Each speed measurement against the estimate, by category, engine and architecture, and
    leaving each GPU and each source out of the fit."""
    path = Path(q.file) if q.file else default_path("speed")
    outcomes = validation_speed.run(path)
    all_rows = read_rows(path)
    excluded = validation_ceilings.excluded(all_rows)
    rows, summary = _chosen(outcomes, q.split, excluded)
    by_id = {r["id"]: r for r in all_rows}
    scored = [x for x in rows if x.id not in excluded]
    extra: dict[str, Any] = {"by_engine_arch": [g.to_json() for g in group_errors(
        scored, by_id, engine_arch_key)],
        "ranges": validation_ranges.report(rows, by_id, excluded).to_json()}
    if q.cross_validation:
        with validation_cv.shared_refits():  # one memo of row estimates for both
            extra["cross_validation"] = {
                by: [s.to_json() for s in validation_cv.summarize(
                    validation_cv.leave_one_out(all_rows, by))] for by in ("gpu", "source")}
    return ValidationAnswer("speed", rows, summary, extra)


@dataclass(frozen=True)
class FitsAnswer:
    """Set-ups people run and the memory model's verdict on each."""

    rows: list[Any]

    @property
    def counts(self) -> Counter[str]:
        return Counter(x.verdict for x in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {"what": "fits", "rows": [x.to_json() for x in self.rows],
                "summary": dict(self.counts)}


def validate_fits(q: ValidateFits) -> FitsAnswer:
    """Each measured fit / no-fit row against the memory estimate's verdict."""
    return FitsAnswer(validation_fits.run(Path(q.file) if q.file else None))


@dataclass(frozen=True)
class ServingValidation:
    """Each serving measurement against the model, by engine and GPU, holdout apart."""

    report: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.report


def validate_serving(q: ValidateServing) -> ServingValidation:
    """The serving model's errors on the measured serving rows (calibration and holdout)."""
    return ServingValidation(serving_report.report(Path(q.file) if q.file else None,
                                                   q.split, q.loso))


@dataclass(frozen=True)
class QuestionsAnswer:
    """Whole questions and the judgement of each answer (estimate/validation/questions)."""

    rows: list[Any]

    @property
    def shares(self) -> dict[str, float]:
        from whichgpu.estimate.validation.questions import shares

        return shares(self.rows)

    def to_json(self) -> dict[str, Any]:
        from whichgpu.estimate.validation.questions import __doc__ as rule

        return {"what": "questions", "rows": [x.to_json() for x in self.rows],
                "n": len(self.rows), "shares": self.shares,
                "rule": (rule or "").split("answer is judged by one rule:", 1)[-1].strip()}


def validate_questions(q: ValidateQuestions) -> QuestionsAnswer:
    """Each question of validation/questions.csv answered and judged."""
    from whichgpu.estimate.validation import questions as validation_questions

    return QuestionsAnswer(validation_questions.run(Path(q.file) if q.file else None))
