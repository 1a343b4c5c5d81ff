"""``fits``: what runs on my card (issue 31): the models that fit a GPU, each with the best
weight format that fits, the longest context it then holds and its speed, ranked.

For each model the weight formats are tried from the most precise down (the engine's own
ladder: llama.cpp's GGUF formats by default); the first one whose peak memory fits the card
at the asked context is kept. A model that no format fits on the card alone is tried with
llama.cpp's offload to host RAM when the host RAM is given (the same plan ``memory`` and
``speed`` use). The memory and speed models are the engine's own: nothing here estimates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.requests import Fits
from whichgpu.catalog.gpus import GPU
from whichgpu.catalog.user_gpu import resolve_gpu_arg
from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Range
from whichgpu.vocabulary import Engine, FitsSort, Task

#: weight formats tried per engine, the most precise first (names of models/data/quant_formats)
LADDERS: dict[str, tuple[str, ...]] = {
    # down to 4 bits: below Q4_K_M quality drops fast, so a smaller model is the better answer
    Engine.LLAMACPP: ("bf16", "q8_0", "q6_k", "q5_k_m", "q4_k_m"),
    "default": ("bf16", "fp8", "awq"),
}
#: the training tasks keep their own format (None: the task's default, e.g. nf4 for QLoRA)
TRAINING = (Task.LORA, Task.QLORA, Task.FULL_FT)
DEFAULT_CONTEXT = "4k"
#: at most this many models in one question (each costs a few memory estimates)
MAX_MODELS = 200


@dataclass(frozen=True)
class FitRow:
    """One model that runs on the card."""

    model: str  # the name it was asked by (preset alias, Hub id, size)
    name: str  # the model's own name
    params: int
    quant: str
    engine: str
    gpu_bytes: int
    usable_bytes: int
    longest_context: int | None  # tokens at one sequence (inference)
    decode: Range | None  # tokens/s per sequence, low / typical / high
    offload: dict[str, Any] | None = None  # llama.cpp's offload plan, when it needs one

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "name": self.name, "params": self.params,
                "quant": self.quant, "engine": self.engine, "gpu_bytes": self.gpu_bytes,
                "usable_bytes": self.usable_bytes,
                "headroom_bytes": self.usable_bytes - self.gpu_bytes,
                "longest_context_tokens": self.longest_context,
                "decode_tokens_per_s": self.decode.to_json() if self.decode else None,
                "placement": "offload" if self.offload else "gpu",
                "offload": self.offload}


@dataclass(frozen=True)
class FitsAnswer:
    """``whichgpu fits``: the models that run on the card, ranked; those that do not."""

    request: Fits
    gpu: GPU
    count: int
    context: int
    rows: list[FitRow]
    not_run: list[str]  # no format fits (or the engine cannot run the model as asked)
    notes: tuple[Message | str, ...] = field(default=())
    cards: tuple[GPU, ...] = ()  # a machine of different cards (--gpu A,B), in device order

    @property
    def where(self) -> str:
        """``rtx-5090 + rtx-3090``, ``2 x rtx-3090`` or ``rtx-4090``."""
        if self.cards:
            from whichgpu.catalog.gpu_list import describe_cards

            return describe_cards(self.cards)
        return self.gpu.id if self.count == 1 else f"{self.count} x {self.gpu.id}"

    @property
    def usable_bytes(self) -> int:
        """Usable memory of the card, or of every card of the machine together."""
        if self.cards:
            return sum(g.usable_memory_bytes for g in self.cards)
        return self.gpu.usable_memory_bytes

    def shown(self) -> list[FitRow]:
        top = self.request.top
        return self.rows[:top] if top else self.rows

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.where if self.cards else self.gpu.id, "count": self.count,
                **({"cards": [g.id for g in self.cards]} if self.cards else {}),
                "usable_bytes": self.usable_bytes, "task": self.request.task,
                "context_tokens": self.context, "sort": self.request.sort,
                "status": "ok" if self.rows else "nothing_fits",
                "models": [r.to_json() for r in self.rows],
                "not_run": self.not_run,
                "notes": [str(n) for n in self.notes]}


def _names(q: Fits) -> list[str]:
    if q.models:
        names = [n.strip() for n in q.models.split(",") if n.strip()]
        if len(names) > MAX_MODELS:
            raise InputError(msg("fits.too_many", "try at most {n} models at once",
                                 n=MAX_MODELS))
        return list(dict.fromkeys(names))
    from whichgpu.models.preset_index import list_presets

    return [p.alias for p in list_presets() if p.family == "decoder"]


def _speed(w: Any, gpu: GPU, count: int) -> Range | None:
    from whichgpu.estimate.speed import estimate_speed

    if w.task != Task.INFERENCE:
        return None
    try:
        est = estimate_speed(w, gpu, count, check_fit=False, saturation=False)
    except (InputError, ValueError):  # a card known by its memory only has no speed
        return None
    return est.rates.get("decode_tokens_per_s_per_sequence")


def _row(q: Fits, ctx: Context, name: str, gpu: GPU, count: int, context: str,
         engine: Engine | None) -> FitRow | None:
    """The best format of ``name`` that fits, or its offload, or None."""
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import layout_for, max_context
    from whichgpu.estimate.memory.offload_plan import offload_plan

    spec = ctx.model(name)
    usable = gpu.usable_memory_bytes
    task = q.task
    ladder: tuple[str | None, ...] = (
        (None,) if task in TRAINING else LADDERS.get(engine or Engine.LLAMACPP,
                                                     LADDERS["default"]))
    from whichgpu.units import parse_count

    if spec.max_context and parse_count(context, binary=True) > spec.max_context:
        context = str(spec.max_context)  # a model trained shorter: at its own longest
    settings: dict[str, Any] = {"context": context, "host_ram": q.host_ram,
                                "host_memory": q.host_memory}
    smallest = None
    for quant in ladder:
        try:
            w = build_workload(spec, task=task, quant=quant, engine=engine, **settings)
            placed = layout_for(w, count)
            est = estimate_memory(placed)
        except InputError:  # this format does not exist for this model or engine
            continue
        smallest = w
        if est.total_bytes <= usable and est.host_fits:
            longest = max_context(w, gpu, count) if task == Task.INFERENCE else None
            return FitRow(name, spec.name, spec.params_total, w.quant_name, w.engine_name,
                          est.total_bytes, usable, longest, _speed(placed, gpu, count))
    if smallest is None or q.host_ram is None or task != Task.INFERENCE:
        return None
    plan = offload_plan(smallest, gpu, count)
    if plan is None or not plan.host_ok:
        return None
    data = plan.to_json()
    return FitRow(name, spec.name, spec.params_total, smallest.quant_name,
                  smallest.engine_name, plan.memory.total_bytes, usable,
                  max_context(plan.workload, gpu, count), _speed(plan.workload, gpu, count),
                  offload={"flags": data["flags"], "host_bytes": data["host_bytes"],
                           "description": str(data["description"])})


def _key(sort: FitsSort):
    def typical(r: FitRow) -> float:
        return r.decode.typical if r.decode else -1.0

    if sort is FitsSort.SPEED:
        return lambda r: (-typical(r), -r.params)
    if sort is FitsSort.CONTEXT:
        return lambda r: (-(r.longest_context or 0), -r.params)
    return lambda r: (r.offload is not None, -r.params, -typical(r))


def fits(q: Fits, ctx: Context = LOCAL) -> FitsAnswer:
    """The models that run on the card: best format, longest context and speed, ranked (on
    a machine of different cards, ``--gpu rtx-5090,rtx-3090``: split over them)."""
    from whichgpu.catalog.gpu_list import is_gpu_list
    from whichgpu.units import parse_count

    if is_gpu_list(q.gpu):
        from whichgpu.answers.mixed import fits_machine

        return fits_machine(q, ctx)
    res = resolve_gpu_arg(q.gpu, q.gpu_spec)
    if res is None:
        raise InputError(msg("fits.needs_gpu", "name your card: {gpu} (a catalog id, or its "
                             "memory such as 12GB) or {spec}", gpu=Field("gpu", "12GB"),
                             spec=Field("gpu_spec")))
    if q.task not in (Task.INFERENCE, *TRAINING):
        raise InputError(msg("fits.task", "{field} takes inference, lora, qlora or full-ft "
                             "here, got {v!r}", field=Field("task"), v=str(q.task)))
    context = q.context or DEFAULT_CONTEXT
    tokens = int(parse_count(context, binary=True, what="context"))
    rows: list[FitRow] = []
    missing: list[str] = []
    for name in _names(q):
        row = _row(q, ctx, name, res.gpu, q.count, context, q.engine)
        if row is None:
            missing.append(name)
        else:
            rows.append(row)
    rows.sort(key=_key(q.sort))
    notes: list[Message | str] = [res.note] if res.note else []
    if rows and all(r.decode is None for r in rows) and q.task == Task.INFERENCE:
        notes.append(msg("fits.no_speed", "no speeds: the card is known by its memory only; "
                         "name it by its catalog id, or give {spec} with its bandwidth and "
                         "fp16 TFLOPS", spec=Field("gpu_spec")))
    return FitsAnswer(q, res.gpu, q.count, tokens, rows, missing, tuple(notes))
