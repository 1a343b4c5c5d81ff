"""What a recommendation is made of: the options that run the job, the sizes excluded
(with why), your own card, and the recommendation that holds them (with its JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from whichgpu.advise.job import Job
from whichgpu.advise.machines import Machines, Spread
from whichgpu.advise.ranking import _unit_ranked
from whichgpu.catalog.gpus import GPU
from whichgpu.catalog.offers import Offer
from whichgpu.cost.billing import MoneyRange
from whichgpu.estimate.speed import SpeedEstimate
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Message, msg
from whichgpu.units import Money, Range
from whichgpu.vocabulary import ExclusionKind, Objective, Placement, Ranking, WorkKind


@dataclass(frozen=True)
class Option:
    """One GPU configuration that can run the job, with its offer, time and cost."""

    gpu: GPU
    count: int  # GPUs per replica
    offer: Offer
    price_per_hour: Money  # for all GPUs of all replicas (whole instances), job's currency
    time_s: Range | None  # None for open-ended serving and jobs with no amount
    cost: MoneyRange  # total for the job (serving and no amount: per hour)
    memory_bytes: int  # per GPU
    speed: SpeedEstimate
    rate_name: str
    rate: Range
    batch: int = 1
    replicas: int = 1
    notes: tuple[Message, ...] = ()
    near_tie: bool = False
    pareto: bool = False
    layout: str = "single GPU"
    assumptions: tuple[Message, ...] = ()
    unit_cost: MoneyRange | None = None  # no amount given: cost per ``unit`` of work
    unit: Message | None = None
    serving: dict[str, Any] | None = None  # sizing for a request rate (advise/serving.py)
    # spot offers: the expected cost and time with interruptions (advise/spot_risk.py)
    spot_risk: Any = None
    workload: Workload | None = field(default=None, compare=False)  # as run (for --export)
    # the machines rented, as sold (advise/machines.py); None: one machine of the offer
    machines: Machines | None = None
    # more GPUs than one provider is assumed to rent on demand (cost/capacity.py), else None
    over_capacity: Any = None

    @property
    def shape(self) -> Machines:
        """The machines this option rents (one machine of its offer when not set)."""
        if self.machines is not None:
            return self.machines
        return Machines(1, self.offer.gpu_count, self.gpus, self.count, Spread.ONE)

    @property
    def gpus(self) -> int:
        return self.count * self.replicas

    @property
    def label(self) -> Placement:
        return Placement(self.gpu.id, self.gpus)

    @property
    def lacks_fp8(self) -> bool:
        return any(getattr(n, "id", None) == "option.no_fp8" for n in self.notes)

    def to_json(self) -> dict[str, Any]:
        data = {
            "gpu": self.gpu.id, "count": self.gpus,
            "gpus_per_replica": self.count, "replicas": self.replicas, "layout": self.layout,
            "price_per_hour": self.price_per_hour.to_json(),
            "time_s": self.time_s.to_json() if self.time_s else None,
            "cost": self.cost.to_json(), "memory_bytes": self.memory_bytes,
            "headroom_bytes": self.gpu.usable_memory_bytes - self.memory_bytes,
            "rate": {"name": self.rate_name, **self.rate.to_json()}, "batch": self.batch,
            "bound": self.speed.bound, "confidence": self.speed.confidence,
            "precision": self.speed.precision,
            **self.shape.to_json(),
            "offer": {"provider": self.offer.provider, "offer_set": self.offer.offer_set,
                      "gpu_count": self.offer.gpu_count,
                      "instances": self.shape.machines,
                      "spot": self.offer.spot, "billing": self.offer.billing_text(),
                      "region": self.offer.region, "instance_type": self.offer.instance_type,
                      "source": self.offer.source, "observed_at": self.offer.observed_at},
            "pricing": "spot" if self.offer.spot else "on-demand",
            "notes": list(self.notes), "assumptions": list(self.assumptions),
            "near_tie": self.near_tie, "pareto": self.pareto,
            "messages": {"notes": [n.to_json() for n in self.notes],
                         "assumptions": [a.to_json() for a in self.assumptions]},
        }
        if self.unit_cost is not None:
            data["cost_per_unit"] = {"unit": self.unit, **self.unit_cost.to_json(9)}
        if "measured_runs" in self.speed.details:  # the store's runs moved its speed
            data["measured_runs"] = self.speed.details["measured_runs"]
        if self.serving is not None:
            data.update(self.serving)
        if self.over_capacity is not None:
            data["capacity"] = {"gpus_needed": self.shape.paid, "exceeds": True,
                                "ceiling": self.over_capacity.to_json()}
        if self.spot_risk is not None:
            risk = self.spot_risk.to_json()
            data["expected_cost"] = risk["expected_cost"]
            data["spot_risk"] = risk
        return data


@dataclass(frozen=True)
class Exclusion:
    """One GPU size that cannot run the job, and why.

    ``shortfall`` is in the kind's own unit (memory: bytes missing per GPU; deadline: seconds
    late; budget and price: money over; speed: tokens/s missing per user); ``gap`` is the same
    as a fraction of what was needed, so misses of different kinds compare.
    """

    gpu: GPU
    count: int
    kind: ExclusionKind
    reason: Message
    shortfall: float = 0.0
    gap: float = 0.0
    works_with: int | None = None  # the fewest GPUs of this kind that do run the job
    has_offer: bool = True  # the price list rents this GPU (spot or on-demand as asked)

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu.id, "count": self.count, "kind": self.kind,
                "reason": self.reason, "gap": round(self.gap, 6),
                "works_with": self.works_with, "has_offer": self.has_offer,
                "message": self.reason.to_json()}


@dataclass(frozen=True)
class OwnedOption:
    """Your own card (``--gpu 12GB``, ``--gpu-spec``) at one count: owned, not rented.

    It has no rental price: the fit always, the speed and time where the spec gives the
    figures a speed needs (``missing`` otherwise), the cost of owning it per hour of use
    where the spec gives a purchase price and power (``cost_note`` otherwise).
    """

    gpu: GPU
    count: int
    fits: bool
    memory_bytes: int
    reason: Message  # the fit in words
    option: Option | None = None  # time and rate (price: the ownership cost, or 0 if unknown)
    missing: tuple[str, ...] = ()  # --gpu-spec keys a speed still needs
    cost_per_hour: Money | None = None  # owning it, per hour of use, all `count` cards
    cost_note: Message | str = ""
    notes: tuple[Message, ...] = ()

    def to_json(self) -> dict[str, Any]:
        o = self.option
        data: dict[str, Any] = {
            "gpu": self.gpu.id, "count": self.count, "owned": True, "fits": self.fits,
            "memory_bytes": self.memory_bytes, "usable_bytes": self.gpu.usable_memory_bytes,
            "reason": self.reason, "rental_price": None,
            "missing_for_speed": list(self.missing),
            "cost_per_hour": self.cost_per_hour.to_json() if self.cost_per_hour else None,
            "cost_note": self.cost_note, "notes": list(self.notes),
        }
        if o is not None:
            data.update({"layout": o.layout, "time_s": o.time_s.to_json() if o.time_s else None,
                         "rate": {"name": o.rate_name, **o.rate.to_json()},
                         "bound": o.speed.bound, "confidence": o.speed.confidence,
                         "cost": o.cost.to_json() if self.cost_per_hour else None})
        return data


@dataclass
class Recommendation:
    job: Job
    currency: str
    options: list[Option]
    excluded: list[Exclusion]
    explanation: list[Message] = field(default_factory=list)
    what_would_change: list[Message] = field(default_factory=list)
    closest: Message | None = None
    max_gpus: int | None = None
    only: list[str] | None = None  # the GPUs compared when narrowed (catalog ids)
    offered: frozenset[str] = frozenset()  # GPU ids the price list rents (as asked: spot or not)
    owned: list[OwnedOption] = field(default_factory=list)  # your own card, at each count
    # your own card when it heads the answer: it runs the job, at no more than the best
    # rental by the ranking's key, or nothing rented does (advise/owned_verdict.py)
    owned_head: OwnedOption | None = None

    @property
    def best(self) -> Option | None:
        return self.options[0] if self.options else None

    @property
    def ranked_by(self) -> Ranking:
        """What the options are sorted by."""
        if self.job.objective == Objective.TIME:
            return Ranking.FASTEST_PER_USER if self.job.per_hour else Ranking.SHORTEST_TIME
        from whichgpu.advise.goodput import ranks_on_goodput  # issue 28

        if ranks_on_goodput(self.job):
            return Ranking.GOODPUT
        if self.job.per_hour or (self.job.kind == WorkKind.NONE and not _unit_ranked(self.job)):
            return Ranking.COST_PER_HOUR
        if self.job.kind == WorkKind.NONE:
            return Ranking.COST_PER_UNIT
        return Ranking.TOTAL_COST

    @property
    def ranking_unit(self) -> Message | None:
        """The unit of work a cost-per-unit ranking is quoted per ('1M training tokens')."""
        if self.ranked_by is not Ranking.COST_PER_UNIT:
            return None
        return next((o.unit for o in self.options if o.unit),
                    msg("unit.work", "unit of work"))

    @property
    def ranking(self) -> Message | Ranking:
        """What the options are sorted by, in words ('cost per 1M training tokens')."""
        unit = self.ranking_unit
        if unit is not None:
            return msg("ranking.per_unit", "cost per {unit}", unit=unit)
        return self.ranked_by

    def pareto(self) -> list[Option]:
        return [o for o in self.options if o.pareto]

    @property
    def understood(self) -> Message:
        """The work the answer understood, in one sentence (advise/understood.py)."""
        from whichgpu.advise.understood import understood

        return understood(self.job)

    def to_json(self) -> dict[str, Any]:
        from whichgpu.advise.collector import paced  # as the answer itself (collector.py)

        with paced():
            return self._json()

    def _json(self) -> dict[str, Any]:
        w = self.job.workload
        return {
            "model": w.model.name, "task": w.task, "quant": w.quant_name,
            "job": {"kind": self.job.kind, "amount": self.job.amount,
                    "objective": self.job.objective},
            "understood": self.understood, "assumptions": _assumed(self.job),
            "ranking": self.ranking,
            "ranked_by": self.ranked_by, "ranking_unit": self.ranking_unit,
            "currency": self.currency,
            "max_gpus": self.max_gpus, "only": self.only,
            "options": [o.to_json() for o in self.options],
            "pareto": [o.label for o in self.pareto()],
            "excluded": [e.to_json() for e in self.excluded],
            "explanation": self.explanation,
            "what_would_change": self.what_would_change,
            "closest": self.closest,
            "owned": [o.to_json() for o in self.owned],
            "owned_heads": self.owned_head is not None,
            "messages": {"understood": self.understood.to_json(),
                         "explanation": [m.to_json() for m in self.explanation],
                         "what_would_change": [m.to_json() for m in self.what_would_change]},
        }


def _assumed(job: Job) -> list[dict[str, Any]]:
    from whichgpu.advise.understood import assumed

    return [a.to_json() for a in assumed(job)]
