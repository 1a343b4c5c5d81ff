"""Request traffic (issue 28, item 3): the lengths of the requests a replica serves and how
they arrive, for the step-by-step serving simulation (serving_sim.py).

A :class:`Lengths` draws (prompt, output) pairs:

- ``fixed``: every request the same (benchmarks' ``random`` data set at range ratio 1);
- ``sharegpt`` (the default for sampled traffic): a log-normal prompt and output around the
  means a ShareGPT run printed (serving_constants ``dataset_mean_lengths``), with the spread of
  ``traffic_length_sigma`` and the filter vLLM's and SGLang's benchmark apply to ShareGPT
  (prompt and output at least 4 tokens, prompt at most 1,024, the pair at most 2,048);
- a file: ``prompt,output`` per request (a header line is skipped), or
  ``prompt,output,weight`` as a histogram of length pairs.

Arrivals are Poisson at a rate, a closed loop of users, or a backlog sent at once
(serving_sim.Arrival). Everything is drawn from a seeded generator: the same answer each time.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from whichgpu.errors import InputError


class LengthShape(StrEnum):
    """How request lengths are spread."""

    FIXED = "fixed"
    SHAREGPT = "sharegpt"
    FILE = "file"


@dataclass(frozen=True)
class Lengths:
    """A request-length distribution: draws (prompt tokens, output tokens)."""

    shape: LengthShape
    prompt: float  # mean prompt tokens
    output: float  # mean output tokens
    sigma_prompt: float = 0.0  # log-normal spread (sharegpt)
    sigma_output: float = 0.0
    pairs: tuple[tuple[int, int], ...] = ()  # file: the pairs
    weights: tuple[float, ...] = field(default=(), compare=False)
    source: str = ""
    filtered: bool = True  # sharegpt: the benchmark tools' ShareGPT length filter

    def sample(self, n: int, rng) -> list[tuple[int, int]]:
        """``n`` (prompt, output) pairs."""
        if self.shape is LengthShape.FIXED:
            return [(max(int(round(self.prompt)), 1), max(int(round(self.output)), 1))] * n
        if self.shape is LengthShape.FILE:
            p = None
            if self.weights:
                total = sum(self.weights)
                p = [x / total for x in self.weights]
            idx = rng.choice(len(self.pairs), size=n, p=p)
            return [self.pairs[int(i)] for i in idx]
        out: list[tuple[int, int]] = []
        while len(out) < n:
            k = (n - len(out)) * 2 + 16
            ps = _lognormal(rng, self.prompt, self.sigma_prompt, k)
            os_ = _lognormal(rng, self.output, self.sigma_output, k)
            for a, b in zip(ps, os_, strict=True):
                a, b = int(round(a)), int(round(b))
                if self.filtered:
                    if a < 4 or b < 4 or a > 1024 or a + b > 2048:
                        continue  # the benchmark tools' ShareGPT filter
                else:
                    a = min(max(a, 1), int(8 * self.prompt) + 1)
                    b = min(max(b, 1), int(8 * self.output) + 1)
                out.append((a, b))
                if len(out) == n:
                    break
        return out

    def describe(self) -> str:
        if self.shape is LengthShape.FIXED:
            return f"every request {self.prompt:,.0f} prompt + {self.output:,.0f} output tokens"
        if self.shape is LengthShape.FILE:
            return f"{len(self.pairs):,} length pairs from {self.source}"
        return (f"ShareGPT-like lengths: log-normal around {self.prompt:,.0f} prompt and "
                f"{self.output:,.0f} output tokens (sigma {self.sigma_prompt:g} / "
                f"{self.sigma_output:g})"
                + (", filtered as the benchmark tools filter ShareGPT" if self.filtered
                   else ", within 8x the means"))


def _lognormal(rng, mean: float, sigma: float, n: int):
    """Log-normal draws whose mean is ``mean``. The filter then trims the tail, so the
    sample's mean ends near, not at, ``mean``."""
    mu = math.log(max(mean, 1.0)) - sigma * sigma / 2
    return rng.lognormal(mu, sigma, n)


def sharegpt(prompt: float | None = None, output: float | None = None) -> Lengths:
    """The ShareGPT-like default, around the printed ShareGPT means or the ones given."""
    from whichgpu.estimate.speed.serving_engine import serving_value

    means = serving_value("dataset_mean_lengths")["sharegpt"]
    sig = serving_value("traffic_length_sigma")
    return Lengths(LengthShape.SHAREGPT, float(prompt or means[0]), float(output or means[1]),
                   float(sig["prompt"]), float(sig["output"]))


def spread_around(prompt: float, output: float) -> Lengths:
    """ShareGPT's spread (``traffic_length_sigma``) around a job's own mean lengths, without
    ShareGPT's length filter (a job's lengths may be longer than ShareGPT's); draws are kept
    within 8x the mean."""
    from whichgpu.estimate.speed.serving_engine import serving_value

    sig = serving_value("traffic_length_sigma")
    return Lengths(LengthShape.SHAREGPT, float(prompt), float(output), float(sig["prompt"]),
                   float(sig["output"]), filtered=False)


def fixed(prompt: int, output: int) -> Lengths:
    return Lengths(LengthShape.FIXED, float(prompt), float(output))


def from_file(path: str | Path) -> Lengths:
    """Lengths from a CSV of ``prompt,output`` rows (one per request) or
    ``prompt,output,weight`` (a histogram); a non-numeric first line is a header."""
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the request-length file {str(p)!r}: "
                         f"{exc.strerror or exc}") from None
    pairs: list[tuple[int, int]] = []
    weights: list[float] = []
    for i, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [c.strip() for c in row if c.strip()]
        if not cells or cells[0].startswith("#"):
            continue
        try:
            nums = [float(c) for c in cells]
        except ValueError:
            if i == 1:
                continue  # header
            raise InputError(f"{p.name} line {i}: expected prompt,output[,weight] numbers, "
                             f"got {','.join(cells)!r}") from None
        if len(nums) not in (2, 3) or nums[0] < 1 or nums[1] < 1 or (
                len(nums) == 3 and nums[2] < 0) or not all(map(math.isfinite, nums)):
            raise InputError(f"{p.name} line {i}: expected prompt >= 1, output >= 1 "
                             "[, weight >= 0]")
        pairs.append((int(round(nums[0])), int(round(nums[1]))))
        weights.append(nums[2] if len(nums) == 3 else 1.0)
    if not pairs or sum(weights) <= 0:
        raise InputError(f"{p.name}: no request lengths in the file")
    total = sum(weights)
    prompt = sum(a * w for (a, _), w in zip(pairs, weights, strict=True)) / total
    output = sum(b * w for (_, b), w in zip(pairs, weights, strict=True)) / total
    return Lengths(LengthShape.FILE, prompt, output, pairs=tuple(pairs),
                   weights=tuple(weights), source=p.name)


class LengthRule(StrEnum):
    """Request lengths said relative to the job's own mean prompt and output (the request's
    ``lengths``, read in answers/inputs/traffic.py): the same each time, ShareGPT's spread
    around them, or ShareGPT's own printed means and the tools' filter."""

    FIXED = "fixed"
    SPREAD = "spread"
    SHAREGPT = "sharegpt"


def histogram(pairs: tuple[tuple[int, int], ...], weights: tuple[float, ...]) -> Lengths:
    """Lengths drawn from (prompt, output) pairs with these weights (their sum > 0)."""
    total = sum(weights)
    return Lengths(LengthShape.FILE, sum(a * w for (a, _), w in zip(pairs, weights,
                                                                    strict=True)) / total,
                   sum(b * w for (_, b), w in zip(pairs, weights, strict=True)) / total,
                   pairs=pairs, weights=weights, source="the histogram given")


def lengths_for(asked: Lengths | LengthRule | None, prompt: int, output: int) -> Lengths:
    """The lengths a simulation draws: a histogram as given, or a rule applied to the job's
    mean ``prompt`` and ``output`` (None: fixed)."""
    if isinstance(asked, Lengths):
        return asked
    if asked is None or asked is LengthRule.FIXED:
        return fixed(prompt, output)
    if asked is LengthRule.SPREAD:
        return spread_around(prompt, output)
    return sharegpt()
