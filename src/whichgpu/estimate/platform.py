"""Which engine a job runs with on a card: the catalog says which engines run where.

An engine the user named that does not run on the card is refused with the reason ("vLLM
does not run on Apple silicon (Metal); llama.cpp or MLX do"); a default engine that does not
run there is swapped for one that does, and the swap is said, never priced silently.
"""

from __future__ import annotations

from whichgpu.catalog.gpus import ENGINE_LABELS, GPU, Catalog, default_catalog
from whichgpu.engines import fallbacks, module
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Message, msg
from whichgpu.vocabulary import Engine


class EngineUnavailable(InputError):
    """The engine named for a job does not run on the card: ``why`` says so and names what
    does; ``message`` is the whole sentence."""

    def __init__(self, gpu: GPU, engine: Engine, why: Message) -> None:
        self.gpu, self.engine, self.why = gpu, engine, why
        self.message = msg("engine.unavailable", "{gpu}: {why} ({flag})", gpu=gpu.id, why=why,
                           flag=Field("engine"))
        super().__init__(self.message)


def engine_problem(w: Workload, gpu: GPU, catalog: Catalog | None = None) -> Message | None:
    """Why the job's engine (named or default) cannot run on ``gpu``; None when it can."""
    return (catalog or default_catalog()).engine_problem(gpu, w.engine_name)


def engine_for(w: Workload, gpu: GPU, catalog: Catalog | None = None,
               ) -> tuple[Workload, Message | None]:
    """``w`` with an engine that runs on ``gpu``, and a note when the default was swapped.

    Raises :class:`EngineUnavailable` when the user named an engine the card cannot run.
    """
    catalog = catalog or default_catalog()
    why = catalog.engine_problem(gpu, w.engine_name)
    if why is None:
        return w, None
    if w.engine is not None:
        raise EngineUnavailable(gpu, w.engine, why)
    kind = "diffusion" if w.is_diffusion else "training" if w.is_training else "inference"
    runs = catalog.engines_for(gpu) or ()
    lora_less = False  # a fallback that runs here but cannot serve the job's LoRA adapters
    for engine in fallbacks(kind):
        if engine in runs:
            if not _serves_adapters(w, engine):
                lora_less = True
                continue
            label = ENGINE_LABELS.get(engine, engine)
            return w.with_(engine=engine), msg(
                "engine.swapped", "{why}: estimated with {engine} ({flag})", why=why,
                engine=label, flag=Field("engine", engine))
    if lora_less:
        why = msg("engine.swap.no_lora", "{why}, and none of those serves many LoRA adapters "
                  "on one base ({flag})", why=why, flag=Field("lora_adapters"))
    raise EngineUnavailable(gpu, w.engine_name, why)


def _serves_adapters(w: Workload, engine: Engine) -> bool:
    """Whether ``engine`` can serve the job's LoRA adapters (none asked: any engine): only an
    engine module with adapter slots does (estimate/multi_lora.py)."""
    return not w.lora_adapters or getattr(module(engine), "lora_slots", None) is not None
