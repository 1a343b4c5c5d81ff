"""What ``fits`` answers with, whatever the machine: the weight-format ladders, a model that
runs (``FitRow``), the answer (``FitsAnswer``), which models are tried and how rows are ranked.
Shared by one kind of card (answers/fitting.py) and a machine of different cards
(answers/mixed.py), which both build on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from whichgpu.answers.requests import Fits
from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.messages import Message, msg
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


def names(q: Fits) -> list[str]:
    """The models asked about (each once), or every decoder preset."""
    if q.models:
        names = [n.strip() for n in q.models.split(",") if n.strip()]
        if len(names) > MAX_MODELS:
            raise InputError(msg("fits.too_many", "try at most {n} models at once",
                                 n=MAX_MODELS))
        return list(dict.fromkeys(names))
    from whichgpu.models.preset_index import list_presets

    return [p.alias for p in list_presets() if p.family == "decoder"]


def order(sort: FitsSort):
    """The sort key of the rows for ``sort``."""
    def typical(r: FitRow) -> float:
        return r.decode.typical if r.decode else -1.0

    if sort is FitsSort.SPEED:
        return lambda r: (-typical(r), -r.params)
    if sort is FitsSort.CONTEXT:
        return lambda r: (-(r.longest_context or 0), -r.params)
    return lambda r: (r.offload is not None, -r.params, -typical(r))
