"""A workload: a model, a task and the settings that decide memory and speed.

The same Workload feeds the memory estimate, the speed estimate and the recommender, so the
three always agree on what is being run. Defaults are explicit and listed in ``assumptions``.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Literal

from whichgpu.engines import (
    default_engine,
    engines_with,
    family_engines,
    has,
    module,
    picked_engine,
)
from whichgpu.errors import InputError
from whichgpu.estimate.frameworks import Framework
from whichgpu.estimate.host import Host, default_host
from whichgpu.estimate.speculative import Speculation, check_engine
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.models.quant import QuantFormat, get_quant
from whichgpu.models.spec import DiffusionSpec, LinearGroup, ModelSpec
from whichgpu.units import EngineVersion
from whichgpu.vocabulary import Engine, Task

# the tasks a Workload runs (an RL job, estimate/rl.py, is built from several of them)
TASKS: tuple[Task, ...] = tuple(t for t in Task if not t.is_rl)
TRAINING_TASKS = (Task.LORA, Task.QLORA, Task.FULL_FT, Task.PRETRAIN, Task.IMAGE_LORA)
LLM_TASKS = (Task.INFERENCE, Task.LORA, Task.QLORA, Task.FULL_FT, Task.PRETRAIN)
DIFFUSION_TASKS = (Task.IMAGE, Task.VIDEO, Task.IMAGE_LORA)
ENGINES: tuple[Engine, ...] = tuple(Engine)  # data/engines.toml holds what each one does
DIFFUSION_ENGINES: tuple[str, ...] = family_engines("diffusion")
LLM_ENGINES: tuple[str, ...] = family_engines("llm")
# Engines that spread a model over several GPUs by layers (llama.cpp --split-mode layer, MLC,
# transformers device_map="auto", exllamav2 gpu_split) rather than by tensor parallelism.
LAYER_SPLIT_ENGINES: tuple[str, ...] = engines_with("splits_layers")
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
OFFLOAD = ("none", "gpu-only", "model", "sequential", "optimizer", "cpu", "group", "group-leaf")
# diffusers group offload with CUDA streams (enable_group_offload, block_level / leaf_level)
GROUP_OFFLOAD = ("group", "group-leaf")
# Training loss kernels: full logits (transformers), bf16 logits with the fp32 loss one output
# chunk at a time (torchtune CEWithChunkedOutputLoss), or no full logits (Liger, Apple's Cut
# Cross Entropy, torchtune LinearCrossEntropyLoss, Unsloth's fused loss); compiled: the loss
# compiled with the model (torchtitan with compile): bf16 logits and gradient, no fp32 copies.
LOSSES = ("full", "chunked", "fused", "compiled")
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


@dataclass(frozen=True)
class Workload:
    """What is being run. Leave a field as None to take the documented default."""

    model: ModelSpec
    task: Task = Task.INFERENCE
    quant: str | None = None
    kv_dtype: str = "f16"
    context: int | None = None  # tokens held per sequence (inference) / sequence length (train)
    batch: int = 1  # concurrent sequences (inference) / micro-batch (training) / images
    engine: Engine | None = None
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
    framework: Framework | None = None  # training framework (estimate/frameworks.py)
    activation_offloading: bool | None = None  # kept activations in CPU RAM (Unsloth, torchtune)
    selective_checkpointing: bool | None = None  # torchtitan's op-level selective AC
    loss: str | None = None  # full, chunked or fused (LOSSES); fused_loss=True means fused
    allow_long_context: bool | None = False  # context beyond the model's trained maximum (RoPE
    # scaling); None: the question cannot allow it (recommend, speed: no such option to name)
    tiny_vae: bool = False  # diffusion: decode with a tiny autoencoder (TAESD) instead
    # llama.cpp offload: -ngl N (None: every layer on the GPU), --n-cpu-moe N (the experts of
    # the first N layers in host RAM; the layer count or more: --cpu-moe), -ot PATTERN=DEVICE
    gpu_layers: int | None = None
    cpu_moe_layers: int = 0
    tensor_overrides: tuple[tuple[str, str], ...] = ()
    host: Host | None = None  # the machine's RAM and its bandwidth (None: the stated default)
    ubatch: int | None = None  # llama.cpp -ub: tokens per micro-batch (None: its default 512)
    # the engine build the speed is for: an era name ('2023-24'), a build ('b4458') or a date,
    # read at the boundary (units.parse_engine_version); None: today's builds
    # (estimate/data/engine_kernels.toml)
    engine_version: EngineVersion | None = None
    imatrix: bool | None = None  # GGUF made with an importance matrix (None: the usual practice)
    mmap: bool = True  # llama.cpp memory-maps the file (its default); --no-mmap: pinned buffers
    backend: Backend | None = None  # llama.cpp's GPU backend (None: the card's own)
    # the link between servers (estimate/interconnect.py; None: the speed constants' default)
    # and the GPUs each server holds (None: 8, or the card's NVLink domain)
    interconnect: str | None = None
    gpus_per_node: int | None = None
    # speculative decoding: the drafter and its draft tokens (estimate/speculative.py)
    speculative: Speculation | None = None
    lora_adapters: int = 0  # serving: LoRA adapters on this base (estimate/multi_lora.py)
    # serving an MoE with expert parallelism (vLLM --enable-expert-parallel, SGLang --ep): the
    # routed experts spread over every GPU (tp x dp), attention and the rest replicated per
    # data-parallel rank, which keeps its own sequences' whole KV cache (estimate/memory)
    expert_parallel: bool = False
    # diffusion LoRA training (estimate/diffusion_trainers.py): text embeddings and latents
    # cached before training (None: the trainer's default); denoiser blocks kept in host RAM
    cache_embeddings: bool | None = None
    blocks_to_swap: int = 0
    diffusion_trainer: str | None = None  # its defaults (None: diffusers' scripts)
    # LLM training: the layers whose saved activations go to CPU RAM (Megatron's
    # cpu_offloading_num_layers); None: every layer but those in flight when
    # activation_offloading is on, else none
    activation_offload_layers: int | None = None
    # LLM training on transformers' model code: the MoE layers run a fused hub kernel
    # (use_kernels: MegaBlocks) instead of the model's own loop over stacked experts
    moe_kernels: bool = False
    # diffusion split by sequence parallelism (estimate/diffusion_parallel.py): how much of the
    # sequence-parallel degree is ring attention (K/V blocks passed round the ranks: xDiT's and
    # ParaAttention's ring degree); the rest is Ulysses (all-to-all of heads). 1: Ulysses only
    ring_degree: int = 1
    notes: tuple[str, ...] = field(default=(), compare=False)

    # ------------------------------------------------------------ resolved settings

    def __post_init__(self) -> None:
        _vocabulary(self)
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
    def diffusion_spec(self) -> DiffusionSpec:
        """The model's diffusion pipeline; only diffusion workloads ask for it."""
        d = self.model.diffusion
        assert d is not None, f"{self.model.name} is not a diffusion model"
        return d

    @cached_property
    def quant_format(self) -> QuantFormat:
        return get_quant(self.quant_name)

    @property
    def quant_name(self) -> str:
        if self.quant:
            return self.quant
        if self.task == Task.QLORA:
            return "nf4-dq"
        if self.model.quantization and self.task == Task.INFERENCE:
            return self.model.quantization  # a checkpoint shipped quantized (gpt-oss mxfp4)
        native = self.model.native_dtype
        return native if native in ("bf16", "fp16", "fp32") else "bf16"

    @cached_property
    def engine_name(self) -> Engine:
        """The named engine, else the one the checkpoint file or the quantization format
        implies, else the kind of job's default (data/engines.toml: picked_for_*, default_for)."""
        if self.engine:
            return self.engine
        if self.is_diffusion:
            return default_engine("diffusion")
        if self.is_training:
            return default_engine("training")
        source = self.model.checkpoint.source if self.model.checkpoint else ""
        return picked_engine(self.quant_name, source) or default_engine("inference")

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

    @cached_property
    def tp_degree(self) -> int:
        """Tensor-parallel degree: serving engines split over every GPU by default, or, where
        the heads do not divide evenly over them, over the largest count that divides both
        (the rest in pipeline stages: 70B on 3 GPUs is tp=1 x pp=3, on 6 tp=2 x pp=3);
        llama.cpp, MLC, transformers and exllamav2 split layers across GPUs instead."""
        if self.tp:
            return self.tp
        if not self.is_training and not self.is_diffusion:
            if self.expert_parallel and self.pp == 1:  # data-parallel attention on every GPU
                return 1
            if self.engine_name in LAYER_SPLIT_ENGINES and self.pp == 1:
                return 1
            if self.pp > 1:
                return max(1, self.gpus // self.pp)
            return default_tp(self.model, self.gpus)
        return 1

    @cached_property
    def pp_degree(self) -> int:
        """Pipeline (layer-split) degree: the GPUs tensor parallelism leaves over."""
        if self.pp > 1:
            return self.pp
        if not self.is_training and not self.is_diffusion and not self.tp:
            if self.expert_parallel:  # tp=1 x dp=gpus: experts over all, attention per rank
                return 1
            if self.engine_name in LAYER_SPLIT_ENGINES:
                return self.gpus
            return max(1, self.gpus // default_tp(self.model, self.gpus))
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
        return self.task in (Task.FULL_FT, Task.PRETRAIN) and self.quant_format.linear_bits == 16

    @property
    def uses_checkpointing(self) -> bool:
        if self.gradient_checkpointing is not None:
            return self.gradient_checkpointing
        return self.task in (Task.QLORA, Task.IMAGE_LORA)

    @property
    def loss_kind(self) -> str:
        """How the training loss materializes logits: full, chunked, fused or compiled
        (LOSSES)."""
        if self.loss:
            return self.loss
        return "fused" if self.fused_loss else "full"

    @property
    def offloads_activations(self) -> bool:
        return (bool(self.activation_offloading) or bool(self.activation_offload_layers)) \
            and self.is_training

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
            return self.diffusion_spec.default_resolution
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

    def with_(self, **changes: Any) -> Workload:
        """A copy with some settings changed (validated again).

        What ``dataclasses.replace`` does (every field is an init field, assigned as given),
        without its per-call introspection: the memory searches make thousands of copies.
        """
        if not changes.keys() <= _FIELD_NAMES:
            return replace(self, **changes)  # says which name is unknown
        new = object.__new__(type(self))
        d = new.__dict__
        d.update(self.__dict__)
        light = changes.keys() <= _LIGHT_FIELDS
        # settings derived from the old fields: worked out again where a change reads them
        # (a size or a length changes none of them; a layout only the degrees)
        for name in (_DERIVED if not light else _LAYOUT_DERIVED
                     if not changes.keys().isdisjoint(_LAYOUT_FIELDS) else ()):
            d.pop(name, None)
        d.update(changes)
        if light:
            # the copy of a valid workload (every Workload was validated when made) with only
            # these fields changed: only the checks that read them can fail now
            _validate_changed(new, changes.keys())
        else:
            new.__post_init__()
        return new


# settings derived from the fields, remembered on first use (a recommendation reads them tens
# of thousands of times); with_ drops from a copy those that read a changed field
_DERIVED = ("quant_format", "engine_name", "tp_degree", "pp_degree")
#: the fields each derived setting reads (directly or through another): quant_format and
#: engine_name read none of _LIGHT_FIELDS, the degrees read the layout's
#: (tests/estimate/test_workload_copy_checks.py checks a copy against a fresh workload)
_LAYOUT_FIELDS = frozenset({"gpus", "pp", "tp"})
_LAYOUT_DERIVED = ("tp_degree", "pp_degree")
# the fields with_ may copy directly: all of them while every field is an init field (a
# field set in __post_init__ would need replace(), which with_ then always uses)
_FIELD_NAMES = frozenset(f.name for f in fields(Workload)) if all(
    f.init for f in fields(Workload)) else frozenset()


# the fields :func:`_validate_changed` re-checks alone in a with_ copy (the searches change
# these thousands of times a recommendation: sizes, lengths, layouts, checkpointing); no other
# check of :func:`validate` reads them, nor anything derived from them
_LIGHT_FIELDS = frozenset({"batch", "context", "prompt_tokens", "output_tokens", "gpus", "pp",
                           "tp", "gradient_checkpointing"})


def _validate_changed(w: Workload, changed: AbstractSet[str]) -> None:
    """:func:`validate`'s checks that read the ``changed`` fields (all in _LIGHT_FIELDS), in
    validate's order, so a copy fails with the same message as validating it whole."""
    _check_sizes(w, changed)
    layout = not changed.isdisjoint(("gpus", "pp", "tp"))
    if w.model.family == "decoder":
        if layout:
            _check_layout(w)
        if not changed.isdisjoint(("context", "prompt_tokens", "output_tokens")):
            _check_context(w)


def _check_sizes(w: Workload, changed: AbstractSet[str] | None = None) -> None:
    """The context, counts, limits, lengths and GPU split of ``w``: every one, or only those
    that read the ``changed`` fields (a with_ copy)."""
    asked = _SIZE_FIELDS if changed is None else changed  # a field's checks run if asked

    if "context" in asked and w.context is not None and w.context <= 0:
        raise InputError(msg("workload.context", "context must be at least 1 token, got {v}",
                             v=w.context))
    for name in ("batch", "gpus", "pp", "lora_rank"):
        if name not in asked:
            continue
        value = getattr(w, name)
        if not isinstance(value, int) or value < 1:
            raise InputError(msg("bound.whole.low", "{field} must be a whole number >= {limit}, "
                                 "got {v}", field=Field(name, flag=name.replace("_", " ")),
                                 limit=1, v=value))
    for name, limit in LIMITS.items():
        if name not in asked:
            continue
        value = getattr(w, name)
        if value is not None and value > limit:
            shown = f"{value:,}" if value < 10**15 else f"{value:.3g}"
            raise InputError(msg("workload.beyond", "{field} {v} is beyond what whichgpu models "
                                 "(at most {limit:,})", field=Field(name, flag=name.replace(
                                     "_", " ")), v=shown, limit=limit))
    for name in ("prompt_tokens", "output_tokens"):
        if name not in asked:
            continue
        value = getattr(w, name)
        if value is not None and value < 0:
            raise InputError(msg("bound.whole.low", "{field} must be a whole number >= {limit}, "
                                 "got {v}", field=Field(name, flag=name.replace("_", " ")),
                                 limit=0, v=value))
    if changed is None or not changed.isdisjoint(("gpus", "pp", "tp")):
        if w.tp is not None and w.tp < 1:
            raise InputError(msg("bound.tp", "tensor parallel degree must be >= 1, got {v}",
                                 v=w.tp))
        if w.gpus % (max(1, w.tp or 1) * w.pp):
            raise InputError(msg("workload.split", "{n} GPUs cannot be split into tp={tp} x "
                                 "pp={pp}", n=w.gpus, tp=w.tp or 1, pp=w.pp))


# every field _check_sizes reads (all of them checked when no change is named)
_SIZE_FIELDS = frozenset({"context", "batch", "gpus", "pp", "lora_rank", *LIMITS,
                          "prompt_tokens", "output_tokens"})


_TASK_OF = {t.value: t for t in Task}
_ENGINE_OF = {e.value: e for e in Engine}


def as_task(value: str) -> Task:
    """``value`` (``"lora"`` or ``Task.LORA``) as a task a Workload runs; else the input
    error that lists them."""
    if value not in TASKS:
        raise InputError(msg("choice.task", "unknown task {v!r}; use one of {choices}",
                             v=str(value), choices=", ".join(TASKS)))
    return _TASK_OF[value]


def as_engine(value: str) -> Engine:
    """``value`` (``"vllm"`` or ``Engine.VLLM``) as an engine; else the input error that
    lists them."""
    if value not in ENGINES:
        raise InputError(msg("choice.engine", "unknown engine {v!r}; use one of {choices}",
                             v=str(value), choices=", ".join(ENGINES)))
    return _ENGINE_OF[value]


def _vocabulary(w: Workload) -> None:
    """The task and engine as members of their vocabularies (a caller may pass the plain
    word, ``"lora"``); a word that is not one is left for :func:`validate` to name."""
    task, engine = w.task, w.engine
    if type(task) is not Task and task in _TASK_OF:
        object.__setattr__(w, "task", _TASK_OF[task])
    if engine is not None and type(engine) is not Engine and engine in _ENGINE_OF:
        object.__setattr__(w, "engine", _ENGINE_OF[engine])


def check_expert_parallel(w: Workload) -> None:
    """Expert parallelism spreads routed experts: it needs an MoE and a serving engine."""
    if not w.model.is_moe or w.engine_name not in engines_with("continuous_batching"):
        raise InputError(msg("workload.expert_parallel", "expert parallelism spreads the "
                             "routed experts of an MoE model over the GPUs of a serving engine "
                             "(vllm, sglang, trtllm); {model} on {engine} has none to spread",
                             model=w.model.name, engine=w.engine_name))


def validate(w: Workload) -> None:
    """Reject impossible workloads with a message that says what to change."""
    m = w.model
    as_task(w.task)
    if w.task in DIFFUSION_TASKS and m.family != "diffusion":
        raise InputError(msg("workload.task_needs_diffusion", "task {task!r} needs a diffusion "
                             "pipeline; {model} is a {family} model (use {flag} inference, "
                             "lora, qlora or full-ft)", task=str(w.task), model=m.name,
                             family=m.family, flag=Field("task")))
    if w.task in LLM_TASKS and m.family == "diffusion":
        if m.diffusion and m.diffusion.is_video:
            raise InputError(msg("workload.diffusion_task.video", "{model} is a diffusion "
                                 "pipeline: use {flag} image or video (or image-lora to train "
                                 "a LoRA)", model=m.name, flag=Field("task")))
        raise InputError(msg("workload.diffusion_task", "{model} is a diffusion pipeline: use "
                             "{flag} image (or image-lora to train a LoRA)", model=m.name,
                             flag=Field("task")))
    if w.task == Task.VIDEO and not (m.diffusion and m.diffusion.is_video):
        raise InputError(msg("workload.not_video", "{model} generates images, not video: use "
                             "{flag}", model=m.name, flag=Field("task", "image")))
    if w.interconnect is not None or w.gpus_per_node is not None:
        from whichgpu.estimate.interconnect import check_gpus_per_node, interconnect_of

        if w.interconnect is not None:
            interconnect_of(w.interconnect)
        check_gpus_per_node(w.gpus_per_node)
    _check_sizes(w)
    if w.zero is not None and w.zero not in (0, 1, 2, 3):
        raise InputError(msg("bound.zero", "ZeRO stage must be 0, 1, 2 or 3, got {v}",
                             v=w.zero))
    if w.kv_dtype.lower() not in KV_DTYPES:
        raise InputError(msg("choice.kv_dtype", "unknown KV-cache dtype {v!r}; use one of "
                             "{choices}", v=w.kv_dtype, choices=", ".join(KV_DTYPES)))
    if w.engine is not None:
        as_engine(w.engine)
    if w.speculative is not None:
        if w.task != Task.INFERENCE:
            raise InputError(msg("speculative.inference_only", "{field} is for LLM inference, "
                                 "not task {task!r}", field=Field("speculative"),
                                 task=str(w.task)))
        check_engine(w.speculative, w.engine_name)
    if w.expert_parallel:
        check_expert_parallel(w)
    if w.backend is not None:
        if w.backend not in BACKENDS:
            raise InputError(msg("choice.backend", "unknown llama.cpp backend {v!r}; use one "
                                 "of {choices}", v=str(w.backend), choices=", ".join(BACKENDS)))
        if not getattr(module(w.engine_name), "GPU_BACKENDS", False):  # llama.cpp's
            raise InputError(msg("workload.backend_engine", "{field} is llama.cpp's (ggml's "
                                 "GPU backends); engine {engine} has none",
                                 field=Field("backend"), engine=str(w.engine_name)))
    if w.engine is not None and w.engine not in (DIFFUSION_ENGINES if w.task in DIFFUSION_TASKS
                                                 else LLM_ENGINES):
        raise InputError(msg("workload.engine_task", "engine {engine} does not run task {task}: "
                             "diffusion tasks use {engines}; LLM tasks use the others",
                             engine=str(w.engine), task=str(w.task),
                             engines=Join(DIFFUSION_ENGINES, ", ", " or ")))
    if w.optimizer not in OPTIMIZERS:
        raise InputError(msg("choice.optimizer", "unknown optimizer {v!r}; use one of "
                             "{choices}", v=w.optimizer, choices=", ".join(OPTIMIZERS)))
    if w.offload not in OFFLOAD:
        raise InputError(msg("choice.offload", "unknown offload mode {v!r}; use one of "
                             "{choices}", v=str(w.offload), choices=", ".join(OFFLOAD)))
    if w.fp8_training and not w.is_training:
        raise InputError(msg("workload.training_only", "{field} is for training tasks",
                             field=Field("fp8_training")))
    if w.framework is not None:
        from whichgpu.estimate.frameworks import framework_id

        framework_id(str(w.framework))  # raises with the closest names if unknown
        if not w.is_training:
            raise InputError(msg("workload.framework_training", "{field} is for training tasks "
                                 "(lora, qlora, full-ft, pretrain, image-lora)",
                                 field=Field("framework")))
    if (w.cache_embeddings is not None or w.blocks_to_swap or w.diffusion_trainer) \
            and w.task != Task.IMAGE_LORA:
        raise InputError(msg("workload.image_lora_only", "{field} is for diffusion LoRA "
                             "training (image-lora)", field=Field(
                                 "blocks_to_swap" if w.blocks_to_swap else "cache_embeddings"
                                 if w.cache_embeddings is not None else "framework")))
    if w.loss is not None and w.loss not in LOSSES:
        raise InputError(msg("choice.loss", "unknown loss kernel {v!r}; use one of {choices}",
                             v=str(w.loss), choices=", ".join(LOSSES)))
    if w.activation_offloading and not w.is_training:
        raise InputError(msg("workload.training_only", "{field} is for training tasks",
                             field=Field("activation_offloading")))
    if w.activation_offload_layers:
        if not w.is_training or w.task == Task.IMAGE_LORA:
            raise InputError(msg("workload.llm_training_only", "{field} is for LLM training "
                                 "(lora, qlora, full-ft, pretrain)",
                                 field=Field("activation_offload_layers")))
        if w.activation_offload_layers >= w.model.num_layers:
            raise InputError(msg("workload.offload_layers", "{field} must be below the "
                                 "model's {n} layers (the last layer's activations stay on "
                                 "the GPU)", field=Field("activation_offload_layers"),
                                 n=w.model.num_layers))
    if w.quant_scope not in ("denoiser", "all"):
        raise InputError(msg("workload.quant_scope", "quant scope must be 'denoiser' or 'all'"))
    if w.offload in ("model", "sequential", "gpu-only", *GROUP_OFFLOAD) and not w.is_diffusion:
        raise InputError(msg("workload.offload_diffusion", "{field} is for diffusion pipelines; "
                             "training uses {flag} optimizer or cpu",
                             field=Field("offload", str(w.offload)), flag=Field("offload")))
    if w.offload in GROUP_OFFLOAD and (not has(w.engine_name, "group_offload")
                                       or w.task == Task.IMAGE_LORA):
        raise InputError(msg("workload.group_offload", "{field} is diffusers' group offload "
                             "for generating images and video ({engine}); this job runs "
                             "{what}", field=Field("offload", str(w.offload)),
                             engine=Field("engine", "diffusers"),
                             what=str(w.task) if w.task == Task.IMAGE_LORA
                             else str(w.engine_name)))
    if w.offload in ("optimizer", "cpu") and not w.is_training:
        raise InputError(msg("workload.offload_training", "{field} is for training "
                             "(ZeRO-Offload / FSDP CPU offload)",
                             field=Field("offload", str(w.offload))))
    get_quant(w.quant_name)  # raises with suggestions if unknown
    _check_offload(w)
    if w.task == Task.QLORA and w.quant and get_quant(w.quant).linear_bits > 8:
        raise InputError(msg("workload.qlora_base", "QLoRA trains adapters on a quantized base: "
                             "use {quant} nf4, nf4-dq or fp4 (or {lora} for a 16-bit base)",
                             quant=Field("quant"), lora=Field("task", "lora")))
    if w.task in (Task.FULL_FT, Task.PRETRAIN) and w.quant and get_quant(w.quant).linear_bits < 16:
        raise InputError(msg("workload.full_ft_base", "full fine-tuning and pre-training update "
                             "16-bit weights (fp8 training keeps them in bf16): use {bf16}, or "
                             "{qlora} to train adapters on a quantized base",
                             bf16=Field("quant", "bf16"), qlora=Field("task", "qlora")))
    if m.family == "decoder":
        _check_layout(w)
        _check_context(w)
    if w.resolution is not None:
        width, height = w.resolution
        if width < 64 or height < 64 or width > 16384 or height > 16384:
            raise InputError(msg("workload.resolution", "resolution {v} is outside 64..16384 "
                                 "pixels", v=f"{width}x{height}"))
    if w.frames is not None and w.frames < 1:
        raise InputError(msg("bound.frames", "frames must be >= 1, got {v}", v=w.frames))
    if w.steps is not None and w.steps < 1:
        raise InputError(msg("bound.steps", "steps must be >= 1, got {v}", v=w.steps))
    if w.lora_adapters:
        if w.lora_adapters < 0 or w.lora_adapters > 1 << 20:
            raise InputError(msg("bound.lora_adapters", "LoRA adapters must be 0..{top}, got "
                                 "{v}", top=1 << 20, v=w.lora_adapters))
        if w.task != Task.INFERENCE:
            raise InputError(msg("workload.lora_adapters_inference", "{field} is for serving "
                                 "(task inference): adapters trained are one LoRA at a time",
                                 field=Field("lora_adapters")))
    if w.task in (Task.LORA, Task.QLORA) and m.linears:
        targets = lora_groups(w)
        if not targets:
            names = sorted({g.name for g in m.linears})
            raise InputError(msg("workload.lora_targets", "no linear layer of {model} matches "
                                 "LoRA targets {targets}; its layers are {layers}", model=m.name,
                                 targets=", ".join(w.lora_targets), layers=", ".join(names)))
        smallest = min(min(g.in_features, g.out_features) for g in targets)
        if w.lora_rank > smallest:
            raise InputError(msg("workload.lora_rank", "LoRA rank {rank} is larger than the "
                                 "smallest targeted layer dimension ({n}); use a rank <= {n}",
                                 rank=w.lora_rank, n=smallest))


def _check_offload(w: Workload) -> None:
    """llama.cpp's layer / expert offload flags: only inference on an engine that places the
    weights itself between the GPU and host RAM (the ``host_offload`` trait, data/engines.toml:
    llama.cpp) has them."""
    if w.ubatch is not None and not 1 <= w.ubatch <= 1 << 16:
        raise InputError(msg("workload.ubatch", "{field} must be between 1 and 65,536 tokens, "
                             "got {v}", field=Field("ubatch", flag="-ub"), v=w.ubatch))
    if not w.offload_requested:
        return
    flags = Join(f for f, on in ((Field("gpu_layers", flag="-ngl"), w.gpu_layers is not None),
                                  (Field("n_cpu_moe"), w.cpu_moe_layers > 0),
                                  (Field("override_tensor", flag="-ot"),
                                   bool(w.tensor_overrides))) if on)
    if w.task != Task.INFERENCE or not has(w.engine_name, "host_offload"):
        what = (msg("workload.what.engine", "engine {engine}", engine=str(w.engine_name))
                if w.task == Task.INFERENCE else msg("workload.what.task", "task {task}",
                                                  task=str(w.task)))
        raise InputError(msg("workload.llamacpp_offload", "{flags} are llama.cpp's offload "
                             "flags ({engine}, {task}); {what} keeps every weight on the GPU in "
                             "whichgpu's model", flags=flags, engine=Field("engine", "llamacpp"),
                             task=Field("task", "inference"), what=what))
    if w.gpu_layers is not None and w.gpu_layers < 0:
        raise InputError(msg("bound.whole.low", "{field} must be a whole number >= {limit}, "
                             "got {v}", field=Field("gpu_layers", flag="-ngl"), limit=0,
                             v=w.gpu_layers))
    if w.cpu_moe_layers < 0:
        raise InputError(msg("bound.whole.low", "{field} must be a whole number >= {limit}, "
                             "got {v}", field=Field("n_cpu_moe"), limit=0, v=w.cpu_moe_layers))
    if w.cpu_moe_layers and not w.model.is_moe:
        raise InputError(msg("workload.dense_cpu_moe", "{field} keeps MoE experts in host RAM; "
                             "{model} is a dense model with no experts (use {ngl} to keep "
                             "layers on the CPU)", field=Field("n_cpu_moe"), model=w.model.name,
                             ngl=Field("gpu_layers", "N", flag="-ngl")))
    for pattern, device in w.tensor_overrides:
        if not pattern:
            raise InputError(msg("workload.ot_pattern", "{field} needs PATTERN=DEVICE, e.g. "
                                 "exps=CPU", field=Field("override_tensor", flag="-ot")))
        if not (device.upper() == "CPU" or device.upper().startswith(("CUDA", "GPU"))):
            raise InputError(msg("workload.ot_device", "{field} device {v!r}: use CPU (host RAM) "
                                 "or CUDA0 (the GPU)", field=Field("override_tensor", flag="-ot"),
                                 v=device))


def tp_problem(model: ModelSpec, tp: int) -> Message | None:
    """Why ``tp`` cannot split this model's attention, or None when it can.

    vLLM, SGLang and TensorRT-LLM shard attention by heads: the query heads must divide evenly,
    and the KV heads either divide evenly or are replicated a whole number of times
    (vLLM QKVParallelLinear: num_kv_heads = total / tp, or replicas = tp / total).
    """
    if tp <= 1:
        return None
    heads, kv = model.num_attention_heads, model.num_kv_heads
    if heads and heads % tp:
        return msg("tp.heads", "its {heads} attention heads do not split evenly over {n} GPUs",
                   heads=heads, n=tp)
    if kv and model.mla is None and kv % tp and tp % kv:
        return msg("tp.kv_heads", "its {heads} KV heads can neither be split over {n} GPUs nor "
                   "replicated a whole number of times", heads=kv, n=tp)
    return None


def default_tp(model: ModelSpec, gpus: int) -> int:
    """The tensor-parallel degree a serving engine gets on ``gpus`` GPUs when none is named:
    the largest divisor of the count that the model's heads allow (the same rule as the
    recommender's layouts, so that ``speed --count 3`` and ``recommend`` agree)."""
    return max(t for t in range(1, gpus + 1) if gpus % t == 0 and tp_problem(model, t) is None)


def layout_note(w: Workload) -> str | None:
    """What a serving engine's default layout is where the heads do not split over every
    GPU (None when tensor parallelism takes them all, or the user chose the layout)."""
    if w.tp or w.pp > 1 or w.gpus <= 1 or w.is_training or w.is_diffusion \
            or w.pp_degree <= 1 or w.engine_name in LAYER_SPLIT_ENGINES:
        return None
    why = tp_problem(w.model, w.gpus)
    return (f"layout tp={w.tp_degree} x pp={w.pp_degree} on {w.gpus} GPUs: {why}, so tensor "
            f"parallelism takes {w.tp_degree} and pipeline stages the rest (--tp, --pp to "
            "choose)")


def valid_tp_degrees(model: ModelSpec, upto: int) -> list[int]:
    """Tensor-parallel degrees from 1 to ``upto`` that the model's heads allow."""
    return [t for t in range(1, upto + 1) if tp_problem(model, t) is None]


def _check_layout(w: Workload) -> None:
    m = w.model
    tp, pp = w.tp_degree, w.pp_degree
    why = tp_problem(m, tp)
    if why:
        ok = [t for t in valid_tp_degrees(m, max(tp, 8)) if w.gpus % t == 0]
        degrees = Join((str(t) for t in ok), " or ")
        hint = ((msg("tp.use.pp", "use {tp} {degrees} with {pp} for the other GPUs",
                     tp=Field("tp"), degrees=degrees, pp=Field("pp"))
                 if max(ok) < w.gpus else
                 msg("tp.use", "use {tp} {degrees}", tp=Field("tp"), degrees=degrees))
                if ok else msg("tp.use_pp", "use pipeline parallelism ({pp})", pp=Field("pp")))
        raise InputError(msg("tp.no_fit", "tensor parallelism over {n} GPUs does not fit "
                             "{model}: {why}; {hint}", n=tp, model=m.name, why=why, hint=hint))
    if m.num_layers and pp > m.num_layers:
        raise InputError(msg("pp.layers", "pipeline parallelism over {n} stages needs at least "
                             "{n} layers; {model} has {layers}: use {flag} or fewer", n=pp,
                             model=m.name, layers=m.num_layers,
                             flag=Field("pp", m.num_layers)))


def _check_context(w: Workload) -> None:
    m = w.model
    ctx = w.seq_len
    if m.max_context and ctx > m.max_context and w.allow_long_context is None:
        raise InputError(msg(
            "workload.long_context.fixed", "context {n:,} tokens exceeds {model}'s trained "
            "maximum of {max:,} (max_position_embeddings): use {flag} or less", n=ctx,
            model=m.name, max=m.max_context, flag=Field("context", m.max_context)))
    if m.max_context and ctx > m.max_context and not w.allow_long_context:
        raise InputError(msg(
            "workload.long_context", "context {n:,} tokens exceeds {model}'s trained maximum of "
            "{max:,} (max_position_embeddings): use {flag} or less, or {allow} if you extend it "
            "with RoPE scaling (YaRN, ...)", n=ctx, model=m.name, max=m.max_context,
            flag=Field("context", m.max_context), allow=Field("allow_long_context")))


def lora_groups(w: Workload) -> list[LinearGroup]:
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
