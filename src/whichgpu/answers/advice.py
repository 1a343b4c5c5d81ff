"""``recommend`` and ``checklist``: the answers, as the command line, the REST API and the
pages give them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from whichgpu.advise.checklist import ChecklistResult, run_checklist
from whichgpu.advise.options import Recommendation
from whichgpu.advise.recommend import recommend as rank
from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.estimates import card, recommend_workload
from whichgpu.answers.inputs.checklist import parse_answers
from whichgpu.answers.inputs.job import apply_currency, build_job, only_gpus, only_notes
from whichgpu.answers.requests import Checklist, Recommend
from whichgpu.catalog.gpus import GPU
from whichgpu.catalog.prices import OfferSelection
from whichgpu.currency import RateTable, rates_from
from whichgpu.errors import InputError
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import check_currency
from whichgpu.vocabulary import Task, WorkKind

if TYPE_CHECKING:
    from whichgpu.cost.rent_or_buy import Advice
    from whichgpu.export import Export  # imported where --export asks (issue 27: ~2 ms a start)

if TYPE_CHECKING:
    from whichgpu.answers.rl import RLRecommendAnswer


def priced(ctx: Context, prices: str | None, currency: str | None, rate: list[str],
           max_age: float | None = None, gpus: list[GPU] | None = None,
           ) -> tuple[OfferSelection, RateTable]:
    """The offers a job is priced with: the cheapest offer of each kind (of ``gpus``; None:
    every GPU), in ``currency`` (converted at the dated rates), and the rate table."""
    rates = rates_from(rate)
    selection = ctx.offers(prices, max_age, cheapest_only=True,
                           gpus=[g.id for g in gpus] if gpus else None)
    if currency:
        selection = apply_currency(selection, currency, rates)
    return selection, rates


@dataclass(frozen=True)
class RecommendAnswer:
    """``whichgpu recommend``: the recommendation and the prices it used."""

    request: Recommend
    rec: Recommendation
    selection: OfferSelection
    rates: RateTable
    notes: tuple[str, ...] = ()
    exported: Export | None = None  # the chosen option as a launcher task file (--export)
    disaggregation: Any = None  # the prefill/decode split (--disaggregate), advise/disaggregation
    vs_api: Any = None  # cost/vs_api.VsApi: the best option against per-token APIs
    power_budget: Any = None  # advise/power_budget.PowerBudget: the options within it
    machine: Any = None  # your machine of different cards (--gpu A,B): a MixedCards

    @property
    def top(self) -> int:
        return self.request.top

    def shown(self) -> list[Any]:
        """The options the answer shows (``top``; 0: all)."""
        return self.rec.options[:self.top] if self.top else list(self.rec.options)

    @cached_property
    def ownership_advice(self) -> Advice | None:
        """Rent or buy the best option for the request's hours of use a month and months
        needed (None when they are not asked, or there is no option)."""
        q = self.request
        if q.hours_per_month is None or q.horizon_months is None:
            return None
        return self.rent_or_buy(q.hours_per_month, q.horizon_months)

    def rent_or_buy(self, hours_per_month: float, horizon_months: float) -> Advice | None:
        """Q4 and Q5 of S13 for the first option, as the checklist answers them: rent its
        offer or buy the card, used ``hours_per_month`` for ``horizon_months`` (None: no
        option). Raises InputError where the card has no purchase data."""
        from whichgpu.cost.ownership import ownership_inputs
        from whichgpu.cost.rent_or_buy import rent_or_buy

        best = self.rec.best
        if best is None:
            return None
        inputs = ownership_inputs(best.gpu, offers=list(self.selection.offers),
                                  rates=self.rates, utilization=min(hours_per_month, 730) / 730,
                                  currency=best.price_per_hour.currency)
        return rent_or_buy(inputs, self.rates, hours_per_month=hours_per_month,
                           horizon_months=horizon_months)

    def article_rules(self, hours_per_month: float | None = None,
                      horizon_months: float | None = None) -> list[Message]:
        """What S13 says for this job (shown beside the computed answer): the rules of its
        questions 1-3, and those of Q4 (hours of use) and Q5 (months needed) only when they
        are given (the checklist's 100 hours and 12 months otherwise stand in)."""
        from whichgpu.advise.checklist import ChecklistAnswers, answers_rule, article_rules

        job = self.rec.job
        w = job.workload
        workload = ("training" if w.task == Task.PRETRAIN else "finetune" if w.is_training
                    else "inference")
        answers = ChecklistAnswers(workload, w.model.name, job.max_price_per_hour,
                                   min(hours_per_month or 100.0, 730),
                                   min(horizon_months or 12.0, 120))
        rules = article_rules(answers, w.model.params_total / 1e9)
        return [r for r in rules if (not answers_rule(r, 4) or hours_per_month is not None)
                and (not answers_rule(r, 5) or horizon_months is not None)]

    def to_json(self) -> dict[str, Any]:
        data = self.rec.to_json()
        data["options"] = data["options"][:self.top] if self.top else data["options"]
        data["prices"] = self.selection.to_json()
        if self.exported is not None:
            data["export"] = self.exported.to_json()
        if self.disaggregation is not None:
            data["disaggregation"] = self.disaggregation.to_json()
        if self.vs_api is not None:
            data["vs_api"] = self.vs_api.to_json()
        if self.power_budget is not None:
            data["power_budget"] = self.power_budget.to_json()
        data.setdefault("notes", list(self.notes))  # e.g. the examples as training tokens
        if self.machine is not None:
            data["own_machine"] = self.machine.to_json()
        if self.request.hours_per_month is not None:  # rent or buy asked (with the months)
            advice = self.ownership_advice
            data["rent_or_buy"] = advice.to_json() if advice is not None else None
            data["article_rules"] = self.article_rules(self.request.hours_per_month,
                                                       self.request.horizon_months)
        return data


def recommend(q: Recommend, ctx: Context = LOCAL, *, command_line: str | None = None,
              ) -> RecommendAnswer | RLRecommendAnswer:
    """The cheapest GPU configuration that can run a job, why, and what was excluded (and,
    with ``export``, the chosen option as a launcher task file; ``command_line`` is the
    reproduce line its header gives). RL post-training (grpo, ppo): answers/rl.py's ranking."""
    if q.kernel_db is not None:  # issue 28: --kernel-db / --no-kernel-db for this request
        from whichgpu.estimate.speed.kernel_db import as_asked

        with as_asked(q.kernel_db):
            return recommend(q.model_copy(update={"kernel_db": None}), ctx,
                             command_line=command_line)
    if q.task.is_rl:
        from whichgpu.answers.rl import recommend_rl

        return recommend_rl(q, ctx)
    return recommend_job(q, ctx, command_line=command_line)


def recommend_job(q: Recommend, ctx: Context = LOCAL, *, command_line: str | None = None,
                  ) -> RecommendAnswer:
    """``recommend`` for every task but RL (one workload ranked by advise/recommend.py)."""
    from whichgpu.catalog.gpu_list import is_gpu_list

    machine = machine_note = None
    if is_gpu_list(q.gpu):  # --gpu A,B: said beside the ranking (answers/mixed.py, only then:
        # importing it costs ~8 ms of CPU, issue 27)
        from whichgpu.answers.mixed import own_machine

        q, machine, machine_note = own_machine(q, ctx)
    w = recommend_workload(q, ctx)
    work = q.fields(*q.JOB_FIELDS)
    said = examples_as_tokens(q, w.seq_len)
    if said is not None:
        work["train_tokens"], example_note = said
    job = build_job(w, **work)
    if q.disaggregate and job.requests_per_s is None:
        raise InputError(msg("disagg.needs_rate", "{flag} sizes a service for a request rate: "
                             "give {rate} (with the prompt and output tokens)",
                             flag=Field("disaggregate"), rate=Field("requests_per_s")))
    if q.export is not None:
        from whichgpu.export import check_launcher

        check_launcher(q.export)  # before the ranking: a typo is said at once
    gpus = only_gpus(q.only)
    mine = card(q.gpu, q.gpu_spec)
    selection, rates = priced(ctx, q.prices, job.currency, q.rate, q.max_age, gpus)
    profile = ctx.calibration(q.calibration)
    rec = rank(job, list(selection.offers), rates=rates, gpus=gpus, max_gpus=q.max_gpus,
               profile=profile, owned=mine.gpu if mine else None, owned_count=q.count)
    link_said = _link_effect(rec)
    if link_said is not None:  # what the link between servers adds, for the chosen option
        rec.explanation.insert(min(2, len(rec.explanation)), link_said)
    split = None
    if q.disaggregate:
        from whichgpu.advise.disaggregation import disaggregate

        split = disaggregate(rec, profile, selection.offers, rates)
        rec.explanation.extend(split.said)
    exported = None
    if q.export is not None:
        from whichgpu.export import export_option

        exported = export_option(rec, q.export, q.export_option, selection=selection,
                                 command=command_line, rates=rates)
    notes = [n for n in (mine.note if mine else None,) if n]
    notes += [str(n) for n in only_notes(q.only)]
    if said is not None:
        notes.append(example_note)  # a Message: the page says it in its language
    if mine is not None:
        own = own_card_offload(q, ctx, w, mine.gpu)
        if own is not None:
            notes.append(own)
    if machine_note is not None:
        notes.append(machine_note)
    vs = against_api(q, ctx, w, rec, rates) if q.vs_api else None
    if rec.job.kind == WorkKind.SERVING and q.quant is None:  # flaws8 6: FP8 on this card
        from whichgpu.answers.fp8_hint import fp8_alternative

        fp8 = fp8_alternative(q, ctx, w, rec, recommend_job)
        if fp8 is not None:
            rec.what_would_change.append(fp8)
    if rec.job.kind == WorkKind.VIDEOS:  # flaws10: one video per GPU beside the split
        from whichgpu.answers.pipelines_hint import independent_pipelines

        whole = independent_pipelines(rec)
        if whole is not None:
            rec.what_would_change.insert(0, whole)
    budget = None
    if q.power_budget is not None:
        from whichgpu.advise.power_budget import within_budget

        budget = within_budget(list(rec.options), w, q.power_budget)
    return RecommendAnswer(q, rec, selection, rates, tuple(notes), exported, split, vs,
                           budget, machine)


def against_api(q: Recommend, ctx: Context, w: Any, rec: Any, rates: Any) -> Any:
    """The best option's cost per million tokens against per-token API prices (--vs-api)."""
    from whichgpu.cost import api_prices
    from whichgpu.cost.currency import convert
    from whichgpu.cost.vs_api import compare
    from whichgpu.estimate.speed.serving import ServingModel

    if w.is_training or w.is_diffusion:
        raise InputError(msg("vs_api.llm_only", "{field} compares LLM serving with per-token "
                             "APIs ({task})", field=Field("vs_api"),
                             task=Field("task", "inference")))
    tab = api_prices.table(q.api_prices)  # a feed file, the store's snapshot or the shipped
    prices = tab.rows
    if not rec.options:
        return None
    best = rec.options[0]
    # read (0 to 10M) as the request validated (answers/inputs/values.py CachedTokens)
    cached = 0 if q.cached_tokens is None else int(q.cached_tokens)
    sm = ServingModel(best.workload or w, best.gpu, profile=ctx.calibration(q.calibration))
    serving = best.serving or {}
    utilisation = float(serving.get("utilisation", 1.0))
    replica_price = best.price_per_hour / max(best.replicas, 1)
    found = api_prices.for_model_or_preset(prices, w.model, q.model)
    from dataclasses import replace

    daily = rec.job.tokens_per_day  # a daily volume: replicas kept up, monthly totals
    vs = compare(sm, replica_price, utilisation, cached, found.rows,
                 lambda m, cur: convert(m, cur, rates), daily, max(best.replicas, 1))
    if found.stand_in is not None:  # another model's rows: said first, and in the JSON
        vs = replace(vs, prices_of=found.stand_in, assumptions=(msg(
            "vs_api.stand_in", "no provider in the API price table lists {model}: the rows "
            "are those of {preset}, the preset it is answered with (the same architecture, "
            "not the same model; its API price may differ)", model=w.model.name,
            preset=found.stand_in), *vs.assumptions))
    return replace(vs, prices_from=tab.to_json())


def _link_effect(rec: Recommendation) -> Message | None:
    """The sentence of the best option's speed estimate that says what the link between
    servers adds to each step (estimate/interconnect.network_effect), if it spans servers."""
    if not rec.options:
        return None
    for warning in rec.options[0].speed.warnings:
        if isinstance(warning, Message) and warning.id.startswith("interconnect.effect"):
            return msg("recommend.link_effect", "Between servers: {said}.", said=warning)
    return None


def own_card_offload(q: Recommend, ctx: Context, w: Any, gpu: GPU) -> Message | None:
    """Your card, when the job does not fit it whole but llama.cpp's offload to host RAM
    runs it (the plan memory and speed answer): what that plan is and its decode speed. The
    ranking prices rentals and keeps your card as it is; this says what it can do."""
    from whichgpu.answers.estimates import follow_offload
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import layout_for
    from whichgpu.estimate.speed import estimate_speed

    if w.task != Task.INFERENCE:
        return None
    try:
        if estimate_memory(layout_for(w, q.count)).total_bytes <= gpu.usable_memory_bytes:
            return None
    except InputError:
        return None
    followed = follow_offload(q, ctx, w, gpu, q.count)
    if followed is None:
        return None
    planned, said = followed
    try:
        rate = estimate_speed(planned, gpu, q.count, check_fit=False,
                              saturation=False).rates["decode_tokens_per_s_per_sequence"]
    except (InputError, KeyError):
        return said
    return msg("recommend.own_offload", "your card is not ranked with the rentals, but {plan}; "
               "decode {low:,.0f} / {typical:,.0f} / {high:,.0f} tokens/s per sequence",
               plan=said, low=rate.low, typical=rate.typical, high=rate.high)


def examples_as_tokens(q: Recommend, seq_len: int) -> tuple[int, Message] | None:
    """``--examples N --epochs E`` as the training tokens they are: N x E x the mean example
    length (default: the training sequence length, every example padded to it), and the
    sentence that says so; None without examples."""
    if q.examples is None:
        if q.epochs is not None or q.example_tokens is not None:
            raise InputError(msg("examples.needed", "{epochs} and {length} count with {examples}",
                                 epochs=Field("epochs"), length=Field("example_tokens"),
                                 examples=Field("examples")))
        return None
    if not q.task.is_training:
        raise InputError(msg("examples.training", "{examples} is training work: set {task} to "
                             "lora, qlora, full-ft or pretrain", examples=Field("examples"),
                             task=Field("task")))
    if q.steps is not None or q.train_tokens is not None:
        raise InputError(msg("examples.once", "give the training work once: {examples}, "
                             "{steps} or {tokens}", examples=Field("examples"),
                             steps=Field("steps"), tokens=Field("train_tokens")))
    n = int(q.examples)  # both read as the request validated (answers/inputs/values.py)
    length = int(q.example_tokens) if q.example_tokens is not None else seq_len
    if n < 1 or length < 1:
        raise InputError(msg("examples.positive", "{examples} and the example length must be "
                             "at least 1", examples=Field("examples")))
    epochs = q.epochs or 1.0
    tokens = int(round(n * epochs * length))
    said = msg("examples.tokens", "{n:,} examples x {epochs:g} epoch(s) x {length:,} tokens "
               "each ({how}) = {tokens:,} training tokens", n=n, epochs=epochs, length=length,
               how=(msg("examples.length.given", "the mean example length given")
                    if q.example_tokens is not None
                    else msg("examples.length.default", "the training sequence length: "
                             "examples padded to it")),
               tokens=tokens)
    return tokens, said


@dataclass(frozen=True)
class ChecklistAnswer:
    """``whichgpu checklist``: the five questions answered, and the prices used."""

    request: Checklist
    result: ChecklistResult
    selection: OfferSelection
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        data = self.result.to_json()
        data["prices"] = self.selection.to_json()
        return data


def missing_answers(q: Checklist) -> list[str]:
    """The questions of S13 still unanswered (their field names)."""
    return [name for name in q.ANSWERS if getattr(q, name) in (None, "")]


def checklist(q: Checklist, ctx: Context = LOCAL) -> ChecklistAnswer:
    """The five questions of S13, answered with a GPU and rent-or-buy."""
    missing = missing_answers(q)
    if missing:
        raise InputError(msg("checklist.missing", "answer every question for a script: "
                             "missing {fields}", fields=Join(Field(n) for n in missing)))
    model = str(q.model)
    cur = check_currency(q.currency) if q.currency else None
    spec = ctx.model(model)
    hours, months = q.hours_per_month, q.horizon_months
    assert hours is not None and months is not None  # missing_answers said so above
    answers = parse_answers(str(q.workload), model, q.budget_per_hour, hours, months,
                            currency=cur or "USD")
    gpus = only_gpus(q.only)
    selection, rates = priced(ctx, q.prices, cur, q.rate, q.max_age, gpus)
    result = run_checklist(answers, list(selection.offers), currency=cur, rates=rates,
                           gpus=gpus, spec=spec)
    return ChecklistAnswer(q, result, selection)
