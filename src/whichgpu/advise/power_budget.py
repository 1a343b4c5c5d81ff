"""Within a power budget: the ranked options whose GPUs, busy, draw no more than it.

Each option's draw is its GPUs' board power in the job's phase (decode at the option's batch
for LLM inference, the compute-bound phase for images, video and training), measured where
published, else the phase's sourced share of TDP (estimate/energy.py). Board power only: the
host, the power supply's loss and cooling come on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.estimate.energy import PowerPhase, board_power


@dataclass(frozen=True)
class PoweredOption:
    rank: int  # 1-based, in the recommendation's order
    gpu: str
    gpus: int  # GPUs used (count x replicas)
    watts: float  # typical board power of all of them, busy
    watts_high: float

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "gpu": self.gpu, "gpus": self.gpus,
                "board_power_w": round(self.watts, 1),
                "board_power_high_w": round(self.watts_high, 1)}


@dataclass(frozen=True)
class PowerBudget:
    budget_w: float
    within: tuple[PoweredOption, ...]
    over: tuple[PoweredOption, ...]
    unknown: tuple[str, ...]  # GPUs without a TDP (a card described by its memory alone)

    def to_json(self) -> dict[str, Any]:
        return {"budget_w": self.budget_w, "within": [o.to_json() for o in self.within],
                "over_count": len(self.over), "no_power_known": list(self.unknown),
                "basis": "board power while busy, GPUs only (no host, PSU loss or cooling)"}


def _phase(workload: Any) -> PowerPhase:
    if workload.is_training:
        return PowerPhase.TRAINING
    if workload.is_diffusion:
        return PowerPhase.IMAGE
    return PowerPhase.DECODE


def within_budget(options: list[Any], workload: Any, budget_w: float) -> PowerBudget:
    """Split ranked ``options`` by whether their busy board power fits ``budget_w``."""
    phase = _phase(workload)
    within: list[PoweredOption] = []
    over: list[PoweredOption] = []
    unknown: list[str] = []
    for rank, o in enumerate(options, 1):
        if not o.gpu.tdp_watts:
            unknown.append(o.gpu.id)
            continue
        n = o.count * max(o.replicas, 1)
        d = board_power(o.gpu, phase, max(int(o.batch or 1), 1))
        p = PoweredOption(rank, o.gpu.id, n, d.watts.typical * n, d.watts.high * n)
        (within if p.watts <= budget_w else over).append(p)
    return PowerBudget(budget_w, tuple(within), tuple(over), tuple(unknown))
