"""A workload: a model, a task and the settings that decide memory and speed.

The same Workload feeds the memory estimate, the speed estimate and the recommender, so the
three always agree on what is being run. Defaults are explicit and listed in ``assumptions``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from whichgpu.errors import InputError
from whichgpu.estimate.host import Host, default_host
from whichgpu.models.quant import QuantFormat, get_quant
from whichgpu.models.spec import ModelSpec

Task = Literal["inference", "lora", "qlora", "full-ft", "pretrain", "image", "video",
               "image-lora"]
TASKS: tuple[str, ...] = ("inference", "lora", "qlora", "full-ft", "pretrain", "image", "video",
                          "image-lora")
TRAINING_TASKS = ("lora", "qlora", "full-ft", "pretrain", "image-lora")
LLM_TASKS = ("inference", "lora", "qlora", "full-ft", "pretrain")
DIFFUSION_TASKS = ("image", "video", "image-lora")
ENGINES = ("llamacpp", "vllm", "sglang", "trtllm", "transformers", "exllamav2", "mlc",
           "mlx", "diffusers", "comfyui")
DIFFUSION_ENGINES = ("diffusers", "comfyui")
# Engines that spread a model over several GPUs by layers (llama.cpp --split-mode layer, MLC,
# transformers device_map="auto", exllamav2 gpu_split) rather than by tensor parallelism.
LAYER_SPLIT_ENGINES = ("llamacpp", "mlc", "transformers", "exllamav2")
# llama.cpp's GPU backends (ggml-cuda, ggml-vulkan, ggml-hip, ggml-metal, ggml-sycl): None is
# the card's own (CUDA on NVIDIA, HIP on AMD, Metal on Apple, SYCL on Intel)
Backend = Literal["cuda", "vulkan", "rocm", "metal", "sycl"]
BACKENDS: tuple[str, ...] = ("cuda", "vulkan", "rocm", "metal", "sycl")
OPTIMIZERS = ("adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor", "sgd", "sgd-momentum",
              "lion")
# Diffusion: model / sequential (diffusers CPU offload); none is the engine's default (diffusers
# keeps the pipeline on the GPU, ComfyUI's model management unloads idle models itself) and
# gpu-only keeps every component resident (ComfyUI --gpu-only). Training: optimizer
# (ZeRO-Offload: optimizer states and master weights in CPU memory) or cpu (FSDP CPUOffload:
# parameters, gradients and optimizer states in CPU memory, layers gathered as they run).
OFFLOAD = ("none", "gpu-only", "model", "sequential", "optimizer", "cpu")
# Training loss kernels: full logits (transformers), bf16 logits with the fp32 loss one output
# chunk at a time (torchtune CEWithChunkedOutputLoss), or no full logits (Liger, Apple's Cut
# Cross Entropy, torchtune LinearCrossEntropyLoss, Unsloth's fused loss).
LOSSES = ("full", "chunked", "fused")
KV_DTYPES = {"f16": 2.0, "bf16": 2.0, "fp16": 2.0, "f32": 4.0, "fp8": 1.0, "q8_0": 34 / 32,
             "q5_1": 24 / 32, "q5_0": 22 / 32, "q4_1": 20 / 32, "q4_0": 18 / 32,
             "iq4_nl": 18 / 32}
DEFAULT_CONTEXT = 4096
DEFAULT_TRAIN_SEQ = 2048
# Magnitudes no real job reaches: refused as input errors (CLI exit 2, HTTP 422) instead of
# answering with absurd byte counts. The context limit is above every published context window
# (Llama 4 Scout: 10M tokens); the others are far above any single job's layout.
LIMITS = {"context": 1 << 24, "prompt_tokens": 1 << 24, "output_tokens": 1 << 24,
          "batch": 1 << 16, "gpus": 1 << 16, "pp": 1 << 10, "lora_rank": 1 << 16,
          "frames": 10_000, "steps": 100_000}

# GGUF formats imply llama.cpp; EXL2 implies exllamav2.
_GGUF_PREFIXES = ("q2", "q3", "q4", "q5", "q6", "q8", "iq", "tq", "f32", "mxfp4_moe", "ud-")


@dataclass(frozen=True)
class Workload:
    """What is being run. Leave a field as None to take the documented default."""

    model: ModelSpec
    task: str = "inference"
    quant: str | None = None
    kv_dtype: str = "f16"
    context: int | None = None  # tokens held per sequence (inference) / sequence length (train)
    batch: int = 1  # concurrent sequences (inference) / micro-batch (training) / images
    engine: str | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    optimizer: str = "adamw"
    master_weights: bool | None = None
    gradient_checkpointing: bool | None = None
    flash_attention: bool = True
    fused_loss: bool = False
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = ("all-linear",)
    gpus: int = 1
    tp: int | None = None
    pp: int = 1
    zero: int | None = None
    resolution: tuple[int, int] | None = None
    frames: int | None = None
    steps: int | None = None
    cfg: bool | None = None
    offload: str = "none"
    vae_tiling: bool = False
    vae_slicing: bool = False  # decode a batch one image at a time
    quant_scope: str = "denoiser"  # diffusion: --quant on the denoiser, or "all" large parts
    optimizer_in_backward: bool = False  # step each parameter in backward; no full gradients
    fp8_training: bool = False  # FP8 matmuls on bf16 weights (Transformer Engine, torchao)
    framework: str | None = None  # training framework (estimate/frameworks.py)
    activation_offloading: bool | None = None  # kept activations in CPU RAM (Unsloth, torchtune)
    selective_checkpointing: bool | None = None  # torchtitan's op-level selective AC
    loss: str | None = None  # full, chunked or fused (LOSSES); fused_loss=True means fused
    allow_long_context: bool = False  # context beyond the model's trained maximum (RoPE scaling)
    tiny_vae: bool = False  # diffusion: decode with a tiny autoencoder (TAESD) instead
    # llama.cpp offload: -ngl N (None: every layer on the GPU), --n-cpu-moe N (the experts of
    # the first N layers in host RAM; the layer count or more: --cpu-moe), -ot PATTERN=DEVICE
    gpu_layers: int | None = None
    cpu_moe_layers: int = 0
    tensor_overrides: tuple[tuple[str, str], ...] = ()
    host: Host | None = None  # the machine's RAM and its bandwidth (None: the stated default)
    ubatch: int | None = None  # llama.cpp -ub: tokens per micro-batch (None: its default 512)
    # the engine build the speed is for: an era name ('2023-24'), a build ('b4458') or a date;
    # None: today's builds (estimate/data/engine_kernels.toml)
    engine_version: str | None = None
    imatrix: bool | None = None  # GGUF made with an importance matrix (None: the usual practice)
    mmap: bool = True  # llama.cpp memory-maps the file (its default); --no-mmap: pinned buffers
    backend: Backend | None = None  # llama.cpp's GPU backend (None: the card's own)
    notes: tuple[str, ...] = field(default=(), compare=False)

    # ------------------------------------------------------------ resolved settings

    def __post_init__(self) -> None:
        validate(self)

    @property
    def host_spec(self) -> Host:
        """The host RAM and bandwidth: as given, else the stated default."""
        return self.host or default_host()

    @property
    def ubatch_tokens(self) -> int:
        """llama.cpp's physical batch (-ub): its compute buffer and prefill step."""
        from whichgpu.estimate.constants import memory_value

        return int(self.ubatch or memory_value("llamacpp_ubatch_tokens"))

    @property
    def offload_requested(self) -> bool:
        """Whether llama.cpp flags keep part of the model in host RAM."""
        return (self.gpu_layers is not None or self.cpu_moe_layers > 0
                or bool(self.tensor_overrides))

    @property
    def is_training(self) -> bool:
        return self.task in TRAINING_TASKS

    @property
    def is_diffusion(self) -> bool:
        return self.task in DIFFUSION_TASKS

    @property
    def quant_format(self) -> QuantFormat:
        return get_quant(self.quant_name)

    @property
    def quant_name(self) -> str:
        if self.quant:
            return self.quant
        if self.task == "qlora":
            return "nf4-dq"
        if self.model.quantization and self.task == "inference":
            return self.model.quantization  # a checkpoint shipped quantized (gpt-oss mxfp4)
        native = self.model.native_dtype
        return native if native in ("bf16", "fp16", "fp32") else "bf16"

    @property
    def engine_name(self) -> str:
        if self.engine:
            return self.engine
        if self.is_diffusion:
            return "diffusers"
        if self.is_training:
            return "transformers"
        q = self.quant_name.lower()
        if q.startswith(_GGUF_PREFIXES) or (self.model.checkpoint and
                                            self.model.checkpoint.source.startswith("gguf")):
            return "llamacpp"
        if q.startswith("exl2"):
            return "exllamav2"
        return "vllm"

    @property
    def seq_len(self) -> int:
        """Tokens per sequence: the context for inference, the sequence length for training."""
        if self.context:
            return self.context
        if self.is_training:
            return min(DEFAULT_TRAIN_SEQ, self.model.max_context or DEFAULT_TRAIN_SEQ)
        if self.prompt_tokens or self.output_tokens:
            return (self.prompt_tokens or 0) + (self.output_tokens or 0)
        cap = self.model.max_context or DEFAULT_CONTEXT
        return min(cap, DEFAULT_CONTEXT)

    @property
    def kv_bytes(self) -> float:
        return KV_DTYPES[self.kv_dtype.lower()]

    @property
    def tp_degree(self) -> int:
        """Tensor-parallel degree: serving engines split over every GPU by default;
        llama.cpp, MLC, transformers and exllamav2 split layers across GPUs instead."""
        if self.tp:
            return self.tp
        if not self.is_training and not self.is_diffusion:
            if self.engine_name in LAYER_SPLIT_ENGINES and self.pp == 1:
                return 1
            return max(1, self.gpus // max(1, self.pp))
        return 1

    @property
    def pp_degree(self) -> int:
        """Pipeline (layer-split) degree."""
        if self.pp > 1:
            return self.pp
        if not self.is_training and not self.is_diffusion and not self.tp \
                and self.engine_name in LAYER_SPLIT_ENGINES:
            return self.gpus
        return 1

    @property
    def dp_degree(self) -> int:
        return max(1, self.gpus // (self.tp_degree * self.pp_degree))

    @property
    def zero_stage(self) -> int:
        """ZeRO stage (3 = FSDP full shard). Multi-GPU training shards fully by default."""
        if self.zero is not None:
            return self.zero
        return 3 if self.is_training and self.dp_degree > 1 else 0

    @property
    def uses_master_weights(self) -> bool:
        if self.master_weights is not None:
            return self.master_weights
        return self.task in ("full-ft", "pretrain") and self.quant_format.linear_bits == 16

    @property
    def uses_checkpointing(self) -> bool:
        if self.gradient_checkpointing is not None:
            return self.gradient_checkpointing
        return self.task in ("qlora", "image-lora")

    @property
    def loss_kind(self) -> str:
        """How the training loss materializes logits: full, chunked or fused (LOSSES)."""
        if self.loss:
            return self.loss
        return "fused" if self.fused_loss else "full"

    @property
    def offloads_activations(self) -> bool:
        return bool(self.activation_offloading) and self.is_training

    @property
    def adapter_bytes(self) -> int:
        """Bytes per LoRA parameter: 4 (PEFT keeps adapters in fp32) unless the framework
        trains them in bf16 (torchtune)."""
        from whichgpu.estimate.frameworks import framework_defaults

        return int(framework_defaults(self.framework, self.task).get("adapter_bytes", 4))

    @property
    def image_size(self) -> tuple[int, int]:
        if self.resolution:
            return self.resolution
        if self.model.diffusion:
            return self.model.diffusion.default_resolution
        return (1024, 1024)

    @property
    def video_frames(self) -> int:
        if self.frames:
            return self.frames
        d = self.model.diffusion
        return d.default_frames if d and d.is_video else 1

    @property
    def cfg_passes(self) -> int:
        """Denoiser passes per step: 2 with classifier-free guidance, 1 for distilled models."""
        if self.cfg is not None:
            return 2 if self.cfg else 1
        d = self.model.diffusion
        return 1 if (d is None or d.guidance_distilled) else 2

    def with_(self, **changes) -> Workload:
        """A copy with some settings changed (validated again)."""
        return replace(self, **changes)


def validate(w: Workload) -> None:
    """Reject impossible workloads with a message that says what to change."""
    m = w.model
    if w.task not in TASKS:
        raise InputError(f"unknown task {w.task!r}; use one of {', '.join(TASKS)}")
    if w.task in DIFFUSION_TASKS and m.family != "diffusion":
        raise InputError(f"task {w.task!r} needs a diffusion pipeline; {m.name} is a "
                         f"{m.family} model (use --task inference, lora, qlora or full-ft)")
    if w.task in LLM_TASKS and m.family == "diffusion":
        raise InputError(f"{m.name} is a diffusion pipeline: use --task image"
                         f"{' or video' if m.diffusion and m.diffusion.is_video else ''}"
                         " (or image-lora to train a LoRA)")
    if w.task == "video" and not (m.diffusion and m.diffusion.is_video):
        raise InputError(f"{m.name} generates images, not video: use --task image")
    if w.context is not None and w.context <= 0:
        raise InputError(f"context must be at least 1 token, got {w.context}")
    for name in ("batch", "gpus", "pp", "lora_rank"):
        value = getattr(w, name)
        if not isinstance(value, int) or value < 1:
            raise InputError(f"{name.replace('_', ' ')} must be a whole number >= 1, got {value}")
    for name, limit in LIMITS.items():
        value = getattr(w, name)
        if value is not None and value > limit:
            shown = f"{value:,}" if value < 10**15 else f"{value:.3g}"
            raise InputError(f"{name.replace('_', ' ')} {shown} is beyond what whichgpu "
                             f"models (at most {limit:,})")
    for name in ("prompt_tokens", "output_tokens"):
        value = getattr(w, name)
        if value is not None and value < 0:
            raise InputError(f"{name.replace('_', ' ')} must be >= 0, got {value}")
    if w.tp is not None and w.tp < 1:
        raise InputError(f"tensor parallel degree must be >= 1, got {w.tp}")
    if w.gpus % (max(1, w.tp or 1) * w.pp):
        raise InputError(f"{w.gpus} GPUs cannot be split into tp={w.tp or 1} x pp={w.pp}")
    if w.zero is not None and w.zero not in (0, 1, 2, 3):
        raise InputError(f"ZeRO stage must be 0, 1, 2 or 3, got {w.zero}")
    if w.kv_dtype.lower() not in KV_DTYPES:
        raise InputError(f"unknown KV-cache dtype {w.kv_dtype!r}; use one of "
                         f"{', '.join(KV_DTYPES)}")
    if w.engine is not None and w.engine not in ENGINES:
        raise InputError(f"unknown engine {w.engine!r}; use one of {', '.join(ENGINES)}")
    if w.backend is not None:
        if w.backend not in BACKENDS:
            raise InputError(f"unknown llama.cpp backend {w.backend!r}; use one of "
                             f"{', '.join(BACKENDS)}")
        if w.engine_name != "llamacpp":
            raise InputError(f"--backend is llama.cpp's (ggml's GPU backends); engine "
                             f"{w.engine_name} has none")
    if w.engine is not None and (w.engine in DIFFUSION_ENGINES) != (w.task in DIFFUSION_TASKS):
        raise InputError(f"engine {w.engine} does not run task {w.task}: diffusion tasks use "
                         f"{' or '.join(DIFFUSION_ENGINES)}; LLM tasks use the others")
    if w.optimizer not in OPTIMIZERS:
        raise InputError(f"unknown optimizer {w.optimizer!r}; use one of {', '.join(OPTIMIZERS)}")
    if w.offload not in OFFLOAD:
        raise InputError(f"unknown offload mode {w.offload!r}; use one of {', '.join(OFFLOAD)}")
    if w.fp8_training and not w.is_training:
        raise InputError("--fp8-training is for training tasks")
    if w.framework is not None:
        from whichgpu.estimate.frameworks import canonical

        canonical(w.framework)  # raises with the closest names if unknown
        if not w.is_training:
            raise InputError("--framework is for training tasks (lora, qlora, full-ft, "
                             "pretrain, image-lora)")
    if w.loss is not None and w.loss not in LOSSES:
        raise InputError(f"unknown loss kernel {w.loss!r}; use one of {', '.join(LOSSES)}")
    if w.activation_offloading and not w.is_training:
        raise InputError("--activation-offloading is for training tasks")
    if w.quant_scope not in ("denoiser", "all"):
        raise InputError("quant scope must be 'denoiser' or 'all'")
    if w.offload in ("model", "sequential", "gpu-only") and not w.is_diffusion:
        raise InputError(f"--offload {w.offload} is for diffusion pipelines; training uses "
                         "--offload optimizer or cpu")
    if w.offload in ("optimizer", "cpu") and not w.is_training:
        raise InputError(f"--offload {w.offload} is for training (ZeRO-Offload / FSDP CPU "
                         "offload)")
    get_quant(w.quant_name)  # raises with suggestions if unknown
    _check_offload(w)
    if w.task == "qlora" and w.quant and get_quant(w.quant).linear_bits > 8:
        raise InputError("QLoRA trains adapters on a quantized base: use --quant nf4, nf4-dq or "
                         "fp4 (or --task lora for a 16-bit base)")
    if w.task in ("full-ft", "pretrain") and w.quant and get_quant(w.quant).linear_bits < 16:
        raise InputError("full fine-tuning and pre-training update 16-bit weights (fp8 training "
                         "keeps them in bf16): use --quant bf16, or --task qlora to train "
                         "adapters on a quantized base")
    if m.family == "decoder":
        _check_layout(w)
        _check_context(w)
    if w.resolution is not None:
        width, height = w.resolution
        if width < 64 or height < 64 or width > 16384 or height > 16384:
            raise InputError(f"resolution {width}x{height} is outside 64..16384 pixels")
    if w.frames is not None and w.frames < 1:
        raise InputError(f"frames must be >= 1, got {w.frames}")
    if w.steps is not None and w.steps < 1:
        raise InputError(f"steps must be >= 1, got {w.steps}")
    if w.task in ("lora", "qlora") and m.linears:
        targets = lora_groups(w)
        if not targets:
            names = sorted({g.name for g in m.linears})
            raise InputError(f"no linear layer of {m.name} matches LoRA targets "
                             f"{', '.join(w.lora_targets)}; its layers are {', '.join(names)}")
        smallest = min(min(g.in_features, g.out_features) for g in targets)
        if w.lora_rank > smallest:
            raise InputError(f"LoRA rank {w.lora_rank} is larger than the smallest targeted "
                             f"layer dimension ({smallest}); use a rank <= {smallest}")


def _check_offload(w: Workload) -> None:
    """llama.cpp's layer / expert offload flags: only llama.cpp inference has them."""
    if w.ubatch is not None and not 1 <= w.ubatch <= 1 << 16:
        raise InputError(f"-ub must be between 1 and 65,536 tokens, got {w.ubatch}")
    if not w.offload_requested:
        return
    flags = ", ".join(f for f, on in (("-ngl", w.gpu_layers is not None),
                                       ("--n-cpu-moe", w.cpu_moe_layers > 0),
                                       ("-ot", bool(w.tensor_overrides))) if on)
    if w.task != "inference" or w.engine_name != "llamacpp":
        what = f"engine {w.engine_name}" if w.task == "inference" else f"task {w.task}"
        raise InputError(f"{flags} are llama.cpp's offload flags (--engine llamacpp, --task "
                         f"inference); {what} keeps every weight on the GPU in whichgpu's model")
    if w.gpu_layers is not None and w.gpu_layers < 0:
        raise InputError(f"-ngl must be >= 0, got {w.gpu_layers}")
    if w.cpu_moe_layers < 0:
        raise InputError(f"--n-cpu-moe must be >= 0, got {w.cpu_moe_layers}")
    if w.cpu_moe_layers and not w.model.is_moe:
        raise InputError(f"--n-cpu-moe keeps MoE experts in host RAM; {w.model.name} is a "
                         "dense model with no experts (use -ngl N to keep layers on the CPU)")
    for pattern, device in w.tensor_overrides:
        if not pattern:
            raise InputError("-ot needs PATTERN=DEVICE, e.g. exps=CPU")
        if not (device.upper() == "CPU" or device.upper().startswith(("CUDA", "GPU"))):
            raise InputError(f"-ot device {device!r}: use CPU (host RAM) or CUDA0 (the GPU)")


def tp_problem(model: ModelSpec, tp: int) -> str | None:
    """Why ``tp`` cannot split this model's attention, or None when it can.

    vLLM, SGLang and TensorRT-LLM shard attention by heads: the query heads must divide evenly,
    and the KV heads either divide evenly or are replicated a whole number of times
    (vLLM QKVParallelLinear: num_kv_heads = total / tp, or replicas = tp / total).
    """
    if tp <= 1:
        return None
    heads, kv = model.num_attention_heads, model.num_kv_heads
    if heads and heads % tp:
        return f"its {heads} attention heads do not split evenly over {tp} GPUs"
    if kv and model.mla is None and kv % tp and tp % kv:
        return (f"its {kv} KV heads can neither be split over {tp} GPUs nor replicated a whole "
                "number of times")
    return None


def valid_tp_degrees(model: ModelSpec, upto: int) -> list[int]:
    """Tensor-parallel degrees from 1 to ``upto`` that the model's heads allow."""
    return [t for t in range(1, upto + 1) if tp_problem(model, t) is None]


def _check_layout(w: Workload) -> None:
    m = w.model
    tp, pp = w.tp_degree, w.pp_degree
    why = tp_problem(m, tp)
    if why:
        ok = [t for t in valid_tp_degrees(m, max(tp, 8)) if w.gpus % t == 0]
        hint = (f"use --tp {' or '.join(map(str, ok))}" + (" with --pp for the other GPUs"
                if ok and max(ok) < w.gpus else "")) if ok else "use pipeline parallelism (--pp)"
        raise InputError(f"tensor parallelism over {tp} GPUs does not fit {m.name}: {why}; "
                         f"{hint}")
    if m.num_layers and pp > m.num_layers:
        raise InputError(f"pipeline parallelism over {pp} stages needs at least {pp} layers; "
                         f"{m.name} has {m.num_layers}: use --pp {m.num_layers} or fewer")


def _check_context(w: Workload) -> None:
    m = w.model
    ctx = w.seq_len
    if m.max_context and ctx > m.max_context and not w.allow_long_context:
        raise InputError(
            f"context {ctx:,} tokens exceeds {m.name}'s trained maximum of {m.max_context:,} "
            f"(max_position_embeddings): use --context {m.max_context} or less, or "
            "--allow-long-context if you extend it with RoPE scaling (YaRN, ...)")


def lora_groups(w: Workload):
    """The linear groups a LoRA with ``w.lora_targets`` adapts (PEFT names; 'all-linear')."""
    targets = set(w.lora_targets)
    # Experts stored as fused 3-D parameters (gpt-oss's GptOssExperts: gate_up_proj, down_proj)
    # are not nn.Linear modules, so PEFT's target_modules never reach them (PEFT 0.17 adds
    # target_parameters for that); config_parse names only that layout gate_up_proj.
    fused = any(g.expert and g.name == "gate_up_proj" for g in w.model.linears)
    linears = [g for g in w.model.linears if not (fused and g.expert)]
    if "all-linear" in targets or "all" in targets:
        return [g for g in linears if g.name not in ("lm_head",)]
    return [g for g in linears if g.name in targets]
