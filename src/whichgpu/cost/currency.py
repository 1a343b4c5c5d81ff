"""Currencies for the cost layer: the names of :mod:`whichgpu.currency`, where the dated
exchange-rate table and its loader live (a base layer, so that the price store can validate
currencies without importing ``cost``)."""

from whichgpu.currency import (
    ISO_4217,
    RateTable,
    convert,
    default_rates,
    known_currency,
    parse_rate,
    rates_from,
)

__all__ = ["ISO_4217", "RateTable", "convert", "default_rates", "known_currency", "parse_rate",
           "rates_from"]
