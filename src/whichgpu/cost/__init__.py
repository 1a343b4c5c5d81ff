"""Money: cost per TFLOP, billing, cost per task, ownership and break-even, currencies.

The public API other layers use (advise/, web/, bench compare):

- billing:     :func:`run_cost`, :func:`run_cost_range`, :func:`instances_needed`,
               :func:`cheapest_offer` (currency-aware, spot kept apart), :class:`MoneyRange`
- per task:    :func:`task_cost`, :func:`duration_for`, :func:`cost_per_unit`
- ownership:   :func:`ownership_inputs`, :func:`ownership`, :class:`OwnershipInputs`,
               :class:`Ownership`
- rent or buy: :func:`rent_or_buy`, :func:`usage_band`, :class:`Advice`
- currency:    :func:`convert`, :func:`parse_rate`, :func:`rates_from`, :func:`default_rates`,
               :class:`RateTable`
"""

from whichgpu.cost.billing import (
    MoneyRange,
    RunCost,
    cheapest_offer,
    hourly_price,
    instances_needed,
    run_cost,
    run_cost_range,
)
from whichgpu.cost.currency import RateTable, convert, default_rates, parse_rate, rates_from
from whichgpu.cost.ownership import (
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    CurvePoint,
    Ownership,
    OwnershipInputs,
    make_inputs,
    ownership,
    ownership_inputs,
)
from whichgpu.cost.rent_or_buy import Advice, Thresholds, UsageBand, rent_or_buy, usage_band
from whichgpu.cost.task import TaskCost, cost_per_unit, duration_for, task_cost

__all__ = [
    "HOURS_PER_MONTH", "HOURS_PER_YEAR", "Advice", "CurvePoint", "MoneyRange", "Ownership",
    "OwnershipInputs", "RateTable", "RunCost", "TaskCost", "Thresholds", "UsageBand",
    "cheapest_offer", "convert", "cost_per_unit", "default_rates", "duration_for",
    "hourly_price", "instances_needed", "make_inputs", "ownership", "ownership_inputs",
    "parse_rate", "rates_from", "rent_or_buy", "run_cost", "run_cost_range", "task_cost",
    "usage_band",
]
