"""Self-host or pay per token: the self-hosted cost per million input, cached and output tokens
of a serving plan, against providers' per-token prices for the same model, and the
utilisation at which self-hosting breaks even.

For one replica (the plan's GPUs for one copy of the model) at its largest batch:

    cost per request at utilisation u = replica price per hour / (3,600 x u x max requests/s)
    input share  = prefill GPU-seconds / (prefill + decode GPU-seconds) of a request
    self-hosted per 1M input  = cost per request x input share / prompt tokens x 10^6
    self-hosted per 1M output = cost per request x (1 - input share) / output tokens x 10^6
    break-even u* = replica price per hour / (3,600 x max requests/s x API price per request)

A cached prompt token (a prefix-cache hit) skips its prefill: it is counted at no compute
cost self-hosted (the memory its KV holds is already in the plan). The replica is paid for
every hour (rented 24/7 or owned), so an idle hour costs as much as a busy one: ``u`` is the
share of the replica's maximum throughput used, averaged over the day.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from whichgpu.cost.api_prices import ApiPrice
from whichgpu.messages import Message, msg
from whichgpu.units import Money

#: A month of a machine kept up: 365 days x 24 h / 12 (the "730 = 24/7" of the rent-or-buy
#: questions' hours a month)
HOURS_PER_MONTH = 365 * 24 / 12
DAYS_PER_MONTH = 365 / 12


class Verdict(StrEnum):
    """Which costs less a month for a daily volume."""

    API = "api"
    SELF_HOST = "self_host"


@dataclass(frozen=True)
class ApiRow:
    """One provider's price against the self-hosted plan."""

    price: ApiPrice
    per_request: Money  # the API bill for one request of the profile
    break_even_utilisation: float  # share of max throughput; > 1: self-hosting never wins
    per_month: Money | None = None  # a daily volume's requests for a month at this price

    def to_json(self) -> dict[str, Any]:
        return {**self.price.to_json(), "per_request": self.per_request.to_json(6),
                "break_even_utilisation": round(self.break_even_utilisation, 4),
                "self_hosting_can_win": self.break_even_utilisation <= 1.0,
                **({"per_month": self.per_month.to_json(2)} if self.per_month else {})}


@dataclass(frozen=True)
class Monthly:
    """A daily volume a month: the self-hosted replicas kept up against the cheapest API."""

    requests_per_day: float
    replicas: int
    self_per_month: Money  # every replica billed HOURS_PER_MONTH
    busy_per_request: Money  # the secondary figure: a request's cost at 100 % utilisation
    verdict: Verdict | None  # None: no API lists the model
    cheapest: ApiRow | None
    said: Message | None  # the verdict in words

    @property
    def hours_per_month(self) -> float:
        return HOURS_PER_MONTH

    def to_json(self) -> dict[str, Any]:
        return {"requests_per_day": round(self.requests_per_day, 2),
                "replicas": self.replicas, "hours_per_month": HOURS_PER_MONTH,
                "self_hosted_per_month": self.self_per_month.to_json(2),
                "busy_only_per_request": self.busy_per_request.to_json(6),
                "cheapest_api": self.cheapest.price.provider if self.cheapest else None,
                "cheapest_api_per_month": (self.cheapest.per_month.to_json(2)
                                           if self.cheapest and self.cheapest.per_month
                                           else None),
                "verdict": self.verdict, "verdict_said": self.said}


@dataclass(frozen=True)
class VsApi:
    """The answer of ``--vs-api`` for one option of a recommendation."""

    gpu: str
    gpus_per_replica: int
    replica_price_per_hour: Money
    max_requests_per_s: float  # one replica, at its largest batch
    utilisation: float  # the plan's share of max throughput
    prompt_tokens: int
    cached_tokens: int
    output_tokens: int
    input_share: float  # of a request's GPU time
    self_per_million: dict[str, Money]  # input, cached_input, output at the plan's utilisation
    self_per_request: Money
    rows: tuple[ApiRow, ...]
    assumptions: tuple[Message, ...]
    prices_from: dict[str, Any] | None = None  # the API price table's origin and date
    monthly: Monthly | None = None  # a daily volume: the two monthly totals and the verdict
    # the preset whose API rows stand in when no provider lists the model asked for
    prices_of: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            **({"monthly": self.monthly.to_json()} if self.monthly else {}),
            "gpu": self.gpu, "gpus_per_replica": self.gpus_per_replica,
            "replica_price_per_hour": self.replica_price_per_hour.to_json(),
            "max_requests_per_s_per_replica": round(self.max_requests_per_s, 6),
            "utilisation": round(self.utilisation, 4),
            "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
            "output_tokens": self.output_tokens, "input_share": round(self.input_share, 4),
            "self_hosted_per_million_tokens": {k: v.to_json(4)
                                               for k, v in self.self_per_million.items()},
            "self_hosted_per_request": self.self_per_request.to_json(6),
            "api": [r.to_json() for r in self.rows],
            "assumptions": list(self.assumptions),
            **({"prices_from": self.prices_from} if self.prices_from else {}),
            **({"api_prices_of": self.prices_of} if self.prices_of else {}),
        }


def compare(serving_model: Any, replica_price: Money, utilisation: float, cached_tokens: int,
            prices: list[ApiPrice], convert: Any, tokens_per_day: float | None = None,
            replicas: int = 1) -> VsApi:
    """``serving_model``: estimate/speed/serving.ServingModel of one replica;
    ``convert(money, currency)``: the job's exchange rates. With ``tokens_per_day`` (a daily
    volume of generated tokens on ``replicas`` replicas kept up all day), the utilisation is
    the volume's share of their maximum throughput and the answer adds the monthly totals."""
    sm = serving_model
    batch = max(int(sm.limit), 1)
    prompt, output = int(sm.prompt), int(sm.output)
    prefill = sm.steps.prefill_batch(1) if prompt > 0 else 0.0
    decode = output * sm.steps.decode(float(batch)) / batch
    share = prefill / (prefill + decode) if prefill + decode > 0 else 0.0
    r_max = float(sm.max_requests_per_s)
    per_day = None
    if tokens_per_day is not None and output > 0:
        per_day = tokens_per_day / output  # requests a day of the profile
        utilisation = per_day / (86400.0 * r_max * max(replicas, 1))
    u = min(max(utilisation, 1e-9), 1.0)
    cur = replica_price.currency
    per_request = Money(replica_price.amount / (3600.0 * u * r_max), cur)
    per_m = {
        "input": Money(per_request.amount * share / prompt * 1e6 if prompt else 0.0, cur),
        "cached_input": Money(0.0, cur),
        "output": Money(per_request.amount * (1 - share) / output * 1e6, cur),
    }
    rows = []
    for p in prices:
        bill = convert(Money(p.per_request(prompt, cached_tokens, output), p.currency), cur)
        u_star = replica_price.amount / (3600.0 * r_max * bill.amount) if bill.amount else \
            float("inf")
        month = Money(bill.amount * per_day * DAYS_PER_MONTH, cur) if per_day else None
        rows.append(ApiRow(p, bill, u_star, month))
    notes: tuple[Message, ...] = (
        msg("vs_api.paid_always", "the replica is paid for every hour (rented 24/7 or "
            "owned): at {u:.0%} of its {r:.3g} requests/s a request costs {c}", u=u, r=r_max,
            c=per_request),
        msg("vs_api.split", "its cost is split between input and output by GPU time: prefill "
            "{share:.0%}, decode {rest:.0%} of a request at a batch of {batch}", share=share,
            rest=1 - share, batch=batch),
        msg("vs_api.cached", "a cached prompt token skips its prefill: no compute cost "
            "self-hosted; the API bills it at the provider's cached price (the input price "
            "where none is listed)"),
        msg("vs_api.break_even", "break-even utilisation: the share of the replica's maximum "
            "throughput, averaged over the day, at which its hourly price equals the API bill "
            "for the same requests; above 100 %, self-hosting this plan never wins"),
    )
    monthly = None
    if per_day is not None:
        monthly = _monthly(per_day, replicas, replica_price, r_max, u, rows)
        notes = (*notes, msg(
            "vs_api.daily", "a daily volume counts generated tokens: {tokens:,.0f} a day are "
            "{n:,.0f} requests of {p:,} prompt + {o:,} output tokens, {u:.2%} of the maximum "
            "throughput of {replicas} replica(s) kept up 24 h ({r:.3g} requests/s each)",
            tokens=tokens_per_day, n=per_day, p=prompt, o=output, u=u, replicas=replicas,
            r=r_max), msg(
            "vs_api.month", "a month is {h:g} h (365 days x 24 h / 12): the self-hosted "
            "replicas are billed every hour of it, the APIs for the month's requests",
            h=HOURS_PER_MONTH), msg(
            "vs_api.busy_only", "secondary figure, not how a rental bills: billed only while "
            "busy (at 100 % of its throughput) a request would cost {c}",
            c=monthly.busy_per_request))
    return VsApi(sm.gpu.id, int(sm.gpus), replica_price, r_max, u, prompt, cached_tokens,
                 output, share, per_m, per_request, tuple(rows), notes, monthly=monthly)


def _monthly(per_day: float, replicas: int, replica_price: Money, r_max: float, u: float,
             rows: list[ApiRow]) -> Monthly:
    """The monthly totals of a daily volume and which costs less."""
    cur = replica_price.currency
    self_month = Money(replica_price.amount * max(replicas, 1) * HOURS_PER_MONTH, cur)
    busy = Money(replica_price.amount / (3600.0 * r_max), cur)
    priced = [r for r in rows if r.per_month is not None]
    if not priced:
        return Monthly(per_day, replicas, self_month, busy, None, None, None)
    best = min(priced, key=lambda r: r.per_month.amount if r.per_month else 0.0)
    assert best.per_month is not None
    if best.per_month.amount < self_month.amount:
        verdict = Verdict.API
        said = msg("vs_api.verdict.api", "At this volume the API costs less: {provider} "
                   "about {api} a month against {self} a month for the self-hosted replica(s) "
                   "kept up, used at {u:.2%} of their maximum throughput (against {provider}, "
                   "self-hosting breaks even at {be:.0%}).", provider=best.price.provider,
                   api=best.per_month, self=self_month, u=u, be=best.break_even_utilisation) \
            if best.break_even_utilisation <= 1 else \
            msg("vs_api.verdict.api_always", "At this volume the API costs less: {provider} "
                "about {api} a month against {self} a month for the self-hosted replica(s) "
                "kept up, used at {u:.2%} of their maximum throughput (against {provider}, "
                "self-hosting costs more even fully used).", provider=best.price.provider,
                api=best.per_month, self=self_month, u=u)
    else:
        verdict = Verdict.SELF_HOST
        said = msg("vs_api.verdict.self", "At this volume self-hosting costs less: {self} a "
                   "month for the replica(s) kept up, used at {u:.2%} of their maximum "
                   "throughput, against "
                   "{provider} about {api} a month, the cheapest API.", self=self_month, u=u,
                   provider=best.price.provider, api=best.per_month)
    return Monthly(per_day, replicas, self_month, busy, verdict, best, said)


@dataclass(frozen=True)
class RateRow:
    """One provider against a run's cost per million tokens (``cost --vs-api``)."""

    price: ApiPrice
    output_per_mtok: Money  # converted to the run's currency
    break_even_utilisation: float  # the run's typical cost per 1M / the API's output price

    def to_json(self) -> dict[str, Any]:
        return {**self.price.to_json(),
                "output_per_mtok_converted": self.output_per_mtok.to_json(4),
                "break_even_utilisation": round(self.break_even_utilisation, 4),
                "self_hosting_can_win": self.break_even_utilisation <= 1.0}


@dataclass(frozen=True)
class VsApiRate:
    """A run's own cost per million tokens (its GPUs busy at the rate of work) against the
    providers' output prices for a model."""

    model: str
    self_per_million: Any  # cost/billing.MoneyRange
    rows: tuple[RateRow, ...]
    assumptions: tuple[Message, ...]
    prices_from: dict[str, Any] | None = None  # the API price table's origin and date

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model,
                "self_hosted_per_million_tokens": self.self_per_million.to_json(),
                "api": [r.to_json() for r in self.rows], "assumptions": list(self.assumptions),
                **({"prices_from": self.prices_from} if self.prices_from else {})}


def compare_rate(model: str, self_per_million: Any, prices: list[ApiPrice],
                 convert: Any) -> VsApiRate:
    """``self_per_million``: the run's cost per million tokens (a MoneyRange) at its rate of
    work; ``convert(money, currency)``: the run's exchange rates."""
    cur = self_per_million.typical.currency
    rows = []
    for p in prices:
        out = convert(Money(p.output_per_mtok, p.currency), cur)
        rows.append(RateRow(p, out, self_per_million.typical.amount / out.amount))
    notes = (
        msg("vs_api.rate.output", "the work's tokens are compared with each API's output "
            "price: prompt tokens are not counted apart (a recommendation compared with the "
            "APIs splits input, cached and output)"),
        msg("vs_api.rate.busy", "the run's cost per token assumes its GPUs work at the rate "
            "of work for every paid hour; break-even utilisation is the share of paid hours "
            "they must work for the API to cost as much"),
    )
    return VsApiRate(model, self_per_million, tuple(rows), notes)
