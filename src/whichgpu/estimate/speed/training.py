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
from whichgpu.estimate.frameworks import Framework
from whichgpu.estimate.speed.hardware import Hardware, arch_key, compute_precision
from whichgpu.estimate.speed.result import Component, dominant
from whichgpu.estimate.workload import Workload
from whichgpu.vocabulary import Engine, Task

FRAMEWORKS = (Framework.PYTORCH, Framework.TORCHTITAN, Framework.LLM_FOUNDRY, Framework.TORCHTUNE,
              Framework.MEGATRON, Framework.TRANSFORMERS, Framework.AXOLOTL, Framework.UNSLOTH)
DEFAULT_FRAMEWORK = Framework.PYTORCH


def size_factor(hidden: int) -> float:
    """Small models reach a lower MFU (small GEMMs); 1.0 from the reference hidden size up."""
    c = speed_value("small_model_mfu")
    if not hidden:
        return 1.0
    return max(c["floor"], min(1.0, (hidden / c["reference_hidden"]) ** c["exponent"]))


def check_framework(framework: Framework | str | None) -> Framework:
    """The framework's profile (a validation row's name or an alias such as peft resolves);
    unknown names are input errors with the closest names."""
    from whichgpu.errors import InputError
    from whichgpu.estimate.frameworks import framework_id

    name = framework_id(framework or DEFAULT_FRAMEWORK)
    if name not in speed_value("training_framework_factor"):
        from whichgpu.messages import msg

        raise InputError(msg("choice.speed_framework", "unknown training framework {v!r}; use "
                             "one of {choices}", v=str(framework), choices=", ".join(FRAMEWORKS)))
    return name


def framework_factor(framework: Framework | None, compile_: bool = False) -> tuple[float, str]:
    """MFU multiplier of a training framework (and torch.compile), with what it assumes."""
    name = check_framework(framework)
    f = float(speed_value("training_framework_factor")[name])
    why = f"framework {name} x{f:g}"
    if compile_ and name != Framework.UNSLOTH:
        c = float(speed_value("torch_compile_factor"))
        f *= c
        why += f", torch.compile x{c:g}"
    return f, why


def base_mfu(task: Task, hw: Hardware, hidden: int, framework: Framework | None = None,
             compile_: bool = False, denoiser: str | None = None) -> tuple[float, str]:
    """MFU before communication for a training task on this GPU (full-ft reference x factors).
    A denoiser's LoRA starts from that denoiser kind's fitted eager efficiency instead: its
    training step runs the same kernels as its inference pass, elementwise work included."""
    if denoiser:
        mfu = per_key("diffusion_compute_efficiency", denoiser)
        parts = [f"{mfu:.2f} (diffusion_compute_efficiency[{denoiser}])"]
    else:
        mfu = per_key("training_mfu", "full-ft")
        parts = [f"{mfu:.2f} (training_mfu)"]
    if task in (Task.LORA, Task.QLORA, Task.IMAGE_LORA):
        r = speed_value("lora_mfu_ratio")
        mfu *= r
        parts.append(f"LoRA x{r:g}")
    sf = size_factor(hidden)
    if sf < 1:
        mfu *= sf
        parts.append(f"hidden {hidden} x{sf:.2f}")
    arch = per_key("compute_arch_factor", arch_key(hw.gpu))
    if arch != 1:
        mfu *= arch
        parts.append(f"{arch_key(hw.gpu)} x{arch:g}")
    card = per_key("training_gpu_factor", hw.gpu.id)
    if card != 1 and not denoiser:
        mfu *= card
        parts.append(f"{hw.gpu.id} x{card:g}")
    ff, fwhy = framework_factor(framework, compile_)
    mfu *= ff
    parts.append(fwhy)
    return mfu, " ".join(parts)


def training_step(w: Workload, hw: Hardware, framework: Framework | None = None,
                  compile_: bool = False) -> dict:
    m = w.model
    q = w.quant_format
    precision, why = compute_precision(hw.gpu, q, Engine.TRANSFORMERS, training=True)
    fp8 = w.fp8_training and hw.gpu.supports("fp8")
    if w.fp8_training and not fp8:
        why = f"{hw.gpu.id} has no FP8: --fp8-training falls back to {precision}"
    elif fp8:
        precision, why = "fp8", "FP8 matmuls on bf16 weights (Transformer Engine / torchao)"
    from whichgpu.estimate.speed.sustained import sustained_scale

    scale, scale_why = sustained_scale(hw.gpu)
    peak = (hw.peak(precision) or hw.peak("fp16") or 1.0) * scale
    s, b = w.seq_len, w.batch
    tp, pp, dp = w.tp_degree, w.pp_degree, w.dp_degree
    n = max(m.params_active - m.params.embedding, 1)
    ad = m.num_attention_heads * (m.head_dim or 128)
    attn = 12 * m.num_layers * s * ad
    lora = w.task in (Task.LORA, Task.QLORA)
    linear_per_token = (4 if lora else 6) * n
    attn_per_token: float = attn
    useful = 6 * n + attn  # what MFU counts (no recompute)
    if w.uses_checkpointing:
        linear_per_token += 2 * n
        attn_per_token += attn / 3
    per_token = linear_per_token + attn_per_token
    tokens = b * s * dp
    flops = tokens * per_token
    mfu0, mfu_why = base_mfu(w.task, hw, m.hidden_size, framework, compile_)
    dequant = 1.0
    if w.task == Task.QLORA or (lora and q.linear_bits < 16):
        dequant = speed_value("qlora_dequant_factor")
    peak16 = (hw.peak("bf16") or hw.peak("fp16") or peak / scale) * scale
    if fp8:
        # FP8 linears at a lower fraction of their doubled peak; attention stays in 16-bit
        f8 = speed_value("fp8_compute_efficiency_factor")
        t_compute = tokens * (linear_per_token / (peak * mfu0 * f8)
                              + attn_per_token / (peak16 * mfu0)) / w.gpus * dequant
    else:
        t_compute = flops / (w.gpus * peak * mfu0) * dequant
    mfu_effective = flops / (w.gpus * peak * t_compute) if t_compute else mfu0

    link = hw.fabric if dp > 1 else hw.link  # data-parallel traffic crosses servers
    overlaps = speed_value("dp_overlap")
    overlap = (min(overlaps.get(k, 0.5) for k in link.kinds) if link.kind != "none" else 1.0)
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
        t_tp = accumulation * 4 * m.num_layers / pp * hw.link_over(tp).all_reduce_s(
            b * s * m.hidden_size * 2, tp)
    bubble = 0.0
    if pp > 1:
        micro = int(speed_value("pipeline_microbatches_per_stage")) * pp
        bubble = (pp - 1) / (micro + pp - 1)
    t_page, page_why = paged_optimizer_seconds(w, hw)
    step = (t_compute + exposed_dp + t_tp) / (1 - bubble) + t_page
    tokens_per_s = tokens / step
    # MFU is reported against the 16-bit peak, as torchtitan and llm-foundry report it
    mfu = tokens_per_s * useful / (w.gpus * peak16)
    parts = {"compute": t_compute, "interconnect": exposed_dp + t_tp + t_page,
             "fixed-overhead": step - t_compute - exposed_dp - t_tp - t_page}
    comps = (
        Component("compute", t_compute,
                  f"{tokens:,} tokens x {per_token / 1e9:.2f} GFLOP / ({w.gpus} x "
                  f"{peak / 1e12:,.0f} TFLOPS {precision} x MFU {mfu_effective:.2f})"
                  + (f", QLoRA dequantization x{dequant:g}" if dequant != 1 else "")),
        Component("data-parallel traffic (exposed)", exposed_dp,
                  f"{t_dp:.3f} s over {' + '.join(link.kinds)}, {overlap:.0%} hidden behind "
                  "backward"),
        Component("tensor-parallel all-reduce", t_tp, f"4 per layer over {hw.link.kind}"),
        Component("pipeline bubble", step - t_compute - exposed_dp - t_tp - t_page,
                  f"(pp-1)/(micro-batches + pp-1) = {bubble:.2f}"),
        Component("paged optimizer traffic", t_page, page_why),
    )
    # what the link between servers costs per step: the exposed data-parallel traffic (and a
    # tensor-parallel group's all-reduces) where they cross servers
    network_s = (exposed_dp if link.kind == "network" else 0.0) + (
        t_tp if tp > 1 and hw.link_over(tp).kind == "network" else 0.0)
    return {"precision": precision, "why": f"{why}; {scale_why}", "tokens_per_s": tokens_per_s,
            "network_s": network_s,
            "step_s": step, "mfu": mfu, "mfu_assumed": mfu_effective, "mfu_why": mfu_why,
            "tokens_per_step": tokens, "bound": dominant(parts), "components": comps,
            "accumulation": accumulation, "link": link}


def paged_optimizer_seconds(w: Workload, hw: Hardware) -> tuple[float, str]:
    """Host-link time per step for paged optimizer states that do not stay on the GPU: the
    part that does not fit beside the rest of the job pages in for its step and out again
    (bitsandbytes paged optimizers use CUDA unified memory)."""
    if w.optimizer != "paged-adamw-8bit" or w.offload in ("optimizer", "cpu"):
        return 0.0, "none (states resident or not paged)"
    from whichgpu.estimate.memory import estimate_memory

    est = estimate_memory(w)
    states = est.details.get("host_bytes", {}).get("optimizer_states", 0)
    free = hw.gpu.usable_memory_bytes - est.total_bytes
    paged = max(0.0, states - max(free, 0))
    if paged <= 0:
        return 0.0, "none: the paged states fit beside the rest of the job"
    host_bw = per_key("host_offload_gb_s", str(hw.gpu.interconnect.host_link.value)) * 1e9
    return 2 * paged / host_bw, (f"{paged / 1e9:.1f} GB of paged optimizer states do not fit "
                                 "the GPU: in and out over the host link each step")

