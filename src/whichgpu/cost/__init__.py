"""Money: cost per TFLOP, billing, cost per task, ownership and break-even, currencies."""

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
from whichgpu.cost.task import TaskCost, cost_per_unit, duration_for, task_cost

__all__ = [
    "MoneyRange", "RateTable", "RunCost", "TaskCost", "cheapest_offer", "convert",
    "cost_per_unit", "default_rates", "duration_for", "hourly_price", "instances_needed",
    "parse_rate", "rates_from", "run_cost", "run_cost_range", "task_cost",
]
