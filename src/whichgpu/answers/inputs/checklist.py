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
    request's budget is read as it validated (answers/inputs/values.py HourlyBudget), the
    command line's prompted answers here."""
    from whichgpu.answers.inputs.values import HourlyBudget
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
    try:
        h = float(str(hours).strip().lower().replace("h", ""))
        months = float(str(horizon).strip().lower().replace("months", "").replace("m", ""))
    except ValueError:
        raise InputError(msg("checklist.numbers", "hours per month and horizon must be numbers "
                             "(e.g. 120 and 24)")) from None
    return ChecklistAnswers(WORKLOADS[key], str(model).strip(), money, h, months)
