"""Prefill/decode disaggregation: separate prefill and decode instances, the KV cache sent
between them, against the same GPUs serving both phases together.

Each pool is one replica of the serving model (estimate/speed/serving.py) doing one phase:

- a **prefill instance** runs prompts only (no decodes beside them). Its service time per
  prompt is the serving model's prefill step (``StepModel.prefill_batch``: chunked at the
  engine's token budget, short prompts batched up to it); requests queue as an M/D/1 queue
  (DistServe, OSDI 2024, section 3.1 models a prefill instance so). Its TTFT is the request
  dispatch, the queue, its own prefill and the KV transfer;
- a **decode instance** decodes only: at ``d`` sequences each step is the serving model's
  decode step ``T(d)`` (no prompt chunks interleaved, which is what disaggregation buys), so
  TPOT = T(d), with ``d = rate x output x TPOT`` (Little's law) and ``d`` bounded by the KV
  cache and ``max_num_seqs`` (``ServingModel.limit``);
- the **KV cache** of the prompt (the model's real bytes per token, from
  ``estimate/memory/kv.py``, at the KV format) crosses the link between them once per request:
  ``bytes / (line rate x efficiency) + latency``, counted whole in TTFT (no layer-wise overlap).

Each instance takes the highest rate at which its phase meets its target (TTFT less the
transfer; TPOT), or 80 % of its saturation rate without a target (the knee the colocated
sizing uses, advise/serving.DEFAULT_MAX_UTILISATION). Counts are whole instances.

Not modelled: layer-wise KV streaming (Mooncake, DistServe pull overlap), prefix caching,
the decode instance's own first-token handling, KV transfer contention beyond a load check,
attention data parallelism and expert parallelism across instances (DeepSeek-style EP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload

#: busiest a prefill or decode instance is run without a latency target (as the colocated
#: sizing: advise/serving.DEFAULT_MAX_UTILISATION, the knee of an M/G/c queue's wait)
MAX_UTILISATION = 0.8
#: busiest the KV link is run: past it, transfers queue (a prior, the same knee)
MAX_LINK_LOAD = 0.8


@dataclass(frozen=True)
class KVLink:
    """The link a KV cache crosses from a prefill to a decode instance."""

    name: str  # an interconnect id (100gbe) or the server's own link kind (nvlink, pcie_p2p)
    effective_bytes_per_s: float
    latency_s: float
    between_servers: bool
    source: str = ""

    def transfer_s(self, nbytes: float) -> float:
        if nbytes <= 0:
            return 0.0
        return nbytes / self.effective_bytes_per_s + self.latency_s

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "effective_bytes_per_s": self.effective_bytes_per_s,
                "latency_s": self.latency_s, "between_servers": self.between_servers,
                "source": self.source}


def server_link(gpu: GPU) -> KVLink:
    """The link within one server of this GPU (NVLink, PCIe peer-to-peer or through the host)."""
    from whichgpu.estimate.speed.hardware import link_for

    link = link_for(gpu, 2)
    return KVLink(link.kind, link.one_way_bytes_per_s * link.efficiency, link.latency_s,
                  False, "catalog/data/gpus.toml (the card's interconnect) and the speed "
                  "constants link_efficiency / link_latency_us")


def network_link(gpu: GPU, interconnect: str | None) -> KVLink:
    """The link between servers: the one named, else the speed constants' default for the
    card's architecture."""
    from whichgpu.estimate.interconnect import default_network, node_link

    if interconnect:
        nl = node_link(interconnect)
        return KVLink(str(nl.id), nl.effective_bytes_per_s, nl.latency_s, True, nl.source)
    d = default_network(str(gpu.architecture.value))
    return KVLink("network", d["line_rate_bytes_per_s"] * d["efficiency"], d["latency_s"], True,
                  d["source"])


def kv_bytes_per_request(w: Workload, prompt: int) -> int:
    """Bytes of KV cache (and recurrent state) a prompt of ``prompt`` tokens leaves behind:
    what a prefill instance sends to a decode instance."""
    from whichgpu.estimate.memory.kv import kv_cache

    return int(kv_cache(w.model, prompt, w.kv_bytes, w.engine_name).bytes_per_sequence)


@dataclass(frozen=True)
class PrefillInstance:
    """One prefill-only instance of ``tp`` GPUs."""

    gpu: GPU
    tp: int
    own_s: float  # one prompt's prefill alone
    per_prompt_s: float  # GPU seconds per prompt when prompts are batched to the budget
    dispatch_s: float

    def ttft_s(self, rate: float, transfer_s: float) -> float:
        from whichgpu.estimate.speed.serving_queue import md1_wait_s

        return self.dispatch_s + md1_wait_s(rate, self.per_prompt_s) + self.own_s + transfer_s

    def max_rate(self, ttft_s: float | None, transfer_s: float) -> float:
        """Highest rate whose mean TTFT meets ``ttft_s`` (0: none does)."""
        cap = 1 / self.per_prompt_s
        if ttft_s is None:
            return cap * MAX_UTILISATION
        if self.ttft_s(cap * 1e-9, transfer_s) > ttft_s:
            return 0.0
        lo, hi = 0.0, cap
        for _ in range(60):
            mid = (lo + hi) / 2
            if self.ttft_s(mid, transfer_s) <= ttft_s:
                lo = mid
            else:
                hi = mid
        return lo


@dataclass(frozen=True)
class DecodeInstance:
    """One decode-only instance of ``tp`` GPUs."""

    gpu: GPU
    tp: int
    steps: Any  # serving_steps.StepModel
    limit: int  # most sequences decoding at once (KV cache, max_num_seqs)
    limited_by: str
    output: int

    def tpot_s(self, rate: float) -> tuple[float, float]:
        """(TPOT, sequences decoding) at ``rate`` requests/s: the fixed point of
        d = rate x output x T(d); inf past the batch limit."""
        t = self.steps.decode(1.0)
        d = 1.0
        for _ in range(100):
            d = max(1.0, rate * self.output * t)
            if d > self.limit:
                return math.inf, float(self.limit)
            t_new = self.steps.decode(d)
            if abs(t_new - t) <= 1e-6 * t:
                t = t_new
                break
            t = t_new
        return t, d

    def max_rate(self, tpot_s: float | None) -> float:
        """Highest rate whose TPOT meets ``tpot_s`` within the batch limit (0: none)."""
        def rate_at(d: float) -> float:
            return d / (self.output * self.steps.decode(d))

        if tpot_s is None:
            return rate_at(self.limit) * MAX_UTILISATION
        if self.steps.decode(1.0) > tpot_s:
            return 0.0
        if self.steps.decode(float(self.limit)) <= tpot_s:
            return rate_at(self.limit) * MAX_UTILISATION
        lo, hi = 1.0, float(self.limit)
        for _ in range(60):
            mid = (lo + hi) / 2
            if self.steps.decode(mid) <= tpot_s:
                lo = mid
            else:
                hi = mid
        return rate_at(lo)


def _replica(w: Workload, gpu: GPU, tp: int, profile: Any):
    """The serving model of one ``tp``-GPU replica of ``w`` on ``gpu``, or None where it
    does not hold the model."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import layout_for
    from whichgpu.estimate.speed.serving import ServingModel
    from whichgpu.estimate.workload import tp_problem

    if tp_problem(w.model, tp):
        return None
    wl = layout_for(w.with_(batch=1), tp)
    if wl.pp_degree > 1 or estimate_memory(wl).total_bytes > gpu.usable_memory_bytes:
        return None
    try:
        return ServingModel(wl, gpu, profile=profile, lengths="mean")
    except InputError:
        return None


def prefill_instance(w: Workload, gpu: GPU, tp: int, profile: Any = None
                     ) -> PrefillInstance | None:
    """A prefill-only instance of ``tp`` x ``gpu`` (None: it does not hold the model)."""
    sm = _replica(w, gpu, tp, profile)
    if sm is None:
        return None
    s, prompt = sm.steps, sm.prompt
    budget = max(int(sm.config.token_budget), 1)
    if prompt > budget:  # chunked: the prompt's chunks one after another
        n = math.ceil(prompt / budget)
        own = (n - 1) * s.prefill_batch(1, budget) + s.prefill_batch(1, prompt - (n - 1) * budget)
        per = own
    else:  # whole prompts, batched up to the budget when several wait
        own = s.prefill_batch(1)
        k = max(1, budget // prompt)
        per = s.prefill_batch(k) / k
    return PrefillInstance(gpu, tp, own, per, s.request_dispatch_s)


def decode_instance(w: Workload, gpu: GPU, tp: int, profile: Any = None
                    ) -> DecodeInstance | None:
    """A decode-only instance of ``tp`` x ``gpu`` (None: it does not hold the model)."""
    sm = _replica(w, gpu, tp, profile)
    if sm is None:
        return None
    return DecodeInstance(gpu, tp, sm.steps, sm.limit, sm.limited_by, sm.output)


@dataclass(frozen=True)
class Plan:
    """A disaggregated layout for a request rate, and what it reaches."""

    prefill: PrefillInstance
    decode: DecodeInstance
    prefill_instances: int
    decode_instances: int
    prefill_max_rate: float  # per instance, within the targets
    decode_max_rate: float
    link: KVLink
    kv_bytes: int  # per request
    transfer_s: float
    requests_per_s: float
    ttft_s: float  # mean, at the planned load
    tpot_s: float
    decode_batch: float

    @property
    def gpus(self) -> int:
        return (self.prefill_instances * self.prefill.tp
                + self.decode_instances * self.decode.tp)

    @property
    def ratio(self) -> str:
        """P:D as instances (``2P:3D``)."""
        return f"{self.prefill_instances}P:{self.decode_instances}D"

    @property
    def prefill_load(self) -> float:
        return self.requests_per_s / (self.prefill_instances / self.prefill.per_prompt_s)

    @property
    def decode_load(self) -> float:
        cap = self.decode.max_rate(None) / MAX_UTILISATION
        return self.requests_per_s / (self.decode_instances * cap) if cap > 0 else 1.0

    @property
    def link_load(self) -> float:
        """Busy share of each decode instance's link receiving KV caches."""
        per = self.requests_per_s / self.decode_instances
        return per * self.kv_bytes / self.link.effective_bytes_per_s

    def to_json(self) -> dict[str, Any]:
        return {
            "ratio": self.ratio,
            "prefill": {"gpu": self.prefill.gpu.id, "tp": self.prefill.tp,
                        "instances": self.prefill_instances,
                        "max_requests_per_s_per_instance": round(self.prefill_max_rate, 6),
                        "prefill_s": self.prefill.own_s,
                        "utilisation": round(self.prefill_load, 4)},
            "decode": {"gpu": self.decode.gpu.id, "tp": self.decode.tp,
                       "instances": self.decode_instances,
                       "max_requests_per_s_per_instance": round(self.decode_max_rate, 6),
                       "batch": round(self.decode_batch, 2), "batch_limit": self.decode.limit,
                       "limited_by": self.decode.limited_by,
                       "utilisation": round(self.decode_load, 4)},
            "gpus": self.gpus,
            "kv_transfer": {"bytes_per_request": self.kv_bytes, "seconds": self.transfer_s,
                            "link": self.link.to_json(), "link_load": round(self.link_load, 4)},
            "ttft_s": self.ttft_s, "tpot_s": self.tpot_s,
        }


def plan(w: Workload, requests_per_s: float, prefill: PrefillInstance,
         decode: DecodeInstance, link: KVLink, *, ttft_s: float | None = None,
         tpot_s: float | None = None) -> Plan | None:
    """The fewest instances of each kind that serve ``requests_per_s`` within the targets
    over ``link``; None where an instance misses a target even unloaded."""
    from whichgpu.estimate.speed.lengths import inference_lengths

    prompt, _, _ = inference_lengths(w)
    kv = kv_bytes_per_request(w, prompt)
    transfer = link.transfer_s(kv)
    p_rate = prefill.max_rate(ttft_s, transfer)
    d_rate = decode.max_rate(tpot_s)
    # the link receiving the KV caches must keep up too: a decode instance takes no more
    # requests than its link carries at MAX_LINK_LOAD
    d_rate = min(d_rate, MAX_LINK_LOAD * link.effective_bytes_per_s / kv) if kv else d_rate
    if p_rate <= 0 or d_rate <= 0:
        return None
    n_p = max(1, math.ceil(requests_per_s / p_rate * (1 - 1e-9)))
    n_d = max(1, math.ceil(requests_per_s / d_rate * (1 - 1e-9)))
    tpot, batch = decode.tpot_s(requests_per_s / n_d)
    ttft = prefill.ttft_s(requests_per_s / n_p, transfer)
    return Plan(prefill, decode, n_p, n_d, p_rate, d_rate, link, kv, transfer,
                requests_per_s, ttft, tpot, batch)
