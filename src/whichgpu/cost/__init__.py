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

Each name loads its module on first use (PEP 562): a recommendation imports billing and the
cost per task through ``whichgpu.cost.spot``, and importing the package no longer brings
ownership and rent-or-buy along (7-9 ms of every ``whichgpu recommend`` process, issue 27).
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: public name -> the module that defines it
_MODULES: dict[str, str] = {
    **dict.fromkeys(("MoneyRange", "RunCost", "cheapest_offer", "hourly_price",
                     "instances_needed", "run_cost", "run_cost_range"), "billing"),
    **dict.fromkeys(("RateTable", "convert", "default_rates", "parse_rate", "rates_from"),
                    "currency"),
    **dict.fromkeys(("HOURS_PER_MONTH", "HOURS_PER_YEAR", "CurvePoint", "Ownership",
                     "OwnershipInputs", "make_inputs", "ownership", "ownership_inputs"),
                    "ownership"),
    **dict.fromkeys(("Advice", "Thresholds", "UsageBand", "rent_or_buy", "usage_band"),
                    "rent_or_buy"),
    **dict.fromkeys(("TaskCost", "cost_per_unit", "duration_for", "task_cost"), "task"),
}

__all__ = [
    "HOURS_PER_MONTH", "HOURS_PER_YEAR", "Advice", "CurvePoint", "MoneyRange", "Ownership",
    "OwnershipInputs", "RateTable", "RunCost", "TaskCost", "Thresholds", "UsageBand",
    "cheapest_offer", "convert", "cost_per_unit", "default_rates", "duration_for",
    "hourly_price", "instances_needed", "make_inputs", "ownership", "ownership_inputs",
    "parse_rate", "rates_from", "rent_or_buy", "run_cost", "run_cost_range", "task_cost",
    "usage_band",
]
assert sorted(__all__) == sorted(_MODULES)  # one list of the public names


#: functions named as their module: the package's name is the function, as when this package
#: imported them eagerly (the import system sets a submodule as its package's attribute when
#: it loads, which would otherwise replace the function by the module)
_NAMED_AS_MODULE = frozenset({"ownership", "rent_or_buy"})


class _Package(ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _NAMED_AS_MODULE and isinstance(value, ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    """A public name, from its module on first use (PEP 562). Anything else is not an
    attribute, so ``from whichgpu.cost import spot`` imports the submodule as usual."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'whichgpu.cost' has no attribute {name!r}")
    value = getattr(import_module(f"whichgpu.cost.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
