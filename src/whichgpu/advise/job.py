"""A job: a workload plus the amount of work and the constraints on time and money."""

from __future__ import annotations

from dataclasses import dataclass

from whichgpu.cost.spot import DEFAULT_CHECKPOINT_EVERY_S
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.units import Money

OBJECTIVES = ("cost", "time")
MAX_CONCURRENCY = 256  # vLLM's default max_num_seqs: a batched job runs at most this many


@dataclass(frozen=True)
class Job:
    """What to run and how much of it. Exactly one amount of work, or a serving target."""

    workload: Workload
    tokens: int | None = None  # tokens to generate
    images: int | None = None
    videos: int | None = None
    steps: int | None = None  # training steps (micro-batch x data-parallel per step)
    train_tokens: int | None = None
    users: int | None = None  # serving: concurrent users ...
    tokens_per_s_each: float | None = None  # ... each reading at this speed
    tokens_per_day: int | None = None  # serving: a daily volume
    concurrency: int | None = None  # sequences in flight for a token job (None: as many as fit)
    requests_per_s: float | None = None  # serving: a request rate (advise/serving.py) ...
    ttft_s: float | None = None  # ... with a mean time-to-first-token target
    tpot_s: float | None = None  # ... and a mean time-per-output-token target
    deadline_s: float | None = None
    max_price_per_hour: Money | None = None
    budget: Money | None = None
    currency: str | None = None
    spot: bool = False
    objective: str = "cost"
    # training on spot resumes from its last checkpoint (None: no checkpoints, from the start)
    checkpoint_every_s: float | None = DEFAULT_CHECKPOINT_EVERY_S

    def __post_init__(self) -> None:
        amounts = [a for a in (self.tokens, self.images, self.videos, self.steps,
                               self.train_tokens, self.users, self.tokens_per_day,
                               self.requests_per_s)
                   if a is not None]
        if len(amounts) > 1:
            raise InputError("give one amount of work (--tokens, --images, --videos, --steps, "
                             "--train-tokens, --users, --tokens-per-day or --requests-per-s)")
        if any(a <= 0 for a in amounts):
            raise InputError("the amount of work must be positive")
        if self.objective not in OBJECTIVES:
            raise InputError(f"--objective must be cost or time, got {self.objective!r}")
        w = self.workload
        if (self.images or self.videos) and not w.is_diffusion:
            raise InputError("--images and --videos need an image or video model and task")
        if self.videos and w.task != "video":
            raise InputError("--videos needs --task video")
        if (self.steps or self.train_tokens) and not w.is_training:
            raise InputError("--steps and --train-tokens need a training task (lora, qlora, "
                             "full-ft, pretrain, image-lora)")
        if self.train_tokens and w.task == "image-lora":
            raise InputError("an image LoRA is measured in --steps")
        if (self.tokens or self.users or self.tokens_per_day or self.requests_per_s) and (
                w.is_training or w.is_diffusion):
            raise InputError("--tokens, --users, --tokens-per-day and --requests-per-s are for "
                             "LLM inference")
        if (self.ttft_s is not None or self.tpot_s is not None) and not self.requests_per_s:
            raise InputError("--ttft and --tpot are targets for a request rate: give "
                             "--requests-per-s too")
        if self.users and not self.tokens_per_s_each:
            raise InputError("a serving target needs --users and --tokens-per-s-each")
        for name, label in (("deadline_s", "deadline"), ("tokens_per_s_each",
                                                          "tokens per s each")):
            v = getattr(self, name)
            if v is not None and v <= 0:
                raise InputError(f"{label} must be positive")
        for name in ("max_price_per_hour", "budget"):
            v = getattr(self, name)
            if v is not None and v.amount <= 0:
                raise InputError(f"{name.replace('_', ' ')} must be positive")
        if self.concurrency is not None and self.concurrency < 1:
            raise InputError("concurrency must be at least 1")
        c = self.checkpoint_every_s
        if c is not None and (not isinstance(c, int | float) or not c > 0 or c == float("inf")):
            raise InputError("--checkpoint-every must be a positive duration (e.g. 30m) or none")

    @property
    def kind(self) -> str:
        if self.requests_per_s:
            return "rate"
        if self.users:
            return "serving"
        if self.tokens_per_day:
            return "daily"
        if self.tokens:
            return "tokens"
        if self.images:
            return "images"
        if self.videos:
            return "videos"
        if self.steps:
            return "steps"
        if self.train_tokens:
            return "train-tokens"
        return "none"

    @property
    def amount(self) -> float | None:
        return (self.tokens or self.images or self.videos or self.steps or self.train_tokens
                or self.users or self.tokens_per_day or self.requests_per_s)

    @property
    def per_hour(self) -> bool:
        """Serving jobs are priced per hour (or per day), not as one run."""
        return self.kind in ("serving", "rate")

    def describe(self) -> str:
        """The amount of work in words: '1,000 images', '50 users at 20 tokens/s each'."""
        k = self.kind
        if k == "serving":
            return f"{self.users} users at {self.tokens_per_s_each:g} tokens/s each"
        if k == "rate":
            from whichgpu.advise.serving import Targets

            return Targets(self.requests_per_s, self.ttft_s, self.tpot_s).describe()
        if k == "none":
            return "no amount of work given (ranked by hourly price)"
        label = {"tokens": "tokens", "images": "images", "videos": "videos",
                 "steps": "training steps", "train-tokens": "training tokens",
                 "daily": "tokens a day"}[k]
        return f"{self.amount:,} {label}"
