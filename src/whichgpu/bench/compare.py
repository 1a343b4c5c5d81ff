"""``whichgpu compare`` (S30): the same short job on two cards, in minutes and in money.

The minutes the user saw (or that a command took here) are facts; each is costed on the
card's cheapest offer under its billing rule, where a 15-minute minimum can make the faster
card the cheaper one for a short run (S20). From the first measured card, every other catalog
card is projected through the speed model (with a workload) or through the ratio of dense
BF16 peaks or of memory bandwidths (without one), and marked as projected.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from whichgpu.catalog.gpus import GPU, default_catalog, resolve_gpu
from whichgpu.catalog.offers import Offer
from whichgpu.cost.billing import RunCost, cheapest_offer, run_cost
from whichgpu.cost.currency import RateTable, convert
from whichgpu.errors import InputError, NotFoundError
from whichgpu.estimate.speed import DoesNotFit, SpeedEstimate, estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.units import Money, check_currency, format_duration, parse_duration

BOUNDS = ("auto", "compute", "memory")


@dataclass(frozen=True)
class Measured:
    gpu: GPU
    seconds: float
    text: str  # what the user wrote
    note: str | None = None  # how an ambiguous card name was read


def parse_measured(pairs: Iterable[str]) -> list[Measured]:
    """``["h100=12m", "a100=21m"]`` -> cards and seconds; card names are forgiving."""
    out: list[Measured] = []
    for text in pairs:
        card, sep, duration = str(text).partition("=")
        if not sep or not card.strip() or not duration.strip():
            raise InputError(f"cannot read {text!r}: write CARD=DURATION, e.g. h100=12m or "
                             "a100=1h5m")
        try:
            res = resolve_gpu(card.strip())
        except NotFoundError as exc:
            raise InputError(f"{text!r}: {exc}") from None
        try:
            seconds = parse_duration(duration.strip())
        except InputError as exc:
            raise InputError(f"{text!r}: {exc}") from None
        if seconds <= 0:
            raise InputError(f"{text!r}: a run must take longer than zero")
        if any(m.gpu.id == res.gpu.id for m in out):
            raise InputError(f"{res.gpu.id} is measured twice; give each card once")
        out.append(Measured(res.gpu, seconds, text, res.note))
    if not out:
        raise InputError("nothing measured: give CARD=DURATION pairs, e.g. --measured h100=12m "
                         "a100=21m")
    return out


@dataclass(frozen=True)
class Row:
    """One card: its minutes (measured or projected) and the cost of one run."""

    gpu: GPU
    seconds: float | None
    measured: bool
    method: str
    run: RunCost | None = None
    cost: Money | None = None  # in the display currency
    reason: str | None = None  # why there is no time or no cost

    @property
    def minutes(self) -> float | None:
        return None if self.seconds is None else self.seconds / 60

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "gpu": self.gpu.id, "name": self.gpu.name,
            "minutes": None if self.minutes is None else round(self.minutes, 4),
            "seconds": self.seconds, "measured": self.measured, "projected": not self.measured,
            "method": self.method,
            "cost": self.cost.to_json() if self.cost else None,
            "billed_minutes": round(self.run.billed_s / 60, 4) if self.run else None,
            "offer": None, "reason": self.reason}
        if self.run:
            o = self.run.offer
            data["offer"] = {"provider": o.provider, "offer_set": o.offer_set,
                             "price_per_hour": o.price_per_hour.to_json(),
                             "gpu_count": o.gpu_count, "billing": o.billing.describe(),
                             "billing_increment_s": o.billing.increment_s,
                             "billing_minimum_s": o.billing.minimum_s,
                             "spot": o.spot, "source": o.source,
                             "observed_at": o.observed_at}
            data["cost_in_offer_currency"] = self.run.cost.to_json()
        return data


@dataclass
class Comparison:
    rows: list[Row]
    reference: str  # the measured card projections start from
    projection: str  # how other cards were projected
    currency: str
    prices: str | None  # None: the market prices
    count: int
    assumptions: list[str] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)  # model vs a 2nd measured card

    def _cheapest(self, rows: list[Row]) -> Row | None:
        priced = [(r.cost.amount, r) for r in rows if r.cost is not None]
        return min(priced, key=lambda p: p[0], default=(0.0, None))[1]

    @property
    def cheaper(self) -> Row | None:
        """The measured card whose run costs least."""
        return self._cheapest([r for r in self.rows if r.measured])

    @property
    def cheapest(self) -> Row | None:
        """The cheapest card of all, measured or projected."""
        return self._cheapest(self.rows)

    def to_json(self) -> dict[str, Any]:
        cheaper, cheapest = self.cheaper, self.cheapest
        return {
            "cards": [r.to_json() for r in self.rows],
            "cheaper": cheaper.gpu.id if cheaper else None,
            "cheapest": ({"gpu": cheapest.gpu.id, "measured": cheapest.measured,
                          "cost": cheapest.cost.to_json() if cheapest.cost else None}
                         if cheapest else None),
            "reference": self.reference, "projection": self.projection,
            "currency": self.currency, "prices": self.prices, "count": self.count,
            "checks": self.checks, "assumptions": self.assumptions,
            "source": "S30: run the same short job on two cards and compare the minutes; "
                      "billing rules from the offer set (S20)",
        }


# ------------------------------------------------------------------ projection

_PRIMARY = {"inference": ("output_tokens_per_s", "rate"), "lora": ("tokens_per_s", "rate"),
            "qlora": ("tokens_per_s", "rate"), "full-ft": ("tokens_per_s", "rate"),
            "pretrain": ("tokens_per_s", "rate"), "image": ("images_per_min", "rate"),
            "video": ("seconds_per_video", "time"), "image-lora": ("steps_per_s", "rate")}


def _speed(est: SpeedEstimate, task: str) -> float:
    """A number proportional to how fast the job runs (higher is faster)."""
    key, kind = _PRIMARY[task]
    if kind == "rate":
        return est.rates[key].typical
    return 1 / est.times[key].typical


def peak_speed(gpu: GPU, bound: str) -> float | None:
    """Dense BF16 (else FP16) FLOP/s for compute-bound jobs, bytes/s for memory-bound ones."""
    if bound == "memory":
        return gpu.bandwidth_bytes_per_s
    tf = gpu.tflops("bf16") or gpu.tflops("fp16")
    return tf * 1e12 if tf else None


def _project_by_model(ref: Measured, gpus: list[GPU], w: Workload, count: int,
                      profile: Any) -> tuple[dict[str, tuple[float | None, str]], str]:
    ref_est = estimate_speed(w, ref.gpu, count, profile=profile, check_fit=False)
    ref_speed = _speed(ref_est, w.task)
    key = _PRIMARY[w.task][0]
    out: dict[str, tuple[float | None, str]] = {}
    for g in gpus:
        try:
            est = estimate_speed(w, g, count, profile=profile)
        except DoesNotFit as exc:
            out[g.id] = (None, str(exc))
            continue
        s = _speed(est, w.task)
        out[g.id] = (ref.seconds * ref_speed / s, f"speed model: {key} {s:,.4g} vs "
                     f"{ref_speed:,.4g} on {ref.gpu.id} ({est.bound}-bound)")
    return out, (f"the speed model's {key} for {w.model.name} ({w.task}), relative to "
                 f"{ref.gpu.id}")


def _project_by_peak(ref: Measured, gpus: list[GPU], bound: str
                     ) -> tuple[dict[str, tuple[float | None, str]], str]:
    ref_peak = peak_speed(ref.gpu, bound)
    what = "memory bandwidth" if bound == "memory" else "dense BF16 peak (FP16 where no BF16)"
    if not ref_peak:
        raise InputError(f"{ref.gpu.id} has no {what} in the catalog to project from")
    out: dict[str, tuple[float | None, str]] = {}
    for g in gpus:
        p = peak_speed(g, bound)
        if not p:
            out[g.id] = (None, f"no {what} in the catalog")
            continue
        unit = "GB/s" if bound == "memory" else "TFLOPS"
        scale = 1e9 if bound == "memory" else 1e12
        out[g.id] = (ref.seconds * ref_peak / p,
                     f"{what}: {p / scale:,.0f} vs {ref_peak / scale:,.0f} {unit}")
    return out, (f"ratio of {what} to {ref.gpu.id} ({bound}-bound job assumed; memory not "
                 "checked: give --model to check it)")


def compute_share(ref: Measured, other: Measured) -> float | None:
    """The share of the reference's time that scales with compute, fitted on two cards.

    A roofline split: ``t_other / t_ref = f x (peak_ref / peak_other) + (1 - f) x
    (bandwidth_ref / bandwidth_other)``, solved for f and kept within 0..1. None when the two
    cards have the same compute-to-bandwidth ratio (nothing to tell the parts apart).
    """
    pc = [peak_speed(g, "compute") for g in (ref.gpu, other.gpu)]
    pm = [peak_speed(g, "memory") for g in (ref.gpu, other.gpu)]
    (c_ref, c_other), (m_ref, m_other) = pc, pm
    if not (c_ref and c_other and m_ref and m_other):
        return None
    rc, rm = c_ref / c_other, m_ref / m_other
    if abs(rc - rm) < 0.02 * rm:
        return None
    f = (other.seconds / ref.seconds - rm) / (rc - rm)
    return min(1.0, max(0.0, f))


def _project_by_split(ref: Measured, f: float, fitted_on: str, gpus: list[GPU]
                      ) -> tuple[dict[str, tuple[float | None, str]], str]:
    pc, pm = peak_speed(ref.gpu, "compute"), peak_speed(ref.gpu, "memory")
    assert pc and pm  # compute_share fitted f on the reference's peaks
    out: dict[str, tuple[float | None, str]] = {}
    for g in gpus:
        gc, gm = peak_speed(g, "compute"), peak_speed(g, "memory")
        if not gc or not gm:
            out[g.id] = (None, "no dense BF16/FP16 peak or bandwidth in the catalog")
            continue
        ratio = f * pc / gc + (1 - f) * pm / gm
        out[g.id] = (ref.seconds * ratio, f"{f:.0%} of the time scaled by dense BF16 peak, "
                     f"{1 - f:.0%} by memory bandwidth")
    return out, (f"a compute/memory split of the job's time fitted on {ref.gpu.id} and "
                 f"{fitted_on}: {f:.0%} compute-bound, {1 - f:.0%} memory-bound (memory not "
                 "checked: give --model to check it)")


# ------------------------------------------------------------------ costing

def _cost(gpu: GPU, seconds: float | None, offers: list[Offer], currency: str,
          rates: RateTable | None, count: int, spot: bool
          ) -> tuple[RunCost | None, Money | None, str | None]:
    if seconds is None:
        return None, None, None
    offer = cheapest_offer(offers, gpu.id, currency, rates, gpus=count, spot=spot)
    if offer is None:
        kind = "spot" if spot else "on-demand"
        return None, None, f"no {kind} offer for {gpu.id} in the offer set"
    rc = run_cost(offer, seconds, gpus=count)
    return rc, convert(rc.cost, currency, rates), None


def compare(measured: list[Measured], offers: list[Offer], *, prices: str | None,
            currency: str | None = None, rates: RateTable | None = None, count: int = 1,
            spot: bool = False, workload: Workload | None = None, bound: str = "auto",
            project: bool = True, profile: Any | None = None,
            gpus: Iterable[GPU] | None = None) -> Comparison:
    """Cost each measured run and project the other cards from the first measured one."""
    if not measured:
        raise InputError("nothing measured")
    if bound not in BOUNDS:
        raise InputError(f"--bound must be compute or memory, got {bound!r}")
    if count < 1:
        raise InputError(f"--count must be at least 1, got {count}")
    if currency:
        currency = check_currency(currency)
    else:
        first = next((o for o in offers if o.gpu == measured[0].gpu.id), None)
        currency = (first or offers[0]).price_per_hour.currency if offers else "USD"
    ref = measured[0]
    rows: list[Row] = []
    for m in measured:
        rc, cost, why = _cost(m.gpu, m.seconds, offers, currency, rates, count, spot)
        rows.append(Row(m.gpu, m.seconds, True, "measured", rc, cost, why))
    others = [g for g in (gpus or default_catalog().gpus)
              if g.id not in {m.gpu.id for m in measured}]
    projection = "none"
    checks: list[dict[str, Any]] = []
    if project:
        targets = others + [m.gpu for m in measured[1:]]
        share = (compute_share(ref, measured[1]) if bound == "auto" and len(measured) > 1
                 else None)
        checked = measured[1:]
        if workload is not None:
            times, projection = _project_by_model(ref, targets, workload, count, profile)
        elif share is not None:
            times, projection = _project_by_split(ref, share, measured[1].gpu.id, targets)
            checked = measured[2:]
        else:
            times, projection = _project_by_peak(ref, targets,
                                                 "compute" if bound == "auto" else bound)
        for m in checked:
            t, how = times[m.gpu.id]
            if t is not None:
                checks.append({"gpu": m.gpu.id, "measured_minutes": m.seconds / 60,
                               "projected_minutes": t / 60, "error": t / m.seconds - 1,
                               "method": how})
        for g in others:
            t, how = times[g.id]
            rc, cost, why = _cost(g, t, offers, currency, rates, count, spot)
            rows.append(Row(g, t, False, how if t is not None else "not projected", rc, cost,
                            why if t is not None else how))
    assumptions = [f"measured: {m.gpu.id} {format_duration(m.seconds)} ({m.text})"
                   + (f"; {m.note}" if m.note else "") for m in measured]
    assumptions.append(f"each run costed on the cheapest {'spot' if spot else 'on-demand'} "
                       f"offer for {count} GPU(s) in {prices or 'the market prices'}, under "
                       "that offer's billing rule")
    if project:
        assumptions.append(f"projected from {ref.gpu.id} by {projection}")
    if checks:
        errs = ", ".join(f"{c['gpu']} {c['error']:+.0%}" for c in checks)
        assumptions.append(f"the projection, checked on the other measured card(s): {errs}")
    rows.sort(key=lambda r: (not r.measured, r.seconds is None,
                             r.cost is None, r.cost.amount if r.cost else 0, r.seconds or 0))
    return Comparison(rows, ref.gpu.id, projection, currency, prices, count, assumptions,
                      checks)


# ------------------------------------------------------------------ running a command

def time_command(argv: list[str], *, to_stderr: bool = False) -> float:
    """Run the user's command here and return its wall-clock seconds.

    ``to_stderr`` sends the command's output to stderr (so ``--json`` output stays clean). A
    command that cannot start is bad input (exit 2); one that fails has no meaningful time.
    """
    import io
    import subprocess
    import sys
    import time

    from whichgpu.errors import WhichGPUError

    if not argv:
        raise InputError("no command to run: write it after --, e.g. whichgpu compare -- "
                         "python train.py --max-steps 50")
    stdout: Any = None
    if to_stderr:
        try:
            stdout = sys.stderr.fileno()
        except (AttributeError, io.UnsupportedOperation):
            stdout = subprocess.PIPE  # stderr is not a file (captured): pass the text on
    t0 = time.perf_counter()
    try:
        done = subprocess.run(argv, stdout=stdout, check=False, text=True)
    except FileNotFoundError:
        raise InputError(f"command not found: {argv[0]}") from None
    except OSError as exc:
        raise InputError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    seconds = time.perf_counter() - t0
    if done.stdout:
        sys.stderr.write(done.stdout)
    if done.returncode != 0:
        raise WhichGPUError(f"the command failed (exit status {done.returncode}) after "
                            f"{format_duration(seconds)}: a failed run's time is not a "
                            "measurement")
    return seconds


def median_error(checks: list[dict[str, Any]]) -> float | None:
    return statistics.median(abs(c["error"]) for c in checks) if checks else None


def looks_like_pair(text: str) -> bool:
    return bool(re.fullmatch(r"[^=\s]+=[0-9.,]+\s*[a-zA-Z][a-zA-Z0-9. ]*", text.strip()))
