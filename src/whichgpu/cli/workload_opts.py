"""Workload options shared by ``memory``, ``speed`` and ``recommend`` (same flag, same meaning)."""

from __future__ import annotations

from typing import Annotated

import typer

from whichgpu.estimate.build import build_workload

ModelArg = Annotated[str, typer.Argument(
    metavar="MODEL", help="Preset alias, Hub id, config.json or folder, .gguf file, or a bare "
                          "size such as 70B.")]
OptionalModelArg = Annotated[str | None, typer.Argument(
    metavar="[MODEL]", help="Preset alias, Hub id, config.json or folder, .gguf file, or a "
                            "bare size such as 70B (optional with --params).")]
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
    "--engine", help="llamacpp, vllm, sglang, trtllm, transformers, exllamav2 or mlc; "
                     "diffusers or comfyui for diffusion.")]
PromptTokens = Annotated[str | None, typer.Option("--prompt-tokens", help="Input length.")]
OutputTokens = Annotated[str | None, typer.Option("--output-tokens", help="Output length.")]
Optimizer = Annotated[str | None, typer.Option(
    "--optimizer", help="adamw, adamw-8bit, paged-adamw-8bit, adafactor, sgd, "
                        "sgd-momentum, lion (default: the framework's, else adamw).")]
Checkpointing = Annotated[bool | None, typer.Option(
    "--gradient-checkpointing/--no-gradient-checkpointing",
    help="Recompute activations in backward (default: on for QLoRA only).")]
MasterWeights = Annotated[bool | None, typer.Option(
    "--master-weights/--no-master-weights",
    help="Keep an fp32 master copy (default: on for full fine-tuning in 16-bit).")]
FusedLoss = Annotated[bool, typer.Option(
    "--fused-loss", help="Fused/chunked cross-entropy (Liger, Unsloth): no full logits "
                         "(the same as --loss fused).")]
Loss = Annotated[str | None, typer.Option(
    "--loss", help="Training loss kernel: full (full logits), chunked (torchtune's chunked "
                   "output) or fused (Liger, Cut Cross Entropy; no full logits).")]
Framework = Annotated[str | None, typer.Option(
    "--framework", help="Training framework whose defaults and memory savers apply: pytorch, "
                        "transformers (PEFT/TRL), unsloth, torchtune, axolotl, llm-foundry, "
                        "torchtitan or megatron.")]
ActivationOffloading = Annotated[bool | None, typer.Option(
    "--activation-offloading/--no-activation-offloading",
    help="Training: keep saved activations in CPU RAM (Unsloth's offloaded checkpointing, "
         "torchtune's activation offloading); default: the framework's.")]
Fp8Training = Annotated[bool, typer.Option(
    "--fp8-training", help="Training: FP8 matmuls on bf16 weights (Transformer Engine, "
                           "torchao Float8) where the GPU has FP8.")]
FlashAttention = Annotated[bool, typer.Option(
    "--flash-attention/--no-flash-attention", help="Flash/SDPA attention (default on).")]
LoraRank = Annotated[int | None, typer.Option(
    "--lora-rank", help="LoRA rank (default: the framework's, else 16).")]
LoraTargets = Annotated[str | None, typer.Option(
    "--lora-targets", help="all-linear, or module names such as q_proj,v_proj (default: the "
                           "framework's, else all-linear).")]
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
    "--offload", help="none (the engine's default: diffusers keeps the pipeline on the GPU, "
                      "ComfyUI unloads idle models itself); gpu-only, model or sequential "
                      "(diffusion); optimizer or cpu (training).")]
VaeTiling = Annotated[bool, typer.Option(
    "--vae-tiling", help="Diffusion: decode the latents tile by tile (diffusers "
                         "vae.enable_tiling(), ComfyUI VAE Decode (Tiled)).")]
Params = Annotated[str | None, typer.Option(
    "--params", help="Parameter count for a generic model, e.g. 70e9 or 70B.")]
AllowLongContext = Annotated[bool, typer.Option(
    "--allow-long-context", help="Allow a context beyond the model's trained maximum "
                                 "(you extend it with RoPE scaling such as YaRN).")]
GpuLayers = Annotated[int | None, typer.Option(
    "--gpu-layers", "-ngl", help="llama.cpp: layers on the GPU (the last N; default all).")]
NCpuMoe = Annotated[int | None, typer.Option(
    "--n-cpu-moe", help="llama.cpp: keep the MoE experts of the first N layers in host RAM.")]
CpuMoe = Annotated[bool, typer.Option(
    "--cpu-moe", help="llama.cpp: keep every MoE expert in host RAM.")]
OverrideTensor = Annotated[list[str] | None, typer.Option(
    "--override-tensor", "-ot", help="llama.cpp: PATTERN=CPU keeps matching tensors in host "
                                     "RAM (e.g. exps=CPU); repeatable.")]
HostRam = Annotated[str | None, typer.Option(
    "--host-ram", help="System RAM for llama.cpp offload (default 64GB).")]
HostMemory = Annotated[str | None, typer.Option(
    "--host-memory", help="System RAM type: ddr4, ddr5-6000, ddr5-4800x8 (MT/s x channels; "
                          "default ddr5-5600x2).")]
HostBandwidth = Annotated[str | None, typer.Option(
    "--host-bandwidth", help="System RAM bandwidth, e.g. 90GB/s (overrides --host-memory).")]
EngineVersion = Annotated[str | None, typer.Option(
    "--engine-version", help="The engine build to estimate for: a llama.cpp build (b4458), a "
                             "date (2024-05) or an era (2023-24, ollama); default today's.")]
Ubatch = Annotated[int | None, typer.Option(
    "--ubatch-size", "-ub", help="llama.cpp: tokens per micro-batch (default 512); larger "
                                 "ones copy offloaded weights to the GPU less often.")]
Mmap = Annotated[bool, typer.Option(
    "--mmap/--no-mmap", help="llama.cpp: memory-map the model (its default) or load it into "
                             "pinned buffers (faster copies of offloaded weights).")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
GpuSpec = Annotated[str | None, typer.Option(
    "--gpu-spec", metavar="KEY=VALUE,...",
    help="Your own card instead of a catalog id: memory=12GB (the fit), bandwidth=360GB/s and "
         "fp16=TFLOPS dense (a speed), tdp=170W and price=329USD (owning it); also fp8=, "
         "fp16_acc16=, interconnect=pcie4x16, platform=cuda|rocm|metal|xpu|hpu, name=. "
         "--gpu 12GB is memory=12GB.")]


def resolve_card(gpu: str | None, spec: str | None):
    """A --gpu (catalog name or a bare size such as 12GB) and/or --gpu-spec, as a Resolution
    (None when neither is given)."""
    from whichgpu.catalog.user_gpu import resolve_gpu_arg

    return resolve_gpu_arg(gpu, spec)

__all__ = ["build_workload"]
