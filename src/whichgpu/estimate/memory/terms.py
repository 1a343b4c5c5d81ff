"""The result type of a memory estimate: named terms, each with its formula and assumption."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from whichgpu.units import GB, GiB
from whichgpu.vocabulary import Engine, Task

if TYPE_CHECKING:
    from whichgpu.estimate.frameworks import Framework
    from whichgpu.estimate.host import Host

# Canonical term names, in display order. A breakdown only lists the terms that apply.
TERM_ORDER = (
    "weights", "adapter_weights", "lora_adapters", "master_weights", "gradients",
    "optimizer_states", "kv_cache", "drafter", "activations", "logits", "dequant_workspace",
    "zero3_working_set",
    "vae_decode", "cuda_graphs", "runtime", "nccl", "fragmentation", "engine_reserve",
)


@dataclass(frozen=True)
class MemoryTerm:
    """One named part of the peak memory on each GPU."""

    name: str
    bytes: int
    formula: str
    assumption: str | None = None
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "bytes": int(self.bytes), "formula": self.formula,
                "assumption": self.assumption, "source": self.source}


@dataclass(frozen=True)
class MemoryEstimate:
    """Peak memory per GPU for a workload on ``gpus`` GPUs, as a sum of named terms."""

    task: Task
    engine: Engine
    quant: str
    gpus: int
    terms: tuple[MemoryTerm, ...]
    assumptions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    approximate: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    # what the job keeps in host RAM (llama.cpp: the token embedding, offloaded layers and
    # experts, their KV cache), for the whole machine, and the host it was checked against
    host_terms: tuple[MemoryTerm, ...] = ()
    host: Host | None = None
    framework: Framework | None = None  # training: whose memory rules (and evidence) apply

    def confidence(self) -> Any:
        """The label and why (memory/confidence.py), by the rule every answer uses."""
        from whichgpu.estimate.frameworks import Framework
        from whichgpu.estimate.memory.confidence import memory_confidence

        engine = (self.framework or Framework.TRANSFORMERS) if self.task in (
            Task.LORA, Task.QLORA, Task.FULL_FT, Task.PRETRAIN) else self.engine
        return memory_confidence(self.task, engine, self.approximate)

    @property
    def total_bytes(self) -> int:
        return int(sum(t.bytes for t in self.terms))

    @property
    def host_total_bytes(self) -> int:
        return int(sum(t.bytes for t in self.host_terms))

    @property
    def host_fits(self) -> bool:
        """Whether the host RAM holds what the job keeps there (True when it keeps nothing)."""
        if not self.host_terms or self.host is None:
            return True
        return self.host_total_bytes <= self.host.usable_ram_bytes

    def term(self, name: str) -> int:
        return int(sum(t.bytes for t in self.terms if t.name == name))

    @property
    def breakdown(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.terms:
            out[t.name] = out.get(t.name, 0) + int(t.bytes)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task, "engine": self.engine, "quant": self.quant, "gpus": self.gpus,
            "total_bytes": self.total_bytes,
            "total_gb": round(self.total_bytes / GB, 3),
            "total_gib": round(self.total_bytes / GiB, 3),
            "breakdown": self.breakdown,
            "terms": [t.to_json() for t in self.terms],
            "assumptions": list(self.assumptions),
            "warnings": list(self.warnings),
            "approximate": self.approximate,
            "confidence": (conf := self.confidence()).label,
            "confidence_why": conf.why,
            "details": self.details,
            "host": self._host_json(),
        }

    def _host_json(self) -> dict[str, Any] | None:
        if not self.host_terms:
            return None
        data = {"total_bytes": self.host_total_bytes,
                "total_gb": round(self.host_total_bytes / GB, 3),
                "terms": [t.to_json() for t in self.host_terms], "fits": self.host_fits}
        if self.host is not None:
            data.update(self.host.to_json())
        return data


def ordered(terms: list[MemoryTerm]) -> tuple[MemoryTerm, ...]:
    return tuple(sorted((t for t in terms if t.bytes > 0 or t.name == "weights"),
                        key=lambda t: _RANK.get(t.name, _LAST)))


#: each term's place in TERM_ORDER (an unknown term last), once, not per estimate
_RANK = {n: i for i, n in enumerate(TERM_ORDER)}
_LAST = len(_RANK)
