"""Spot risk: the expected cost and time of a job on interruptible capacity.

A spot offer is cheaper per hour, but an interruption loses the work since the last checkpoint
and costs a restart (a new instance boots, installs the engine, loads the weights and the
checkpoint: billed) after a wait for capacity (not billed). With interruptions arriving at a
rate ``r`` per instance-hour (Poisson) and a job cut into segments of ``s`` seconds (the
checkpoint interval plus the time to write a checkpoint), a segment is retried until it runs
through: ``e^(r s) - 1`` interruptions on average, and ``(e^(r s) - 1) (1/r + restart)`` seconds
on instances (the classic first-order model of checkpoint/restart: J. W. Young, "A first order
approximation to the optimum checkpoint interval", CACM 17(9), 1974; J. T. Daly, "A higher
order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006). A job
without checkpoints is one segment, so its expected time grows exponentially with its length:
why long uncheckpointed jobs belong on on-demand capacity.

Every figure is a low / typical / high range: low pairs the fast end of the speed estimate with
the calm end of the interruption prior, high the slow end with the busy end. A case whose
expected wall time is more than ``NOT_IN_PRACTICE`` times its uninterrupted time does not
finish in practice (the restarts, not the work, set its length): the estimate says so and
prints no figure for it. The expected cost is never below the uninterrupted cost of the same
offer. The rates, restart times and their sources are data: ``cost/data/spot.toml``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from whichgpu.catalog.offers import Offer
from whichgpu.cost.billing import MoneyRange, run_cost
from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Duration, Money, Range

#: Training checkpoints every 30 minutes unless told otherwise. With the GPU prior's typical
#: rate (0.229 interruptions an hour) Young's optimum interval sqrt(2 x write time / rate) is
#: 13 min for a 20 s checkpoint (a LoRA adapter, a 7B model to local disk) and 40 min for a
#: 3 min one (a full fine-tune's weights and optimizer to a network volume): 30 min lies between.
DEFAULT_CHECKPOINT_EVERY_S = 1800.0
#: A job whose expected wall time exceeds this many times its uninterrupted time does not finish
#: in practice: past it restarts, not work, set the length (an uncheckpointed segment's
#: expected retries grow as e^(rate x length); ten times is where a user stops waiting and a
#: launcher's retry budget, dstack's one-day retry duration for a short job, runs out).
NOT_IN_PRACTICE = 10.0
#: An exponent past this is capped (e^40 ~ 2e17 retries): the figure stays a finite float.
_MAX_EXPONENT = 40.0

Basis = Literal["provider", "prior"]
#: what an interruption loses: training resumes from a checkpoint, items (inference) redo
#: only what was in flight
SpotKind = Literal["training", "items"]


@dataclass(frozen=True)
class SpotAssumption:
    """What whichgpu assumes about one provider's spot capacity, and where it comes from."""

    provider: str
    interruptions_per_hour: Range
    basis: Basis  # a rate the provider (or a measurement of it) states, or the stated prior
    source: str
    notice_s: float | None = None
    max_runtime_s: float | None = None
    note: str = ""
    facts: tuple[str, ...] = ()  # what the provider states besides a rate, with sources

    @property
    def mean_hours_between(self) -> Range:
        return self.interruptions_per_hour.inverse()

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider,
                "interruptions_per_hour": self.interruptions_per_hour.to_json(),
                "basis": self.basis, "source": self.source, "notice_s": self.notice_s,
                "max_runtime_s": self.max_runtime_s, "note": self.note,
                "facts": list(self.facts)}


@dataclass(frozen=True)
class RestartAssumption:
    """What one interruption costs besides the lost work (seconds), and the storage rate."""

    boot_setup_s: Range
    capacity_wait_s: Range
    storage_bytes_per_s: Range
    sources: tuple[str, ...]


@dataclass(frozen=True)
class SpotEstimate:
    """A job on a spot offer: expected time and cost beside the uninterrupted ones."""

    offer: Offer
    instances: int
    work_s: Range  # uninterrupted duration
    expected_time_s: Range  # wall time, waits for capacity included
    billed_s: Range  # per instance, restarts included
    interruptions: Range  # expected number
    cost: MoneyRange  # expected
    uninterrupted_cost: MoneyRange
    checkpoint_every_s: float | None  # None: no checkpoints
    checkpoint_write_s: Range
    restart_billed_s: Range
    assumption: SpotAssumption
    restart: RestartAssumption
    #: whether the low / typical / high case finishes in practice (expected wall time within
    #: NOT_IN_PRACTICE times the uninterrupted time)
    finishes: tuple[bool, bool, bool] = (True, True, True)
    kind: SpotKind = "training"  # training (checkpoints) or items (inference, resumes per item)
    assumptions: tuple[Message, ...] = field(default=())

    @property
    def never_finishes(self) -> bool:
        """The high end does not finish in practice."""
        return not self.finishes[2]

    @property
    def finishes_typically(self) -> bool:
        return self.finishes[1]

    def converted(self, currency: str, rates: Any = None) -> SpotEstimate:
        """The same estimate with its costs in ``currency``."""
        from dataclasses import replace

        return replace(self, cost=self.cost.convert(currency, rates),
                       uninterrupted_cost=self.uninterrupted_cost.convert(currency, rates))

    @property
    def overhead(self) -> float:
        """Typical expected cost over the uninterrupted cost, less one (0.12: 12 % more)."""
        base = self.uninterrupted_cost.typical.amount
        return self.cost.typical.amount / base - 1 if base else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "expected_cost": self.cost.to_json(),
            "uninterrupted_cost": self.uninterrupted_cost.to_json(),
            "expected_time_s": self.expected_time_s.to_json(),
            "uninterrupted_time_s": self.work_s.to_json(),
            "billed_s": self.billed_s.to_json(), "interruptions": self.interruptions.to_json(),
            "checkpoint_every_s": self.checkpoint_every_s,
            "checkpoint_write_s": self.checkpoint_write_s.to_json(),
            "restart_billed_s": self.restart_billed_s.to_json(),
            "capacity_wait_s": self.restart.capacity_wait_s.to_json(),
            "instances": self.instances, "never_finishes": self.never_finishes,
            "finishes_in_practice": dict(zip(("low", "typical", "high"), self.finishes,
                                             strict=True)),
            "not_in_practice_beyond": f"an expected wall time over {NOT_IN_PRACTICE:g} x the "
                                      "uninterrupted time",
            "kind": self.kind,
            "interruption": self.assumption.to_json(), "assumptions": list(self.assumptions),
        }


# ------------------------------------------------------------------------------- data

def _range(table: dict[str, Any], key: str) -> Range:
    v = table[key]
    return Range(float(v["low"]), float(v["typical"]), float(v["high"]))


@cache
def _data() -> dict[str, Any]:
    from whichgpu.parse_cache import cached_toml

    return cached_toml("whichgpu.cost", "data/spot.toml")


def prior() -> SpotAssumption:
    """The stated prior every provider without a rate of its own uses."""
    p = _data()["prior"]
    return SpotAssumption("any", _range(p, "interruptions_per_hour"), "prior", p["source"])


def restart_assumption() -> RestartAssumption:
    r = _data()["restart"]
    return RestartAssumption(_range(r, "boot_setup_s"), _range(r, "capacity_wait_s"),
                             _range(r, "storage_bytes_per_s"),
                             (r["boot_setup_source"], r["capacity_wait_source"],
                              r["storage_source"]))


def providers() -> dict[str, dict[str, Any]]:
    """The provider entries of the data file, by key."""
    return dict(_data()["provider"])


def spot_assumption(provider: str) -> SpotAssumption:
    """The interruption assumption for ``provider`` (its display name, as offers carry it)."""
    base = prior()
    for key, entry in providers().items():
        names = [key, *entry.get("names", [])]
        if provider.strip().lower() not in (n.lower() for n in names):
            continue
        rate = entry.get("interruptions_per_hour")
        facts = tuple(f"{what}: {entry[key + '_source']}" for what, key in
                      (("notice", "notice"), ("maximum run time", "max_runtime"))
                      if entry.get(key + "_source"))
        return SpotAssumption(
            entry.get("names", [key])[0],
            _range(entry, "interruptions_per_hour") if rate else base.interruptions_per_hour,
            "provider" if rate else "prior", entry["rate_source"] if rate else base.source,
            notice_s=entry.get("notice_s"), max_runtime_s=entry.get("max_runtime_s"),
            note=entry.get("note", ""), facts=facts)
    return SpotAssumption(provider, base.interruptions_per_hour, "prior", base.source,
                          note="no entry for this provider: the prior applies")


def target_availability() -> float:
    return float(_data()["serving"]["target_availability"])


# ------------------------------------------------------------------------------- the model

def _segments(work_s: float, every_s: float | None, write_s: float) -> list[float]:
    """The job cut at its checkpoints: each segment's length, the checkpoint write included
    (none after the last segment)."""
    if every_s is None or every_s >= work_s:
        return [work_s]
    full, rest = divmod(work_s, every_s)
    n = int(full)
    segs = [every_s + write_s] * n
    if rest > 1e-9:
        segs.append(rest)
    else:
        segs[-1] = every_s
    return segs


def _expected(segments: list[float], rate_per_s: float, restart_s: float, wait_s: float
              ) -> tuple[float, float, float, bool]:
    """(seconds on instances, wall seconds, expected interruptions, capped) for a job of
    ``segments`` under Poisson interruptions at ``rate_per_s``."""
    if rate_per_s <= 0:
        total = sum(segments)
        return total, total, 0.0, False
    on = wall = fails = 0.0
    capped = False
    for s in segments:
        x = rate_per_s * s
        if x > _MAX_EXPONENT:
            x, capped = _MAX_EXPONENT, True
        f = math.expm1(x)  # expected interruptions before the segment runs through
        fails += f
        on += f * (1 / rate_per_s + restart_s)
        wall += f * (1 / rate_per_s + restart_s + wait_s)
    return on, wall, fails, capped


def young_interval_s(write_s: float, rate_per_hour: float) -> float:
    """Young's optimum checkpoint interval, sqrt(2 x write time / rate) (CACM 1974)."""
    if rate_per_hour <= 0 or write_s <= 0:
        return math.inf
    return math.sqrt(2 * write_s * 3600 / rate_per_hour)


def expected_run(offer: Offer, work_s: Range, *, gpus: int | None = None,
                 checkpoint_every_s: float | None = DEFAULT_CHECKPOINT_EVERY_S,
                 checkpoint_bytes: float = 0.0, load_bytes: float = 0.0,
                 kind: SpotKind = "training",
                 item_s: Range | None = None) -> SpotEstimate:
    """The expected time and cost of a job of ``work_s`` (uninterrupted seconds) on ``offer``.

    ``gpus`` GPUs rent ``ceil(gpus / offer.gpu_count)`` instances; all must run at once, so an
    interruption of any one stops the job (synchronous training). Training resumes from its
    last checkpoint (``checkpoint_every_s``; None: no checkpoints, from the start) after
    writing ``checkpoint_bytes`` each time; inference (``kind="items"``) loses only the items
    in flight (``item_s`` each) and needs no checkpoints. A restart loads ``load_bytes`` (the
    weights, and the checkpoint) from storage.
    """
    from whichgpu.cost.billing import instances_needed

    if checkpoint_every_s is not None and (not math.isfinite(checkpoint_every_s)
                                           or checkpoint_every_s <= 0):
        raise InputError(msg("spot.checkpoint_interval", "a checkpoint interval must be a "
                             "positive duration, got {v}", v=checkpoint_every_s))
    gpus = offer.gpu_count if gpus is None else gpus
    n = instances_needed(offer, gpus)
    assume = spot_assumption(offer.provider)
    rs = restart_assumption()
    storage = rs.storage_bytes_per_s
    write = Range(checkpoint_bytes / storage.high, checkpoint_bytes / storage.typical,
                  checkpoint_bytes / storage.low) if kind == "training" else Range.point(0.0)
    read = Range(load_bytes / storage.high, load_bytes / storage.typical,
                 load_bytes / storage.low)
    restart = Range(rs.boot_setup_s.low + read.low, rs.boot_setup_s.typical + read.typical,
                    rs.boot_setup_s.high + read.high)
    every = checkpoint_every_s if kind == "training" else None
    rate = assume.interruptions_per_hour

    results = []
    for case in ("low", "typical", "high"):
        w = getattr(work_s, case)
        if kind == "items":
            step = getattr(item_s, case) if item_s is not None else 0.0
            segs = _segments(w, step or None, 0.0) if step else [w]
        else:
            segs = _segments(w, every, getattr(write, case))
        r = getattr(rate, case) * n / 3600  # any of the n instances stops the job
        on, wall, fails, _ = _expected(segs, r, getattr(restart, case),
                                       getattr(rs.capacity_wait_s, case))
        starts = 1 + fails
        billed = starts * offer.billing.billed_seconds(on / starts)
        cost = offer.price_per_hour * (n * billed / 3600)
        plain = run_cost(offer, w, gpus=gpus).cost
        if cost.amount < plain.amount:  # never below the uninterrupted cost
            cost = plain
        results.append((wall, billed, fails, cost, plain))
    walls, bills, fail_counts, costs, plains = (sorted(c, key=_key) for c in zip(*results,
                                                                                  strict=True))
    # the cases that finish in practice; sorted as the ranges are (the busy end fails first)
    done = sorted((wall <= NOT_IN_PRACTICE * max(getattr(work_s, case), 1.0)
                   for (wall, *_), case in zip(results, ("low", "typical", "high"), strict=True)),
                  reverse=True)
    estimate = SpotEstimate(
        offer, n, work_s, Range(*walls), Range(*bills), Range(*fail_counts), MoneyRange(*costs),
        MoneyRange(*plains), every, write, restart, assume, rs, tuple(done), kind)
    return _with_assumptions(estimate, kind, item_s)


def _key(v: float | Money) -> float:
    return v.amount if isinstance(v, Money) else v


def _hours(rate: float) -> Duration | Message:
    return Duration(3600 / rate) if rate > 0 else msg("spot.never", "never")


def _with_assumptions(e: SpotEstimate, kind: SpotKind, item_s: Range | None) -> SpotEstimate:
    from dataclasses import replace

    a = e.assumption
    rate = a.interruptions_per_hour
    basis = (msg("spot.basis.prior", "the stated prior") if a.basis == "prior" else
             msg("spot.basis.provider", "the provider rate"))
    lines: list[Message] = [msg(
        "spot.rate", "{provider} spot: {typical:g} interruptions per instance-hour ({low:g}-"
        "{high:g}), one every {every} typically ({basis}; cost/data/spot.toml gives its "
        "sources)", provider=a.provider, typical=rate.typical, low=rate.low, high=rate.high,
        every=_hours(rate.typical), basis=basis)]
    if e.instances > 1:
        lines.append(msg("spot.instances", "{n} instances must all run: an interruption of any "
                         "one stops the job ({n} x the rate)", n=e.instances))
    if kind == "items":
        lines.append(msg("spot.items", "inference resumes per item: an interruption loses the "
                         "items in flight (no checkpoints needed)"))
    elif e.checkpoint_every_s is None:
        lines.append(msg("spot.no_checkpoints", "no checkpoints: an interruption restarts the "
                         "job from the beginning"))
    else:
        lines.append(msg("spot.checkpoints", "a checkpoint every {every} (writing it takes "
                         "{write}); an interruption loses the work since the last one",
                         every=Duration(e.checkpoint_every_s),
                         write=Duration(e.checkpoint_write_s.typical)))
        best = young_interval_s(e.checkpoint_write_s.typical, rate.typical * e.instances)
        if math.isfinite(best) and e.checkpoint_write_s.typical >= 1:
            lines.append(msg("spot.young", "Young's optimum interval for this write time and "
                             "rate: about {best}", best=Duration(best)))
    rs = e.restart
    lines.append(msg(
        "spot.restart", "a restart: boot and setup {boot} plus loading from storage, {billed} "
        "billed ({billed_low}-{billed_high}); waiting for capacity {wait} ({wait_low}-"
        "{wait_high}), not billed", boot=Duration(rs.boot_setup_s.typical),
        billed=Duration(e.restart_billed_s.typical), billed_low=Duration(e.restart_billed_s.low),
        billed_high=Duration(e.restart_billed_s.high), wait=Duration(rs.capacity_wait_s.typical),
        wait_low=Duration(rs.capacity_wait_s.low), wait_high=Duration(rs.capacity_wait_s.high)))
    lines.append(msg("spot.expected", "expected {typical:.2g} interruption(s) ({low:.2g}-"
                     "{high:.2g})", typical=e.interruptions.typical, low=e.interruptions.low,
                     high=e.interruptions.high))
    if a.max_runtime_s and e.work_s.typical > a.max_runtime_s:
        lines.append(msg("spot.max_runtime", "{provider} stops preemptible machines after "
                         "{limit}: a longer run needs checkpoints (or Spot VMs, which have no "
                         "limit)", provider=a.provider, limit=Duration(a.max_runtime_s)))
    if not all(e.finishes):
        which = (msg("spot.unfinished.calm", "even at the calm end of the interruption prior")
                 if not e.finishes[0] else
                 msg("spot.unfinished.typical", "at the typical interruption rate")
                 if not e.finishes[1] else
                 msg("spot.unfinished.busy", "at the busy end of the interruption prior"))
        fix = (msg("spot.fix.checkpoints", "checkpoints ({flag}) or on-demand capacity",
                   flag=Field("checkpoint_every"))
               if kind == "training" and e.checkpoint_every_s is None else
               msg("spot.fix.more_checkpoints", "more frequent checkpoints or on-demand capacity")
               if kind == "training" else msg("spot.fix.on_demand", "on-demand capacity"))
        lines.append(msg("spot.not_in_practice", "{which} the job does not finish in practice: "
                         "its expected time is over {limit:g} x the uninterrupted {work} "
                         "(restarts, not work, set its length); it needs {fix}", which=which,
                         limit=NOT_IN_PRACTICE, work=Duration(e.work_s.typical), fix=fix))
    lines.append(msg("spot.floor", "the expected cost is never below the uninterrupted cost "
                     "of the same offer"))
    return replace(e, assumptions=tuple(lines))


# ------------------------------------------------------------------------------- serving

@dataclass(frozen=True)
class SpotServing:
    """Spot replicas for a service: spares for a target availability, cost per hour."""

    replicas: int
    spares: Range  # spare replicas at the low / typical / high interruption rate
    availability_each: Range  # fraction of time one replica is up (high rate: lowest)
    target: float
    cost_per_hour: MoneyRange  # all replicas and spares, billed fractions included
    assumption: SpotAssumption
    assumptions: tuple[Message, ...] = ()
    uninterrupted_per_hour: MoneyRange | None = None  # the replicas alone, never interrupted

    def to_json(self) -> dict[str, Any]:
        return {"replicas": self.replicas, "spare_replicas": self.spares.to_json(0),
                "availability_each": self.availability_each.to_json(),
                "target_availability": self.target,
                "expected_cost": self.cost_per_hour.to_json(),
                "uninterrupted_cost": (self.uninterrupted_per_hour.to_json()
                                       if self.uninterrupted_per_hour else None),
                "interruption": self.assumption.to_json(), "assumptions": list(self.assumptions)}


def spares_for(replicas: int, up: float, target: float, limit: int = 64) -> int:
    """The fewest spares k so that at least ``replicas`` of ``replicas + k`` are up with
    probability >= ``target``, each up independently a fraction ``up`` of the time."""
    for k in range(limit + 1):
        n = replicas + k
        ok = sum(math.comb(n, i) * up ** i * (1 - up) ** (n - i) for i in range(replicas, n + 1))
        if ok >= target:
            return k
    return limit


def serving_on_spot(offer: Offer, price_per_hour: Money, replicas: int, *,
                    load_bytes: float = 0.0, target: float | None = None) -> SpotServing:
    """What ``replicas`` serving replicas (each at ``price_per_hour``) cost on spot with the
    spares that keep ``replicas`` up ``target`` of the time."""
    target = target_availability() if target is None else target
    if not 0 < target < 1:
        raise InputError(msg("spot.target", "a target availability must be between 0 and 1, "
                             "got {v}", v=target))
    a = spot_assumption(offer.provider)
    rs = restart_assumption()
    storage = rs.storage_bytes_per_s
    read = Range(load_bytes / storage.high, load_bytes / storage.typical,
                 load_bytes / storage.low)
    ups, spares, costs = [], [], []
    for case in ("low", "typical", "high"):
        rate = getattr(a.interruptions_per_hour, case) / 3600
        billed_restart = getattr(rs.boot_setup_s, case) + getattr(read, case)
        down = billed_restart + getattr(rs.capacity_wait_s, case)
        up = 1 / (1 + rate * down)
        k = spares_for(replicas, up, target)
        # a slot is billed while its replica runs or restarts, not while it waits for
        # capacity; but a wait is an outage the spares cover, never a saving: the replicas the
        # service needs are billed in full (the expected cost is at least the uninterrupted one)
        billed_fraction = (1 + rate * billed_restart) / (1 + rate * down)
        ups.append(up)
        spares.append(k)
        costs.append(price_per_hour * max(float(replicas), (replicas + k) * billed_fraction))
    hourly = a.interruptions_per_hour
    lines = (msg("spot.serving.rate", "{provider} spot: {typical:g} interruptions per "
                 "replica-hour ({low:g}-{high:g}); a replaced replica is down for its restart "
                 "and the wait for capacity", provider=a.provider, typical=hourly.typical,
                 low=hourly.low, high=hourly.high),
             msg("spot.serving.spares", "spot replicas need spare capacity: {spares} spare(s) "
                 "({low}-{high}) keep {replicas} replica(s) up {target:.0%} of the time "
                 "(independent interruptions; spread them across zones or providers)",
                 spares=spares[1], low=spares[0], high=spares[2], replicas=replicas,
                 target=target),
             msg("spot.serving.billed", "a replica is billed while it runs and restarts, not "
                 "while it waits for capacity; a wait is an outage the spares cover, not a "
                 "saving: the expected cost is never below the uninterrupted cost of the "
                 "replicas the service needs"))
    plain = price_per_hour * replicas
    return SpotServing(replicas, Range(*spares), Range(ups[2], ups[1], ups[0]), target,
                       MoneyRange(*sorted(costs, key=_key)), a, lines,
                       uninterrupted_per_hour=MoneyRange(plain, plain, plain))
