"""A job: a workload plus the amount of work and the constraints on time and money."""

from __future__ import annotations

from dataclasses import dataclass

from whichgpu.cost.spot import DEFAULT_CHECKPOINT_EVERY_S
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import Money
from whichgpu.vocabulary import Objective, Task, WorkKind

OBJECTIVES = tuple(Objective)
_AMOUNTS = ("tokens", "images", "videos", "steps", "train_tokens", "users", "tokens_per_day",
            "requests_per_s")
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
    objective: Objective = Objective.COST
    # training on spot resumes from its last checkpoint (None: no checkpoints, from the start)
    checkpoint_every_s: float | None = DEFAULT_CHECKPOINT_EVERY_S
    # issue 28: the percentile the TTFT / TPOT target is at (``2s@p95``); None: the mean
    ttft_pct: int | None = None
    tpot_pct: int | None = None

    def __post_init__(self) -> None:
        amounts = [a for a in (self.tokens, self.images, self.videos, self.steps,
                               self.train_tokens, self.users, self.tokens_per_day,
                               self.requests_per_s)
                   if a is not None]
        if len(amounts) > 1:
            raise InputError(msg("job.one_amount", "give one amount of work ({fields})",
                                 fields=Join((Field(n) for n in _AMOUNTS), ", ", " or ")))
        if any(a <= 0 for a in amounts):
            raise InputError(msg("job.positive", "the amount of work must be positive"))
        if self.objective not in OBJECTIVES:
            raise InputError(msg("job.objective", "{flag} must be cost or time, got {v!r}",
                                 flag=Field("objective"), v=str(self.objective)))
        object.__setattr__(self, "objective", Objective(self.objective))
        w = self.workload
        if (self.images or self.videos) and not w.is_diffusion:
            raise InputError(msg("job.images_need_diffusion", "{images} and {videos} need an "
                                 "image or video model and task", images=Field("images"),
                                 videos=Field("videos")))
        if self.videos and w.task != Task.VIDEO:
            raise InputError(msg("job.videos_need_video", "{videos} needs {task}",
                                 videos=Field("videos"), task=Field("task", "video")))
        if (self.steps or self.train_tokens) and not w.is_training:
            raise InputError(msg("job.steps_need_training", "{steps} and {train_tokens} need "
                                 "a training task (lora, qlora, full-ft, pretrain, image-lora)",
                                 steps=Field("steps"), train_tokens=Field("train_tokens")))
        if self.train_tokens and w.task == Task.IMAGE_LORA:
            raise InputError(msg("job.image_lora_steps", "an image LoRA is measured in {steps}",
                                 steps=Field("steps")))
        if (self.tokens or self.users or self.tokens_per_day or self.requests_per_s) and (
                w.is_training or w.is_diffusion):
            raise InputError(msg("job.llm_only", "{fields} are for LLM inference",
                                 fields=Join((Field(n) for n in (
                                     "tokens", "users", "tokens_per_day", "requests_per_s")),
                                     ", ", " and ")))
        if (self.ttft_s is not None or self.tpot_s is not None) and not self.requests_per_s:
            raise InputError(msg("job.targets_need_rate", "{ttft} and {tpot} are targets for a "
                                 "request rate: give {rate} too", ttft=Field("ttft"),
                                 tpot=Field("tpot"), rate=Field("requests_per_s")))
        if self.users and not self.tokens_per_s_each:
            raise InputError(msg("job.serving_needs_speed", "a serving target needs {users} "
                                 "and {speed}", users=Field("users"),
                                 speed=Field("tokens_per_s_each")))
        # the field said in words here (the CLI's sentence is unchanged); the web says its label
        for name, field, label in (("deadline_s", "deadline", "deadline"),
                                   ("tokens_per_s_each", "tokens_per_s_each",
                                    "tokens per s each")):
            v = getattr(self, name)
            if v is not None and v <= 0:
                raise InputError(msg("job.must_be_positive", "{name} must be positive",
                                     name=Field(field, flag=label)))
        for name in ("max_price_per_hour", "budget"):
            v = getattr(self, name)
            if v is not None and v.amount <= 0:
                raise InputError(msg("job.must_be_positive", "{name} must be positive",
                                     name=Field(name, flag=name.replace("_", " "))))
        if self.concurrency is not None and self.concurrency < 1:
            raise InputError(msg("job.concurrency", "concurrency must be at least 1"))
        c = self.checkpoint_every_s
        if c is not None and (not isinstance(c, int | float) or not c > 0 or c == float("inf")):
            raise InputError(msg("job.checkpoint_every", "{flag} must be a positive duration "
                                 "(e.g. 30m) or none", flag=Field("checkpoint_every")))

    @property
    def kind(self) -> WorkKind:
        if self.requests_per_s:
            return WorkKind.RATE
        if self.users:
            return WorkKind.SERVING
        if self.tokens_per_day:
            return WorkKind.DAILY
        if self.tokens:
            return WorkKind.TOKENS
        if self.images:
            return WorkKind.IMAGES
        if self.videos:
            return WorkKind.VIDEOS
        if self.steps:
            return WorkKind.STEPS
        if self.train_tokens:
            return WorkKind.TRAIN_TOKENS
        return WorkKind.NONE

    @property
    def amount(self) -> float | None:
        return (self.tokens or self.images or self.videos or self.steps or self.train_tokens
                or self.users or self.tokens_per_day or self.requests_per_s)

    @property
    def per_hour(self) -> bool:
        """Serving jobs are priced per hour (or per day), not as one run."""
        return self.kind in (WorkKind.SERVING, WorkKind.RATE)

    def describe(self) -> Message:
        """The amount of work in words: '1,000 images', '50 users at 20 tokens/s each'."""
        k = self.kind
        if k == WorkKind.SERVING:
            return msg("job.serving", "{users} users at {speed:g} tokens/s each",
                       users=self.users, speed=self.tokens_per_s_each)
        if k == WorkKind.RATE:
            from whichgpu.advise.targets import Targets

            assert self.requests_per_s is not None
            return Targets(self.requests_per_s, self.ttft_s, self.tpot_s, self.ttft_pct,
                           self.tpot_pct).describe()
        if k == WorkKind.NONE:
            return msg("job.none", "no amount of work given (ranked by hourly price)")
        amount = self.amount or 0
        return {
            WorkKind.TOKENS: msg("job.tokens", "{n:,} tokens", n=amount),
            WorkKind.IMAGES: msg("job.images", "{n:,} images", n=amount),
            WorkKind.VIDEOS: msg("job.videos", "{n:,} videos", n=amount),
            WorkKind.STEPS: msg("job.steps", "{n:,} training steps", n=amount),
            WorkKind.TRAIN_TOKENS: msg("job.train_tokens", "{n:,} training tokens", n=amount),
            WorkKind.DAILY: msg("job.daily", "{n:,} tokens a day", n=amount),
        }[k]
