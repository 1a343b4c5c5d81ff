"""Ranking GPUs for an RL post-training job (GRPO, PPO): every GPU x count the offers price,
each planned by ``estimate/rl.py`` (policy + reference + critic + the rollout engine: memory
per GPU and time per step), the ones that fit ranked by cost per step (or time per step).

The planning itself is the caller's (``plan_for(gpu, count)``), so this module knows no
request: it prices, filters and orders."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from whichgpu.errors import InputError
from whichgpu.messages import Message, msg
from whichgpu.units import GB, Money, Range
from whichgpu.vocabulary import Objective

if TYPE_CHECKING:
    from whichgpu.catalog.gpus import GPU
    from whichgpu.catalog.offers import Offer
    from whichgpu.estimate.rl import RLPlan

#: machine sizes tried for each GPU (the counts rentals come in, 1 to 8 per server)
COUNTS = (1, 2, 4, 8)


@dataclass(frozen=True)
class RLOption:
    """One GPU x count that runs the job: its plan, its price and its cost per step."""

    gpu: GPU
    count: int
    offer: Offer  # the cheapest machine of this GPU sold with ``count`` GPUs
    price_per_hour: Money
    plan: RLPlan
    cost_per_step: Money
    steps: int | None = None

    @property
    def step_s(self) -> Range:
        return self.plan.times["step_s"]

    @property
    def total_time_s(self) -> Range | None:
        return self.step_s.scale(self.steps) if self.steps else None

    @property
    def total_cost(self) -> Money | None:
        return self.cost_per_step * self.steps if self.steps else None

    def to_json(self, rank: int) -> dict[str, Any]:
        p = self.plan
        total = self.total_time_s
        cost = self.total_cost
        return {
            "rank": rank, "gpu": self.gpu.id, "count": self.count,
            "training_gpus": p.settings.training_gpus, "rollout_gpus": p.settings.rollout_gpus,
            "provider": self.offer.provider, "offer_gpu_count": self.offer.gpu_count,
            "price_per_hour": self.price_per_hour.to_json(4),
            "per_training_gpu_bytes": p.peak_training_gpu_bytes,
            "per_rollout_gpu_bytes": p.peak_rollout_gpu_bytes,
            "usable_bytes": p.usable_bytes,
            "step_s": self.step_s.to_json(4),
            **{k: r.to_json(4) for k, r in p.times.items() if k != "step_s"},
            "dominant": p.dominant, "suggested_rollout_gpus": p.suggested_rollout_gpus,
            "cost_per_step": self.cost_per_step.to_json(6),
            "steps": self.steps,
            "time_s": total.to_json(1) if total else None,
            "cost": cost.to_json(4) if cost else None,
            "offer_source": self.offer.source, "offer_observed_at": self.offer.observed_at,
        }


@dataclass(frozen=True)
class RLExclusion:
    """A GPU x count that cannot run the job, and why."""

    gpu: GPU
    count: int
    reason: Message

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu.id, "count": self.count, "reason": str(self.reason),
                "reason_id": self.reason.id}


def cheapest_machines(offers: Iterable[Offer], spot: bool) -> dict[tuple[str, int], Offer]:
    """The cheapest offer of each (GPU, GPU count) machine on sale (on-demand only unless
    ``spot``): an RL job's GPUs train together, so they are one machine, never several
    1-GPU offers priced as if they were."""
    best: dict[tuple[str, int], Offer] = {}
    for o in offers:
        if o.spot and not spot:
            continue
        have = best.get((o.gpu, o.gpu_count))
        if have is None or o.price_per_hour.amount < have.price_per_hour.amount:
            best[(o.gpu, o.gpu_count)] = o
    return best


def rank_rl(plan_for: Callable[[GPU, int], RLPlan], offers: Iterable[Offer], *,
            gpus: list[GPU] | None = None, max_gpus: int | None = None, spot: bool = False,
            objective: Objective = Objective.COST, steps: int | None = None,
            ) -> tuple[list[RLOption], list[RLExclusion]]:
    """Every priced GPU x count (1, 2, 4, 8; at most ``max_gpus``) planned; the ones that fit
    ranked by cost per step (``objective`` time: by time per step), the rest with why."""
    from whichgpu.catalog.gpus import get_gpu

    wanted = {g.id for g in gpus} if gpus else None
    counts = [n for n in COUNTS if max_gpus is None or n <= max_gpus] or [1]
    options: list[RLOption] = []
    excluded: list[RLExclusion] = []
    machines = cheapest_machines(offers, spot)
    for gid in sorted({g for g, _ in machines}):
        if wanted is not None and gid not in wanted:
            continue
        gpu = get_gpu(gid)
        for n in counts:
            offer = machines.get((gid, n))
            if offer is None:  # no machine of n of these GPUs is on sale in this list
                continue
            try:
                p = plan_for(gpu, n)
            except InputError as exc:  # e.g. more rollout GPUs asked than this count has
                excluded.append(RLExclusion(gpu, n, _said(exc)))
                continue
            if not p.fits:
                excluded.append(RLExclusion(gpu, n, _no_fit(p)))
                continue
            price = offer.price_per_hour
            options.append(RLOption(gpu, n, offer, price, p,
                                    price * (p.times["step_s"].typical / 3600), steps))
    if objective is Objective.TIME:
        options.sort(key=lambda o: (o.step_s.typical, o.cost_per_step.amount))
    else:
        options.sort(key=lambda o: (o.cost_per_step.amount, o.step_s.typical))
    return options, excluded


def _said(exc: InputError) -> Message:
    m = exc.args[0] if exc.args else None
    return m if isinstance(m, Message) else msg("rl.rank.refused", "{why}", why=str(exc))


def _no_fit(p: RLPlan) -> Message:
    usable = (p.usable_bytes or 0) / GB
    if p.peak_rollout_gpu_bytes is not None and p.peak_rollout_gpu_bytes > (p.usable_bytes or 0):
        return msg("rl.rank.rollout_too_big", "the rollout engine needs {need:.1f} GB per "
                   "rollout GPU, {have:.1f} GB usable", need=p.peak_rollout_gpu_bytes / GB,
                   have=usable)
    return msg("rl.rank.too_big", "needs {need:.1f} GB per training GPU (policy, reference, "
               "critic and the colocated rollout engine's share), {have:.1f} GB usable",
               need=p.peak_training_gpu_bytes / GB, have=usable)


#: the plan's phases (estimate/rl.py ``dominant``) in words
_PHASES = {"rollout": msg("rl.phase.rollout", "generating the rollouts"),
           "training": msg("rl.phase.training", "training the policy"),
           "weight_sync": msg("rl.phase.sync", "the weight sync")}


def explain_rl(options: list[RLOption], excluded: list[RLExclusion],
               objective: Objective) -> list[Message]:
    """What the ranking says first: the best option, what dominates its step, and how many
    GPUs the rollouts should get; or that nothing fits."""
    if not options:
        return [msg("rl.rank.none", "no priced GPU configuration of up to 8 GPUs holds this RL "
                    "job ({n} tried); a smaller model, LoRA/QLoRA, fewer completions per step "
                    "or shorter completions need less memory", n=len(excluded))]
    best = options[0]
    p = best.plan
    said = [msg("rl.rank.best", "{count} x {gpu} at {price}/h: {step:.1f} s per step "
                "({low:.1f}-{high:.1f} s), {cost} per step, ranked by {objective}",
                count=best.count, gpu=best.gpu.id, price=best.price_per_hour,
                step=best.step_s.typical, low=best.step_s.low, high=best.step_s.high,
                cost=best.cost_per_step, objective=objective)]
    if p.dominant:
        said.append(msg("rl.rank.dominant", "{part} dominates the step ({share:.0%} of it)",
                        part=_PHASES.get(p.dominant, p.dominant),
                        share=p.times[f"{p.dominant}_s" if p.dominant != "weight_sync"
                                      else "sync_s"].typical / max(best.step_s.typical, 1e-9)))
    said.extend(p.warnings)  # what stops or slows the best plan as configured (vLLM's share)
    if p.suggested_rollout_gpus is not None and best.count >= 2:
        said.append(msg("rl.rank.split", "on {count} GPUs, about {n} for the rollouts balances "
                        "rollout and training time (the rest train)", count=best.count,
                        n=p.suggested_rollout_gpus))
    if best.total_cost is not None and best.total_time_s is not None:
        said.append(msg("rl.rank.total", "{steps:,} steps: {cost} in about {hours:.1f} h",
                        steps=best.steps, cost=best.total_cost,
                        hours=best.total_time_s.typical / 3600))
    return said
