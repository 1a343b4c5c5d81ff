"""The checklist's five answers as people type them ('fine-tuning', '7B', '1USD' or 'none',
'120', '24') -> :class:`~whichgpu.advise.checklist.ChecklistAnswers` (read here, once)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.advise.checklist import ChecklistAnswers
from whichgpu.errors import InputError
from whichgpu.messages import msg

if TYPE_CHECKING:
    from whichgpu.answers.inputs.values import HourlyBudget

WORKLOADS = {
    "inference": "inference",
    "fine-tuning": "finetune", "finetuning": "finetune", "fine-tune": "finetune",
    "finetune": "finetune",
    "training": "training", "pretraining": "training", "pre-training": "training",
}


def parse_answers(workload: str, model: str, budget: str | HourlyBudget | None,
                  hours: str | float, horizon: str | float,
                  currency: str = "USD") -> ChecklistAnswers:
    """Answers as people type them ('fine-tuning', '7B', '1USD' or 'none', '120', '24'); a
    request's budget, hours and months are read as it validated (answers/inputs/values.py
    HourlyBudget, MonthlyHours, HorizonMonths), the command line's prompted answers here."""
    from whichgpu.answers.inputs.values import HorizonMonths, HourlyBudget, MonthlyHours
    from whichgpu.units import parse_money

    key = str(workload).strip().lower()
    if key not in WORKLOADS:
        raise InputError(msg("checklist.unknown_workload", "unknown workload {v!r}: answer "
                             "training, fine-tuning or inference", v=str(workload)))
    money = None
    if isinstance(budget, HourlyBudget):
        money = budget.money(currency)
    elif budget and str(budget).strip().lower() not in ("", *HourlyBudget.NONE):
        money = parse_money(budget, default_currency=currency)
    # the prompted text is bounded with the other answers (ChecklistAnswers), as before
    h = MonthlyHours.number(hours) if isinstance(hours, str) else float(hours)
    months = HorizonMonths.number(horizon) if isinstance(horizon, str) else float(horizon)
    return ChecklistAnswers(WORKLOADS[key], str(model).strip(), money, h, months)
