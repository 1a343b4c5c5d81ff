"""The five-question checklist (S13): workload, model size, hourly budget, hours per month,
horizon -> which GPU (through the recommender) and rent or buy (through the ownership model).

The answers are not looked up in the article's table: the GPU comes from ``recommend`` (memory
first, then price) and the rent-or-buy verdict from ``rent_or_buy``; the article's own rules
are shown beside them, so a user sees where they agree.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from whichgpu.errors import InputError
from whichgpu.messages import Message, msg
from whichgpu.units import Money
from whichgpu.vocabulary import Ranking, Task

if TYPE_CHECKING:
    from whichgpu.advise.job import Job
    from whichgpu.advise.options import Recommendation
    from whichgpu.catalog.gpus import GPU
    from whichgpu.catalog.offers import Offer
    from whichgpu.cost.currency import RateTable
    from whichgpu.estimate.memo import Table
    from whichgpu.models.spec import ModelSpec

#: the five questions, by the checklist request's field that answers each
QUESTIONS = {
    "workload": "1. What is your workload: training, fine-tuning or inference?",
    "model": "2. How large is your model (e.g. 7B, 70B, or a name such as llama-3.1-8b)?",
    "budget_per_hour": "3. What is your hourly budget (e.g. 1USD, 3EUR; 'none' for no limit)?",
    "hours_per_month": "4. How many hours per month will you use it?",
    "horizon_months": "5. For how many months will you need it?",
}


@dataclass(frozen=True)
class ChecklistAnswers:
    workload: str  # inference | finetune | training
    model: str
    budget_per_hour: Money | None
    hours_per_month: float
    horizon_months: float

    def __post_init__(self) -> None:
        if self.workload not in ("inference", "finetune", "training"):
            raise InputError(msg("checklist.workload", "workload must be training, fine-tuning "
                                 "or inference"))
        check_hours(self.hours_per_month)
        check_horizon(self.horizon_months)


# a denormal (1e-320) is no amount of time to compute with
def check_hours(hours: float) -> float:
    """Question 4's hours of use a month: more than 0, at most 730 (24/7)."""
    if not sys.float_info.min <= hours <= 730:
        raise InputError(msg("checklist.hours", "hours per month must be more than 0 and at "
                             "most 730"))
    return hours


def check_horizon(months: float) -> float:
    """Question 5's horizon: more than 0, at most 120 months."""
    if not sys.float_info.min <= months <= 120:
        raise InputError(msg("checklist.horizon", "the horizon must be more than 0 and at "
                             "most {n} months", n=120))
    return months


@dataclass
class ChecklistResult:
    answers: ChecklistAnswers
    task: Task
    quant: str
    recommendation: Any  # advise.options.Recommendation
    advice: Any | None  # cost.rent_or_buy.Advice for the chosen GPU
    article_rules: list[Message] = field(default_factory=list)
    notes: list[Message] = field(default_factory=list)

    @property
    def gpu(self) -> str | None:
        best = self.recommendation.best
        return best.label if best else None

    def to_json(self) -> dict[str, Any]:
        a = self.answers
        best = self.recommendation.best
        return {
            "answers": {"workload": a.workload, "model": a.model,
                        "budget_per_hour": a.budget_per_hour.to_json()
                        if a.budget_per_hour else None,
                        "hours_per_month": a.hours_per_month,
                        "horizon_months": a.horizon_months},
            "task": self.task, "quant": self.quant,
            "gpu": best.gpu.id if best else None,
            "count": best.count * best.replicas if best else None,
            "price_per_hour": best.price_per_hour.to_json() if best else None,
            "decision": self.advice.decision if self.advice else "rent",
            "rent_or_buy": self.advice.to_json() if self.advice else None,
            "recommendation": self.recommendation.to_json(),
            "article_rules": self.article_rules, "notes": self.notes,
        }


def _setup(answers: ChecklistAnswers, spec: ModelSpec) -> tuple[Task, str | None]:
    """The task and weight format the checklist assumes for a workload and a model size.

    Fine-tuning is LoRA up to 13B and QLoRA above (S4, S24); gradient checkpointing is left to
    the recommender, which turns it on on the cards whose memory needs it, as trainers do
    (a 7B LoRA then needs about 21 GB: S4's "~14-20 GB", a 24 GB card, S13 Q2)."""
    billions = spec.params_total / 1e9
    if answers.workload == "training":
        return Task.PRETRAIN, None
    if answers.workload == "finetune":
        return (Task.LORA, None) if billions <= 13 else (Task.QLORA, None)
    return Task.INFERENCE, (None if billions <= 13 else "awq")


def article_rules(answers: ChecklistAnswers, billions: float) -> list[Message]:
    """What S13 and S14 say for these answers, to show beside the computed answer (each rule
    is one message, its id ``rule.q<N>...`` says which question it answers)."""
    rules = []
    if billions < 13:
        rules.append(msg("rule.q2.small", "Q2 (S13): under 13B, 24 GB GPUs are enough."))
    elif billions > 70:
        rules.append(msg("rule.q2.large", "Q2 (S13): over 70B, multi-GPU with 80+ GB per GPU."))
    b = answers.budget_per_hour
    if b is not None:
        usd = b.amount if b.currency == "USD" else None
        if usd is not None and usd < 1:
            rules.append(msg("rule.q3.low", "Q3 (S13): under $1/h, the options are RTX 4090, "
                             "A100 spot or L4."))
        elif usd is not None and usd > 3:
            rules.append(msg("rule.q3.high", "Q3 (S13): above $3/h, H100 or B200 are within "
                             "reach."))
    h = answers.hours_per_month
    rules.append(msg("rule.q4.rent", "Q4 (S13): under 100 h/month, always rent.") if h < 100
                 else msg("rule.q4.marketplace", "Q4 (S13): 100-500 h/month, rent on "
                          "marketplaces.") if h <= 500 else
                 msg("rule.q4.own", "Q4 (S13): over 500 h/month at high utilisation, consider "
                     "owning."))
    rules.append(msg("rule.q5.rent", "Q5 (S13): under 18 months, rent (avoids depreciation).")
                 if answers.horizon_months < 18 else
                 msg("rule.q5.buy", "Q5 (S13): 18+ months at high utilisation, buying may "
                     "break even."))
    return rules


def answers_rule(rule: Message, question: int) -> bool:
    """Whether an article rule answers question ``question`` (4: hours, 5: horizon)."""
    return rule.id.startswith(f"rule.q{question}.")


# The whole-catalog recommendation of a checklist, by value of everything recommend() reads:
# questions that differ only in hours per month or horizon (which feed rent-or-buy and the
# article's rules, not the ranking) reuse it. Emptied when full or when a constant changes;
# off in the reference path (memo.reference()). Made on first use (the memo module imports
# the calibration constants, which a checklist prompt does not need yet).
_RECOMMENDATIONS: list[Table] = []
#: at most this many remembered: a whole-catalog recommendation holds about 1.7 MB (tracemalloc,
#: inference, market prices, six models), so at most ~55 MB
RECOMMENDATIONS_KEPT = 32


def _recommendation_key(job: Job, offers: list[Offer], rates: RateTable | None,
                        gpus: list[GPU] | None) -> tuple[Any, ...] | None:
    """Everything ``recommend(job, offers, rates=rates, gpus=gpus)`` reads, by value (None:
    something unhashable, then no memo). GPUs (pydantic models holding dicts) by their JSON."""
    from whichgpu.cost.capacity import ENV

    rate_key = None if rates is None else (
        rates.base, rates.date, rates.source, tuple(sorted(rates.rates.items())),
        tuple(sorted(rates.overrides.items())))
    gpu_key = None if gpus is None else tuple(g.model_dump_json() for g in gpus)
    key = (job, tuple(offers), rate_key, gpu_key, os.environ.get(ENV))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _recommendation(job: Job, offers: list[Offer], rates: RateTable | None,
                    gpus: list[GPU] | None, recommend: Callable[..., Recommendation]
                    ) -> Recommendation:
    """``recommend(job, offers, rates=rates, gpus=gpus)``, reused for an equal question.

    The remembered recommendation is never handed out: each caller gets a copy whose lists are
    its own (their items, options, exclusions and messages, are immutable)."""
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.estimate import memo

    if not _RECOMMENDATIONS:
        _RECOMMENDATIONS.append(memo.Table(size=RECOMMENDATIONS_KEPT))
    table = _RECOMMENDATIONS[0]
    catalog = default_catalog()  # what recommend() compares when gpus is None
    key = _recommendation_key(job, offers, rates, gpus)
    hit = table.get(key) if key is not None else None
    if hit is None or hit[0] is not catalog:
        rec = recommend(job, offers, rates=rates, gpus=gpus)
        if key is None or not memo.enabled():
            return rec
        hit = table.put(key, (catalog, rec))
    return _copy(hit[1])


def _copy(rec: Recommendation) -> Recommendation:
    """A recommendation whose lists a caller may change without changing ``rec``."""
    return replace(rec, options=list(rec.options), excluded=list(rec.excluded),
                   explanation=list(rec.explanation),
                   what_would_change=list(rec.what_would_change),
                   only=None if rec.only is None else list(rec.only), owned=list(rec.owned))


def run_checklist(answers: ChecklistAnswers, offers: list[Offer], *,
                  currency: str | None = None, rates: RateTable | None = None,
                  gpus: list[GPU] | None = None, spec: ModelSpec | None = None
                  ) -> ChecklistResult:
    """Answer the checklist: the cheapest GPU configuration, then rent or buy it.

    No amount of work is asked, so training and fine-tuning are ranked by the cost of the same
    work (per 1M training tokens: a cheaper hour on a slower card is not cheaper work) and
    inference by the price per hour of a configuration that holds the model (S13: the
    cheapest GPU that can run it). ``gpus`` narrows the GPUs compared (``--only``); ``spec``
    is the model already resolved (a server resolves a visitor's name its own way)."""
    from whichgpu.advise.job import Job
    from whichgpu.advise.recommend import recommend
    from whichgpu.cost.ownership import ownership_inputs
    from whichgpu.cost.rent_or_buy import rent_or_buy
    from whichgpu.estimate.workload import Workload
    from whichgpu.models import resolve_model

    spec = spec if spec is not None else resolve_model(answers.model)
    task, quant = _setup(answers, spec)
    w = Workload(spec, task=task, quant=quant)
    job = Job(w, max_price_per_hour=answers.budget_per_hour, currency=currency)
    rec = _recommendation(job, offers, rates, gpus, recommend)
    notes: list[Message] = [
        msg("checklist.assumed.quant", "assumed {task} with {quant} weights (the checklist's "
            "default for this workload and size)", task=str(task), quant=quant) if quant else
        msg("checklist.assumed", "assumed {task} (the checklist's default for this workload "
            "and size)", task=str(task))]
    notes.append(msg("checklist.ranked.per_unit", "ranked by {ranking} (no amount of work "
                     "asked: the same work costs least there)", ranking=rec.ranking)
                 if rec.ranked_by is Ranking.COST_PER_UNIT else
                 msg("checklist.ranked.per_hour", "ranked by {ranking} (no amount of work "
                     "asked: hosting the model by the hour)", ranking=rec.ranking))
    advice = None
    best = rec.best
    if best is not None and spec.params_total < 13e9 and best.gpu.usable_memory_bytes > 26e9:
        small = [o for o in rec.options if o.gpus == 1 and o.gpu.usable_memory_bytes <= 26e9]
        if small:
            from whichgpu.advise.ranking import rank_cost

            o = small[0]  # options are sorted: the cheapest 24 GB card
            cost = Money(rank_cost(job, o), rec.currency)
            notes.append(msg("checklist.24gb.per_unit", "a 24 GB card holds it, as Q2 says: "
                             "{gpu} at {cost} per {unit}; {best} does the same for less at "
                             "these prices", gpu=o.gpu.id, cost=cost, unit=o.unit,
                             best=best.label)
                         if o.unit and rec.ranked_by is not Ranking.COST_PER_HOUR else
                         msg("checklist.24gb", "a 24 GB card holds it, as Q2 says: {gpu} at "
                             "{cost}/h; {best} does the same for less at these prices",
                             gpu=o.gpu.id, cost=cost, best=best.label))
    if best is not None:
        try:
            inputs = ownership_inputs(best.gpu, offers=offers, rates=rates,
                                      utilization=answers.hours_per_month / 730,
                                      currency=best.price_per_hour.currency)
            advice = rent_or_buy(inputs, rates, hours_per_month=answers.hours_per_month,
                                 horizon_months=answers.horizon_months)
            if best.count > 1:
                notes.append(msg("checklist.per_gpu", "rent or buy is per GPU; the job needs "
                                 "{n}", n=best.count))
        except InputError as exc:
            notes.append(msg("checklist.no_rent_or_buy", "no rent-or-buy figure for {gpu}: "
                             "{why}", gpu=best.gpu.id, why=exc.args[0] if exc.args else ""))
    elif answers.budget_per_hour is not None:
        notes.append(msg("checklist.nothing_under", "nothing fits under {budget}/h",
                         budget=answers.budget_per_hour))
    return ChecklistResult(answers, task, quant or w.quant_name, rec, advice,
                           article_rules(answers, spec.params_total / 1e9), notes)
