"""How a provider bills a run (its increment and minimum charge), as a value the offers, the
provider table and the cost module share."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from whichgpu.errors import InputError
from whichgpu.messages import Message, msg


class BillingRule(BaseModel):
    """How a provider rounds a run: billed in steps of ``increment_s`` after ``minimum_s``.

    S20: "per minute after a 15-minute minimum" is ``BillingRule(increment_s=60, minimum_s=900)``.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use (gpus._Frozen)

    increment_s: float = Field(default=1, gt=0)
    minimum_s: float = Field(default=0, ge=0)

    def billed_seconds(self, duration_s: float) -> float:
        """Seconds charged for a run of ``duration_s`` seconds."""
        if duration_s < 0 or math.isnan(duration_s):
            raise InputError(f"a run cannot last {duration_s} s")
        if math.isinf(duration_s):
            return duration_s
        steps = math.ceil(round(duration_s / self.increment_s, 9))
        return max(self.minimum_s, steps * self.increment_s)

    def describe(self) -> Message:
        """How the rule bills: 'per second', 'per minute after a 15-minute minimum'."""
        step = int(self.increment_s)
        unit = (msg("billing.second", "per second") if step == 1 else
                msg("billing.minute", "per minute") if step == 60 else
                msg("billing.hour", "per hour") if step == 3600 else
                msg("billing.step", "per {s:g} s", s=self.increment_s))
        if self.minimum_s:
            return msg("billing.minimum", "{unit} after a {minutes:g}-minute minimum",
                       unit=unit, minutes=self.minimum_s / 60)
        return unit
