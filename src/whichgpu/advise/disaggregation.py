"""``recommend ... --requests-per-s R --disaggregate``: the cheapest prefill/decode split on
the GPUs the colocated sizing priced, and whether it beats them serving both phases together.

The candidates are the GPUs of the recommendation's options (the cheapest four per GPU-hour),
at their offers' price per GPU-hour; prefill and decode may run on different kinds. Each pool
is sized by estimate/disaggregation.py. The KV cache crosses the server's own link (NVLink,
PCIe) when both pools are the same card and fit one server, else the link between servers
(``--interconnect``, or the speed constants' default network).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from whichgpu.estimate.disaggregation import (
    DecodeInstance,
    Plan,
    PrefillInstance,
    decode_instance,
    network_link,
    plan,
    prefill_instance,
    server_link,
)
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import Money

CANDIDATE_GPUS = 4
#: within this share, the two layouts cost about the same
EVEN_WITHIN = 0.05


class Verdict(StrEnum):
    """Which way of serving the rate costs less."""

    DISAGGREGATED = "disaggregated"
    COLOCATED = "colocated"
    EVEN = "even"
    NO_PLAN = "no-plan"


@dataclass(frozen=True)
class Disaggregation:
    """The split, its cost, the colocated option it is compared with, and why."""

    verdict: Verdict
    plan: Plan | None
    cost_per_hour: Money | None
    colocated_cost_per_hour: Money | None
    colocated_gpus: int | None
    colocated_label: Message | None
    said: list[Message] = field(default_factory=list)
    same_card: Any = None  # the colocated option on the split's card (one kind in both pools)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": str(self.verdict),
                "plan": self.plan.to_json() if self.plan else None,
                "cost_per_hour": self.cost_per_hour.to_json() if self.cost_per_hour else None,
                "colocated": {"cost_per_hour": self.colocated_cost_per_hour.to_json()
                              if self.colocated_cost_per_hour else None,
                              "gpus": self.colocated_gpus,
                              "layout": str(self.colocated_label)
                              if self.colocated_label else None},
                "same_card": None if self.same_card is None else {
                    "gpu": self.same_card.gpu.id, "gpus": self.same_card.gpus,
                    "cost_per_hour": self.same_card.price_per_hour.to_json()},
                "explanation": [str(m) for m in self.said]}


def _per_gpu_hour(option: Any) -> Money:
    return option.price_per_hour / max(option.gpus, 1)


def disaggregate(rec: Any, profile: Any = None, offers: Any = None,
                 rates: Any = None) -> Disaggregation:
    """The cheapest split for the rate job of ``rec`` (a Recommendation from
    advise/serving.recommend_for_rate) and the verdict against its colocated options. With
    ``offers`` (the price list the recommendation ranked), each pool is priced as the machines
    an offer sells that hold its instances (advise/machines.py), as the colocated options are;
    without, at the cheapest option's price per GPU-hour."""
    from whichgpu.advise.serving import TP_DEGREES, ms
    from whichgpu.estimate.speed.hardware import server_size

    job = rec.job
    w = job.workload
    options = [o for o in rec.options if not o.offer.spot]
    if not options:
        return Disaggregation(Verdict.NO_PLAN, None, None, None, None, None, [msg(
            "disagg.no_options", "No GPU serves this rate with a priced on-demand offer, so "
            "there is no prefill/decode split to compare either.")])
    best_colocated = min(options, key=lambda o: (o.price_per_hour.amount, o.gpus))
    # the GPUs of the best-ranked options and the cheapest per GPU-hour (a split may put a
    # cheap card on one phase), each at its cheapest offer
    by_gpu: dict[str, Any] = {}
    for o in sorted(options, key=lambda o: _per_gpu_hour(o).amount):
        by_gpu.setdefault(o.gpu.id, o)
    wanted = [o.gpu.id for o in options[:CANDIDATE_GPUS]] + list(by_gpu)[:CANDIDATE_GPUS]
    candidates = [by_gpu[g] for g in dict.fromkeys(wanted)]
    max_gpus = getattr(rec, "max_gpus", None)
    degrees = [tp for tp in TP_DEGREES if max_gpus is None or tp <= max_gpus]
    prefills: list[PrefillInstance] = []
    decodes: list[DecodeInstance] = []
    for o in candidates:
        for tp in degrees:
            p = prefill_instance(w, o.gpu, tp, profile)
            d = decode_instance(w, o.gpu, tp, profile)
            if p is not None:
                prefills.append(p)
            if d is not None:
                decodes.append(d)
    price = {o.gpu.id: _per_gpu_hour(o) for o in candidates}
    pools = _Pools(w, offers, rec.currency, rates, price)
    best: tuple[float, int, Plan] | None = None
    for p in prefills:
        for d in decodes:
            got = _plan_for(w, job, p, d, server_size(d.gpu, w.gpus_per_node))
            if got is None:
                continue
            if max_gpus is not None and got.gpus > max_gpus:
                continue
            pre = pools.cost(p.gpu.id, p.tp, got.prefill_instances)
            dec = pools.cost(d.gpu.id, d.tp, got.decode_instances)
            if pre is None or dec is None:  # no machine on sale holds a pool's instances
                continue
            key = (pre + dec, got.gpus, got)
            if best is None or key[:2] < best[:2]:
                best = key
    colocated = best_colocated.price_per_hour
    label = msg("disagg.colocated", "{n} replica(s) of {count} x {gpu}",
                n=best_colocated.replicas, count=best_colocated.count,
                gpu=best_colocated.gpu.id)
    if best is None:
        return Disaggregation(Verdict.NO_PLAN, None, None, colocated, best_colocated.gpus,
                              label, [msg("disagg.none", "No prefill/decode split of the "
                                          "priced GPUs meets the targets: a prefill or decode "
                                          "instance misses its target even unloaded.")])
    cost_amount, _, chosen = best
    cost = Money(cost_amount, colocated.currency)
    share = cost.amount / colocated.amount - 1 if colocated.amount else 0.0
    verdict = (Verdict.EVEN if abs(share) <= EVEN_WITHIN else
               Verdict.DISAGGREGATED if share < 0 else Verdict.COLOCATED)
    said = [
        msg("disagg.plan", "Prefill/decode split: {ratio}, {n_p} prefill instance(s) of {tp_p} "
            "x {gpu_p} and {n_d} decode instance(s) of {tp_d} x {gpu_d} ({gpus} GPUs, {cost} "
            "per hour); TTFT about {ttft}, TPOT about {tpot}.", ratio=chosen.ratio,
            n_p=chosen.prefill_instances, tp_p=chosen.prefill.tp, gpu_p=chosen.prefill.gpu.id,
            n_d=chosen.decode_instances, tp_d=chosen.decode.tp, gpu_d=chosen.decode.gpu.id,
            gpus=chosen.gpus, cost=cost, ttft=ms(chosen.ttft_s), tpot=ms(chosen.tpot_s)),
        msg("disagg.kv", "Each request's KV cache ({mb:,.0f} MB for {prompt:,} prompt tokens) "
            "crosses {link} in {time}, counted whole in the TTFT; that link is {load:.0%} busy.",
            mb=chosen.kv_bytes / 1e6, prompt=w.prompt_tokens or 0, link=_link_words(chosen),
            time=ms(chosen.transfer_s), load=chosen.link_load),
    ]
    bought = pools.said(chosen)
    if bought is not None:
        said.append(bought)
    said.append(_verdict_said(verdict, chosen, cost, colocated, label, share, job))
    same = _same_card(options, chosen)
    if same is not None and same is not best_colocated:
        said.append(msg("disagg.same_card", "The same cards serving both phases together: "
                        "{n} replica(s) of {count} x {gpu}, {gpus} GPUs at {cost} per hour.",
                        n=same.replicas, count=same.count, gpu=same.gpu.id, gpus=same.gpus,
                        cost=same.price_per_hour))
    said.append(msg("disagg.not_modelled", "Not modelled in the split: layer-wise KV "
                    "streaming, prefix caching, and expert or attention data parallelism "
                    "across instances."))
    return Disaggregation(verdict, chosen, cost, colocated, best_colocated.gpus, label, said,
                          same)


class _Pools:
    """What a pool of ``n`` instances of ``tp`` x one GPU costs an hour: the cheapest
    on-demand offer whose machines hold them (the machines paid whole), or, with no price
    list given, ``tp`` x ``n`` x the GPU's price per GPU-hour."""

    def __init__(self, w: Any, offers: Any, currency: str, rates: Any,
                 per_gpu: dict[str, Money]) -> None:
        self.w, self.currency, self.rates, self.per_gpu = w, currency, rates, per_gpu
        self.offers = None if offers is None else [o for o in offers if not o.spot]
        self._got: dict[tuple[str, int, int], tuple[float, Any, Any] | None] = {}

    def _cheapest(self, gpu: str, tp: int, n: int) -> tuple[float, Any, Any] | None:
        key = (gpu, tp, n)
        if key not in self._got:
            from whichgpu.advise.machines import machines_for
            from whichgpu.cost.currency import convert

            best = None
            for o in self.offers or ():
                if o.gpu != gpu:
                    continue
                got = machines_for(o, self.w, tp, n)
                if got is None:
                    continue
                sized, machines = got
                hourly = convert(sized.price_per_hour, self.currency, self.rates).amount
                hourly *= machines.machines
                if best is None or hourly < best[0]:
                    best = (hourly, sized, machines)
            self._got[key] = best
        return self._got[key]

    def cost(self, gpu: str, tp: int, n: int) -> float | None:
        if self.offers is None:
            return n * tp * self.per_gpu[gpu].amount
        got = self._cheapest(gpu, tp, n)
        return None if got is None else got[0]

    def said(self, chosen: Plan) -> Message | None:
        """Where each pool is bought: its provider and machines (None without a price list)."""
        if self.offers is None:
            return None
        parts = []
        for phase, inst, n in ((msg("disagg.phase.prefill", "prefill"), chosen.prefill,
                                chosen.prefill_instances),
                               (msg("disagg.phase.decode", "decode"), chosen.decode,
                                chosen.decode_instances)):
            got = self._cheapest(inst.gpu.id, inst.tp, n)
            if got is None:
                return None
            hourly, offer, machines = got
            parts.append(msg("disagg.pool.bought", "{phase} on {machines} of {provider} "
                             "({cost} per hour)", phase=phase, machines=machines.describe(),
                             provider=offer.provider, cost=Money(hourly, self.currency)))
        return msg("disagg.pools", "Priced as machines on sale: {pools}.", pools=Join(parts,
                                                                                  "; "))


def _same_card(options: list[Any], chosen: Plan) -> Any:
    """The colocated option on the split's card, where both pools use one kind."""
    if chosen.prefill.gpu.id != chosen.decode.gpu.id:
        return None
    mine = [o for o in options if o.gpu.id == chosen.decode.gpu.id]
    return min(mine, key=lambda o: o.price_per_hour.amount) if mine else None


def _plan_for(w: Any, job: Any, p: PrefillInstance, d: DecodeInstance,
              per_server: int) -> Plan | None:
    """The plan over the server's own link when both pools are the same card and fit one
    server (and no link between servers was named for it), else over the network."""
    kwargs = {"ttft_s": job.ttft_s, "tpot_s": job.tpot_s}
    net = plan(w, job.requests_per_s, p, d, network_link(d.gpu, w.interconnect), **kwargs)
    if p.gpu.id != d.gpu.id:
        return net
    inside = plan(w, job.requests_per_s, p, d, server_link(d.gpu), **kwargs)
    if inside is not None and inside.gpus <= per_server:
        return inside
    return net


def _link_words(chosen: Plan) -> Message | str:
    link = chosen.link
    if not link.between_servers:
        return msg("disagg.link.server", "the server's {kind}", kind=link.name)
    if link.name == "network":
        return msg("disagg.link.default", "the default network between servers (no {flag} "
                   "given)", flag=Field("interconnect"))
    return link.name


def _verdict_said(verdict: Verdict, chosen: Plan, cost: Money, colocated: Money, label: Message,
                  share: float, job: Any) -> Message:
    if verdict == Verdict.DISAGGREGATED:
        return msg("disagg.wins", "Splitting pays here: {cost} per hour against {colocated} "
                   "for {label} serving both phases together ({share:.0%} less).", cost=cost,
                   colocated=colocated, label=label, share=-share)
    why: list[Message] = []
    if chosen.prefill_load < 0.5 or chosen.decode_load < 0.5:
        why.append(msg("disagg.why.rounding", "whole instances round each pool up (prefill "
                       "{p:.0%} busy, decode {d:.0%})", p=chosen.prefill_load,
                       d=chosen.decode_load))
    if chosen.ttft_s > 0 and chosen.transfer_s > 0.1 * chosen.ttft_s:
        why.append(msg("disagg.why.transfer", "the KV transfer is {share:.0%} of the TTFT",
                       share=chosen.transfer_s / chosen.ttft_s))
    why.append(msg("disagg.why.chunked", "chunked prefill already lets the colocated replicas "
                   "mix prompts into decode steps within the targets"))
    if verdict == Verdict.EVEN:
        return msg("disagg.even", "Split or together cost about the same: {cost} per hour "
                   "against {colocated} for {label}.", cost=cost, colocated=colocated,
                   label=label)
    return msg("disagg.loses", "Serving both phases together is cheaper: {colocated} per hour "
               "for {label} against {cost} split ({share:.0%} more): {why}.",
               colocated=colocated, label=label, cost=cost, share=share,
               why=Join(why, "; "))
