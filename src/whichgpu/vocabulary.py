"""The words whichgpu's inputs and answers are made of, as typed vocabularies.

Each is a ``StrEnum``: a member *is* its string (``Task.LORA == "lora"``, JSON writes
``"lora"``), so the CLI's flags, the web's fields and the JSON keep their values, while the
code names the members and a type checker sees a typo. Engine traits are data
(``whichgpu/data/engines.toml``, read by :mod:`whichgpu.engines`); the words here only name.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Task(StrEnum):
    """What a job does with the model (``--task``)."""

    INFERENCE = "inference"
    LORA = "lora"
    QLORA = "qlora"
    FULL_FT = "full-ft"
    PRETRAIN = "pretrain"
    IMAGE = "image"
    VIDEO = "video"
    IMAGE_LORA = "image-lora"
    GRPO = "grpo"  # RL post-training (estimate/rl.py)
    PPO = "ppo"

    @property
    def is_rl(self) -> bool:
        return self in RL_TASKS

    @property
    def is_training(self) -> bool:
        return self in TRAINING_TASKS

    @property
    def is_diffusion(self) -> bool:
        return self in DIFFUSION_TASKS


TRAINING_TASKS = frozenset({Task.LORA, Task.QLORA, Task.FULL_FT, Task.PRETRAIN,
                            Task.IMAGE_LORA})
DIFFUSION_TASKS = frozenset({Task.IMAGE, Task.VIDEO, Task.IMAGE_LORA})
RL_TASKS = frozenset({Task.GRPO, Task.PPO})


class RLTuning(StrEnum):
    """How an RL job trains the policy (``--tuning``)."""

    LORA = "lora"
    QLORA = "qlora"
    FULL = "full-ft"


class RLFramework(StrEnum):
    """The RL post-training framework whose defaults apply (estimate/data/rl_frameworks.toml)."""

    TRL = "trl"
    UNSLOTH = "unsloth"
    VERL = "verl"
    OPENRLHF = "openrlhf"


class RolloutEngine(StrEnum):
    """What generates an RL job's completions (``--rollout-engine``): a vLLM engine of its own,
    or the training model itself with transformers' ``generate`` (TRL's ``use_vllm=False``)."""

    VLLM = "vllm"
    TRANSFORMERS = "transformers"
LLM_TASKS = frozenset({Task.INFERENCE, Task.LORA, Task.QLORA, Task.FULL_FT, Task.PRETRAIN})


class Engine(StrEnum):
    """The software that runs a job (``--engine``); its traits: :mod:`whichgpu.engines`."""

    LLAMACPP = "llamacpp"
    VLLM = "vllm"
    SGLANG = "sglang"
    TRTLLM = "trtllm"
    TRANSFORMERS = "transformers"
    EXLLAMAV2 = "exllamav2"
    MLC = "mlc"
    MLX = "mlx"
    DIFFUSERS = "diffusers"
    COMFYUI = "comfyui"


class SplitMode(StrEnum):
    """How llama.cpp spreads one model over several cards (``--split-mode``): whole layers
    per card (its default), or each matrix by rows over the cards."""

    LAYER = "layer"
    ROW = "row"


class WorkKind(StrEnum):
    """Which amount of work a job was given (``Job.kind``)."""

    TOKENS = "tokens"  # --tokens: a number of tokens to generate
    DAILY = "daily"  # --tokens-per-day: a daily volume
    SERVING = "serving"  # --users x --tokens-per-s-each
    RATE = "rate"  # --requests-per-s (with --ttft / --tpot targets)
    IMAGES = "images"
    VIDEOS = "videos"
    STEPS = "steps"  # training steps
    TRAIN_TOKENS = "train-tokens"
    NONE = "none"  # no amount: ranked per hour, or per unit of work


class Objective(StrEnum):
    """What a recommendation minimises (``--objective``)."""

    COST = "cost"
    TIME = "time"


class FitsSort(StrEnum):
    """How ``whichgpu fits`` orders the models that fit a card (``--sort``)."""

    SIZE = "size"  # the most parameters first
    SPEED = "speed"  # the fastest typical decode first
    CONTEXT = "context"  # the longest context first


class Ranking(StrEnum):
    """What the options of a recommendation are sorted by."""

    TOTAL_COST = "total cost"
    SHORTEST_TIME = "shortest time"
    FASTEST_PER_USER = "fastest per user"
    COST_PER_HOUR = "cost per hour"
    COST_PER_UNIT = "cost per unit"  # no amount of work: per 1M training tokens, 1,000 images
    GOODPUT = "goodput per cost"  # a rate with a percentile target: good requests per cost


class ExclusionKind(StrEnum):
    """Why a GPU size cannot run a job. Members are declared in the order people read them:
    misses that more of something would fix first, no offer last."""

    MEMORY = "memory"
    DEADLINE = "deadline"
    BUDGET = "budget"
    PRICE = "price"
    SPEED = "speed"
    LATENCY = "latency"
    ENGINE = "engine"
    OFFER = "offer"

    @property
    def rank(self) -> int:
        """The order an exclusion is listed in (0 first)."""
        return list(ExclusionKind).index(self)


class OffloadMode(StrEnum):
    """``--offload``: where idle weights or optimizer states wait."""

    NONE = "none"  # the engine's default
    GPU_ONLY = "gpu-only"  # ComfyUI --gpu-only: every component resident
    MODEL = "model"  # diffusers enable_model_cpu_offload
    SEQUENTIAL = "sequential"  # diffusers enable_sequential_cpu_offload
    # diffusers enable_group_offload with CUDA streams (issue 29): block_level with one block
    # per group (the only size streams allow), or leaf_level; the next group prefetched
    GROUP = "group"
    GROUP_LEAF = "group-leaf"
    OPTIMIZER = "optimizer"  # ZeRO-Offload
    CPU = "cpu"  # FSDP CPUOffload


class Loss(StrEnum):
    """How a training loss materialises the logits (``--loss``)."""

    FULL = "full"
    CHUNKED = "chunked"
    FUSED = "fused"
    COMPILED = "compiled"  # torch.compile fuses the fp32 upcast away (torchtitan)


class Optimizer(StrEnum):
    """``--optimizer``."""

    ADAMW = "adamw"
    ADAMW_8BIT = "adamw-8bit"
    PAGED_ADAMW_8BIT = "paged-adamw-8bit"
    ADAFACTOR = "adafactor"
    SGD = "sgd"
    SGD_MOMENTUM = "sgd-momentum"
    LION = "lion"


class Bound(StrEnum):
    """What limits a speed estimate."""

    MEMORY_BANDWIDTH = "memory-bandwidth"
    COMPUTE = "compute"
    INTERCONNECT = "interconnect"
    FIXED_OVERHEAD = "fixed-overhead"
    HOST_MEMORY = "host-memory"
    PCIE = "pcie"


class Confidence(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class FitVerdict(StrEnum):
    """Whether a job fits a card, with the estimate's own uncertainty."""

    FITS = "fits"
    BORDERLINE = "borderline"
    DOES_NOT_FIT = "does not fit"


class Decision(StrEnum):
    """Rent or buy."""

    RENT = "rent"
    BUY = "buy"


class ChecklistWorkload(StrEnum):
    """Question 1 of S13."""

    INFERENCE = "inference"
    FINETUNE = "finetune"
    TRAINING = "training"


class SuggestionKind(StrEnum):
    """What a change that makes a job fit changes."""

    QUANT = "quant"  # smaller weights
    KV_DTYPE = "kv-dtype"
    CONTEXT = "context"
    BATCH = "batch"
    OFFLOAD = "offload"  # diffusion components on the CPU between stages
    VAE_TILING = "vae-tiling"
    CHECKPOINTING = "checkpointing"
    TASK = "task"  # LoRA instead of full fine-tuning, QLoRA instead of LoRA
    OPTIMIZER = "optimizer"
    LOSS = "loss"
    HOST_OFFLOAD = "host-offload"  # llama.cpp layers or experts in host RAM
    PAIR = "pair"  # two of the above together
    MORE_GPUS = "more-gpus"
    BIGGER_GPU = "bigger-gpu"
    PARALLEL = "parallel"  # one diffusion pipeline split over the same GPUs (tensor parallel)

    @property
    def changes_the_job(self) -> bool:
        """Whether it is a change to the job itself (not more or other hardware)."""
        return self not in (SuggestionKind.MORE_GPUS, SuggestionKind.BIGGER_GPU)


class Placement(str):
    """``count`` GPUs of one kind, the one type for "N x GPU": its text is how the CLI and the
    JSON write it ("h100-sxm", "2 x h100-sxm"); ``gpu`` and ``count`` are what code reads."""

    gpu: str
    count: int  # type: ignore[assignment]  # the GPU count shadows str.count on purpose

    def __new__(cls, gpu: str, count: int = 1) -> Placement:
        self = super().__new__(cls, gpu if count == 1 else f"{count} x {gpu}")
        self.gpu, self.count = gpu, int(count)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Placement, (self.gpu, self.count))

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "count": self.count}


def parse_choice(kind: type[StrEnum], value: str | StrEnum) -> Any:
    """``value`` as a member of ``kind`` (an unknown value raises ValueError)."""
    return kind(str(value))


def word(kind: type[StrEnum], value: str) -> str:
    """``value`` as a member of ``kind`` when it is one (so that it is said as a word of that
    vocabulary), else as it is."""
    try:
        return kind(str(value))
    except ValueError:
        return str(value)
