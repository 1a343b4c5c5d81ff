"""Money: cost per TFLOP, billing, cost per task, ownership and break-even, currencies."""

from whichgpu.cost.currency import RateTable, convert, default_rates, parse_rate, rates_from

__all__ = ["RateTable", "convert", "default_rates", "parse_rate", "rates_from"]
