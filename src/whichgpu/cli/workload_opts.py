"""Workload options shared by ``memory``, ``speed`` and ``recommend`` (same flag, same meaning)."""

from __future__ import annotations

from typing import Annotated

import typer

ModelArg = Annotated[str, typer.Argument(
    metavar="MODEL", help="Preset alias, Hub id, config.json or folder, .gguf file, or a bare "
                          "size such as 70B.")]
Task = Annotated[str, typer.Option(
    "--task", help="inference, lora, qlora, full-ft, pretrain, image, video or image-lora.")]
Quant = Annotated[str | None, typer.Option(
    "--quant", help="Weight format: bf16, fp8, awq, gptq, nf4, q4_k_m, exl2-4.0 ...")]
KvDtype = Annotated[str, typer.Option("--kv-dtype", help="KV cache: f16, fp8, q8_0, q4_0.")]
Context = Annotated[str | None, typer.Option(
    "--context", help="Tokens per sequence (8k = 8,192); the training sequence length.")]
Batch = Annotated[int, typer.Option(
    "--batch", help="Concurrent sequences (inference), micro-batch (training), images.")]
Engine = Annotated[str | None, typer.Option(
    "--engine", help="llamacpp, vllm, sglang, trtllm, transformers, exllamav2 or mlc.")]
PromptTokens = Annotated[str | None, typer.Option("--prompt-tokens", help="Input length.")]
OutputTokens = Annotated[str | None, typer.Option("--output-tokens", help="Output length.")]
Optimizer = Annotated[str, typer.Option(
    "--optimizer", help="adamw, adamw-8bit, paged-adamw-8bit, adafactor, sgd, "
                        "sgd-momentum, lion.")]
Checkpointing = Annotated[bool | None, typer.Option(
    "--gradient-checkpointing/--no-gradient-checkpointing",
    help="Recompute activations in backward (default: on for QLoRA only).")]
MasterWeights = Annotated[bool | None, typer.Option(
    "--master-weights/--no-master-weights",
    help="Keep an fp32 master copy (default: on for full fine-tuning in 16-bit).")]
FusedLoss = Annotated[bool, typer.Option(
    "--fused-loss", help="Fused/chunked cross-entropy (Liger, Unsloth): no full logits.")]
FlashAttention = Annotated[bool, typer.Option(
    "--flash-attention/--no-flash-attention", help="Flash/SDPA attention (default on).")]
LoraRank = Annotated[int, typer.Option("--lora-rank", help="LoRA rank.")]
LoraTargets = Annotated[str, typer.Option(
    "--lora-targets", help="all-linear, or module names such as q_proj,v_proj.")]
Gpus = Annotated[int, typer.Option("--gpus", help="GPUs one job spans.")]
Tp = Annotated[int | None, typer.Option("--tp", help="Tensor-parallel degree.")]
Pp = Annotated[int, typer.Option("--pp", help="Pipeline-parallel degree.")]
Zero = Annotated[int | None, typer.Option("--zero", help="ZeRO stage 0-3 (3 = FSDP).")]
Resolution = Annotated[str | None, typer.Option("--resolution", help="WxH, e.g. 1024x1024.")]
Frames = Annotated[int | None, typer.Option("--frames", help="Video frames.")]
Steps = Annotated[int | None, typer.Option("--steps", help="Diffusion steps.")]
Cfg = Annotated[bool | None, typer.Option(
    "--cfg/--no-cfg", help="Classifier-free guidance (two passes per step).")]
Offload = Annotated[str, typer.Option(
    "--offload", help="none; model or sequential (diffusion); optimizer or cpu (training).")]
VaeTiling = Annotated[bool, typer.Option("--vae-tiling", help="Tiled VAE decode.")]
Params = Annotated[str | None, typer.Option(
    "--params", help="Parameter count for a generic model, e.g. 70e9 or 70B.")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def build_workload(model: str, *, task: str = "inference", quant: str | None = None,
                   kv_dtype: str = "f16", context: str | None = None, batch: int = 1,
                   engine: str | None = None, prompt_tokens: str | None = None,
                   output_tokens: str | None = None, optimizer: str = "adamw",
                   gradient_checkpointing: bool | None = None,
                   master_weights: bool | None = None, fused_loss: bool = False,
                   flash_attention: bool = True, lora_rank: int = 16,
                   lora_targets: str = "all-linear", gpus: int = 1, tp: int | None = None,
                   pp: int = 1, zero: int | None = None, resolution: str | None = None,
                   frames: int | None = None, steps: int | None = None,
                   cfg: bool | None = None, offload: str = "none", vae_tiling: bool = False,
                   params: str | None = None):
    """Resolve the model and build a validated Workload from command-line values."""
    from whichgpu.errors import InputError
    from whichgpu.estimate.workload import Workload
    from whichgpu.models import resolve_model
    from whichgpu.units import parse_count

    spec = resolve_model(model, params=float(parse_count(params, what="parameter count"))
                         if params else None)
    res = None
    if resolution:
        try:
            w_, h_ = resolution.lower().replace("*", "x").split("x")
            res = (int(w_), int(h_))
        except ValueError:
            raise InputError(f"cannot read resolution {resolution!r}; write it like "
                             "1024x1024") from None
    return Workload(
        model=spec, task=task, quant=quant, kv_dtype=kv_dtype,
        context=parse_count(context, binary=True, what="context") if context else None,
        batch=batch, engine=engine,
        prompt_tokens=parse_count(prompt_tokens, binary=True, what="prompt length")
        if prompt_tokens else None,
        output_tokens=parse_count(output_tokens, binary=True, what="output length")
        if output_tokens else None,
        optimizer=optimizer, gradient_checkpointing=gradient_checkpointing,
        master_weights=master_weights, fused_loss=fused_loss, flash_attention=flash_attention,
        lora_rank=lora_rank,
        lora_targets=tuple(t.strip() for t in lora_targets.split(",") if t.strip()),
        gpus=gpus, tp=tp, pp=pp, zero=zero, resolution=res, frames=frames, steps=steps,
        cfg=cfg, offload=offload, vae_tiling=vae_tiling)
