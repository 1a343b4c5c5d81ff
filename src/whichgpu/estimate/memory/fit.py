"""Which GPUs hold a workload, and with what headroom (what would make it fit: ``changes.py``).

A configuration fits when the estimated peak per GPU is at most the GPU's usable memory (what
nvidia-smi reports), the engine's own reserve and a fragmentation margin already included.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from whichgpu.catalog.gpus import GPU, Catalog, default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate.constants import memory_constant
from whichgpu.estimate.diffusion_parallel import diffusion_layout
from whichgpu.estimate.memo import Table, by_identity
from whichgpu.estimate.memory import MemoryNeed, memory_need
from whichgpu.estimate.workload import LAYER_SPLIT_ENGINES, Workload, tp_problem
from whichgpu.messages import Message, msg
from whichgpu.vocabulary import Engine, Task

# Every count one server holds, not only powers of two (3 x RTX 3090 is a common build): a
# layer split takes any count; tensor parallelism takes the counts that divide the heads, and
# layout_for puts the rest of a count in pipeline stages (tp x pp).
SERVER_COUNT = 8
COUNTS = tuple(range(1, SERVER_COUNT + 1))


def counts_for(w: Workload, upto: int = SERVER_COUNT) -> tuple[int, ...]:
    """The GPU counts from 1 to ``upto`` that this workload's layout allows."""
    out = []
    for count in range(1, upto + 1):
        try:
            layout_for(w, count)
        except InputError:
            continue
        out.append(count)
    return tuple(out)


Verdict = Literal["fits", "borderline", "does not fit"]


def memory_band(w: Workload) -> float:
    """The estimate's own uncertainty as a fraction: within it of a card's usable memory, a
    fit verdict could go either way ("borderline"). Per task group, from the memory
    validation rows (``memory_uncertainty``, written by make calibrate)."""
    group = "training" if w.is_training else "diffusion" if w.is_diffusion else "inference"
    return float(memory_constant("memory_uncertainty").value[group])


def verdict(need: int, usable: int, band: float, host_ok: bool = True) -> Verdict:
    """fits / borderline / does not fit: borderline when the need is within ``band`` of the
    usable memory on either side (a host RAM shortfall is a plain miss)."""
    if not host_ok:
        return "does not fit"
    if abs(usable - need) <= band * usable:
        return "borderline"
    return "fits" if need <= usable else "does not fit"


@dataclass(frozen=True)
class Fit:
    gpu: GPU
    count: int
    per_gpu_bytes: int
    headroom_bytes: int  # usable - needed (negative when it does not fit)
    layout: str
    band: float = 0.0  # the estimate's uncertainty (fraction), see memory_band
    host_bytes: int = 0  # what the job keeps in host RAM (llama.cpp offload)
    host_ok: bool = True  # the host RAM holds it

    @property
    def fits(self) -> bool:
        return self.headroom_bytes >= 0 and self.host_ok

    @property
    def verdict(self) -> Verdict:
        return verdict(self.per_gpu_bytes, self.gpu.usable_memory_bytes, self.band,
                       self.host_ok)

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu.id, "count": self.count, "per_gpu_bytes": self.per_gpu_bytes,
                "usable_bytes": self.gpu.usable_memory_bytes,
                "headroom_bytes": self.headroom_bytes, "fits": self.fits,
                "verdict": self.verdict, "uncertainty": self.band, "layout": self.layout,
                "host_bytes": self.host_bytes, "host_fits": self.host_ok}


def layout_for(w: Workload, count: int, gpu: GPU | None = None) -> Workload:
    """The workload spread over ``count`` GPUs the usual way for its task.

    Inference: tensor parallel over all of them. Training: data parallel with ZeRO-3/FSDP.
    Diffusion: one pipeline per GPU (no memory saving). A layout the user set is kept.
    """
    if count == w.gpus:
        return w
    if w.is_training:
        return w.with_(gpus=count, tp=None, pp=1)
    if w.is_diffusion:  # issue 29: a ring degree only where it divides that count
        from whichgpu.estimate.diffusion_parallel import with_gpus

        return with_gpus(w, count)
    if w.expert_parallel and not w.tp:  # issue 30: tp=1 x dp=count, the experts over all
        return w.with_(gpus=count, pp=1)
    if w.engine_name in LAYER_SPLIT_ENGINES and not w.tp:
        return w.with_(gpus=count, pp=1)  # layer split over every GPU (see pp_degree)
    tp = count
    if tp_problem(w.model, tp):  # TP must split the heads: the rest in pipeline stages
        tp = max(t for t in range(1, count + 1) if count % t == 0
                 and tp_problem(w.model, t) is None)
        return w.with_(gpus=count, tp=tp, pp=count // tp)
    return w.with_(gpus=count, tp=tp, pp=1)


def describe_layout(w: Workload) -> Message:
    """How the GPUs of one job are used: 'single GPU', 'tp=4', 'dp=64 ZeRO-3', 'tp=2 pp=2'."""
    if w.gpus == 1:
        return msg("layout.single", "single GPU")
    if w.is_training:
        parts = []
        if w.tp_degree > 1:
            parts.append(f"tp={w.tp_degree}")
        if w.pp_degree > 1:
            parts.append(f"pp={w.pp_degree}")
        parts.append(f"dp={w.dp_degree}" + (f" ZeRO-{w.zero_stage}" if w.zero_stage else ""))
        return msg("layout.training", "{layout}", layout=" ".join(parts))
    if w.is_diffusion:
        lay = diffusion_layout(w) if w.task != Task.IMAGE_LORA else None
        if lay is not None and lay.replicas == 1:  # one pipeline split over the GPUs
            return msg("layout.parallel", "{layout}", layout=lay.describe())
        return msg("layout.pipelines", "{n} independent pipelines", n=w.gpus)
    if w.expert_parallel and w.dp_degree > 1:  # issue 30
        return msg("layout.expert_parallel", "tp={tp} x dp={dp}, experts over all {n} GPUs",
                   tp=w.tp_degree, dp=w.dp_degree, n=w.gpus)
    return msg("layout.parallel", "{layout}", layout=f"tp={w.tp_degree}" + (
        f" pp={w.pp_degree}" if w.pp_degree > 1 else ""))


def fits(w: Workload, *, catalog: Catalog | None = None, counts=COUNTS,
         gpus: list[GPU] | None = None) -> list[Fit]:
    """Every catalog GPU x count, fitting ones first (fewest GPUs, then least memory)."""
    catalog = catalog or default_catalog()
    out: list[Fit] = []
    # the GPUs the engine the user named runs on: the same at every count
    kept = gpus_running(w, catalog, gpus)
    for count, wc, est, band in _per_count(w, counts):
        if not kept:
            continue
        # the same for every GPU at this count: worked out once
        total, layout = est.total_bytes, describe_layout(wc)
        host_total, host_fits = est.host_total_bytes, est.host_fits
        for g, usable in kept:
            out.append(Fit(g, count, total, usable - total, layout, band,
                           host_total, host_fits))
    return sorted(out, key=lambda f: (not f.fits, f.count, f.gpu.usable_memory_bytes))


def _per_count(w: Workload, counts) -> Iterator[tuple[int, Workload, MemoryNeed, float]]:
    """For each count the workload can be laid out on (in order): the count, the workload laid
    out on it, its memory need (the estimate's numbers) and memory band (a count whose layout
    is refused left out)."""
    for count in counts:
        try:
            wc = layout_for(w, count)
        except InputError:
            continue
        yield count, wc, memory_need(wc), memory_band(wc)


def gpus_running(w: Workload, catalog: Catalog,
                 gpus: list[GPU] | None = None) -> Sequence[tuple[GPU, int]]:
    """The GPUs (of ``gpus``, else the catalog) the workload's engine runs on, in order, each
    with its usable memory."""
    if not gpus:  # the whole catalog: the same for every workload of this engine
        return _catalog_running(catalog, w.engine)
    return [(g, g.usable_memory_bytes) for g in gpus
            if w.engine is None or not catalog.engine_problem(g, w.engine)]


@by_identity(size=64)  # the memory suggestions ask it for every changed workload x count
def _catalog_running(catalog: Catalog, engine: Engine | None) -> tuple[tuple[GPU, int], ...]:
    """:func:`gpus_running` over the whole catalog (the catalog is frozen)."""
    return tuple((g, g.usable_memory_bytes) for g in catalog.gpus
                 if engine is None or not catalog.engine_problem(g, engine))


def smallest_fits(w: Workload, catalog: Catalog | None = None) -> list[Fit]:
    """For each GPU, the fewest GPUs that hold the workload (GPUs that never fit left out)."""
    return list(_smallest_fits(w, catalog or default_catalog()))


@by_identity(size=256, identities=2)  # the same workload asked "what fits" for each GPU
def _smallest_fits(w: Workload, catalog: Catalog) -> tuple[Fit, ...]:
    # as fits(w) keeping each GPU's first fitting Fit, without a Fit for every GPU x count:
    # counts ascending, so a GPU's first fit is its fewest; the same errors (layout words)
    best: list[Fit] = []
    kept = gpus_running(w, catalog)
    roomiest, rooms = _by_room(kept)
    placed = 0  # the GPUs that hold the need at some count so far: roomiest[:placed]
    for count, wc, est, band in _per_count(w, COUNTS):
        if not kept:
            continue
        total, layout = est.total_bytes, describe_layout(wc)
        if not est.host_fits:
            continue
        # the GPUs that hold ``total`` are the roomiest ones down to the first that does not
        # (``rooms`` ascending: bisect finds how many); those past the ones placed at fewer
        # GPUs are new, in the catalog's order (as the walk over every GPU found them)
        held = len(rooms) - bisect_left(rooms, total)
        if held <= placed:
            continue
        host_total = est.host_total_bytes
        for i in sorted(i for _, i in roomiest[placed:held]):
            g, usable = kept[i]
            best.append(Fit(g, count, total, usable - total, layout, band, host_total,
                            True))  # est.host_fits, checked above
        placed = held
    # by count, then usable memory (a stable sort: the catalog's order within both)
    return tuple(sorted(best, key=lambda f: (f.count, f.headroom_bytes + f.per_gpu_bytes)))


@by_identity(size=64)
def _by_room(kept: Sequence[tuple[GPU, int]]) -> tuple[tuple[tuple[int, int], ...],
                                                       tuple[int, ...]]:
    """(usable memory, place in ``kept``) of each GPU, the roomiest first; and the usable
    memories ascending (to bisect)."""
    roomiest = tuple(sorted(((usable, i) for i, (_, usable) in enumerate(kept)),
                            reverse=True))
    return roomiest, tuple(usable for usable, _ in reversed(roomiest))


# ------------------------------------------------------------------ serving capacity

# (workload, count) -> {batch: (bytes per GPU, host RAM holds it)}: the memory at a batch
# does not depend on the GPU, and a recommendation searches the same workloads on every GPU
_AT_BATCH = Table(256)


def max_concurrency(w: Workload, gpu: GPU, count: int = 1, limit: int = 4096) -> int:
    """How many sequences of ``w.seq_len`` tokens fit at once on ``count`` x ``gpu``."""
    try:
        key = (w, count)
        probes = _AT_BATCH.get(key)
    except TypeError:  # an unhashable setting: no memo
        return _search(lambda n: layout_for(w.with_(batch=n), count), gpu, 1, limit)
    if probes is None:
        probes = _AT_BATCH.put(key, {})
    usable = gpu.usable_memory_bytes

    def ok(n: int) -> bool:
        hit = probes.get(n)
        if hit is None:
            need = memory_need(layout_for(w.with_(batch=n), count))
            hit = probes[n] = (need.total_bytes, need.host_fits)
        return hit[0] <= usable and hit[1]

    return _bisect(ok, lo=1, hi=limit)


def max_context(w: Workload, gpu: GPU, count: int = 1) -> int:
    """The longest context per sequence at ``w.batch`` concurrent sequences."""
    cap = max(w.model.max_context, 1) if w.model.max_context else 1 << 21
    return _search(lambda n: layout_for(w.with_(context=n), count), gpu, 1, cap)


def _search(make, gpu: GPU, lo: int, hi: int) -> int:
    """The largest n in [lo, hi] whose workload fits (0 if even lo does not)."""
    usable = gpu.usable_memory_bytes

    def ok(n: int) -> bool:
        need = memory_need(make(n))
        return need.total_bytes <= usable and need.host_fits

    return _bisect(ok, lo, hi)


def _bisect(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest n in [lo, hi] with ok(n), ok being monotone (0 if not even ok(lo))."""
    if not ok(lo):
        return 0
    if ok(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
