"""What a serving engine does when launched with its defaults: its scheduler limits and how much
of the GPU its KV cache gets.

- vLLM: ``gpu_memory_utilization`` (0.9) of the whole GPU holds everything; the KV cache gets
  what the weights, the profiled activations and the CUDA graphs leave of it. V1 (0.8 and
  later) schedules chunked prefill inside decode steps within ``max_num_batched_tokens``; V0
  runs whole prompts in their own steps first.
- SGLang: ``mem_fraction_static`` of the GPU is the static pool of weights + KV cache
  (0.5 series: derived from the memory reserved for activations and CUDA graphs); prefill
  batches run apart from decode batches, in chunks of ``chunked_prefill_size``.
- TensorRT-LLM: ``free_gpu_memory_fraction`` (0.9) of the memory left after the weights and
  buffers; ``GUARANTEED_NO_EVICT`` admits a request only when its prompt plus all its output
  fit, so the KV held per sequence is the full length, not the current one.

Every default comes from ``data/serving_constants.toml`` with its source; a user or a
validation row may override any of them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Literal

from whichgpu.catalog.gpus import GPU
from whichgpu.engines import engines_with
from whichgpu.errors import InputError
from whichgpu.estimate.constants import _load, memory_value
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, msg
from whichgpu.units import GiB, MiB
from whichgpu.vocabulary import Engine

ServingEngine = Literal["vllm", "sglang", "trtllm"]
SERVING_ENGINES: tuple[str, ...] = engines_with("continuous_batching")
#: How a step mixes prompts and generation: ``mixed`` puts prompt tokens (chunks) into the same
#: forward pass as the running decodes (vLLM V1, TensorRT-LLM in-flight batching); ``separate``
#: runs prefill batches on their own while the decodes wait (SGLang, vLLM V0).
Policy = Literal["mixed", "separate"]
#: The KV an admitted sequence holds: ``current`` (paged, grows with the output; vLLM and
#: SGLang preempt or retract when full) or ``full`` (reserved for prompt + max output up front).
Reservation = Literal["current", "full"]
MemoryRule = Literal["total", "static", "free"]
Usage = Literal["server", "offline", "bench"]


def serving_value(name: str):
    return _load("serving_constants")[name].value


def serving_source(name: str) -> str:
    return _load("serving_constants")[name].source


@dataclass(frozen=True)
class EngineConfig:
    """The scheduler and memory settings a serving engine runs with."""

    engine: Engine
    generation: str  # "v0", "v1" (vLLM), "legacy", "current" (SGLang), "ifb" (TensorRT-LLM)
    policy: Policy
    reservation: Reservation
    max_num_seqs: int
    token_budget: int  # tokens one step (or one prefill batch) may hold
    memory_rule: MemoryRule
    memory_fraction: float
    chunked_prefill: bool
    multi_step: int = 1  # vLLM 0.6 --num-scheduler-steps: tokens are streamed in bursts
    cuda_graphs: bool = True
    notes: tuple[str, ...] = ()

    def with_(self, **changes) -> EngineConfig:
        return replace(self, **changes)

    def to_json(self) -> dict:
        return {"engine": self.engine, "generation": self.generation, "policy": self.policy,
                "kv_reservation": self.reservation, "max_num_seqs": self.max_num_seqs,
                "token_budget": self.token_budget, "memory_rule": self.memory_rule,
                "memory_fraction": self.memory_fraction,
                "chunked_prefill": self.chunked_prefill, "multi_step": self.multi_step,
                "notes": list(self.notes)}


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """``'vLLM 0.6.3.dev'`` -> (0, 6, 3); None when no version number is in the text."""
    if not text:
        return None
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def _at_least(version: tuple[int, ...] | str | None, first: str) -> bool:
    """A version at or above ``first``; an unknown version is taken as a current one."""
    if isinstance(version, str):
        version = version_tuple(version)
    if version is None:
        return True
    least = version_tuple(first)
    assert least is not None, first  # the callers' thresholds are version numbers
    return version >= least


def _gib(gpu: GPU) -> float:
    return gpu.usable_memory_bytes / GiB


def _vllm(w: Workload, gpu: GPU, version, usage: Usage) -> EngineConfig:
    v1 = _at_least(version, serving_value("vllm_v1_first_version"))
    util = float(memory_value("vllm_gpu_memory_utilization"))
    if not v1:
        budget = max(int(serving_value("vllm_max_num_batched_tokens")["v0-min"]),
                     w.model.max_context or 0)
        return EngineConfig(Engine.VLLM, "v0", "separate", "current",
                            int(serving_value("vllm_max_num_seqs")["v0"]), budget, "total", util,
                            False, notes=("vLLM V0 scheduler: prompts run in their own steps "
                                          "before decoding resumes",))
    large = (_gib(gpu) >= float(serving_value("vllm_large_gpu_min_gib"))
             and "a100" not in gpu.id)
    tier = "v1-large" if large else "v1"
    context = "offline" if usage in ("offline", "bench") else "server"
    seqs = int(serving_value("vllm_max_num_seqs")[tier])
    budget = int(serving_value("vllm_max_num_batched_tokens")[f"{tier}-{context}"])
    return EngineConfig(Engine.VLLM, "v1", "mixed", "current", seqs, budget, "total", util, True)


def _sglang_tier(gpu: GPU) -> dict:
    gib = _gib(gpu)
    for tier in serving_value("sglang_memory_tiers"):
        if gib < float(tier["below_gib"]):
            return tier
    return serving_value("sglang_memory_tiers")[-1]


def sglang_mem_fraction(gpu: GPU, tp: int, pp: int,
                        version: str | tuple[int, ...] | None) -> tuple[float, int]:
    """(mem_fraction_static, chunked_prefill_size) SGLang picks for this GPU and layout
    (``version`` as published, e.g. 'SGLang 0.4.3'; None: a current release)."""
    if not _at_least(version, serving_value("sglang_reserved_memory_first_version")):
        table = serving_value("sglang_mem_fraction_static_by_tp")
        key = max((int(k) for k in table if int(k) <= max(tp * pp, 1)), default=1)
        legacy = serving_value("sglang_legacy_chunked_prefill")
        chunk = int(legacy["small"] if gpu.usable_memory_bytes < legacy["below_gib"] * 1e9
                    else legacy["large"])
        return float(table[str(key)]), chunk
    tier = _sglang_tier(gpu)
    chunk = int(tier["chunk"])
    graph_bs = int(tier["graph_bs_tp4"] if tp >= 4 else tier["graph_bs"])
    r = serving_value("sglang_reserved_memory_mib")
    reserved = (r["base"] + max(chunk, 2048) * r["per_chunk_token"]
                + graph_bs * r["per_graph_batch"] + tp * pp / 8 * r["per_8_gpus"])
    gpu_mib = gpu.usable_memory_bytes / MiB
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, r["floor_above_60_gib"])
    return round((gpu_mib - reserved) / gpu_mib, 3), chunk


def _sglang(w: Workload, gpu: GPU, version) -> EngineConfig:
    fraction, chunk = sglang_mem_fraction(gpu, w.tp_degree, w.pp_degree, version)
    legacy = not _at_least(version, serving_value("sglang_reserved_memory_first_version"))
    seqs = int(serving_value("sglang_max_running_requests")["high"])
    return EngineConfig(Engine.SGLANG, "legacy" if legacy else "current", "separate", "current",
                        seqs, chunk, "static", fraction, True,
                        notes=("SGLang runs prefill batches apart from decode batches "
                               "(--enable-mixed-chunk is off by default)",))


def _trtllm(w: Workload, gpu: GPU, version, usage: Usage) -> EngineConfig:
    d = serving_value("trtllm_defaults")
    bench = usage == "bench"
    fraction = (float(serving_value("trtllm_bench_free_gpu_memory_fraction")) if bench
                else float(d["free_gpu_memory_fraction"]))
    seqs = int(d["bench_max_batch_size"] if bench else d["max_batch_size"])
    return EngineConfig(Engine.TRTLLM, "ifb", "mixed", "full", seqs, int(d["max_num_tokens"]),
                        "free", fraction, False)


def engine_config(w: Workload, gpu: GPU, *, version: str | None = None,
                  usage: Usage = "server") -> EngineConfig:
    """The defaults ``w.engine_name`` runs with on ``gpu`` (version as published, e.g.
    ``'vLLM 0.6.0'``; None: a current release)."""
    engine = w.engine_name
    v = version_tuple(version)
    if engine == Engine.VLLM:
        return _vllm(w, gpu, v, usage)
    if engine == Engine.SGLANG:
        return _sglang(w, gpu, v)
    if engine == Engine.TRTLLM:
        return _trtllm(w, gpu, v, usage)
    raise InputError(msg("serving.engines", "the serving model covers vLLM, SGLang and "
                         "TensorRT-LLM ({flag} vllm, sglang or trtllm), not {engine}",
                         flag=Field("engine"), engine=engine))


# ------------------------------------------------------------------ KV capacity

@dataclass(frozen=True)
class KVCapacity:
    """How much KV cache one replica holds, and how many sequences that is."""

    pool_bytes_per_gpu: int
    bytes_per_sequence_per_gpu: float  # at the resident length
    resident_tokens: int  # tokens each sequence holds on average (current) or reserves (full)
    sequences: int
    formula: str

    def to_json(self) -> dict:
        return {"pool_bytes_per_gpu": self.pool_bytes_per_gpu,
                "bytes_per_sequence_per_gpu": round(self.bytes_per_sequence_per_gpu),
                "resident_tokens": self.resident_tokens, "sequences": self.sequences,
                "formula": self.formula}


def resident_tokens(cfg: EngineConfig, prompt: int, output: int) -> int:
    """Tokens of KV one running sequence holds: on average prompt + output/2 when the cache
    grows page by page (a steady stream of requests at every stage of their output), the
    whole prompt + output when the engine reserves it up front."""
    if cfg.reservation == "full":
        return prompt + output
    return prompt + max(output // 2, 1)


def kv_capacity(w: Workload, gpu: GPU, cfg: EngineConfig, prompt: int,
                output: int) -> KVCapacity:
    """The KV pool of one replica of ``w`` (its TP x PP layout) on ``gpu`` under ``cfg``'s
    memory semantics, and the sequences it holds at the resident length.

    The weights, activations, CUDA graphs, runtime and NCCL buffers are the memory model's own
    terms (estimate/memory/inference.py), so capacity and the fit check agree.
    """
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.kv import kv_cache, kv_tp_divisor

    length = resident_tokens(cfg, prompt, output)
    probe = w.with_(batch=1, context=max(length, 1), prompt_tokens=None, output_tokens=None)
    terms = {t.name: t.bytes for t in estimate_memory(probe).terms}
    weights = terms.get("weights", 0)
    non_kv = sum(v for k, v in terms.items() if k not in ("kv_cache", "engine_reserve"))
    usable = gpu.usable_memory_bytes
    if cfg.memory_rule == "total":
        pool = cfg.memory_fraction * usable - non_kv
        how = (f"{cfg.memory_fraction:g} x {usable / 1e9:.1f} GB - weights, activations, "
               f"CUDA graphs and runtime {non_kv / 1e9:.1f} GB")
    elif cfg.memory_rule == "static":
        pool = cfg.memory_fraction * usable - weights
        how = (f"mem_fraction_static {cfg.memory_fraction:g} x {usable / 1e9:.1f} GB - "
               f"weights {weights / 1e9:.1f} GB")
    else:
        pool = cfg.memory_fraction * (usable - non_kv)
        how = (f"{cfg.memory_fraction:g} x (free {usable / 1e9:.1f} GB - weights and buffers "
               f"{non_kv / 1e9:.1f} GB)")
    m = w.model
    per_seq = (kv_cache(m, length, w.kv_bytes, cfg.engine).bytes_per_sequence
               / kv_tp_divisor(m, w.tp_degree) / max(w.pp_degree, 1))
    pool = max(pool, 0.0)
    seqs = int(pool // per_seq) if per_seq > 0 else 0
    if w.expert_parallel and w.dp_degree > 1:  # issue 30: each data-parallel rank's own pool
        seqs *= w.dp_degree
    return KVCapacity(int(pool), per_seq, length, seqs,
                      f"KV pool {pool / 1e9:.1f} GB per GPU = {how}; {seqs:,} sequences of "
                      f"{length:,} tokens ({per_seq / 1e6:.1f} MB each per GPU)")


def batch_limit(cfg: EngineConfig, cap: KVCapacity, prompt: int,
                output: int) -> tuple[int, str]:
    """The most sequences that decode at once, and what limits it: the KV capacity, the
    engine's max_num_seqs, or (chunked prefill within a step) the token budget, which must
    also carry the prompts of the requests that replace finishing ones."""
    limits = {"kv-capacity": cap.sequences, "max-num-seqs": cfg.max_num_seqs}
    if cfg.policy == "mixed":
        # per step: d decode tokens + d x prompt/output prompt tokens <= the budget
        limits["token-budget"] = max(1, math.floor(cfg.token_budget * output
                                                   / (prompt + output)))
    name = min(limits, key=lambda k: (limits[k], k != "kv-capacity"))
    return max(limits[name], 0), name
