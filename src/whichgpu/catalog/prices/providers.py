"""Providers as data: display names, their names in gpuhunt, and each one's billing rule.

``data/providers.csv`` has one row per provider with the billing increment and minimum charge
and the page that states them. A provider whose rule we could not find says "not stated" and
gets per-second billing without a minimum, and every offer it prices says so in its note.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources

from whichgpu.catalog.billing import BillingRule
from whichgpu.errors import DataError

TABLE = "data/providers.csv"
ASSUMED = BillingRule(increment_s=1, minimum_s=0)


@dataclass(frozen=True)
class Provider:
    """One provider: its key, display name, gpuhunt's key, billing rule and that rule's source."""

    key: str
    name: str
    gpuhunt: str | None
    billing: BillingRule
    billing_source: str | None  # None: the rule is not stated anywhere we could read
    billing_note: str

    @property
    def stated(self) -> bool:
        return self.billing_source is not None

    def billing_text(self) -> str:
        """'billed per minute (docs.lambda.ai/...)' or 'billing rule not stated: per second
        assumed'."""
        if self.stated:
            return f"billed {self.billing.describe()} ({self.billing_source})"
        return f"billing rule not stated: {ASSUMED.describe()} without minimum assumed"


def _number(text: str, where: str, row: int, field: str) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise DataError(where, f"{text!r} is not a number", row=row, field=field) from None
    if value < 0:
        raise DataError(where, "must not be negative", row=row, field=field)
    return value


@cache
def providers() -> dict[str, Provider]:
    """Every provider of the table, by key (checked: numbers, and a source for a stated rule)."""
    where = f"whichgpu/catalog/prices/{TABLE}"
    text = resources.files("whichgpu.catalog.prices").joinpath(TABLE).read_text("utf-8")
    out: dict[str, Provider] = {}
    for i, row in enumerate(csv.DictReader(text.splitlines()), start=2):
        inc = _number(row["billing_increment_s"], where, i, "billing_increment_s")
        minimum = _number(row["billing_minimum_s"], where, i, "billing_minimum_s")
        source = row["billing_source"].strip() or None
        if (inc is None) != (source is None):
            raise DataError(where, "a billing rule needs its source, and a source its rule",
                            row=i, field="billing_source")
        if not row["billing_note"].strip():
            raise DataError(where, "say what the rule is or that it is not stated", row=i,
                            field="billing_note")
        billing = ASSUMED if inc is None else BillingRule(increment_s=inc or 1,
                                                          minimum_s=minimum or 0)
        key = row["provider"].strip()
        out[key] = Provider(key, row["name"].strip(), row["gpuhunt"].strip() or None, billing,
                            source, row["billing_note"].strip())
    return out


def provider(key: str) -> Provider:
    """A provider by key; an unknown one gets its key as name and the assumed rule."""
    known = providers()
    if key in known:
        return known[key]
    return Provider(key, key, None, ASSUMED, None,
                    "not in whichgpu's provider table; per second without minimum assumed")


@cache
def _by_name() -> dict[str, Provider]:
    return {p.name.lower(): p for p in providers().values()}


def stated_by_name(name: str | None) -> bool | None:
    """Whether the provider displayed as ``name`` states its billing rule (None: not a
    provider of the table, e.g. an article's set or a user's own file)."""
    found = _by_name().get((name or "").strip().lower())
    return None if found is None else found.stated
