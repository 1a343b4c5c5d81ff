"""Every command's question, declared once: its fields, types, defaults, bounds, help text,
its flag on the command line and its words on the web.

The typer commands are generated from these models (cli/bind.py), the REST API validates
its query strings and JSON bodies with them (web/api.py, through :func:`for_web`), the pages
read their forms with them and label their inputs from them. A field is named after its
flag (``--kv-dtype`` is ``kv_dtype``) unless its ``Cli`` says otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import Field, field_validator, model_validator

from whichgpu.answers.field_types import (
    CALIBRATION_HELP,
    GpuSpec,
    HostMemory,
    Json,
    MaxAge,
    Params,
    Prices,
    RateField,
)
from whichgpu.answers.fields import N_, Choice, Cli, Text, Web
from whichgpu.answers.inputs.values import (
    Bandwidth,
    CachedTokens,
    CheckpointEvery,
    CompletionTokens,
    Deadline,
    Drafter,
    EngineBuild,
    ExampleCount,
    ExampleTokens,
    HorizonMonths,
    HostRam,
    HourlyBudget,
    ImageSize,
    LatencyTarget,
    LinkName,
    ModuleNames,
    MoneyAmount,
    MonthlyHours,
    RequestLengths,
    RequestRate,
    TensorOverrides,
    TokenCount,
    TrainingTokens,
    WorkCount,
)
from whichgpu.answers.request import Request
from whichgpu.vocabulary import (
    Engine,
    Objective,
    OffloadMode,
    RLTuning,
    RolloutEngine,
    SplitMode,
    Task,
)

# ------------------------------------------------------------------ shared field types

ModelName = Annotated[str | None, Field(description=(
    "Preset alias, Hub id (org/name), or a size such as 70B; on the command line also a "
    "config.json or folder, or a .gguf file (the web server reads no files: paste a "
    "config.json with POST instead).")), Cli(positional=True, metavar="[MODEL]", help=(
        "Preset alias, Hub id, config.json or folder, .gguf file, or a bare size such as 70B "
        "(optional with --params).")), Web(max_length=200, label=N_("Model"), hint=N_(
            "A preset (start typing to search), a Hugging Face id such as "
            "Qwen/Qwen2.5-7B-Instruct, or a size such as 70B."))]
# issue 35: the rest of the quantities are read as they validate too (answers/inputs/values.py)
TaskField = Annotated[Task, Field(description=(
    "inference, lora, qlora, full-ft, pretrain, image, video or image-lora; grpo or ppo (RL "
    "post-training: memory and speed).")),
    Choice(Text("choice.task",
                "unknown task {v!r}; use one of {choices}")), Web(label=N_("Workload"), hint=N_(
        "Question 1 of S13: training, fine-tuning or inference."))]
Quant = Annotated[str | None, Field(description=(
    "Weight format: bf16, fp8, awq, gptq, nf4, q4_k_m, exl2-4.0 ...")),
    Web(label=N_("Weight format"), hint=N_("bf16, fp8, awq (4-bit), q4_k_m (4-bit GGUF) …"))]
KvDtype = Annotated[str, Field(description="KV cache: f16, fp8, q8_0, q4_0."),
                    Web(label=N_("KV cache format"))]
# issue 35: token counts, rates, targets and lengths are read as they validate
# (answers/inputs/values.py): the request holds the number, and says back the text
Context = Annotated[int | None, TokenCount, Field(description=(
    "Tokens per sequence (8k = 8,192); the training sequence length.")), Cli(text=True),
    Web(label=N_("Context per sequence"), hint=N_("Tokens, e.g. 8k."))]
Batch = Annotated[int, Field(ge=1, description=(
    "Concurrent sequences (inference), micro-batch (training), images.")),
    Web(label=N_("Batch"), max=4096)]
EngineField = Annotated[Engine | None, Field(description=(
    "llamacpp, vllm, sglang, trtllm, transformers, exllamav2 or mlc; diffusers or comfyui "
    "for diffusion.")), Choice(Text("choice.engine",
                "unknown engine {v!r}; use one of {choices}")),
    Web(label=N_("Engine"))]
PromptTokens = Annotated[int | None, TokenCount, Field(description="Input length."),
                         Cli(text=True), Web(label=N_("Prompt tokens per request"))]
OutputTokens = Annotated[int | None, TokenCount, Field(description="Output length."),
                         Cli(text=True), Web(label=N_("Output tokens per request"))]
OptimizerField = Annotated[str | None, Field(description=(
    "adamw, adamw-8bit, paged-adamw-8bit, adafactor, sgd, sgd-momentum, lion (default: the "
    "framework's, else adamw).")), Web(label=N_("Optimizer"))]
Checkpointing = Annotated[bool | None, Field(description=(
    "Recompute activations in backward (default: on for QLoRA only).")),
    Cli(negatable=True), Web(label=N_("Gradient checkpointing"))]
MasterWeights = Annotated[bool | None, Field(description=(
    "Keep an fp32 master copy (default: on for full fine-tuning in 16-bit).")),
    Cli(negatable=True), Web(label=N_("FP32 master weights"))]
FusedLoss = Annotated[bool, Field(description=(
    "Fused/chunked cross-entropy (Liger, Unsloth): no full logits (the same as loss fused).")),
    Web(label=N_("Fused cross-entropy"))]
Loss = Annotated[str | None, Field(description=(
    "Training loss kernel: full (full logits), chunked (torchtune's chunked output), fused "
    "(Liger, Cut Cross Entropy; no full logits) or compiled (the loss compiled with the model, "
    "torchtitan with compile: bf16 logits only).")), Web(label=N_("Loss kernel"))]
Framework = Annotated[str | None, Field(description=(
    "Training framework whose defaults and memory savers apply: pytorch, transformers "
    "(PEFT/TRL), unsloth, torchtune, axolotl, llm-foundry, torchtitan or megatron; "
    "image-lora: diffusers, kohya, musubi-tuner, ai-toolkit, onetrainer or simpletuner.")),
    Web(label=N_("Training framework"))]
ActivationOffloading = Annotated[bool | None, Field(description=(
    "Training: keep saved activations in CPU RAM (Unsloth's offloaded checkpointing, "
    "torchtune's activation offloading); default: the framework's.")),
    Cli(negatable=True), Web(label=N_("Activations in CPU RAM"))]
ActivationOffloadLayers = Annotated[int | None, Field(ge=1, le=1024, description=(
    "LLM training: the number of layers whose saved activations go to CPU RAM, the rest "
    "staying on the GPU (Megatron's cpu_offloading_num_layers; Megatron-Bridge's Llama 3 70B "
    "recipes offload 5 to 40 of 80).")),
    Web(label=N_("Layers with activations in CPU RAM"), max=1024)]
Fp8Training = Annotated[bool, Field(description=(
    "Training: FP8 matmuls on bf16 weights (Transformer Engine, torchao Float8) where the GPU "
    "has FP8.")), Web(label=N_("FP8 training"))]
FlashAttention = Annotated[bool, Field(description="Flash/SDPA attention (default on)."),
                           Cli(negatable=True), Web(label=N_("Flash attention"))]
LoraRank = Annotated[int | None, Field(ge=1, description=(
    "LoRA rank (default: the framework's, else 16).")), Web(label=N_("LoRA rank"), max=4096)]
LoraAdapters = Annotated[int, Field(ge=0, le=1 << 20, description=(
    "Serving (vLLM, SGLang): LoRA adapters on this one base model, each of --lora-rank; "
    "their GPU slots and the throughput they cost (0: none).")),
    Web(label=N_("LoRA adapters served"), max=1 << 20)]
LoraTargets = Annotated[ModuleNames | None, Field(description=(
    "all-linear, or module names such as q_proj,v_proj (default: the framework's, else "
    "all-linear).")), Cli(text=True), Web(label=N_("LoRA targets"))]
GpusField = Annotated[int, Field(ge=1, description="How many GPUs one job spans."),
                      Cli(flags=("--count", "--gpus"), metavar="N"),
                      Web(label=N_("GPUs"), max=1024)]
Tp = Annotated[int | None, Field(ge=1, description="Tensor-parallel degree."),
               Web(label=N_("Tensor-parallel degree"), max=1024)]
Pp = Annotated[int, Field(ge=1, description="Pipeline-parallel degree."),
               Web(label=N_("Pipeline-parallel degree"), max=1024)]
Zero = Annotated[int | None, Field(ge=0, le=3, description="ZeRO stage 0-3 (3 = FSDP)."),
                 Web(label=N_("ZeRO stage"))]
Resolution = Annotated[ImageSize | None, Field(description="WxH, e.g. 1024x1024."),
                       Cli(text=True),
                       Web(label=N_("Resolution"))]
Frames = Annotated[int | None, Field(ge=1, description="Video frames."),
                   Web(label=N_("Frames"), max=10_000)]
Cfg = Annotated[bool | None, Field(description=(
    "Classifier-free guidance (two passes per step).")), Cli(negatable=True),
    Web(label=N_("Classifier-free guidance"))]
Offload = Annotated[OffloadMode, Field(description=(
    "none (the engine's default: diffusers keeps the pipeline on the GPU, ComfyUI unloads "
    "idle models itself); gpu-only, model, sequential, group, group-leaf (diffusion); "
    "optimizer or cpu (training).")), Choice(Text("choice.offload",
                "unknown offload mode {v!r}; use one of {choices}")),
    Web(label=N_("Offload"))]
VaeTiling = Annotated[bool, Field(description=(
    "Diffusion: decode the latents tile by tile (diffusers vae.enable_tiling(), ComfyUI VAE "
    "Decode (Tiled)).")), Web(label=N_("VAE decode"))]
AllowLongContext = Annotated[bool, Field(description=(
    "Allow a context beyond the model's trained maximum (you extend it with RoPE scaling such "
    "as YaRN).")), Web(label=N_("Longer than the trained context"))]
GpuLayers = Annotated[int | None, Field(ge=0, description=(
    "llama.cpp: layers on the GPU (the last N; default all).")),
    Cli(flags=("--gpu-layers", "-ngl")), Web(label=N_("Layers on the GPU"), max=1024)]
NCpuMoe = Annotated[int | None, Field(ge=0, description=(
    "llama.cpp: keep the MoE experts of the first N layers in host RAM.")),
    Web(label=N_("Layers with their experts in system RAM"), max=1024)]
CpuMoe = Annotated[bool, Field(description="llama.cpp: keep every MoE expert in host RAM."),
                   Web(label=N_("Every expert in system RAM"))]
OverrideTensor = Annotated[list[TensorOverrides], Field(description=(
        "llama.cpp: PATTERN=CPU keeps matching tensors in host RAM (e.g. exps=CPU); "
        "repeatable, or several comma-separated.")),
    Cli(flags=("--override-tensor", "-ot")),
    Web(max_length=200, max_items=16, label=N_("Tensors in system RAM"))]
# host_ram: a bare number is no size (it needs its unit, on every surface): Python passes a
# HostRam(bytes), so the type says so
HostRamField = Annotated[HostRam | None, Field(description=(
    "System RAM for llama.cpp offload (default 64GB).")), Cli(text=True),
    Web(label=N_("System RAM"))]
HostBandwidth = Annotated[float | None, Bandwidth, Field(description=(
    "System RAM bandwidth, e.g. 90GB/s (overrides host memory).")), Cli(text=True),
    Web(label=N_("System RAM bandwidth"))]
EngineVersion = Annotated[EngineBuild | None, Field(description=(
    "The engine build to estimate for: a llama.cpp build (b4458), a date (2024-05) or an era "
    "(2023-24, ollama); default today's.")), Cli(text=True), Web(label=N_("Engine version"))]
Speculative = Annotated[Drafter | None, Field(description=(
    "LLM inference: speculative decoding with mtp (the model's own multi-token-prediction "
    "layer), eagle (an EAGLE-3 head) or draft:MODEL (a smaller model with the same "
    "tokenizer).")), Cli(metavar="mtp|eagle|draft:MODEL", text=True),
    Web(max_length=200, label=N_("Speculative decoding"), hint=N_(
        "mtp, eagle, or draft: followed by a smaller model of the same family; empty: none."))]
DraftTokens = Annotated[int | None, Field(ge=1, le=16, description=(
    "Speculative decoding: tokens drafted per verify step (default: mtp 2, eagle 3, "
    "draft 5).")), Web(label=N_("Draft tokens per step"), max=16)]
Ubatch = Annotated[int | None, Field(description=(
    "llama.cpp: tokens per micro-batch (default 512); larger ones copy offloaded weights to "
    "the GPU less often.")), Cli(flags=("--ubatch-size", "-ub")),
    Web(label=N_("Micro-batch (llama.cpp)"))]
Mmap = Annotated[bool, Field(description=(
    "llama.cpp: memory-map the model (its default) or load it into pinned buffers (faster "
    "copies of offloaded weights).")), Cli(negatable=True), Web(label=N_("Memory-map the model"))]
GPU_LIST_HELP = ("; several cards of one machine, in device order: rtx-5090,rtx-3090 or "
                 "2xrtx-3090,rtx-4090 (LLM inference: the split, each card's memory and the "
                 "speed of the mix)")
SplitModeField = Annotated[SplitMode | None, Field(description=(
    "llama.cpp over several different cards (a --gpu list): layer (whole layers per card, "
    "its default) or row (each matrix split by rows).")),
    Choice(Text("choice.split_mode", "unknown split mode {v!r}; use one of {choices}")),
    Web(label=N_("Split over the cards"))]
TensorSplit = Annotated[str | None, Field(description=(
    "llama.cpp over several different cards: each card's share, in the cards' order, e.g. "
    "3,1 (default: by each card's free memory; whichgpu suggests a faster one).")),
    Cli(flags=("--tensor-split", "-ts"), metavar="N,N..."),
    Web(max_length=100, label=N_("Share of each card"))]
Calibration = Annotated[str | None, Field(description=CALIBRATION_HELP),
                        Web(max_length=200, label=N_("Use the speeds measured on this server"))]
Currency = Annotated[str | None, Field(description=(
    "Show amounts in this currency (converted at the dated exchange rates).")),
    Web(label=N_("Currency"))]
Only = Annotated[str | None, Field(description=(
    "Compare only these GPUs (comma-separated catalog ids or names, e.g. "
    "rtx-4090,a100,h100). Default: the whole catalog.")), Cli(metavar="GPU[,GPU...]"),
    Web(max_length=400, label=N_("Compare"))]
InterconnectField = Annotated[str | None, LinkName, Field(description=(
    "The link between servers when a job spans several: 10gbe, 25gbe, 100gbe, 200gbe, 400gbe, "
    "roce-100, roce-200, roce-400, ib-hdr, ib-ndr, ib-xdr, tb4, tb5, tb5-rdma (default: "
    "400 Gb/s InfiniBand per GPU for Hopper and Blackwell, 200 Gb/s for Ampere, 100 Gb/s "
    "otherwise).")), Cli(metavar="LINK"), Web(max_length=40, label=N_("Link between servers"))]
GpusPerNode = Annotated[int | None, Field(ge=1, le=1024, description=(
    "GPUs in each server (default 8, or the card's NVLink domain): a job over more GPUs spans "
    "several servers joined by the interconnect.")), Cli(metavar="N"),
    Web(label=N_("GPUs per server"), max=1024)]
Generations = Annotated[int | None, Field(ge=1, le=4096, description=(
    "RL (grpo, ppo): completions per prompt (default: the framework's, TRL 8).")),
    Web(label=N_("Completions per prompt"), max=4096)]
CompletionTokensField = Annotated[int | None, CompletionTokens, Field(description=(
    "RL (grpo, ppo): the longest completion in tokens (default: the framework's, TRL 256).")),
    Cli(metavar="COMPLETION-TOKENS", text=True), Web(label=N_("Completion tokens"))]
Tuning = Annotated[RLTuning | None, Field(description=(
    "RL (grpo, ppo): how the policy trains: lora, qlora or full-ft (default lora; "
    "Unsloth qlora).")),
    Choice(Text("choice.tuning", "unknown tuning {v!r}; use one of {choices}")),
    Web(label=N_("Policy training"))]
RolloutGpus = Annotated[int | None, Field(ge=0, le=1 << 16, description=(
    "RL (grpo, ppo): GPUs of the rollout engine's own; 0 shares the training GPUs "
    "(default: the framework's)")), Web(label=N_("Rollout GPUs"), max=1 << 16)]
RolloutEngineField = Annotated[RolloutEngine | None, Field(description=(
    "RL (grpo, ppo): vllm, or transformers: the training model generates (TRL's default).")),
    Choice(Text("choice.rollout_engine", "unknown rollout engine {v!r}; use one of {choices}")),
    Web(label=N_("Rollout engine"))]
RolloutShare = Annotated[float | None, Field(gt=0, lt=1, description=(
    "RL (grpo, ppo): the fraction of each GPU's memory a colocated rollout engine takes "
    "(TRL vllm_gpu_memory_utilization 0.3; default: the framework's).")),
    Web(label=N_("Rollout engine's memory share"))]
# diffusion LoRA training: what stays on the GPU (estimate/diffusion_trainers.py)
CacheEmbeddings = Annotated[bool | None, Field(description=(
    "Diffusion LoRA training: text embeddings and latents computed before training, so the "
    "text encoders and the VAE leave the GPU (default: the trainer's, see --framework).")),
    Cli(negatable=True), Web(label=N_("Cache text embeddings and latents"))]
BlocksToSwap = Annotated[int | None, Field(ge=0, le=1024, description=(
    "Diffusion LoRA training: blocks of the diffusion model kept in system RAM and copied in "
    "for their forward and backward (kohya's and musubi-tuner's --blocks_to_swap).")),
    Web(label=N_("Blocks swapped to system RAM"), max=1024)]

# issue 30: expert parallelism for MoE serving (estimate/speed/expert_parallel.py)
ExpertParallel = Annotated[bool, Field(description=(
    "MoE serving: routed experts over all the GPUs, attention data-parallel (vLLM's "
    "EP).")), Web(label=N_("Expert parallelism (MoE models)"), hint=N_(
        "Mixture-of-experts models on several GPUs: each GPU holds a share of the experts "
        "and serves its own requests."))]

# issue 29: ring attention in a multi-GPU diffusion split (estimate/diffusion_parallel.py)
RingDegree = Annotated[int | None, Field(ge=1, le=1024, description=(
    "Multi-GPU images/video: GPUs in each ring-attention ring (default 1: Ulysses).")),
    Web(label=N_("Ring-attention degree"), max=1024)]


class Workload(Request):
    """The workload fields ``memory``, ``speed`` and ``recommend`` share."""

    model: ModelName = None
    params: Params = None
    task: TaskField = Task.INFERENCE
    quant: Quant = None
    kv_dtype: KvDtype = "f16"
    context: Context = None
    batch: Batch = 1
    engine: EngineField = None
    optimizer: OptimizerField = None
    gradient_checkpointing: Checkpointing = None
    lora_rank: LoraRank = None
    lora_targets: LoraTargets = None
    lora_adapters: LoraAdapters = 0
    resolution: Resolution = None
    frames: Frames = None
    cfg: Cfg = None
    offload: Offload = OffloadMode.NONE
    vae_tiling: VaeTiling = False
    framework: Framework = None
    activation_offloading: ActivationOffloading = None
    loss: Loss = None
    fp8_training: Fp8Training = False
    host_ram: HostRamField = None
    host_memory: HostMemory = None
    host_bandwidth: HostBandwidth = None
    speculative: Speculative = None
    draft_tokens: DraftTokens = None
    cache_embeddings: CacheEmbeddings = None
    blocks_to_swap: BlocksToSwap = None
    activation_offload_layers: ActivationOffloadLayers = None
    as_json: Json = False

    #: fields that build the Workload (answers/inputs/workload.py's build_workload takes them as is)
    WORKLOAD_FIELDS: ClassVar[tuple[str, ...]] = (
        "task", "quant", "kv_dtype", "context", "batch", "engine", "optimizer",
        "gradient_checkpointing", "lora_rank", "lora_targets", "resolution", "frames", "cfg",
        "offload", "vae_tiling", "framework", "activation_offloading", "loss", "fp8_training",
        "host_ram", "host_memory", "host_bandwidth", "speculative", "draft_tokens",
        "lora_adapters", "cache_embeddings", "blocks_to_swap",
        "activation_offload_layers")


def _cap_watts(value: Any) -> Any:
    """A power cap as people type it (``300W``, ``0.3kW``, ``300``) in watts; numbers pass."""
    if isinstance(value, str):
        from whichgpu.units import parse_power

        return parse_power(value, what="power cap", positive=False)
    return value


def _budget_watts(value: Any) -> Any:
    """A power budget as people type it (``1kW``, ``1500W``, ``1500``) in watts."""
    if isinstance(value, str):
        from whichgpu.units import parse_power

        return parse_power(value, what="power budget", positive=False)
    return value


class Memory(Workload):
    """``whichgpu memory``: peak memory per GPU as named terms, the GPUs that hold it, and what
    would make it fit."""

    COMMAND: ClassVar[str] = "memory"

    master_weights: MasterWeights = None
    fused_loss: FusedLoss = False
    flash_attention: FlashAttention = True
    gpus: GpusField = 1
    tp: Tp = None
    pp: Pp = 1
    zero: Zero = None
    allow_long_context: AllowLongContext = False
    gpu: Annotated[str | None, Field(description=(
        "Ask whether it fits this GPU: a catalog id, or your card's memory such as 12GB"
        + GPU_LIST_HELP + ".")), Web(max_length=200, label=N_("GPU"))] = None
    gpu_spec: GpuSpec = None
    split_mode: SplitModeField = None
    tensor_split: TensorSplit = None
    gpu_layers: GpuLayers = None
    n_cpu_moe: NCpuMoe = None
    cpu_moe: CpuMoe = False
    override_tensor: OverrideTensor = []
    ubatch: Ubatch = None
    mmap: Mmap = True
    only: Annotated[str | None, Field(description=(
        "List only these GPUs among those that hold it (comma-separated catalog ids or "
        "names, e.g. rtx-4090,a100,h100). Default: the whole catalog.")),
        Cli(metavar="GPU[,GPU...]"), Web(max_length=400, label=N_("Compare"))] = None
    prompt_tokens: PromptTokens = None
    generations: Generations = None
    completion_tokens: CompletionTokensField = None
    tuning: Tuning = None
    rollout_gpus: RolloutGpus = None
    rollout_share: RolloutShare = None
    rollout_engine: RolloutEngineField = None

    EXTRA_WORKLOAD: ClassVar[tuple[str, ...]] = (
        "master_weights", "fused_loss", "flash_attention", "gpus", "tp", "pp", "zero",
        "allow_long_context", "gpu_layers", "n_cpu_moe", "cpu_moe", "override_tensor",
        "ubatch", "mmap", "prompt_tokens")
    # issue 30: expert parallelism as a user option (a grouped block: merges stay simple)
    expert_parallel: ExpertParallel = False
    EXTRA_WORKLOAD = (*EXTRA_WORKLOAD, "expert_parallel")
    # issue 29: ring attention for multi-GPU diffusion (a grouped block)
    ring_degree: RingDegree = None
    EXTRA_WORKLOAD = (*EXTRA_WORKLOAD, "ring_degree")


class Speed(Workload):
    """``whichgpu speed``: tokens/s, images/min or training throughput as low/typical/high,
    and what bounds it."""

    COMMAND: ClassVar[str] = "speed"

    gpu: Annotated[str | None, Field(description=(
        "Catalog GPU id, e.g. h100 or rtx-4090 (or --gpu-spec for your own card)"
        + GPU_LIST_HELP + ".")), Web(max_length=200, label=N_("GPU"))] = None
    gpu_spec: GpuSpec = None
    split_mode: SplitModeField = None
    tensor_split: TensorSplit = None
    count: Annotated[int, Field(ge=1, description=(
        "How many of that GPU (any number the layout allows, e.g. 3).")),
        Web(label=N_("How many"), max=1024)] = 1
    prompt_tokens: PromptTokens = None
    output_tokens: OutputTokens = None
    tp: Tp = None
    pp: Pp = 1
    zero: Zero = None
    steps: Annotated[int | None, Field(ge=1, description=(
        "Diffusion: denoising steps. Training: optimizer steps to time.")),
        Web(label=N_("Steps"), max=100_000)] = None
    compile: Annotated[bool, Field(description=(
        "torch.compile (training); diffusion: torch.compile with CUDA graphs or TensorRT, and "
        "FP8 kernels where the card has FP8 (ComfyUI: its --fast mode).")),
        Web(label=N_("Compiled"))] = False
    train_tokens: Annotated[int | None, TrainingTokens, Field(description=(
        "Training: tokens to train on (e.g. 1B); gives total time.")), Cli(text=True),
        Web(label=N_("Training tokens"))] = None
    calibration: Calibration = None
    gpu_layers: GpuLayers = None
    n_cpu_moe: NCpuMoe = None
    cpu_moe: CpuMoe = False
    override_tensor: OverrideTensor = []
    engine_version: EngineVersion = None
    ubatch: Ubatch = None
    mmap: Mmap = True
    max_throughput: Annotated[bool, Field(description=(
        "Serving (vLLM, SGLang, TensorRT-LLM): output tokens/s at the largest batch that "
        "fits, the batch and what bounds it.")), Web(label=N_("Maximum throughput"))] = False
    generations: Generations = None
    completion_tokens: CompletionTokensField = None
    tuning: Tuning = None
    rollout_gpus: RolloutGpus = None
    rollout_share: RolloutShare = None
    rollout_engine: RolloutEngineField = None
    power_cap: Annotated[float | None, Field(gt=0, le=5000, description=(
        "A board power limit (nvidia-smi -pl), e.g. 300W: the speed at that cap (from "
        "published power-limit sweeps) and its energy per token or image.")),
        Cli(text=True), Web(label=N_("Power limit (W)"))] = None
    # issue 28: traffic, not averages (estimate/speed/serving_sim.py)
    requests_per_s: Annotated[float | None, RequestRate, Field(description=(
        "Serving (vLLM, SGLang, TensorRT-LLM): a request rate (20, 1200/min): throughput, "
        "TTFT, TPOT and end-to-end latency at p50/p90/p95/p99, simulated over Poisson "
        "arrivals.")), Cli(text=True), Web(label=N_("Requests per second"))] = None
    lengths: Annotated[RequestLengths | None, Field(description=(
        "With a request rate: fixed (the prompt and output tokens as given), spread "
        "(ShareGPT's spread around them), sharegpt (ShareGPT's own lengths) or a histogram "
        "PROMPT:OUTPUT[:WEIGHT],... e.g. 200:100:3,2000:300:1.")),
        Cli(text=True, metavar="LENGTHS"), Web(label=N_("Request lengths"))] = None
    prefix_cache_hit: Annotated[float | None, Field(ge=0, lt=1, description=(
        "With a request rate: the share of prompt tokens found in the prefix cache, e.g. "
        "0.3.")), Web(label=N_("Prefix-cache hit rate"))] = None

    # --count is how many GPUs the job spans: the engine says "gpus" in its sentences
    BOUND_TEXT: ClassVar[dict[str, tuple[Text | None, Text | None]]] = {
        "count": (Text("bound.speed.count", "gpus must be a whole number >= 1, got {v}"),
                  None)}
    interconnect: InterconnectField = None
    gpus_per_node: GpusPerNode = None
    # issue 28: measured kernels (estimate/speed/kernel_db.py), as asked per request
    kernel_db: Annotated[bool | None, Field(description=(
        "Serving (vLLM, SGLang, TensorRT-LLM): time engine steps with aiconfigurator-core's "
        "measured kernels where they cover the GPU, engine and model (the optional extra "
        "whichgpu[kernels]); off: whichgpu's own model. Default: the WHICHGPU_KERNEL_DB "
        "environment variable, else off.")), Cli(negatable=True),
        Web(label=N_("Measured kernels"))] = None

    EXTRA_WORKLOAD: ClassVar[tuple[str, ...]] = (
        "prompt_tokens", "output_tokens", "tp", "pp", "zero", "gpu_layers", "n_cpu_moe",
        "cpu_moe", "override_tensor", "engine_version", "ubatch", "mmap", "interconnect",
        "gpus_per_node")
    # issue 30: expert parallelism as a user option (a grouped block: merges stay simple)
    expert_parallel: ExpertParallel = False
    EXTRA_WORKLOAD = (*EXTRA_WORKLOAD, "expert_parallel")
    # issue 29: ring attention for multi-GPU diffusion (a grouped block)
    ring_degree: RingDegree = None
    EXTRA_WORKLOAD = (*EXTRA_WORKLOAD, "ring_degree")

    _power_cap_in_watts = field_validator("power_cap", mode="before")(_cap_watts)


class Recommend(Workload):
    """``whichgpu recommend``: the cheapest GPU configuration that can run a job, why, and
    what was excluded."""

    COMMAND: ClassVar[str] = "recommend"

    model: Annotated[str | None, Field(description=(
        "Preset alias, Hub id (org/name), or a size such as 70B; on the command line also a "
        "config.json or folder, or a .gguf file.")), Cli(positional=True, metavar="MODEL",
                                                          required=True, help=(
        "Preset alias, Hub id, config.json or folder, .gguf file, or a bare size such as "
        "70B.")), Web(max_length=200, label=N_("Model"), hint=N_(
            "A preset (start typing to search), a Hugging Face id such as "
            "Qwen/Qwen2.5-7B-Instruct, or a size such as 70B."))] = None
    prompt_tokens: PromptTokens = None
    output_tokens: OutputTokens = None
    sampling_steps: Annotated[int | None, Field(ge=1, description=(
        "Diffusion steps per image or video.")), Web(label=N_("Sampling steps"),
                                                    max=10_000)] = None
    # issue 35: the amount of work is read as it validates (answers/inputs/values.WorkCount)
    tokens: Annotated[int | None, WorkCount, Field(description=(
        "Tokens to generate, e.g. 1M.")), Cli(text=True),
        Web(label=N_("tokens to generate"))] = None
    images: Annotated[int | None, WorkCount, Field(description=(
        "Images to generate, e.g. 1000.")), Cli(text=True), Web(label=N_("images"))] = None
    videos: Annotated[int | None, WorkCount, Field(description="Videos to generate."),
                      Cli(text=True), Web(label=N_("videos"))] = None
    steps: Annotated[int | None, WorkCount, Field(description=(
        "Training steps, e.g. 2000.")), Cli(text=True), Web(label=N_("training steps"))] = None
    train_tokens: Annotated[int | None, WorkCount, Field(description=(
        "Training tokens, e.g. 2B.")), Cli(text=True), Web(label=N_("training tokens"))] = None
    examples: Annotated[int | None, ExampleCount, Field(description=(
        "Fine-tuning: examples in the data set, e.g. 20k (with --epochs; instead of steps or "
        "training tokens).")), Cli(text=True), Web(label=N_("training examples"))] = None
    epochs: Annotated[float | None, Field(gt=0, le=1000, description=(
        "Fine-tuning: passes over the examples (default 1).")),
        Web(label=N_("Epochs"))] = None
    example_tokens: Annotated[int | None, ExampleTokens, Field(description=(
        "Fine-tuning: the mean example length in tokens (default: the training sequence "
        "length, as examples padded to it).")), Cli(text=True),
        Web(label=N_("Tokens per example"))] = None
    users: Annotated[int | None, Field(ge=1, description="Serving: concurrent users."),
                     Web(label=N_("Concurrent users"), max=1_000_000)] = None
    tokens_per_s_each: Annotated[float | None, Field(gt=0, description=(
        "Serving: tokens/s each user reads.")), Web(label=N_("Tokens/s each user reads"),
                                                    max=100_000)] = None
    tokens_per_day: Annotated[int | None, WorkCount, Field(description=(
        "Serving: a daily volume, e.g. 50M.")), Cli(text=True),
        Web(label=N_("Tokens a day"))] = None
    concurrency: Annotated[int | None, Field(ge=1, description=(
        "Sequences in flight for --tokens (default: as many as fit, up to 256).")),
        Web(label=N_("Sequences in flight"), max=4096)] = None
    requests_per_s: Annotated[float | None, RequestRate, Field(description=(
        "Serving: requests per second to size for (20, 1200/min); with the prompt and output "
        "tokens.")), Cli(text=True), Web(label=N_("Requests per second"), hint=N_(
            "Leave the amount of work empty; e.g. 20 or 1200/min."))] = None
    ttft: Annotated[LatencyTarget | None, Field(description=(
        "Serving: time to first token target, e.g. 2s or 500ms (the mean), or 2s@p95 (a "
        "percentile: p50, p90, p95 or p99, simulated).")), Cli(text=True),
        Web(label=N_("Time to first token (mean)"), hint=N_(
            "e.g. 2s or 500ms; empty: no target."))] = None
    tpot: Annotated[LatencyTarget | None, Field(description=(
        "Serving: time per output token target, e.g. 50ms (the mean), or 50ms@p99 (a "
        "percentile).")), Cli(text=True),
        Web(label=N_("Time per output token (mean)"), hint=N_(
            "e.g. 50ms; empty: no target."))] = None
    objective: Annotated[Objective, Field(description="cost or time."),
                         Choice(Text("choice.objective",
                                     "{field} must be cost or time, got {v!r}")),
                         Web(label=N_("Rank by"))] = Objective.COST
    deadline: Annotated[float | None, Deadline, Field(description="e.g. 2h or 3d."),
                        Cli(text=True), Web(label=N_("Deadline"), hint=N_("e.g. 2h or 3d."))] = None
    max_price_per_hour: Annotated[MoneyAmount | None, Field(description="e.g. 2EUR."),
                                  Cli(text=True), Web(label=N_("3. Hourly budget"), hint=N_(
                                      "Most you will pay per hour, e.g. 1 or 3EUR; leave "
                                      "empty for no limit."))] = None
    budget: Annotated[MoneyAmount | None, Field(description=(
        "Total budget, e.g. 50EUR.")), Cli(text=True), Web(label=N_("Total budget"))] = None
    prices: Prices = None
    currency: Currency = None
    rate: RateField = []
    max_age: MaxAge = None
    spot: Annotated[bool, Field(description=(
        "Price spot/interruptible offers too, by their expected cost with interruptions.")),
        Web(label=N_("Spot offers"))] = False
    checkpoint_every: Annotated[float | None, CheckpointEvery, Field(description=(
        "Training on spot: checkpoint interval (default 30m; 'none': no checkpoints).")),
        Cli(text=True), Web(label=N_("Checkpoint every"), hint=N_(
            "Training on spot: e.g. 30m (the default), or none."))] = None
    export: Annotated[str | None, Field(max_length=40, description=(
        "Print the chosen option as a launcher task file: skypilot or dstack (YAML on "
        "stdout; with --json, and on the REST API, in the 'export' field).")),
        Web(label=N_("Task file for"))] = None
    export_option: Annotated[int | None, Field(ge=1, description=(
        "Which ranked option --export writes (default: the best one the launcher can "
        "launch).")), Web(label=N_("Option (rank in the table)"), max=500)] = None
    top: Annotated[int, Field(ge=0, description="Options to show (0: all)."),
                   Web(label=N_("Options shown"), max=500)] = 10
    max_gpus: Annotated[int | None, Field(ge=1, description=(
        "At most this many GPUs (1: single cards).")), Web(label=N_("At most this many GPUs"),
                                                         max=1024)] = None
    only: Only = None
    calibration: Calibration = None
    gpu: Annotated[str | None, Field(description=(
        "Your own card, shown beside the rentals as owned hardware: a catalog id or its "
        "memory (12GB).")), Web(max_length=200, label=N_("Your own card"))] = None
    gpu_spec: GpuSpec = None
    count: Annotated[int, Field(ge=1, description=(
        "How many of your cards (--gpu) you have: every count up to it that the layout "
        "allows is tried.")), Web(label=N_("How many of your cards"), max=64)] = 1

    vs_api: Annotated[bool, Field(description=(
        "LLM serving: the best option's cost per million input, cached and output tokens "
        "against providers' per-token API prices for the same model (a dated, sourced "
        "table), and the utilisation at which self-hosting breaks even.")),
        Web(label=N_("Compare with per-token APIs"))] = False
    cached_tokens: Annotated[int | None, CachedTokens, Field(description=(
        "With --vs-api: prompt tokens per request served from a prefix cache, besides the "
        "prompt tokens (the API bills them at its cached price), e.g. 2k.")),
        Cli(metavar="CACHED-TOKENS", text=True),
        Web(label=N_("Cached prompt tokens per request"))] = None
    power_budget: Annotated[float | None, Field(gt=0, le=10_000_000, description=(
        "A power budget, e.g. 1kW or 1500W: the ranked options whose GPUs, busy, draw no "
        "more (board power, measured where published; the host and cooling come on top).")),
        Cli(text=True), Web(label=N_("Power budget (W)"))] = None
    api_prices: Annotated[str | None, Field(description=(
        "With --vs-api: a per-token price feed file (CSV or JSON, the columns of the shipped "
        "table: provider, model, provider_model, input_per_mtok, cached_input_per_mtok, "
        "output_per_mtok, currency, date, url, source) instead of the shipped table.")),
        Web(skip=True)] = None

    BOUND_TEXT: ClassVar[dict[str, tuple[Text | None, Text | None]]] = {
        "count": (Text("bound.recommend.count", "{field} must be at least 1, got {v}"), None)}
    interconnect: InterconnectField = None
    gpus_per_node: GpusPerNode = None
    disaggregate: Annotated[bool, Field(description=(
        "Serving a request rate: also size prefill/decode disaggregation (separate prefill "
        "and decode instances, the KV cache sent between them over the link) and say whether "
        "it beats the same GPUs serving both phases together.")),
        Web(label=N_("Split prefill and decode"))] = False
    # RL post-training (task grpo|ppo): the GPUs ranked by cost per step (answers/rl.py)
    generations: Generations = None
    completion_tokens: CompletionTokensField = None
    tuning: Tuning = None
    rollout_gpus: RolloutGpus = None
    rollout_share: RolloutShare = None
    rollout_engine: RolloutEngineField = None
    # rent or buy the best option (S13's questions 4 and 5, as the checklist answers them)
    hours_per_month: Annotated[float | None, Field(gt=0, le=730, description=(
        "Hours a month the best option's card would be used (730 = 24/7): with the months "
        "needed, the answer says whether renting or buying it costs less.")),
        Web(label=N_("4. Hours of use per month"))] = None
    horizon_months: Annotated[float | None, Field(gt=0, le=360, description=(
        "Months you need it, for rent or buy (with the hours of use per month).")),
        Web(label=N_("5. How many months you need it"))] = None
    # issue 28: measured kernels (estimate/speed/kernel_db.py), as asked per request
    kernel_db: Annotated[bool | None, Field(description=(
        "Serving (vLLM, SGLang, TensorRT-LLM): time engine steps with aiconfigurator-core's "
        "measured kernels where they cover the GPU, engine and model (the optional extra "
        "whichgpu[kernels]); off: whichgpu's own model. Default: the WHICHGPU_KERNEL_DB "
        "environment variable, else off.")), Cli(negatable=True),
        Web(label=N_("Measured kernels"))] = None

    EXTRA_WORKLOAD: ClassVar[tuple[str, ...]] = ("prompt_tokens", "output_tokens",
                                                 "interconnect", "gpus_per_node")
    # issue 30: expert parallelism as a user option (a grouped block: merges stay simple)
    expert_parallel: ExpertParallel = False
    EXTRA_WORKLOAD = (*EXTRA_WORKLOAD, "expert_parallel")
    JOB_FIELDS: ClassVar[tuple[str, ...]] = (
        "tokens", "images", "videos", "steps", "train_tokens", "users", "tokens_per_s_each",
        "tokens_per_day", "concurrency", "requests_per_s", "ttft", "tpot", "objective",
        "deadline", "max_price_per_hour", "budget", "currency", "spot", "checkpoint_every")

    _power_budget_in_watts = field_validator("power_budget", mode="before")(_budget_watts)

    @field_validator("export", mode="before")
    @classmethod
    def _launcher(cls, value: Any) -> Any:
        """Any case, as the launchers spell themselves (SkyPilot, DSTACK)."""
        return (value.strip().lower() or None) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _export_option_needs_export(self) -> Recommend:
        """An option to export without a launcher to export it to is a mistake, said at once."""
        if self.export_option is not None and self.export is None:
            from whichgpu.errors import InputError
            from whichgpu.messages import Field as Flag
            from whichgpu.messages import msg

            raise InputError(msg("recommend.export_option", "{option} needs {skypilot} or "
                                 "{dstack}", option=Flag("export_option"),
                                 skypilot=Flag("export", "skypilot"),
                                 dstack=Flag("export", "dstack")))
        return self

    @model_validator(mode="after")
    def _rent_or_buy_needs_both(self) -> Recommend:
        """Rent or buy needs both the hours of use a month and the months needed."""
        if (self.hours_per_month is None) != (self.horizon_months is None):
            from whichgpu.errors import InputError
            from whichgpu.messages import Field as Flag
            from whichgpu.messages import msg

            raise InputError(msg("recommend.rent_or_buy_both", "rent or buy needs {hours} and "
                                 "{months} together", hours=Flag("hours_per_month"),
                                 months=Flag("horizon_months")))
        return self


class Checklist(Request):
    """``whichgpu checklist``: the five questions of S13, answered with a GPU and
    rent-or-buy (the command line asks what is missing)."""

    COMMAND: ClassVar[str] = "checklist"

    workload: Annotated[str | None, Field(description=(
        "training, fine-tuning or inference.")), Web(label=N_("1. Workload"))] = None
    model: Annotated[str | None, Field(description=(
        "Model size (7B) or name.")), Cli(flags=("--model",)),
        Web(max_length=200, label=N_("2. Model"))] = None
    budget_per_hour: Annotated[HourlyBudget | None, Field(description=(
        "Hourly budget, e.g. 1USD (or none).")), Cli(text=True),
        Web(label=N_("3. Hourly budget"))] = None
    hours_per_month: Annotated[float | None, MonthlyHours, Field(description=(
        "Hours of use a month.")), Cli(text=True),
        Web(label=N_("4. Hours of use per month"))] = None
    horizon_months: Annotated[float | None, HorizonMonths, Field(description="Months needed."),
                              Cli(text=True),
                              Web(label=N_("5. How many months you need it"))] = None
    prices: Prices = None
    currency: Currency = None
    rate: RateField = []
    max_age: MaxAge = None
    only: Only = None
    as_json: Json = False

    ANSWERS: ClassVar[tuple[str, ...]] = ("workload", "model", "budget_per_hour",
                                          "hours_per_month", "horizon_months")


# ------------------------------------------------------------------ money


# ------------------------------------------------------------------ the other commands
# Their models live in answers/other_requests.py and are defined when first named
# (``requests.Tco``, ``from whichgpu.answers.requests import Tco``, ``COMMANDS``): a command
# line process defines only its own command's models (issue 27: defining the ~30 others cost
# ~30 ms of CPU of every ``memory`` or ``recommend`` start, on the shared 2-core machine).
OTHER_MODULE = "whichgpu.answers.other_requests"
#: the models answers/other_requests.py defines
ELSEWHERE = frozenset((
    "Fits",
    "Tco",
    "Cost",
    "Gpus",
    "Gpu",
    "Models",
    "Model",
    "PricesList",
    "PricesHistory",
    "PricesRefresh",
    "PricesImport",
    "PricesSources",
    "SourcesAdd",
    "SourcesRemove",
    "PricesPrune",
    "PricesRemove",
    "PricesApi",
    "ValidateMemory",
    "ValidateSpeed",
    "ValidateFits",
    "ValidateQuestions",
    "ValidateServing",
    "Bench",
    "BenchModel",
    "Compare",
    "Serve",
    "ProfileSave",
    "ProfileList",
    "ProfileRemove",
))

if TYPE_CHECKING:
    from whichgpu.answers.other_requests import (
        Bench as Bench,
    )
    from whichgpu.answers.other_requests import (
        BenchModel as BenchModel,
    )
    from whichgpu.answers.other_requests import (
        Compare as Compare,
    )
    from whichgpu.answers.other_requests import (
        Cost as Cost,
    )
    from whichgpu.answers.other_requests import (
        Fits as Fits,
    )
    from whichgpu.answers.other_requests import (
        Gpu as Gpu,
    )
    from whichgpu.answers.other_requests import (
        Gpus as Gpus,
    )
    from whichgpu.answers.other_requests import (
        Model as Model,
    )
    from whichgpu.answers.other_requests import (
        Models as Models,
    )
    from whichgpu.answers.other_requests import (
        PricesApi as PricesApi,
    )
    from whichgpu.answers.other_requests import (
        PricesHistory as PricesHistory,
    )
    from whichgpu.answers.other_requests import (
        PricesImport as PricesImport,
    )
    from whichgpu.answers.other_requests import (
        PricesList as PricesList,
    )
    from whichgpu.answers.other_requests import (
        PricesPrune as PricesPrune,
    )
    from whichgpu.answers.other_requests import (
        PricesRefresh as PricesRefresh,
    )
    from whichgpu.answers.other_requests import (
        PricesRemove as PricesRemove,
    )
    from whichgpu.answers.other_requests import (
        PricesSources as PricesSources,
    )
    from whichgpu.answers.other_requests import (
        ProfileList as ProfileList,
    )
    from whichgpu.answers.other_requests import (
        ProfileRemove as ProfileRemove,
    )
    from whichgpu.answers.other_requests import (
        ProfileSave as ProfileSave,
    )
    from whichgpu.answers.other_requests import (
        Serve as Serve,
    )
    from whichgpu.answers.other_requests import (
        SourcesAdd as SourcesAdd,
    )
    from whichgpu.answers.other_requests import (
        SourcesRemove as SourcesRemove,
    )
    from whichgpu.answers.other_requests import (
        Tco as Tco,
    )
    from whichgpu.answers.other_requests import (
        ValidateFits as ValidateFits,
    )
    from whichgpu.answers.other_requests import (
        ValidateMemory as ValidateMemory,
    )
    from whichgpu.answers.other_requests import (
        ValidateQuestions as ValidateQuestions,
    )
    from whichgpu.answers.other_requests import (
        ValidateServing as ValidateServing,
    )
    from whichgpu.answers.other_requests import (
        ValidateSpeed as ValidateSpeed,
    )

    #: every command, in the order ``whichgpu --help`` lists them
    COMMANDS: tuple[type[Request], ...]


def _commands() -> tuple[type[Request], ...]:
    """Every command, in the order ``whichgpu --help`` lists them."""
    from whichgpu.answers import other_requests as o

    return (
        Recommend, o.Fits, Checklist, o.Gpus, o.Gpu, o.Tco, o.Cost, Memory, Speed,
        o.ValidateMemory, o.ValidateSpeed, o.ValidateFits, o.ValidateServing,
        o.ValidateQuestions, o.Model, o.Models, o.PricesList, o.PricesRefresh, o.PricesHistory,
        o.PricesImport, o.PricesSources, o.SourcesAdd, o.SourcesRemove, o.PricesPrune,
        o.PricesRemove, o.Serve, o.Bench, o.BenchModel, o.Compare, o.PricesApi)


def __getattr__(name: str) -> Any:
    """A model of answers/other_requests.py, or ``COMMANDS``, defined on first use."""
    if name == "COMMANDS":
        value: Any = _commands()
    elif name in ELSEWHERE:
        import importlib

        value = getattr(importlib.import_module(OTHER_MODULE), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
