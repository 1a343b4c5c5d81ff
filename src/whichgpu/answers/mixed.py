"""``memory`` and ``speed`` for several different cards in one machine
(``--gpu rtx-5090,rtx-3090``): the split, each card's memory, the launch line and the speed of
the mix, as every surface gives them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.fits_table import LADDERS, FitRow, FitsAnswer, names, order
from whichgpu.answers.requests import Fits, Memory, Recommend, Speed
from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate.mixed_cards import MixedCards, mixed_cards
from whichgpu.estimate.workload import Workload as Job
from whichgpu.messages import Field, Message, msg
from whichgpu.vocabulary import Engine, Task

#: the most a --tensor-split value may be (llama.cpp takes any positive proportions)
MAX_SHARE = 1e6


@dataclass(frozen=True)
class MixedCardsAnswer:
    """The answer for a machine of different cards (``memory`` or ``speed``)."""

    request: Memory | Speed
    workload: Job
    result: MixedCards
    notes: tuple[str, ...] = ()

    @property
    def command(self) -> str:
        return self.request.COMMAND

    def to_json(self) -> dict[str, Any]:
        plan = self.result.plan
        data = {"status": "ok" if plan.fits else "does_not_fit", "mixed_cards": True,
                "model": self.workload.model.name, "engine": plan.engine,
                "quant": self.workload.quant_name, **self.result.to_json(),
                "notes": list(self.notes)}
        return data


def cards_of(q: Memory | Speed) -> tuple[GPU, ...] | None:
    """The cards of a ``--gpu`` list (None for one card), after the checks of the flags that
    go with it."""
    from whichgpu.catalog.gpu_list import is_gpu_list, parse_gpu_list

    if not is_gpu_list(q.gpu):
        if q.split_mode is not None or q.tensor_split:
            raise InputError(msg("mixed.needs_list", "{a} and {b} are for several different "
                                 "cards: name them in {gpu}, e.g. rtx-5090,rtx-3090",
                                 a=Field("split_mode"), b=Field("tensor_split"),
                                 gpu=Field("gpu")))
        return None
    if q.gpu_spec:
        raise InputError(msg("flags.not_both", "give {a} or {b}, not both",
                             a=Field("gpu", "NAME,NAME"), b=Field("gpu_spec")))
    count = q.gpus if isinstance(q, Memory) else q.count
    if count != 1:
        raise InputError(msg("mixed.count", "the count of each card goes in the list (e.g. "
                             "2xrtx-3090,rtx-4090), not in {field}",
                             field=Field("gpus" if isinstance(q, Memory) else "count")))
    if getattr(q, "tp", None) or getattr(q, "pp", 1) != 1:
        raise InputError(msg("mixed.layout", "the layout over a list of cards is the engine's "
                             "(llama.cpp by layers, vLLM by equal tensor-parallel shards): "
                             "leave {tp} and {pp} out", tp=Field("tp"), pp=Field("pp")))
    return parse_gpu_list(q.gpu or "")


def parse_tensor_split(text: str | None) -> tuple[float, ...] | None:
    """``3,1`` -> (3.0, 1.0): one positive share per card (llama.cpp's --tensor-split)."""
    if not text:
        return None
    out = []
    for part in str(text).split(","):
        try:
            value = float(part.strip())
        except ValueError:
            raise InputError(msg("mixed.ts_number", "{field} {v!r}: write one share per card "
                                 "like 3,1", field=Field("tensor_split"), v=text)) from None
        if not 0 <= value <= MAX_SHARE or value != value:
            raise InputError(msg("mixed.ts_range", "{field}: each share is a number from 0 to "
                                 "{most:g}", field=Field("tensor_split"), most=MAX_SHARE))
        out.append(value)
    if not any(out):
        raise InputError(msg("mixed.ts_zero", "{field}: at least one card needs a share above "
                             "0", field=Field("tensor_split")))
    return tuple(out)


def _job(q: Memory | Speed | Recommend, ctx: Context) -> tuple[Job, Message | None]:
    """The workload on one card; with no engine named, llama.cpp (the engine that splits over
    any cards) when it runs the job."""
    from whichgpu.answers.inputs.from_request import workload

    if q.engine is None and not q.task.is_training:
        try:
            return (workload(q, ctx, gpus=1, tp=None, pp=1, engine=Engine.LLAMACPP),
                    msg("mixed.engine_default", "engine llama.cpp: it splits one model over "
                        "cards of different kinds ({flag} to choose another)",
                        flag=Field("engine")))
        except InputError:
            pass
    return workload(q, ctx, gpus=1, tp=None, pp=1), None


def mixed(q: Memory | Speed, cards: tuple[GPU, ...], ctx: Context = LOCAL) -> MixedCardsAnswer:
    """The split of the model over ``cards``; ``speed`` adds the speed of the mix."""
    w, said = _job(q, ctx)
    speed = isinstance(q, Speed)
    profile = ctx.calibration(q.calibration) if isinstance(q, Speed) else None
    result = mixed_cards(w, cards, split_mode=q.split_mode,
                         tensor_split=parse_tensor_split(q.tensor_split), speed=speed,
                         profile=profile)
    if said is not None:
        from dataclasses import replace

        result = replace(result, assumptions=(said, *result.assumptions))
    return MixedCardsAnswer(q, w, result)


def _cards(q: Recommend | Fits) -> tuple[GPU, ...]:
    """The cards of a ``--gpu NAME,NAME`` list, refused beside ``--gpu-spec`` or ``--count``
    (the count of each card goes in the list)."""
    from whichgpu.catalog.gpu_list import parse_gpu_list

    if q.gpu_spec:
        raise InputError(msg("flags.not_both", "give {a} or {b}, not both",
                             a=Field("gpu", "NAME,NAME"), b=Field("gpu_spec")))
    if q.count != 1:
        raise InputError(msg("mixed.count", "the count of each card goes in the list (e.g. "
                             "2xrtx-3090,rtx-4090), not in {field}", field=Field("count")))
    return parse_gpu_list(q.gpu or "")


def own_machine(q: Recommend, ctx: Context = LOCAL
                ) -> tuple[Recommend, MixedCards | None, Message | None]:
    """``recommend --gpu rtx-5090,rtx-3090``: your machine of different cards is not ranked
    with the rentals (it has no price); what it does for the job is said beside them. Returns
    the request to rank (a list of one card: ``--gpu NAME --count N``; else without the
    cards), the mixed answer and the note."""
    from dataclasses import replace

    from whichgpu.catalog.gpu_list import all_same, describe_cards, is_gpu_list

    if not is_gpu_list(q.gpu):
        return q, None, None
    cards = _cards(q)
    if all_same(cards):
        return q.model_copy(update={"gpu": cards[0].id, "count": len(cards)}), None, None
    rest = q.model_copy(update={"gpu": None})
    where = describe_cards(cards)
    if q.task.is_training or q.task in (Task.IMAGE, Task.VIDEO):
        return rest, None, msg("recommend.own_machine.task", "your machine ({cards}) is "
                               "answered for LLM inference; {task} is ranked on rentals only",
                               cards=where, task=q.task)
    try:
        w, said = _job(q, ctx)
        result = mixed_cards(w, cards, speed=True, profile=ctx.calibration(q.calibration))
    except InputError as exc:
        return rest, None, msg("recommend.own_machine.no", "your machine ({cards}): {why}",
                               cards=where, why=exc.args[0] if exc.args else str(exc))
    if said is not None:
        result = replace(result, assumptions=(said, *result.assumptions))
    plan = result.plan
    if plan.speed is None:
        return rest, result, msg("recommend.own_machine.no_fit", "your machine ({cards}) is "
                                 "not ranked with the rentals, and the job does not fit it as "
                                 "{engine} splits it ({split})", cards=where,
                                 engine=plan.engine, split=plan.describe())
    r = plan.speed.decode_tokens_per_s_per_sequence
    return rest, result, msg("recommend.own_machine", "your machine ({cards}) is not ranked "
                             "with the rentals, but it runs the job with {engine}: {split}; "
                             "decode {low:,.0f} / {typical:,.0f} / {high:,.0f} tokens/s per "
                             "sequence", cards=where, engine=plan.engine,
                             split=plan.describe(), low=r.low, typical=r.typical, high=r.high)


def one_kind_of_card(q: Fits) -> Fits | None:
    """A ``--gpu`` list of one card as ``--gpu NAME --count N``; None for different cards."""
    from whichgpu.catalog.gpu_list import all_same

    cards = _cards(q)
    if all_same(cards):
        return q.model_copy(update={"gpu": cards[0].id, "count": len(cards)})
    return None


def fits_machine(q: Fits, ctx: Context = LOCAL) -> FitsAnswer:
    """``fits --gpu rtx-5090,rtx-3090``: the models that run split over the machine's
    different cards, each with the most precise format that fits every card and the decode of
    the mix (a list of one card is answered by ``fits`` as ``--gpu NAME --count N``:
    ``one_kind_of_card``)."""
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.estimate.mixed_cards import layer_speed, tp_speed
    from whichgpu.units import parse_count
    from whichgpu.vocabulary import Task

    cards = _cards(q)
    if q.task != Task.INFERENCE:
        raise InputError(msg("mixed.fits_task", "a machine of different cards is answered for "
                             "inference (the split of one model over the cards); {task} is "
                             "not", task=str(q.task)))
    engine = q.engine or Engine.LLAMACPP
    ladder = LADDERS.get(engine, LADDERS["default"])
    context = q.context or "4k"
    tokens = int(parse_count(context, binary=True, what="context"))
    rows, missing = [], []
    for name in names(q):
        spec = ctx.model(name)
        asked = context
        if spec.max_context and tokens > spec.max_context:
            asked = str(spec.max_context)
        row = None
        for quant in ladder:
            try:
                w = build_workload(spec, quant=quant, engine=engine, context=asked)
                plan = mixed_cards(w, cards, speed=False).plan
            except InputError:
                continue
            if not plan.fits:
                continue
            try:
                speed = (layer_speed(w, plan) if plan.method != "tensor-parallel"
                         else tp_speed(w, cards)).decode_tokens_per_s_per_sequence
            except (InputError, ValueError):  # a card known by its memory only
                speed = None
            row = FitRow(name, spec.name, spec.params_total, w.quant_name, w.engine_name,
                         sum(c.need_bytes for c in plan.cards),
                         sum(g.usable_memory_bytes for g in cards), None, speed)
            break
        if row is None:
            missing.append(name)
        else:
            rows.append(row)
    rows.sort(key=order(q.sort))
    note = msg("mixed.fits_note", "split over the cards as {engine} does (each card checked "
               "on its own share); memory shown for the whole machine", engine=engine)
    return FitsAnswer(q, cards[0], len(cards), tokens, rows, missing, (note,), cards=cards)
