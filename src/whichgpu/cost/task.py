"""Cost per task: a duration range on an offer becomes a cost range, and a cost per unit of work.

S25: 1,000 Flux images at 4-6 images/min on an RTX 4090 at €0.59/h take 167-250 min (200 typical,
"about 3 h 20 min") and cost about €1.97, or €0.002 per image.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from whichgpu.catalog.offers import Offer
from whichgpu.cost.billing import MoneyRange, run_cost, run_cost_range
from whichgpu.cost.currency import RateTable
from whichgpu.errors import InputError
from whichgpu.messages import Message, msg
from whichgpu.units import Range, format_duration

_WORK = msg("what.the_work", "the amount of work")
_PER = msg("what.per", "'per'")


def _positive(value: float, what: Message) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise InputError(msg("cost.positive", "{what} must be a positive number, got {v:g}",
                             what=what, v=value))
    return value


def duration_for(work: float, rate: Range, *, per_s: float = 1.0) -> Range:
    """Seconds to do ``work`` units at ``rate`` units per ``per_s`` seconds.

    ``duration_for(1000, Range(4, 5, 6), per_s=60)`` -> 10,000 / 12,000 / 15,000 s (a faster
    rate gives the low time, so low and high swap).
    """
    work = _positive(work, _WORK)
    per_s = _positive(per_s, msg("what.rate_unit", "the rate's time unit"))
    if rate.low <= 0:
        raise InputError(msg("cost.rate_positive", "a rate must be positive, got {low:g} per "
                             "{per:g} s", low=rate.low, per=per_s))
    return rate.inverse(work * per_s)


def cost_per_unit(cost: MoneyRange, work: float, *, per: float = 1.0) -> MoneyRange:
    """``cost`` for ``work`` units as a cost per ``per`` units (``per=1e6``: per million tokens)."""
    work = _positive(work, _WORK)
    per = _positive(per, _PER)
    return cost.scale(per / work)


@dataclass(frozen=True)
class TaskCost:
    """A task's time and cost on one offer, as ranges, and optionally its cost per unit."""

    offer: Offer
    gpus: int
    instances: int
    duration_s: Range
    billed_s: Range
    cost: MoneyRange
    work: float | None = None
    unit: str = "task"
    per: float = 1.0

    @property
    def cost_per_unit(self) -> MoneyRange | None:
        if self.work is None:
            return None
        return cost_per_unit(self.cost, self.work, per=self.per)

    def unit_label(self) -> str:
        if self.per == 1:
            return self.unit
        names = {1e3: "thousand", 1e6: "million", 1e9: "billion"}
        return f"{names.get(self.per, f'{self.per:g}')} {self.unit}s"

    def converted(self, currency: str, rates: RateTable | None = None) -> TaskCost:
        """The same task with its costs in ``currency``."""
        return TaskCost(self.offer, self.gpus, self.instances, self.duration_s, self.billed_s,
                        self.cost.convert(currency, rates), self.work, self.unit, self.per)

    def assumptions(self) -> list[str]:
        notes = run_cost(self.offer, self.duration_s.typical, gpus=self.gpus).assumptions()
        d = self.duration_s
        notes.append(f"duration {format_duration(d.low)} to {format_duration(d.high)}, "
                     f"typical {format_duration(d.typical)}")
        return notes

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "gpu": self.offer.gpu, "gpus": self.gpus, "instances": self.instances,
            "pricing": "spot" if self.offer.spot else "on-demand",
            "duration_s": self.duration_s.to_json(), "billed_s": self.billed_s.to_json(),
            "cost": self.cost.to_json(), "offer": self.offer.to_json(),
            "assumptions": self.assumptions(), "source": self.offer.source,
        }
        per_unit = self.cost_per_unit
        if per_unit is not None:
            data["work"] = {"amount": self.work, "unit": self.unit}
            data["cost_per_unit"] = {"unit": self.unit_label(), "per": self.per,
                                     "cost": per_unit.to_json(9)}
        return data


def task_cost(offer: Offer, duration_s: Range | float, *, gpus: int | None = None,
              work: float | None = None, unit: str = "task", per: float = 1.0) -> TaskCost:
    """The cost of a task lasting ``duration_s`` (a Range or a number of seconds) on ``offer``.

    Give ``work`` (how many ``unit`` the task produces) for a cost per unit; ``per`` sets the
    unit's scale (1 per image, 1e6 per million tokens, 1 per training run).
    """
    if not isinstance(duration_s, Range):
        duration_s = Range.point(float(duration_s))
    run = run_cost(offer, duration_s.typical, gpus=gpus)
    billed = Range(*(offer.billing.billed_seconds(d)
                     for d in (duration_s.low, duration_s.typical, duration_s.high)))
    cost = run_cost_range(offer, duration_s, gpus=run.gpus)
    if work is not None:
        _positive(work, _WORK)
        _positive(per, _PER)
    return TaskCost(offer, run.gpus, run.instances, duration_s, billed, cost, work, unit, per)
