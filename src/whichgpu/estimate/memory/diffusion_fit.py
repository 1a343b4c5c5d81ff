"""A diffusion job on a card too small for it as asked: the first of the engine's tries
(``diffusion_parallel.tries``: a tensor-parallel split, CPU offload, tiled VAE) that fits,
by the memory estimate. Above the memory estimate, which reads the layouts of
``diffusion_parallel`` and so cannot be imported from there."""

from __future__ import annotations

from whichgpu.estimate.diffusion_parallel import adapted_note, splits_dit, tries
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Message
from whichgpu.vocabulary import Task


def fit_on(wl: Workload, asked: Workload, gpu) -> tuple[Workload, int, Message | None]:
    """``wl`` as the engine would run it on ``gpu`` when it does not fit as asked and no
    offload was chosen: the first of :func:`tries` that fits, its memory, and a sentence
    naming what it took (None when it fits as asked or nothing fits)."""
    usable = gpu.usable_memory_bytes
    need = estimate_memory(wl).total_bytes
    if need <= usable or asked.offload != "none":  # an offload the user chose is kept as is
        return wl, need, None
    for t in tries(wl, asked, gpu):
        n = estimate_memory(t).total_bytes
        if n <= usable:
            return t, n, adapted_note(t, asked, need, n)
    return wl, need, None


def split_to_fit(w: Workload, gpu) -> tuple[Workload, Message] | None:
    """A diffusion job over several GPUs that does not fit as laid out (one pipeline per GPU,
    or SGLang's sequence parallelism), with no ``tp`` and no engine named or one that splits
    a DiT: the first tensor-parallel split (SGLang) that fits ``gpu``,
    with the sentence that says so; None when it fits as asked or no split fits. The memory
    answer takes it as the speed answer does (``fit_on``), so both name the same layout."""
    if w.task not in (Task.IMAGE, Task.VIDEO) or w.gpus < 2 or w.tp or not (
            w.engine is None or splits_dit(w.engine)):
        return None
    need = estimate_memory(w).total_bytes
    if need <= gpu.usable_memory_bytes:
        return None
    for t in tries(w, w, gpu, streamed=False):
        if t.tp and (have := estimate_memory(t).total_bytes) <= gpu.usable_memory_bytes:
            return t, adapted_note(t, w, need, have)
    return None
