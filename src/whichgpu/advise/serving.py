"""Sizing for a request rate: how many replicas of which GPU layout serve ``R`` requests/s of
``P`` prompt and ``O`` output tokens within a TTFT and a TPOT target, at the lowest cost.

For each GPU and each tensor-parallel degree that holds the model (1, 2, 4, 8 GPUs per
replica, within one server), the serving model (estimate/speed/serving.py) gives the highest
rate one replica sustains with its mean TTFT and TPOT within the targets; ``R`` is split evenly
over ``ceil(R / that rate)`` replicas, and every matching offer prices them. Per GPU the
cheapest layout is kept. A layout that misses a target even with one request at a time is
excluded with how close it came and what would meet it (a bigger layout, a looser target).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from whichgpu.advise.targets import Targets, ms
from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate import memo
from whichgpu.estimate.calibration import Calibration
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import Money, Range
from whichgpu.vocabulary import ExclusionKind

if TYPE_CHECKING:
    from whichgpu.advise.options import Option

TP_DEGREES = (1, 2, 4, 8)
#: Without a TTFT or TPOT target, each replica is kept at or below this share of its max
#: throughput: the knee where queueing delay starts to grow fast (an M/G/c queue's wait rises
#: steeply past about 80 % utilisation) - a prior, stated in the answer.
DEFAULT_MAX_UTILISATION = 0.8


# ------------------------------------------------------------------ percentile targets
# (issue 28, item 3): ``--ttft 2s@p95`` sizes replicas on the simulated percentile
# (estimate/speed/serving_sim.py) of requests of the job's lengths arriving as a Poisson
# stream.

PERCENTILE_TARGETS = (50, 90, 95, 99)
_SIM_REQUESTS = 200  # requests per simulated run when sizing on a percentile


def percentile_run(sm, targets: Targets, rate: float):
    """The simulated run (serving_sim.TrafficResult) of one replica at ``rate``: requests of
    the job's lengths arriving as a Poisson stream."""
    from whichgpu.estimate.speed.serving_sim import Arrival, Traffic, simulate
    from whichgpu.estimate.speed.traffic import fixed

    return simulate(sm, Traffic(fixed(sm.prompt, sm.output), Arrival.POISSON, rate,
                                _SIM_REQUESTS))


def _at(spread, pct: int | None) -> float:
    return spread.mean if pct is None else spread.at(pct)


def max_rate_percentile(sm, targets: Targets, mean_rate: float) -> float:
    """The highest Poisson rate at which one replica's simulated TTFT and TPOT percentiles
    meet the targets, to within 1/16 of ``mean_rate`` (where the mean model's means meet
    them; a p90-p99 is higher, so the answer is at or below it): a bisection over a few
    simulated runs."""
    def ok(rate: float) -> bool:
        res = percentile_run(sm, targets, rate)
        # a queue that grows shows in the percentiles
        return targets.met(_at(res.ttft, targets.ttft_pct), _at(res.tpot, targets.tpot_pct))

    hi = max(mean_rate, _tiny(sm))
    if ok(hi):
        return hi
    lo = 0.0
    for _ in range(4):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


@dataclass(frozen=True)
class Layout:
    """One replica layout on one GPU and what it can serve within the targets."""

    gpu: GPU
    tp: int
    model: Any  # ServingModel
    max_rate: float  # requests/s one replica sustains within the targets (0: none)
    idle_ttft_s: float
    idle_tpot_s: float
    memory_bytes: int

    @property
    def feasible(self) -> bool:
        return self.max_rate > 0


def _workload_at(w, tp: int):
    from whichgpu.estimate.memory.fit import layout_for

    return layout_for(w.with_(batch=1), tp)


@dataclass(frozen=True)
class NoLayout:
    """Why one replica of ``tp`` GPUs cannot serve the model: ``need`` bytes per GPU when
    memory is what stops it (0 otherwise), and the reason."""

    reason: str
    need: int = 0


def layout(w, gpu: GPU, tp: int, targets: Targets, *,
           profile: Calibration | None = None) -> Layout | NoLayout:
    """The best one replica of ``tp`` x ``gpu`` can do, or why it cannot run the model."""
    got = _unsized(w, gpu, tp, targets, profile)
    return got if isinstance(got, NoLayout) else _sized(got, targets)


#: ``Layout.max_rate`` of a layout that meets the targets at no load and is not sized yet
_UNSIZED = math.inf


# A layout and its max rate do not depend on the rate asked (only on the workload, the GPU,
# tp, the latency targets and the profile): kept by value across answers, so a question that
# differs only in its request rate re-divides the rate over the same layouts
_LAYOUTS = memo.Table(2048)


def _latency(targets: Targets) -> tuple[Any, ...]:
    """What a layout's search reads of the targets: everything but the rate."""
    return (targets.ttft_s, targets.tpot_s, targets.ttft_pct, targets.tpot_pct)


def _sized(lay: Layout, targets: Targets) -> Layout:
    """``lay`` with its max rate searched (where it meets the targets at no load); kept for
    the layout object (shared across answers by _unsized) and the latency targets."""
    if lay.max_rate != _UNSIZED:
        return lay
    kept = memo.shared(lay.model.workload.model)  # a pasted config's: its answer's own
    key = ("sized", id(lay), _latency(targets))
    hit = _LAYOUTS.get(key) if kept else None
    if hit is not None and hit[0] is lay:
        return cast(Layout, hit[1])
    got = Layout(lay.gpu, lay.tp, lay.model, max_rate(lay.model, targets), lay.idle_ttft_s,
                 lay.idle_tpot_s, lay.memory_bytes)
    if kept:
        _LAYOUTS.put(key, (lay, got))
    return got


def _unsized(w, gpu: GPU, tp: int, targets: Targets,
             profile: Calibration | None) -> Layout | NoLayout:
    """``layout`` before the search for its max rate: max_rate is 0 where even one request
    at a time misses a target, else ``_UNSIZED``. Kept by value (the workload's settings;
    the GPU and the profile by identity; the latency targets; the measured-kernel choice),
    except with a profile whose measured runs move speeds (the store gains runs)."""
    key: Any = None
    if getattr(profile, "measured_runs", None) is None and memo.shared(w.model):
        from whichgpu.estimate.speed.opt_in import opted_in

        try:
            key = ("unsized", id(w.model), memo.workload_settings(w), id(gpu), tp,
                   _latency(targets), id(profile), opted_in())
            hit = _LAYOUTS.get(key)
        except TypeError:  # an unhashable setting: no memo
            key = hit = None
        if hit is not None and hit[0] is w.model and hit[1] is gpu and hit[2] is profile:
            return cast("Layout | NoLayout", hit[3])
    got = _unsized_worked_out(w, gpu, tp, targets, profile)
    if key is not None:
        _LAYOUTS.put(key, (w.model, gpu, profile, got))
    return got


def _unsized_worked_out(w, gpu: GPU, tp: int, targets: Targets,
                        profile: Calibration | None) -> Layout | NoLayout:
    """:func:`_unsized`, worked out."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.speed.serving import ServingModel
    from whichgpu.estimate.workload import tp_problem

    why = tp_problem(w.model, tp)
    if why:
        return NoLayout(f"tensor parallelism over {tp} GPUs does not fit the model: {why}")
    wl = _workload_at(w, tp)
    if wl.pp_degree > 1:
        return NoLayout(f"{tp} GPUs would need pipeline stages")
    need = estimate_memory(wl).total_bytes
    if need > gpu.usable_memory_bytes:
        return NoLayout("does not fit", need)
    try:
        sm = ServingModel(wl, gpu, profile=profile, lengths="mean")
    except InputError as exc:
        return NoLayout(str(exc))
    idle = sm.at_rate(_tiny(sm))
    if not targets.met(idle.ttft_s, idle.tpot_s):
        return Layout(gpu, tp, sm, 0.0, idle.ttft_s, idle.tpot_s, need)
    return Layout(gpu, tp, sm, _UNSIZED, idle.ttft_s, idle.tpot_s, need)


def _tiny(sm) -> float:
    return max(sm.max_requests_per_s * 1e-4, 1e-9)


def max_rate(sm, targets: Targets) -> float:
    """The highest Poisson rate at which one replica's mean TTFT and TPOT meet the targets
    (both grow with the rate), capped at DEFAULT_MAX_UTILISATION of its max throughput when
    no target is set."""
    cap = sm.max_requests_per_s
    if targets.ttft_s is None and targets.tpot_s is None:
        return cap * DEFAULT_MAX_UTILISATION
    if targets.at_percentile:  # issue 28: sized on a percentile, below the means' rate
        from dataclasses import replace

        return max_rate_percentile(sm, targets, max_rate(sm, replace(
            targets, ttft_pct=None, tpot_pct=None)))
    lo, hi = _tiny(sm), cap
    for _ in range(50):
        mid = (lo + hi) / 2
        p = sm.at_rate(mid)
        if not p.saturated and targets.met(p.ttft_s, p.tpot_s):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-4 * hi:
            break
    return lo


def evaluate_layout(job, gpu: GPU, count: int, offers, currency, *, rates=None, profile=None,
                    max_gpus: int | None = None):
    """One replica size (``count`` GPUs, tensor parallel) for a rate job: its Option, or the
    Exclusion saying why not (used to test what a change to the job would do)."""
    targets = Targets(job.requests_per_s, job.ttft_s, job.tpot_s, job.ttft_pct, job.tpot_pct)
    opts, misses = _for_gpu(job, gpu, targets, offers, currency, rates, profile, max_gpus,
                            degrees=(count,))
    return opts[0] if opts else (misses[0] if misses else None)


def _latency_front(job, options: list) -> list:
    """Mark the cost/latency Pareto front (nothing else both cheaper per hour and faster per
    token); ``--objective time`` ranks by TPOT, then TTFT, then cost."""
    from dataclasses import replace

    def tpot(o) -> float:
        return o.serving["tpot_s"]["typical"]

    def cost(o) -> float:
        return o.price_per_hour.amount

    if job.objective == "time":
        options = sorted(options, key=lambda o: (tpot(o), o.serving["ttft_s"]["typical"],
                                                 cost(o)))
    return [replace(o, pareto=not any(cost(p) <= cost(o) and tpot(p) <= tpot(o)
                                      and (cost(p) < cost(o) or tpot(p) < tpot(o))
                                      for p in options)) for o in options]


def _for_gpu(job, gpu: GPU, targets: Targets, offers, currency, rates, profile, max_gpus,
             degrees: tuple[int, ...] = TP_DEGREES):
    """(the cheapest options on this GPU, one per pricing (spot, on-demand), or None; the
    exclusions to report)."""
    from whichgpu.advise.exclusions import _memory_exclusion
    from whichgpu.advise.options import Exclusion
    from whichgpu.estimate.platform import EngineUnavailable, engine_for

    w = job.workload
    try:  # the engine the user named does not run on this card (vLLM on Apple silicon)
        engine_for(w, gpu)
    except EngineUnavailable as exc:
        return None, [Exclusion(gpu, 1, ExclusionKind.ENGINE, exc.why,
                                has_offer=any(o.gpu == gpu.id for o in offers))]
    # --spot prices each GPU on spot (by its expected cost with spare replicas) and on-demand
    # (issue 19): on-demand wins where the spares cost more than the discount saves
    pools = [[o for o in offers if o.gpu == gpu.id and o.spot == spot]
             for spot in ((True, False) if job.spot else (False,))]
    pools = [p for p in pools if p]
    pool = [o for p in pools for o in p]
    from whichgpu.advise.ranking import _ranked

    def cost(o) -> float:
        return _ranked(o.cost, o.spot_risk).typical.amount

    priced: list[Option] = []
    # on-demand, ranked by cost: a layout is chosen only where it is the cheapest
    bounded = _BOUND[0] and not job.spot and not _goodput_ranks(job)
    loaded: list[Layout] = []
    later: list[Exclusion] = []  # the pricing's misses, after the layouts' own

    def price(lay: Layout) -> None:
        """Size and price ``lay`` (unless it cannot be this GPU's cheapest layout)."""
        if bounded and priced and _cost_floor(lay, targets, pool, currency, rates) \
                > min(cost(o) for o in priced) * (1 + 1e-9):
            return  # cannot be this GPU's cheapest layout: not sized, not priced
        lay = _sized(lay, targets)
        if not lay.feasible:  # met one request at a time, at no rate once requests queue
            loaded.append(lay)
            return
        replicas = _replicas(targets, lay)
        if max_gpus is not None and replicas * lay.tp > max_gpus:
            gap = replicas * lay.tp / max_gpus - 1
            later.append(Exclusion(gpu, lay.tp, ExclusionKind.SPEED, msg(
                "exclusion.rate_max_gpus", "needs {n} replicas of {tp} GPU(s) ({gpus} GPUs) for "
                "{rate:g} requests/s, more than {flag}", n=replicas, tp=lay.tp,
                gpus=replicas * lay.tp, rate=targets.requests_per_s,
                flag=Field("max_gpus", max_gpus)), replicas * lay.tp - max_gpus, gap))
            return
        shaped = [_option(job, lay, replicas, targets, p, currency, rates, profile)
                  for p in pools]
        priced.extend(o for o in shaped if o is not None)
        if not any(shaped):  # no machine of this GPU holds the replica's linked GPUs
            from whichgpu.advise.exclusions import _machine_exclusion

            later.append(_machine_exclusion(gpu, lay.tp, replicas, lay.memory_bytes, pool,
                                            lay.model.workload))

    # bounded, with offers: each layout priced as it comes (fewest GPUs first), so a bigger one
    # whose single replica already costs more than the cheapest option found is not even built
    # (its serving model, its max throughput): the same options and exclusions, see
    # _one_replica_floor
    lazy = bounded and bool(pool)
    tried: list[Layout] = []
    misses: list[Exclusion] = []
    for tp in degrees:
        if max_gpus is not None and tp > max_gpus:
            break
        if lazy and priced and _one_replica_floor(w, tp, pool, currency, rates) \
                > min(cost(o) for o in priced) * (1 + 1e-9):
            continue  # see _one_replica_floor: the answer is the same without it
        got = _unsized(w, gpu, tp, targets, profile)
        if isinstance(got, NoLayout):
            if got.need:
                misses.append(_memory_exclusion(gpu, tp, got.need, bool(pool)))
            continue
        tried.append(got)
        if lazy and got.feasible:
            price(got)
    feasible = [lay for lay in tried if lay.feasible]
    if not tried:
        return None, [min(misses, key=lambda m: (m.gap, m.count))] if misses else []
    if not feasible:
        return None, [_latency_miss(gpu, tried, targets, bool(pool))]
    if not pool:
        sized = [_sized(lay, targets) for lay in feasible]
        feasible = [lay for lay in sized if lay.feasible]
        if not feasible:  # met one request at a time, at no rate once requests queue
            return None, [_latency_miss(gpu, sized, targets, False)]
        best = min(feasible, key=lambda lay: math.ceil(targets.requests_per_s / lay.max_rate)
                   * lay.tp)
        n = _replicas(targets, best)
        why = (msg("exclusion.rate_offer.spot", "meets the targets with {n} x {tp} GPU(s) but "
                   "the price list has no spot offer for it", n=n, tp=best.tp) if job.spot else
               msg("exclusion.rate_offer", "meets the targets with {n} x {tp} GPU(s) but the "
                   "price list has no on-demand offer for it", n=n, tp=best.tp))
        return None, [Exclusion(gpu, best.tp, ExclusionKind.OFFER, why, has_offer=False)]
    if not lazy:
        for lay in feasible:
            price(lay)
    misses += later
    if not priced:
        if not misses:
            return None, [_latency_miss(gpu, loaded, targets, True)]
        return None, [min(misses, key=lambda m: (m.gap, m.count))]
    from whichgpu.advise.goodput import layout_key  # issue 28: goodput, when it ranks

    cheapest = [min((o for o in priced if o.offer.spot == spot),
                    key=lambda o: (layout_key(job, o, cost(o)), cost(o), o.gpus, o.layout))
                for spot in dict.fromkeys(o.offer.spot for o in priced)]
    fewest = min(lay.tp for lay in feasible)
    return cheapest, [m for m in misses if m.count < fewest and m.kind == "memory"]


#: Skip the layouts whose cheapest possible price is above the cheapest found (the
#: answer is the same without: tests/advise/test_rate_layout_bound.py switches it off)
_BOUND = [True]


def _goodput_ranks(job) -> bool:
    from whichgpu.advise.goodput import ranks_on_goodput

    return ranks_on_goodput(job)


def _cost_floor(lay: Layout, targets: Targets, pool, currency, rates) -> float:
    """The least hourly price ``lay``'s option could have on ``pool``, before its max rate is
    searched: priced as ``_option`` prices it, at the fewest replicas it could need,
    ``ceil(R / max throughput)`` (the max rate never exceeds the replica's max throughput;
    a machine count never falls as replicas are added, advise/machines.py)."""
    from whichgpu.advise.machines import machines_for
    from whichgpu.cost.currency import convert

    sm = lay.model
    most = max(sm.max_requests_per_s, _tiny(sm))  # max_rate() <= this
    replicas = max(1, math.ceil(targets.requests_per_s / most * (1 - 1e-9)))
    shaped = [got for o in pool
              if (got := machines_for(o, sm.workload, lay.tp, replicas)) is not None]
    return min(((convert(o.price_per_hour, currency, rates) * m.machines).amount
                for o, m in shaped), default=math.inf)


def _one_replica_floor(w, tp: int, pool, currency, rates) -> float:
    """The least hourly price of one replica of ``tp`` GPUs on ``pool``, before any layout of
    ``tp`` GPUs is built: no option of ``tp`` GPUs costs less (``_cost_floor`` prices at least
    one replica, and a machine count never falls as replicas are added, advise/machines.py;
    where no machine holds ``tp`` linked GPUs, none would at more replicas either).

    ``_for_gpu`` skips a layout whose floor is above the cheapest option already priced on the
    GPU: its ``_cost_floor`` would be as high, so it would be neither sized nor priced, and
    whatever else it could add (a layout that does not fit or misses the targets) is an
    exclusion of more GPUs than a layout that is priced, which the GPU's answer drops. (A
    serving replica is an LLM's, whose ``tp`` GPUs ``machines_for`` links all on one machine,
    for ``w`` as for the replica's own copy.)"""
    from whichgpu.advise.machines import machines_for
    from whichgpu.cost.currency import convert

    shaped = [got for o in pool if (got := machines_for(o, w, tp, 1)) is not None]
    return min(((convert(o.price_per_hour, currency, rates) * m.machines).amount
                for o, m in shaped), default=math.inf)


def _replicas(targets: Targets, lay: Layout) -> int:
    return max(1, math.ceil(targets.requests_per_s / lay.max_rate * (1 - 1e-9)))


def _latency_miss(gpu: GPU, tried: list[Layout], targets: Targets, has_offer: bool):
    """The layout of this GPU nearest to meeting the targets at no load, and what would."""
    from whichgpu.advise.options import Exclusion

    def gap(lay: Layout) -> float:
        g = 0.0
        if targets.ttft_s is not None:
            g = max(g, lay.idle_ttft_s / targets.ttft_s - 1)
        if targets.tpot_s is not None:
            g = max(g, lay.idle_tpot_s / targets.tpot_s - 1)
        return g

    near = min(tried, key=lambda lay: (gap(lay), lay.tp))
    said: list[Message] = []
    if targets.tpot_s is not None and near.idle_tpot_s > targets.tpot_s:
        said.append(msg("exclusion.latency.tpot", "TPOT at least {least} even with one request "
                        "at a time ({asked} asked)", least=ms(near.idle_tpot_s),
                        asked=ms(targets.tpot_s)))
    if targets.ttft_s is not None and near.idle_ttft_s > targets.ttft_s:
        said.append(msg("exclusion.latency.ttft", "TTFT at least {least} ({asked} asked)",
                        least=ms(near.idle_ttft_s), asked=ms(targets.ttft_s)))
    if not said:  # each layout meets the targets at no load, none at any rate
        said.append(msg("exclusion.latency.loaded", "meets the targets with one request at a "
                        "time, but not at their percentile once requests share the GPU"))
    would: list[Field] = []
    if targets.tpot_s is not None and near.idle_tpot_s > targets.tpot_s:
        would.append(Field("tpot", f"{math.ceil(near.idle_tpot_s * 1e3 * 1.05)}ms"))
    if targets.ttft_s is not None and near.idle_ttft_s > targets.ttft_s:
        would.append(Field("ttft", f"{math.ceil(near.idle_ttft_s * 1e3 * 1.05)}ms"))
    bigger = [t for t in TP_DEGREES if t > near.tp]
    hints: list[Message] = []
    if would:
        hints.append(msg("exclusion.latency.would", "; would meet it: {flags}",
                         flags=Join(would, " and ")))
    if bigger and near.tp == max(lay.tp for lay in tried):
        hints.append(msg("exclusion.latency.bigger", ", or more GPUs per replica (tp={tp}) "
                         "where the model splits", tp=bigger[0]))
    reason = msg("exclusion.latency", "{said}{hints}", said=Join(said, "; "),
                 hints=Join(hints, ""))
    return Exclusion(gpu, near.tp, ExclusionKind.LATENCY, reason, gap(near), gap(near),
                     has_offer=has_offer)


def _option(job, lay: Layout, replicas: int, targets: Targets, pool, currency, rates,
            profile):
    from whichgpu.advise.machines import machines_for
    from whichgpu.advise.options import Option
    from whichgpu.cost.billing import MoneyRange
    from whichgpu.cost.currency import convert
    from whichgpu.estimate.speed import estimate_speed
    from whichgpu.estimate.speed.result import speed_family
    from whichgpu.estimate.speed.serving_bands import serving_range, wide_range_reasons

    sm = lay.model
    per_replica = targets.requests_per_s / replicas
    point = sm.at_rate(per_replica)
    # each replica on its own machine, which holds the replica's tp GPUs (advise/machines.py)
    shaped = [got for o in pool
              if (got := machines_for(o, sm.workload, lay.tp, replicas)) is not None]
    if not shaped:
        return None
    priced = [(o, m, convert(o.price_per_hour, currency, rates) * m.machines) for o, m in shaped]
    offer, machines, price = min(priced, key=lambda p: (p[2].amount, p[0].provider))
    family = speed_family(sm.workload.model)
    ttft = serving_range(point.ttft_s, "ttft", family)
    tpot = serving_range(point.tpot_s, "tpot", family)
    out_per_h = targets.requests_per_s * sm.output * 3600
    total_per_h = targets.requests_per_s * (sm.prompt + sm.output) * 3600
    per_m_out = Money(price.amount / out_per_h * 1e6, price.currency)
    per_m_all = Money(price.amount / total_per_h * 1e6, price.currency)
    speed = estimate_speed(sm.workload, lay.gpu, lay.tp, profile=profile, check_fit=False,
                           saturation=False)
    tokens = Range.point(targets.requests_per_s * sm.output)
    layout_text = (msg("layout.tp", "tp={tp}", tp=lay.tp) if replicas == 1 else
                   msg("layout.rate.one", "{n} replicas of 1 GPU", n=replicas) if lay.tp == 1
                   else msg("layout.rate", "{n} replicas of {tp} GPUs, tp={tp}", n=replicas,
                            tp=lay.tp))
    notes = [msg("option.rate", "{n} replica(s) x {tp} GPU(s), each at {rate:.3g} requests/s "
                 "({load:.0%} of the {most:.3g} it can serve)", n=replicas, tp=lay.tp,
                 rate=per_replica, load=point.utilisation, most=sm.max_requests_per_s)]
    notes.extend(wide_range_reasons(family, {"ttft": ttft, "tpot": tpot}))  # issue 30: > 5x
    if targets.ttft_s is None and targets.tpot_s is None:
        notes.append(msg("option.rate.no_target", "no TTFT or TPOT target: each replica kept "
                         "at or below {cap:.0%} of its max throughput",
                         cap=DEFAULT_MAX_UTILISATION))
    serving = {
        "replicas": replicas, "tp": lay.tp, "ttft_s": ttft.to_json(),
        "tpot_s": tpot.to_json(), "utilisation": round(point.utilisation, 4),
        "requests_per_s_per_replica": round(per_replica, 6),
        "max_requests_per_s_per_replica": round(lay.max_rate, 6),
        "replica_max_throughput_requests_per_s": round(sm.max_requests_per_s, 6),
        "decode_batch": round(point.decode_batch, 2),
        "meets_targets": targets.met(point.ttft_s, point.tpot_s),
        "meets_targets_at_slow_end": targets.met(ttft.high, tpot.high),
        "cost_per_hour": price.to_json(),
        "cost_per_million_tokens": {"output": per_m_out.to_json(),
                                    "input_and_output": per_m_all.to_json()},
        "engine": sm.config.to_json(), "kv_capacity": sm.capacity.to_json(),
        "batch_limit": sm.limit, "limited_by": sm.limited_by,
    }
    if targets.at_percentile:  # issue 28: the simulated percentiles at this replica's rate
        run = percentile_run(sm, targets, per_replica)
        serving["percentiles"] = run.to_json()
        serving["meets_targets"] = targets.met(_at(run.ttft, targets.ttft_pct),
                                               _at(run.tpot, targets.tpot_pct))
        notes.append(msg("option.rate.percentile", "simulated over {n} requests of the stated "
                         "lengths arriving at random (Poisson): TTFT p50 {t50}, p95 {t95}, "
                         "p99 {t99}; TPOT p50 {o50}, p99 {o99}", n=_SIM_REQUESTS,
                         t50=ms(run.ttft.p50), t95=ms(run.ttft.p95), t99=ms(run.ttft.p99),
                         o50=ms(run.tpot.p50), o99=ms(run.tpot.p99)))
        from whichgpu.advise.goodput import goodput_of

        serving["goodput"] = goodput_of(run, targets, replicas)
    if sm.steps.path == "measured":  # issue 28: measured kernels timed the steps (opt-in)
        from whichgpu.estimate.speed.kernel_db import version

        serving["step_times"] = sm.steps.label
        notes.append(msg("option.rate.step_times.measured", "step times: aiconfigurator-core "
                         "{version} measured kernels", version=version() or "?"))
    elif sm.steps.why:  # asked for, not covered: whichgpu's model, and why
        serving["step_times"] = sm.steps.label
        notes.append(msg("option.rate.step_times.model", "step times: whichgpu's model "
                         "(measured kernels asked for, but {why})", why=sm.steps.why))
    risk = None
    if offer.spot:  # issue 19: spare replicas keep the rate served through interruptions
        from whichgpu.advise.spot_risk import spot_risk

        risk = spot_risk(job, sm.workload, offer, lay.tp, replicas, None, speed, price, rates)
        from whichgpu.cost.spot import SpotServing

        if isinstance(risk, SpotServing):  # a service's spot risk: replicas and spares
            serving["expected_cost_per_hour"] = risk.cost_per_hour.to_json()
    return Option(lay.gpu, lay.tp, offer, price, None, MoneyRange(price, price, price),
                  lay.memory_bytes, speed, "output_tokens_per_s", tokens,
                  batch=int(round(point.decode_batch)), replicas=replicas, notes=tuple(notes),
                  layout=layout_text, assumptions=tuple(_pricing_assumptions(offer, machines,
                                                                            lay.gpu, speed))
                  + (tuple(risk.assumptions) if risk is not None else ()),
                  serving=serving, spot_risk=risk, workload=sm.workload, machines=machines)


def _pricing_assumptions(offer, machines, gpu, speed=None) -> list[Message]:
    from whichgpu.advise.machines import offer_assumptions

    link = getattr(speed, "scalars", {}).get("link")  # the link the speed model used
    return offer_assumptions(offer, machines, gpu, str(link) if link else None)


def _serving_lines(rec, targets: Targets) -> list[Message]:
    """What the sizing assumed, after the first line of the explanation."""
    if not rec.options:
        return []
    best = rec.options[0]
    s = best.serving
    per_m = s["cost_per_million_tokens"]
    sm_lines = [
        msg("serving.sized", "Sized for {targets} of {prompt:,} prompt and {output:,} output "
            "tokens (Poisson arrivals, mean TTFT and TPOT): {n} replica(s) of {count} x {gpu}, "
            "each at {load:.0%} of its max throughput; TTFT about {ttft} ({ttft_low}-{ttft_high}), "
            "TPOT about {tpot} ({tpot_low}-{tpot_high}).", targets=targets.describe(),
            prompt=rec.job.workload.prompt_tokens, output=rec.job.workload.output_tokens,
            n=s["replicas"], count=best.count, gpu=best.gpu.id,
            load=s["utilisation"], ttft=ms(s["ttft_s"]["typical"]),
            ttft_low=ms(s["ttft_s"]["low"]), ttft_high=ms(s["ttft_s"]["high"]),
            tpot=ms(s["tpot_s"]["typical"]), tpot_low=ms(s["tpot_s"]["low"]),
            tpot_high=ms(s["tpot_s"]["high"])),
        msg("serving.cost", "Cost per 1M output tokens {output:.4g} {currency} (per 1M input + "
            "output tokens {both:.4g}).", output=per_m["output"]["amount"],
            currency=best.price_per_hour.currency, both=per_m["input_and_output"]["amount"]),
    ]
    sm_lines.append(msg("serving.not_modelled", "Not modelled: speculative decoding, "
                        "prefix-cache hits (give the uncached part of the prompt as {flag}) and "
                        "tail percentiles (the targets are met on the mean).",
                        flag=Field("prompt_tokens")) if not targets.at_percentile else
                    msg("serving.not_modelled.percentile", "Not modelled: speculative decoding "
                        "and prefix-cache hits (give the uncached part of the prompt as {flag}); "
                        "the percentiles are simulated, the ranges above are means.",
                        flag=Field("prompt_tokens")))
    if best.workload is not None and best.workload.lora_adapters:
        sm_lines.append(_lora_line(best.workload, s["batch_limit"]))
    if not s["meets_targets_at_slow_end"]:
        sm_lines.append(msg("serving.slow_end", "The slow end of the ranges misses a target: "
                            "add a replica for headroom if the targets are hard limits."))
    return sm_lines


def _lora_line(w, batch_limit: int) -> Message:
    """What a request rate's sizing takes of many LoRA adapters: the GPU slots its memory
    holds (sized at one sequence, so one adapter per batch), what mixing adapters in a batch
    would add, and their compute, which the step times the rate is sized on leave out, said
    with its published cost (estimate/multi_lora.py) rather than left out unsaid."""
    from whichgpu.estimate.multi_lora import cost_range, lora_plan

    plan, cost = lora_plan(w), cost_range()
    mix = max(plan.max_loras, min(plan.adapters, int(batch_limit)))
    return msg("serving.lora", "{n:,} LoRA adapter(s) of rank {rank}: the memory above holds "
               "{slots} adapter slot(s) per GPU, so one batch serves {slots} adapter(s) at a "
               "time; mixing up to {mix:,} in a batch takes {extra:.2f} GB more per GPU, out "
               "of the KV cache. All {n:,} wait in host RAM ({host:.2f} GB). Their compute is "
               "not in the sized rate: adapters cost {low:.0%}-{high:.0%} of the throughput "
               "(typical {typical:.0%}; vLLM and punica measurements), so keep that much "
               "headroom or a replica more.", n=plan.adapters, rank=plan.rank,
               slots=plan.max_loras, mix=mix,
               extra=(mix - plan.max_loras) * plan.slot_bytes / 1e9,
               host=plan.host_bytes / 1e9, low=cost.low, high=cost.high,
               typical=cost.typical)
