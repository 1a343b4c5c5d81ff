"""``fits``: what runs on my card (issue 31): the models that fit a GPU, each with the best
weight format that fits, the longest context it then holds and its speed, ranked.

For each model the weight formats are tried from the most precise down (the engine's own
ladder: llama.cpp's GGUF formats by default); the first one whose peak memory fits the card
at the asked context is kept. A model that no format fits on the card alone is tried with
llama.cpp's offload to host RAM when the host RAM is given (the same plan ``memory`` and
``speed`` use). The memory and speed models are the engine's own: nothing here estimates.
"""

from __future__ import annotations

from typing import Any

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.fits_table import (
    DEFAULT_CONTEXT,
    LADDERS,
    TRAINING,
    FitRow,
    FitsAnswer,
    names,
    order,
)
from whichgpu.answers.requests import Fits
from whichgpu.catalog.gpus import GPU
from whichgpu.catalog.user_gpu import resolve_gpu_arg
from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Range
from whichgpu.vocabulary import Engine, Task

__all__ = ["FitRow", "FitsAnswer", "fits"]


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


def fits(q: Fits, ctx: Context = LOCAL) -> FitsAnswer:
    """The models that run on the card: best format, longest context and speed, ranked (on
    a machine of different cards, ``--gpu rtx-5090,rtx-3090``: split over them)."""
    from whichgpu.catalog.gpu_list import is_gpu_list
    from whichgpu.units import parse_count

    if is_gpu_list(q.gpu):
        from whichgpu.answers.mixed import fits_machine, one_kind_of_card

        same = one_kind_of_card(q)  # a list of one card: --gpu NAME --count N
        if same is None:
            return fits_machine(q, ctx)
        q = same
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
    for name in names(q):
        row = _row(q, ctx, name, res.gpu, q.count, context, q.engine)
        if row is None:
            missing.append(name)
        else:
            rows.append(row)
    rows.sort(key=order(q.sort))
    notes: list[Message | str] = [res.note] if res.note else []
    if rows and all(r.decode is None for r in rows) and q.task == Task.INFERENCE:
        notes.append(msg("fits.no_speed", "no speeds: the card is known by its memory only; "
                         "name it by its catalog id, or give {spec} with its bandwidth and "
                         "fp16 TFLOPS", spec=Field("gpu_spec")))
    return FitsAnswer(q, res.gpu, q.count, tokens, rows, missing, tuple(notes))
