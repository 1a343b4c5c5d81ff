"""One decode step of an MoE served with expert parallelism and data-parallel attention
(vLLM ``-dp N --enable-expert-parallel``, SGLang ``--ep-size N --enable-dp-attention``).

The layout is tp x dp GPUs (Workload.tp_degree, dp_degree); the experts are spread over all
N = tp x dp of them. Per GPU and per step of ``batch`` sequences in all:

- each data-parallel rank runs its own ceil(batch / dp) sequences: it reads the attention and
  other non-expert weights (its tp share) and its own sequences' whole KV cache (its tp share);
- the experts: every rank's tokens are gathered to every GPU, which runs its 1/N of the
  experts on the tokens routed to them. Under uniform routing a GPU reads the experts of its
  share that any of the ``batch`` tokens touch: (E/N)(1 - (1 - k/E)^batch) experts, the same
  bytes in expectation as tensor parallelism over N, spread unevenly in practice (not
  modelled: a stated optimism, vLLM's EPLB exists to reduce it);
- matmuls: the rank's tokens through the non-expert layers, 1/N of all tokens' expert work;
- communication per MoE layer: vLLM's default all-to-all backend, ``allgather_reducescatter``
  ('Standard all2all using allgather/reducescatter primitives', the default in vLLM's
  expert-parallel deployment guide, https://docs.vllm.ai/en/latest/serving/
  expert_parallel_deployment/): dispatch all-gathers every rank's hidden states (bf16), combine
  reduce-scatters them, each over the GPUs' link (NVLink or PCIe, hardware.py's sourced link
  bandwidth, efficiency and latency). DeepEP's token dispatch (FP8 out, bf16 back, only to the
  GPUs holding a token's top-k experts) moves less: on H800 it measured 77 us dispatch and
  114 us combine per layer at 128 tokens per rank, 7168 hidden, top-8 over EP8 with RDMA
  (https://github.com/deepseek-ai/DeepEP, docs/legacy.md); it is not modelled separately.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from whichgpu.estimate.memory.kv import kv_tp_divisor
from whichgpu.estimate.speed.hardware import Hardware
from whichgpu.estimate.workload import Workload

if TYPE_CHECKING:
    from whichgpu.estimate.speed.serving_engine import EngineConfig

_ACT_BYTES = 2  # bf16 hidden states on the wire (vLLM's allgather_reducescatter)


@dataclass(frozen=True)
class ModelTerms:
    """What speed/llm.py already knows of the whole model for one step, handed in so that
    this module never imports llm (which calls it): the weights streamed with no token
    routed (``dense_bytes``) and at the step's tokens (``streamed_bytes``), and the linear
    and attention FLOPs per token (decode only)."""

    dense_bytes: float
    streamed_bytes: float
    linear_flops: float = 0.0
    attention_flops: float = 0.0


@dataclass(frozen=True)
class EpStep:
    """One GPU's share of one decode step under expert parallelism."""

    weight_bytes: float  # read per GPU: non-expert (tp share) + its touched experts
    kv_bytes: float  # its rank's sequences' KV cache (tp share)
    flops: float  # per GPU
    t_comm: float  # seconds: dispatch + combine per MoE layer, tp all-reduces in attention
    desc: str


def applies(w: Workload) -> bool:
    """Whether a step runs expert-parallel with data-parallel attention (dp > 1)."""
    return bool(w.expert_parallel and w.model.moe is not None and w.dp_degree > 1)


def ranks_batch(w: Workload, batch: int) -> int:
    """Sequences on one data-parallel rank when ``batch`` are spread over them."""
    return -(-max(batch, 0) // w.dp_degree)


def all_to_all_s(w: Workload, hw: Hardware, tokens: int) -> float:
    """Dispatch (all-gather) and combine (reduce-scatter) of ``tokens`` tokens' hidden states
    over the N GPUs of the experts, for every MoE layer of the model."""
    m = w.model
    n = w.tp_degree * w.dp_degree
    if m.moe is None or n <= 1 or tokens <= 0:
        return 0.0
    link = hw.link_over(n)
    nbytes = tokens * m.hidden_size * _ACT_BYTES
    return m.moe.moe_layers * 2 * link.all_gather_s(nbytes, n)


def decode_share(w: Workload, hw: Hardware, batch: int, context: int,
                 kv_per_sequence: float, terms: ModelTerms) -> EpStep:
    """Bytes, FLOPs and communication of one GPU for a decode step of ``batch`` sequences at
    ``context`` tokens (``kv_per_sequence``: the bytes one sequence's KV read costs;
    ``terms``: the whole model's per-step figures, from speed/llm.py)."""
    m = w.model
    moe = m.moe
    assert moe is not None
    tp, dp = w.tp_degree, w.dp_degree
    n = tp * dp
    b = ranks_batch(w, batch)
    dense = terms.dense_bytes  # no token routed: everything but the experts
    touched = terms.streamed_bytes - dense  # experts any token routes to
    weights = dense / tp + touched / n
    kv = kv_per_sequence * b / kv_tp_divisor(m, tp)
    expert_per_token = (2 * m.params.experts * moe.experts_per_token / moe.num_experts
                        if moe.num_experts else 0.0)
    rest = terms.linear_flops - expert_per_token + terms.attention_flops
    flops = b * rest / tp + batch * expert_per_token / n
    t_a2a = all_to_all_s(w, hw, batch)
    t_tp = (m.num_layers * 2 * hw.link_over(tp).all_reduce_s(b * m.hidden_size * 2, tp)
            if tp > 1 else 0.0)
    desc = (f"expert parallel over {n} GPUs, {b} of {batch} sequence(s) per data-parallel "
            f"rank: non-expert weights {dense / tp / 1e9:.2f} GB + its experts' share "
            f"{touched / n / 1e9:.2f} GB; all-gather + reduce-scatter of {batch} token(s) per "
            f"MoE layer over {hw.link_over(n).kind}: {t_a2a * 1e3:.2f} ms")
    return EpStep(weights, kv, flops, t_a2a + t_tp, desc)


def prefill_share(w: Workload, hw: Hardware, batch: int, prompt: int, dense_s: float,
                  expert_s: float, t_mem: float, terms: ModelTerms) -> tuple[float, float, float]:
    """Prefill of ``batch`` prompts of ``prompt`` tokens: the compute, weight-read and
    communication seconds, from those of one rank's tensor-parallel group: the non-expert
    (``dense_s``) and expert (``expert_s``) matmuls and the weights read per micro-batch of
    ``chunk`` tokens (``t_mem``). Each rank prefills its own prompts and reads its non-expert
    weights and 1/N of the experts per pass; the experts' work is shared by all the ranks;
    every MoE layer gathers and scatters all the tokens (``terms``: the weights streamed
    with no token routed and per micro-batch, from speed/llm.py)."""
    m = w.model
    tp, dp = w.tp_degree, w.dp_degree
    b = ranks_batch(w, batch)
    t_comp = dense_s * b / max(batch, 1) + expert_s / dp
    dense, streamed = terms.dense_bytes, terms.streamed_bytes
    per_gpu = dense / tp + (streamed - dense) / (tp * dp)
    t_mem *= per_gpu / max(streamed / tp, 1.0)
    t_tp = (m.num_layers * 2 * hw.link_over(tp).all_reduce_s(b * prompt * m.hidden_size * 2,
                                                              tp) if tp > 1 else 0.0)
    return t_comp, t_mem, t_tp + all_to_all_s(w, hw, batch * prompt)


def ep_replica(w: Workload, cfg: EngineConfig) -> tuple[int, EngineConfig]:
    """The GPUs of one expert-parallel replica (all tp x pp x dp of them) and its engine
    limits: each data-parallel rank schedules its own sequences, so the replica admits dp
    times one rank's max_num_seqs and batched-token budget (its KV pool, dp times one rank's,
    is serving_engine.kv_capacity's)."""
    dp = w.dp_degree
    return (w.tp_degree * w.pp_degree * dp,
            cfg.with_(max_num_seqs=cfg.max_num_seqs * dp, token_budget=cfg.token_budget * dp))
