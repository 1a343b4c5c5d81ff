"""Request lengths as people type them (``--lengths``; issue 35: read once, in the answer
layer): ``fixed``, ``spread``, ``sharegpt`` or a histogram ``PROMPT:OUTPUT[:WEIGHT],...``.
The simulation (estimate/speed/traffic.py) takes the rule or the histogram."""

from __future__ import annotations

import math

from whichgpu.errors import InputError
from whichgpu.estimate.speed.traffic import LengthRule, Lengths, histogram
from whichgpu.messages import Field, msg


def parse_lengths(text: str | None) -> Lengths | LengthRule | None:
    """A rule over the job's mean lengths (``fixed``, ``spread``, ``sharegpt``) or a
    histogram of (prompt, output) pairs; None or blank: None (fixed)."""
    if text is None or not text.strip():
        return None
    t = text.strip().lower()
    if t in tuple(LengthRule):
        return LengthRule(t)
    pairs: list[tuple[int, int]] = []
    weights: list[float] = []
    for part in t.split(","):
        bits = part.strip().split(":")
        try:
            nums = [float(b) for b in bits]
        except ValueError:
            nums = []
        if len(nums) not in (2, 3) or nums[0] < 1 or nums[1] < 1 or not all(
                map(math.isfinite, nums)) or (len(nums) == 3 and nums[2] < 0):
            raise InputError(msg("traffic.lengths", "{field} {v!r}: use fixed, spread, "
                                 "sharegpt or a histogram like 200:100:3,2000:300:1 (prompt "
                                 "tokens:output tokens:weight)", field=Field("lengths"),
                                 v=text))
        pairs.append((int(round(nums[0])), int(round(nums[1]))))
        weights.append(nums[2] if len(nums) == 3 else 1.0)
    if sum(weights) <= 0:
        raise InputError(msg("traffic.lengths_weight", "{field} {v!r}: the weights add up to "
                             "nothing", field=Field("lengths"), v=text))
    return histogram(tuple(pairs), tuple(weights))
