"""Training and fine-tuning speed: FLOPs per token over peak x MFU, plus exposed communication.

FLOPs per token (PaLM appendix B; shared/research/estimators.md 5.7):
  full fine-tuning / pre-training  6 N + 12 L s h
  LoRA / QLoRA                     4 N + 12 L s h   (no weight gradients for frozen weights)
  gradient checkpointing           + 2 N + 4 L s h  (one more forward)
with N the non-embedding parameters a token touches, L layers, s sequence length, h = heads x
head_dim. QLoRA also dequantizes its 4-bit weights (a time factor, not model FLOPs).

Multi-GPU: data parallel all-reduces gradients (ZeRO-3/FSDP all-gathers weights twice and
reduce-scatters gradients); part of it overlaps with backward, less over PCIe without
peer-to-peer (S28). Tensor parallel all-reduces activations 4 times per layer.
"""

from __future__ import annotations

import math

from whichgpu.estimate.constants import per_key, speed_value
from whichgpu.estimate.speed.hardware import Hardware, compute_precision
from whichgpu.estimate.speed.result import Component, dominant
from whichgpu.estimate.workload import Workload


def size_factor(hidden: int) -> float:
    """Small models reach a lower MFU (small GEMMs); 1.0 from hidden 4096 up (prior)."""
    return max(0.55, min(1.0, (hidden / 4096) ** 0.35)) if hidden else 1.0


def training_step(w: Workload, hw: Hardware) -> dict:
    m = w.model
    q = w.quant_format
    precision, why = compute_precision(hw.gpu, q, "transformers", training=True)
    fp8 = w.fp8_training and hw.gpu.supports("fp8")
    if w.fp8_training and not fp8:
        why = f"{hw.gpu.id} has no FP8: --fp8-training falls back to {precision}"
    elif fp8:
        precision, why = "fp8", "FP8 matmuls on bf16 weights (Transformer Engine / torchao)"
    peak = hw.peak(precision) or hw.peak("fp16") or 1.0
    s, b = w.seq_len, w.batch
    tp, pp, dp = w.tp_degree, w.pp_degree, w.dp_degree
    n = max(m.params_active - m.params.embedding, 1)
    ad = m.num_attention_heads * (m.head_dim or 128)
    attn = 12 * m.num_layers * s * ad
    lora = w.task in ("lora", "qlora")
    per_token = (4 if lora else 6) * n + attn
    useful = 6 * n + attn  # what MFU counts (no recompute)
    if w.uses_checkpointing:
        per_token += 2 * n + attn / 3
    tokens = b * s * dp
    flops = tokens * per_token
    mfu0 = (per_key("training_mfu", w.task) * size_factor(m.hidden_size)
            * per_key("compute_arch_factor", str(hw.gpu.architecture.value)))
    if fp8:
        mfu0 *= speed_value("fp8_compute_efficiency_factor")
    if w.task == "qlora" or (lora and q.linear_bits < 16):
        mfu0 /= speed_value("qlora_dequant_factor")
    t_compute = flops / (w.gpus * peak * mfu0)

    link = hw.fabric if dp > 1 else hw.link  # data-parallel traffic crosses servers
    overlap = speed_value("dp_overlap").get(link.kind, 0.5) if link.kind != "none" else 1.0
    t_dp = 0.0
    if dp > 1:
        if lora:
            trainable_bytes = sum(w.lora_rank * (g.in_features + g.out_features) * g.count
                                  for g in m.linears) * 4 if m.linears else 0
            t_dp = link.all_reduce_s(trainable_bytes / tp / pp, dp)
        elif w.zero_stage >= 3:
            t_dp = 3 * link.all_gather_s(m.params_total * 2 / tp / pp, dp)
        else:
            t_dp = link.all_reduce_s(m.params_total * 2 / tp / pp, dp)
    exposed_dp = t_dp * (1 - overlap)
    accumulation = 1
    if exposed_dp > t_compute:
        # A link slower than the compute: practitioners accumulate gradients over several
        # micro-batches per synchronisation rather than run slower than on fewer GPUs.
        accumulation = min(64, math.ceil(exposed_dp / t_compute))
        t_compute *= accumulation
        tokens *= accumulation
    t_tp = 0.0
    if tp > 1:
        t_tp = accumulation * 4 * m.num_layers / pp * hw.link.all_reduce_s(
            b * s * m.hidden_size * 2, tp)
    bubble = 0.0
    if pp > 1:
        micro = 4 * pp
        bubble = (pp - 1) / (micro + pp - 1)
    step = (t_compute + exposed_dp + t_tp) / (1 - bubble)
    tokens_per_s = tokens / step
    # MFU is reported against the 16-bit peak, as torchtitan and llm-foundry report it
    peak16 = hw.peak("bf16") or hw.peak("fp16") or peak
    mfu = tokens_per_s * useful / (w.gpus * peak16)
    parts = {"compute": t_compute, "interconnect": exposed_dp + t_tp,
             "fixed-overhead": step - t_compute - exposed_dp - t_tp}
    comps = (
        Component("compute", t_compute,
                  f"{tokens:,} tokens x {per_token / 1e9:.2f} GFLOP / ({w.gpus} x "
                  f"{peak / 1e12:,.0f} TFLOPS {precision} x MFU {mfu0:.2f})"),
        Component("data-parallel traffic (exposed)", exposed_dp,
                  f"{t_dp:.3f} s over {link.kind}, {overlap:.0%} hidden behind backward"),
        Component("tensor-parallel all-reduce", t_tp, f"4 per layer over {link.kind}"),
        Component("pipeline bubble", step - t_compute - exposed_dp - t_tp,
                  f"(pp-1)/(micro-batches + pp-1) = {bubble:.2f}"),
    )
    return {"precision": precision, "why": why, "tokens_per_s": tokens_per_s,
            "step_s": step, "mfu": mfu, "mfu_assumed": mfu0, "tokens_per_step": tokens,
            "bound": dominant(parts), "components": comps, "accumulation": accumulation}
