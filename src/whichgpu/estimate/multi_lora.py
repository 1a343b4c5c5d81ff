"""Many LoRA adapters served on one base model (``--lora-adapters N --lora-rank R``).

The engines' own rules, with the model's real linear shapes (``Workload.lora_groups``):

- vLLM preallocates, before it sizes the KV cache, one LoRA slot per ``max_loras`` (adapters
  in one batch) on *every* linear layer it can adapt, each slot sized at ``max_lora_rank``
  (rounded up to a rank vLLM offers): ``max_loras x max_lora_rank x sum(in + out) x 2 bytes``
  per GPU (split over tensor parallelism). The adapters' own targets do not shrink the slots.
- ``max_cpu_loras`` adapters wait in host RAM at their own rank and targets (PEFT files).
- SGLang keeps ``--max-loras-per-batch`` (8) adapters in its GPU pool the same way.

The throughput cost of computing adapters beside the base model (punica SGMV / S-LoRA / vLLM
kernels) is a published range, applied to the serving rates (``apply_cost``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from whichgpu.engines import module
from whichgpu.errors import InputError
from whichgpu.estimate.constants import Constant, _load
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Range
from whichgpu.vocabulary import Engine

if TYPE_CHECKING:
    from whichgpu.estimate.memory.terms import MemoryTerm
    from whichgpu.estimate.speed.result import SpeedEstimate
    from whichgpu.estimate.workload import Workload

#: an engine module's ``lora_slots`` (engines/vllm.py, engines/sglang.py): (adapters, rank)
#: -> (the adapters one batch may hold, the rank its slots are sized for); an engine without
#: one serves no LoRA adapters here
LoraSlots = Callable[[int, int], tuple[int, int]]


def constant(name: str) -> Constant:
    return _load("multi_lora")[name]


def value(name: str) -> Any:
    return constant(name).value


def slot_rank(rank: int) -> int:
    """The ``max_lora_rank`` vLLM needs for adapters of ``rank``: the next rank it offers."""
    ranks = [int(r) for r in value("vllm_lora_ranks")]
    for r in ranks:
        if r >= rank:
            return r
    raise InputError(msg("lora.rank_too_high", "LoRA rank {rank} is above the largest "
                         "rank vLLM serves ({top})", rank=rank, top=ranks[-1]))


def _sum_in_out(w: Workload, targets: tuple[str, ...]) -> int:
    """sum over the targeted linear instances of (in + out) features."""
    from whichgpu.estimate.workload import lora_groups

    groups = lora_groups(w.with_(lora_targets=targets))
    return sum((g.in_features + g.out_features) * g.count for g in groups)


@dataclass(frozen=True)
class LoraPlan:
    """The engine settings and memory for ``adapters`` adapters of ``rank`` on ``w``."""

    engine: Engine
    adapters: int
    rank: int
    max_loras: int  # adapters in one batch, each with its GPU slot
    max_lora_rank: int  # every slot's rank
    max_cpu_loras: int  # adapters cached in host RAM
    slot_bytes: int  # one slot on one GPU (all adaptable linears at max_lora_rank)
    adapter_bytes: int  # one adapter at its own rank and targets (16-bit)
    gpu_bytes: int  # max_loras slots on one GPU
    host_bytes: int  # max_cpu_loras adapters in host RAM

    def to_json(self) -> dict[str, Any]:
        return {"engine": str(self.engine), "adapters": self.adapters, "rank": self.rank,
                "max_loras": self.max_loras, "max_lora_rank": self.max_lora_rank,
                "max_cpu_loras": self.max_cpu_loras, "slot_bytes": self.slot_bytes,
                "adapter_bytes": self.adapter_bytes, "gpu_bytes": self.gpu_bytes,
                "host_bytes": self.host_bytes,
                "throughput_cost": cost_range().to_json(4),
                "source": [constant(n).source for n in (
                    "vllm_max_loras_default", "vllm_lora_ranks", "lora_decode_cost_low",
                    "lora_decode_cost_typical", "lora_decode_cost_high")]}


def lora_plan(w: Workload) -> LoraPlan:
    """The settings and memory of ``w.lora_adapters`` adapters at ``w.lora_rank``."""
    engine = str(w.engine_name)  # a plain word (a message parameter, a JSON value)
    slots: LoraSlots | None = getattr(module(w.engine_name), "lora_slots", None)
    if slots is None:
        raise InputError(msg("lora.engine", "many LoRA adapters on one base are answered for "
                             "vLLM and SGLang (their adapter slots and kernels); {engine} "
                             "is not one ({flag} vllm)", engine=engine,
                             flag=Field("engine")))
    n, rank = w.lora_adapters, w.lora_rank
    dtype = int(value("lora_dtype_bytes"))
    cap, top = slots(n, rank)
    max_loras = max(1, min(cap, w.batch))  # no more distinct adapters than sequences
    all_linear = _sum_in_out(w, ("all-linear",))
    slot = math.ceil(top * all_linear * dtype / max(w.tp_degree, 1))
    own = rank * _sum_in_out(w, w.lora_targets) * dtype
    return LoraPlan(engine=w.engine_name, adapters=n, rank=rank, max_loras=max_loras,
                    max_lora_rank=top, max_cpu_loras=n, slot_bytes=slot, adapter_bytes=own,
                    gpu_bytes=slot * max_loras, host_bytes=own * n)


def lora_term(w: Workload) -> tuple[MemoryTerm, LoraPlan]:
    """The memory term of the adapters' GPU slots, and the plan behind it."""
    from whichgpu.estimate.memory.terms import MemoryTerm

    plan = lora_plan(w)
    formula = msg("term.lora_adapters", "{slots} slot(s) (max_loras) x rank {rank} "
                  "(max_lora_rank) x sum(in + out) of every adaptable linear x 2 bytes; "
                  "{n} adapter(s) in host RAM (max_cpu_loras): {host:.2f} GB",
                  slots=plan.max_loras, rank=plan.max_lora_rank, n=plan.max_cpu_loras,
                  host=plan.host_bytes / 1e9)
    why = msg("term.lora_adapters.why", "{engine} preallocates every slot at the largest rank "
              "before it sizes the KV cache", engine=str(plan.engine))
    return MemoryTerm("lora_adapters", plan.gpu_bytes, formula, why,
                      constant("vllm_lora_ranks").source), plan


def slots_that_fit(plan: LoraPlan, free_bytes: float) -> int:
    """How many more adapter slots ``free_bytes`` (per GPU) hold beside the rest."""
    return max(0, int(free_bytes // plan.slot_bytes)) if plan.slot_bytes else 0


def cost_range() -> Range:
    """The fraction of serving throughput lost to the adapters: low / typical / high."""
    return Range(float(value("lora_decode_cost_low")), float(value("lora_decode_cost_typical")),
                 float(value("lora_decode_cost_high")))


def apply_cost(est: SpeedEstimate) -> SpeedEstimate:
    """The serving rates slowed by the published multi-LoRA cost: the high rate loses the
    least, the low rate the most; times grow the other way."""
    cost = cost_range()
    keep = Range(1 - cost.high, 1 - cost.typical, 1 - cost.low)

    def slowed(r: Range) -> Range:
        return Range(r.low * keep.low, r.typical * keep.typical, r.high * keep.high)

    def longer(r: Range) -> Range:
        return Range(r.low / keep.high, r.typical / keep.typical, r.high / keep.low)

    note: Message = msg("speed.lora_cost", "adapters computed beside the base model cost "
                        "{low:.0%}-{high:.0%} of the throughput (typical {typical:.0%}; vLLM "
                        "and punica measurements)", low=cost.low, typical=cost.typical,
                        high=cost.high)
    return dataclasses.replace(
        est, rates={k: slowed(r) for k, r in est.rates.items()},
        times={k: longer(r) for k, r in est.times.items()},
        assumptions=(*est.assumptions, note))


def apply_cost_to_saturation(data: dict[str, Any]) -> dict[str, Any]:
    """``speed --max-throughput``'s answer slowed the same way (throughput and requests/s
    lose the cost, the time per output token grows by it)."""
    cost = cost_range()
    keep = Range(1 - cost.high, 1 - cost.typical, 1 - cost.low)
    out = dict(data)
    for key in ("throughput_tokens_per_s", "requests_per_s"):
        r = data[key]
        out[key] = Range(r["low"] * keep.low, r["typical"] * keep.typical,
                         r["high"] * keep.high).to_json()
    t = data["tpot_s"]
    out["tpot_s"] = Range(t["low"] / keep.high, t["typical"] / keep.typical,
                          t["high"] / keep.low).to_json()
    out["assumptions"] = [*data["assumptions"], msg(
        "speed.lora_cost", "adapters computed beside the base model cost {low:.0%}-{high:.0%} "
        "of the throughput (typical {typical:.0%}; vLLM and punica measurements)",
        low=cost.low, typical=cost.typical, high=cost.high)]
    return out


def cost_left_out() -> Message:
    """What an answer that times the steps without the adapters says of them (a request
    rate's simulation): their published throughput cost, not in its times."""
    cost = cost_range()
    return msg("speed.lora_cost_left_out", "LoRA adapters: their compute is not in these "
               "times; adapters cost {low:.0%}-{high:.0%} of the throughput (typical "
               "{typical:.0%}; vLLM and punica measurements)", low=cost.low,
               typical=cost.typical, high=cost.high)
