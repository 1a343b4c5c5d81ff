"""A Job and its offers from the strings a person types (CLI flags, web forms, JSON).

Shared by ``whichgpu recommend`` / ``checklist`` and the web API, so both read the same input
the same way and fail with the same one-line reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from whichgpu.advise.job import Job
from whichgpu.answers.inputs.values import CheckpointEvery, Deadline, LatencyTarget, MoneyAmount
from whichgpu.answers.inputs.work_words import work_words
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Join, Message, msg
from whichgpu.vocabulary import Objective

if TYPE_CHECKING:
    from whichgpu.catalog.gpus import GPU
    from whichgpu.catalog.prices import OfferSelection
    from whichgpu.cost.currency import RateTable

def build_job(workload: Workload, *, tokens: int | str | None = None,
              images: int | str | None = None, videos: int | str | None = None,
              steps: int | str | None = None, train_tokens: int | str | None = None,
              users: int | None = None, tokens_per_s_each: float | None = None,
              tokens_per_day: int | str | None = None,
              concurrency: int | None = None, requests_per_s: str | float | None = None,
              ttft: LatencyTarget | str | None = None, tpot: LatencyTarget | str | None = None,
              objective: str | None = None,
              deadline: str | float | None = None,
              max_price_per_hour: str | MoneyAmount | None = None,
              budget: str | MoneyAmount | None = None, currency: str | None = None,
              spot: bool | None = None, checkpoint_every: str | float | None = None) -> Job:
    """A validated Job: counts like ``1M``, durations like ``2h``, money like ``2EUR``,
    request rates like ``20`` or ``1200/min``, latency targets like ``2s`` or ``60ms@p99``
    (a request hands them in already read: answers/inputs/values.py; text is read here for
    the Python API). What is not given (None) takes the Job's own
    default (advise/job.py), written there only."""
    from whichgpu.answers.inputs.serving import parse_rate
    from whichgpu.units import check_currency, parse_count

    cur = check_currency(currency) if currency else None

    def count(value: int | str | None, field: str) -> int | None:
        """A count as read (a request's WorkCount) or as typed (the Python API's text)."""
        if value is None or value == "":
            return None
        return int(value) if isinstance(value, int) else parse_count(value,
                                                                     what=work_words(field))

    return Job(
        workload, tokens=count(tokens, "tokens"), images=count(images, "images"),
        videos=count(videos, "videos"), steps=count(steps, "steps"),
        train_tokens=count(train_tokens, "train_tokens"), users=users,
        tokens_per_s_each=tokens_per_s_each, tokens_per_day=count(tokens_per_day,
                                                                  "tokens_per_day"),
        concurrency=concurrency, requests_per_s=parse_rate(requests_per_s),
        **_latency_targets(ttft, tpot),
        deadline_s=_seconds(deadline),
        max_price_per_hour=_money(max_price_per_hour, "max_price_per_hour", cur),
        budget=_money(budget, "budget", cur),
        currency=cur, **_given(spot=spot, objective=cast(Objective | None, objective)),
        **_checkpoints(checkpoint_every))  # Job checks the objective


def _seconds(deadline: str | float | None) -> float | None:
    """A deadline in seconds: ``2h`` read (values.Deadline), or seconds already."""
    from whichgpu.units import parse_duration

    if deadline is None or deadline == "":
        return None
    if isinstance(deadline, str):
        return float(Deadline.read(deadline, "deadline"))
    return float(deadline) if isinstance(deadline, Deadline) else parse_duration(deadline)


def _money(value: str | MoneyAmount | None, field: str, currency: str | None):
    """An amount as written (``2EUR``; ``2`` in ``currency``), or None."""
    if isinstance(value, str):
        value = MoneyAmount.read(value, field) if value else None
    return value.money(currency) if value is not None else None


def _given(**values: object) -> dict:
    """The settings given (not None): the rest keep the Job's defaults."""
    return {k: v for k, v in values.items() if v is not None}


def _latency_targets(ttft: LatencyTarget | str | None, tpot: LatencyTarget | str | None
                     ) -> dict:
    """``--ttft 2s`` (a mean) or ``2s@p95`` (a percentile; issue 28), and the same for TPOT."""
    first = LatencyTarget.of(ttft, "ttft")
    each = LatencyTarget.of(tpot, "tpot")
    return {"ttft_s": first.seconds if first else None,
            "tpot_s": each.seconds if each else None,
            "ttft_pct": first.percentile if first else None,
            "tpot_pct": each.percentile if each else None}


def _checkpoints(value: str | float | None) -> dict:
    """``--checkpoint-every``: ``30m``, ``2h``; ``none`` (or ``0``, ``0s``) for no checkpoints
    (values.CheckpointEvery, or seconds already read: 0 for none); nothing given: the stated
    default (cost/spot.py)."""
    if isinstance(value, str):
        value = CheckpointEvery.read(value, "checkpoint_every") if value.strip() else None
    if value is None:
        return {}
    return {"checkpoint_every_s": float(value) or None}  # 0s, none: no checkpoints


def apply_currency(selection: OfferSelection, currency: str | None,
                   rates: RateTable | None = None) -> OfferSelection:
    """The selection in ``currency`` (converted with ``rates``); with no currency asked and
    several present, the most common one, with a warning for the rest."""
    from whichgpu.cost.currency import convert, default_rates
    from whichgpu.units import check_currency

    def converter(money, cur):
        return convert(money, cur, rates)

    said = (rates or default_rates()).conversion_said  # the rates used, their date and age
    if currency:
        return selection.in_currency(check_currency(currency), converter, said)
    if len(selection.currencies()) > 1:
        return selection.in_currency(selection.main_currency() or "USD", converter, said)
    return selection


def priced_offers(prices: str | None, currency: str | None = None,
                  rate: list[str] | None = None, max_age: float | None = None,
                  gpus: list[GPU] | None = None) -> tuple[OfferSelection, RateTable]:
    """The offers a job is priced with (converted to ``currency`` when one is asked), and the
    exchange rates (``rate`` overrides such as ``EURUSD=1.08``).

    Read narrowed by the store: only ``gpus`` (None: every GPU) and only the cheapest offer of
    each kind (GPU, count, currency, spot, billing rule), the only ones a job can be priced on.
    """
    from whichgpu.catalog.prices import current_offers
    from whichgpu.cost.currency import rates_from

    rates = rates_from(rate or [])
    selection = current_offers(prices, max_age_days=max_age, cheapest_only=True,
                               gpus=[g.id for g in gpus] if gpus else None)
    if currency:
        selection = apply_currency(selection, currency, rates)
    return selection, rates


MAX_ONLY = 40  # GPUs compared at once (the web API's bound)


def only_gpus(text: str | None) -> list[GPU] | None:
    """``--only`` / the API's ``only``: ``rtx-4090,a100,h100`` -> catalog GPUs (forgiving
    names, each checked; duplicates dropped; at most 40). None or blank: the whole catalog."""
    from whichgpu.catalog.gpus import default_catalog, resolve_gpu
    from whichgpu.errors import InputError

    if not text:
        return None
    names = [t.strip() for t in str(text).split(",") if t.strip()]
    if len(names) > MAX_ONLY:
        raise InputError(msg("only.too_many", "compare at most {n} GPUs at once", n=MAX_ONLY))
    out: list[GPU] = []
    catalog = default_catalog()
    for n in names:
        res = resolve_gpu(n)
        # a family name ('a100') stands for all its variants: the ranking then picks the
        # cheapest that fits, by its own id (only_notes says so)
        for g in [catalog.get(c) for c in res.candidates] or [res.gpu]:
            if g not in out:
                out.append(g)
    return out or None


def only_notes(text: str | None) -> list[Message]:
    """What ``--only`` read a family name as: all its variants, compared."""
    from whichgpu.catalog.gpus import resolve_gpu

    notes = []
    for n in [t.strip() for t in str(text or "").split(",") if t.strip()]:
        res = resolve_gpu(n)
        if len(res.candidates) > 1:
            notes.append(msg("only.family", "{query!r} covers {ids}: all of them compared, "
                             "the answer names the variant that wins", query=n,
                             ids=Join(res.candidates)))
    return notes
