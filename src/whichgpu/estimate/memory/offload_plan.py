"""The llama.cpp layout that fits a GPU when the whole model does not: experts or layers in
host RAM, as llama.cpp's own ``--fit`` does (PR #16653: for MoE models the dense weights keep
the GPU and experts move to system memory first; then whole layers).

The plan keeps ``llamacpp_fit_margin_mib`` free on each GPU (``--fit-target``'s default) and
says how much host RAM it needs; ``speed`` turns it into tokens/s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from whichgpu.catalog.gpus import GPU
from whichgpu.engines import has
from whichgpu.errors import InputError
from whichgpu.estimate.constants import memory_value
from whichgpu.estimate.memory import MemoryEstimate, estimate_memory
from whichgpu.estimate.memory.fit import layout_for
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import GB, MiB
from whichgpu.vocabulary import Placement, Task

PlanKind = Literal["experts", "layers", "experts+layers"]


@dataclass(frozen=True)
class OffloadPlan:
    """One GPU configuration plus host RAM, with the llama.cpp flags that make it fit."""

    workload: Workload  # the job with the offload flags set
    memory: MemoryEstimate
    gpu: GPU
    count: int
    kind: PlanKind

    @property
    def flags(self) -> str:
        return (self.memory.details.get("placement") or {}).get("flags", "")

    @property
    def host_bytes(self) -> int:
        return self.memory.host_total_bytes

    @property
    def host_ok(self) -> bool:
        return self.memory.host_fits

    @property
    def expert_layers(self) -> int:
        return (self.memory.details.get("placement") or {}).get("host_expert_layers", 0)

    @property
    def cpu_layers(self) -> int:
        return (self.memory.details.get("placement") or {}).get("cpu_layers", 0)

    def settings(self) -> tuple[tuple[str, Any], ...]:
        """The request fields that ask for this layout (llama.cpp's flags)."""
        w = self.workload
        out: list[tuple[str, Any]] = []
        if w.cpu_moe_layers:
            out.append(("n_cpu_moe", w.cpu_moe_layers))
        if w.gpu_layers is not None:
            out.append(("gpu_layers", w.gpu_layers))
        return tuple(out)

    def describe(self) -> Message:
        where = (msg("offload.one", "one {gpu}", gpu=self.gpu.id) if self.count == 1 else
                 Placement(self.gpu.id, self.count))
        parts: list[Message] = []
        if self.expert_layers:
            parts.append(msg("offload.experts", "the experts of {n} layer(s) in RAM",
                             n=self.expert_layers))
        if self.cpu_layers:
            parts.append(msg("offload.layers", "{n} layer(s) on the CPU", n=self.cpu_layers))
        host = self.memory.host
        ram = msg("offload.ram", "needs {ram:,.1f} GB of host RAM", ram=self.host_bytes / GB)
        if not self.host_ok and host is not None:
            ram = msg("offload.ram.short", "needs {ram:,.1f} GB of host RAM, more than the "
                      "{free:,.0f} GB free of {total:,.0f} GB ({flag})",
                      ram=self.host_bytes / GB, free=host.usable_ram_bytes / GB,
                      total=host.ram_bytes / GB, flag=Field("host_ram"))
        return msg("offload.plan", "{where} + {what} ({flags}): {gpu:,.1f} GB per GPU, {ram}",
                   where=where, what=Join(parts, " and "), flags=self.flags,
                   gpu=self.memory.total_bytes / GB, ram=ram)

    def to_json(self) -> dict:
        return {"gpu": self.gpu.id, "count": self.count, "kind": self.kind,
                "flags": self.flags, "gpu_bytes": self.memory.total_bytes,
                "host_bytes": self.host_bytes, "host_fits": self.host_ok,
                "expert_layers_in_ram": self.expert_layers, "cpu_layers": self.cpu_layers,
                "description": self.describe()}


def supports_offload(w: Workload) -> bool:
    """Whether the job can keep part of the model in host RAM (llama.cpp inference)."""
    return (w.task == Task.INFERENCE and has(w.engine_name, "host_offload")
            and bool(w.model.num_layers))


def no_offload_reason(w: Workload) -> Message | None:
    """Why a job that does not fit cannot spill to host RAM, in one line (None if it can)."""
    if w.task != Task.INFERENCE or w.is_diffusion:
        return None
    if has(w.engine_name, "host_offload"):
        return None
    return msg("offload.none", "{engine} keeps every weight on the GPU in whichgpu's model; "
               "llama.cpp ({flag} with a GGUF) can keep layers or MoE experts in host RAM",
               engine=w.engine_name, flag=Field("engine", "llamacpp"))


def offload_plan(w: Workload, gpu: GPU, count: int = 1) -> OffloadPlan | None:
    """The llama.cpp layout of ``w`` on ``count`` x ``gpu`` that moves the least to host RAM,
    or None when the job already fits, cannot offload, or fits no layout.

    MoE: the experts of the first N layers (``--n-cpu-moe N``, the smallest N that fits);
    if even every expert in RAM is too much, whole layers too (``-ngl``). Dense: the most
    layers that fit (``-ngl N``). A user's own offload flags are kept as given.
    """
    if not supports_offload(w) or w.offload_requested:
        return None
    try:
        base = layout_for(w, count)
    except InputError:
        return None
    limit = gpu.usable_memory_bytes - memory_value("llamacpp_fit_margin_mib") * MiB
    full = estimate_memory(base)
    if full.total_bytes <= gpu.usable_memory_bytes:
        return None
    n = w.model.num_layers

    def need(**flags) -> tuple[int, MemoryEstimate, Workload]:
        wl = base.with_(**flags)
        est = estimate_memory(wl)
        return est.total_bytes, est, wl

    if w.model.is_moe:
        best = _smallest(lambda k: need(cpu_moe_layers=k)[0] <= limit, 1, n)
        if best is not None:
            _, est, wl = need(cpu_moe_layers=best)
            return OffloadPlan(wl, est, gpu, count, "experts")
        ngl = _largest(lambda k: need(cpu_moe_layers=n, gpu_layers=k)[0] <= limit, 0, n + 1)
        if ngl is not None:
            _, est, wl = need(cpu_moe_layers=n, gpu_layers=ngl)
            return OffloadPlan(wl, est, gpu, count, "experts+layers")
        return None
    ngl = _largest(lambda k: need(gpu_layers=k)[0] <= limit, 0, n)
    if ngl is None:
        return None
    _, est, wl = need(gpu_layers=ngl)
    return OffloadPlan(wl, est, gpu, count, "layers")


def _smallest(ok: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The smallest k in [lo, hi] with ok(k), for ok monotone (False ... True)."""
    if not ok(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _largest(ok: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The largest k in [lo, hi] with ok(k), for ok monotone (True ... False)."""
    if not ok(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
