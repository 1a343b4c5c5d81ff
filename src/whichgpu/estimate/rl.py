"""RL post-training (GRPO, PPO): memory per GPU and time per step.

A step generates ``generations`` completions for each of ``batch`` prompts with a rollout
engine (vLLM) or with the training model itself (transformers' ``generate``, TRL's default),
scores them, and trains the policy on them. The parts come from the models
that already answer each one, never re-derived here:

- the policy's training memory and speed: the training model (``estimate/memory/training``,
  ``estimate/speed``) for the whole group (generations x prompts) as one micro-batch of
  prompt + completion tokens;
- the rollouts: the serving model (``estimate/memory/inference``, ``estimate/speed``) for
  vLLM decoding the group, or, when the training model generates, the same models for
  transformers: its KV cache and activations, no weights of their own, no sync;
- the reference model (a KL term): the weights once more, except with LoRA/QLoRA, where the
  base with the adapter disabled *is* the reference and costs nothing;
- PPO: a critic trained beside the policy (the same size, a value head) and a reward model
  (weights only), both on the training GPUs;
- the weight sync after each step: the weights (or the adapter) copied into the engine, over
  the GPU's memory when colocated, over the link when the engine has GPUs of its own.

Framework defaults (TRL, Unsloth, verl, OpenRLHF) are data with their sources
(``data/rl_frameworks.toml``).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg
from whichgpu.units import GB, Range
from whichgpu.vocabulary import Engine, RLFramework, RLTuning, RolloutEngine, Task

if TYPE_CHECKING:
    from whichgpu.catalog.gpus import GPU
    from whichgpu.estimate.workload import Workload
    from whichgpu.models.spec import ModelSpec


@dataclass(frozen=True)
class FrameworkDefaults:
    """One RL framework's defaults (``data/rl_frameworks.toml``)."""

    id: RLFramework
    name: str
    rollout_engine: RolloutEngine
    placement: str  # colocate | separate
    rollout_share: float
    generations: int
    completion_tokens: int
    prompt_tokens: int
    reference_kl: bool
    shared_weights: bool
    sleeps: bool
    old_logprob_pass: bool
    sync: str  # full | adapter | none
    train_micro_batch: int
    training_profile: str
    sources: tuple[str, ...]
    default_tuning: RLTuning = RLTuning.LORA  # how the policy trains when no tuning is given
    # a mode of the framework that hands the engine's memory back while training runs, at
    # this share of the GPU (Unsloth's Standby), which the plan does not model and says so
    standby_share: float | None = None
    # bytes per completion-logit value the framework's own log-prob step holds at its peak,
    # when the policy trains with the unfused loss (None: the training model's logits term)
    logprob_bytes_per_element: float | None = None


@cache
def frameworks() -> dict[RLFramework, FrameworkDefaults]:
    text = resources.files("whichgpu.estimate").joinpath("data/rl_frameworks.toml").read_text(
        "utf-8")
    raw = tomllib.loads(text)["framework"]
    out = {}
    for k, v in raw.items():
        tuning = RLTuning(v.pop("default_tuning", RLTuning.LORA))
        engine = RolloutEngine(v.pop("rollout_engine"))
        out[RLFramework(k)] = FrameworkDefaults(id=RLFramework(k), sources=tuple(v.pop("sources")),
                                                default_tuning=tuning, rollout_engine=engine, **v)
    return out


def framework_of(name: str | None) -> FrameworkDefaults:
    """The RL framework ``name`` names (TRL when none; the training profiles 'transformers'
    and 'peft' are TRL); an unknown one is an input error listing them."""
    key = (name or "trl").strip().lower()
    key = {"transformers": "trl", "peft": "trl", "hf": "trl"}.get(key, key)
    try:
        return frameworks()[RLFramework(key)]
    except ValueError:
        raise InputError(msg("rl.framework", "unknown RL framework {v!r}; use one of {choices}",
                             v=name, choices=", ".join(RLFramework))) from None


@dataclass(frozen=True)
class RLSettings:
    """What one RL job runs: the settings given, the framework's defaults for the rest."""

    task: Task  # grpo | ppo
    tuning: RLTuning
    framework: FrameworkDefaults
    generations: int
    prompts: int  # prompts per step
    prompt_tokens: int
    completion_tokens: int
    gpus: int  # GPUs in all
    rollout_gpus: int  # 0: colocated on the training GPUs
    rollout_share: float
    reference: bool  # a reference model in memory (KL on, full fine-tuning)
    kl: bool
    rollout_engine: RolloutEngine = RolloutEngine.VLLM

    @property
    def uses_vllm(self) -> bool:
        """The completions come from a vLLM engine (else the training model's generate)."""
        return self.rollout_engine is RolloutEngine.VLLM

    @property
    def completions(self) -> int:
        return self.generations * self.prompts

    @property
    def training_gpus(self) -> int:
        return self.gpus - self.rollout_gpus

    @property
    def colocated(self) -> bool:
        return self.rollout_gpus == 0

    def to_json(self) -> dict[str, Any]:
        return {"task": str(self.task), "tuning": str(self.tuning),
                "framework": str(self.framework.id), "generations": self.generations,
                "prompts_per_step": self.prompts, "completions_per_step": self.completions,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "gpus": self.gpus,
                "training_gpus": self.training_gpus, "rollout_gpus": self.rollout_gpus,
                "placement": "colocated" if self.colocated else "separate",
                "rollout_engine": str(self.rollout_engine),
                "rollout_share": self.rollout_share if self.colocated and self.uses_vllm
                else None,
                "reference_model": self.reference, "kl": self.kl,
                "source": list(self.framework.sources)}


def settings(task: Task, *, tuning: RLTuning | None = None, framework: str | None = None,
             generations: int | None = None, prompts: int = 1,
             prompt_tokens: int | None = None, completion_tokens: int | None = None,
             gpus: int = 1, rollout_gpus: int | None = None,
             rollout_share: float | None = None,
             rollout_engine: RolloutEngine | str | None = None) -> RLSettings:
    """The job's settings: what is given, else the framework's defaults (each sourced)."""
    fw = framework_of(framework)
    tuning = tuning or fw.default_tuning
    engine = _rollout_engine(rollout_engine, fw)
    if engine is RolloutEngine.TRANSFORMERS:
        for name, given in (("rollout_gpus", rollout_gpus), ("rollout_share", rollout_share)):
            if given:  # the training model generates: no engine to place or to share a GPU
                raise InputError(msg(
                    "rl.no_engine", "{field} is for a vLLM rollout engine; with {engine} "
                    "{v} the training model generates its own completions: give {engine} "
                    "vllm, or leave {field} out", field=Field(name),
                    engine=Field("rollout_engine"), v=str(engine)))
        rollout_gpus = 0
    if rollout_gpus is None:
        rollout_gpus = 0 if fw.placement == "colocate" or gpus < 2 else max(1, gpus // 2)
    if rollout_gpus >= gpus and rollout_gpus > 0:
        raise InputError(msg("rl.rollout_gpus", "{field} {n} leaves no GPU to train on out of "
                             "{gpus}; give fewer, or 0 to share the training GPUs",
                             field=Field("rollout_gpus"), n=rollout_gpus, gpus=gpus))
    if fw.shared_weights and rollout_gpus:
        raise InputError(msg("rl.shared_separate", "{framework} runs its rollout engine on the "
                             "training GPUs (it shares their weights); {field} must be 0",
                             framework=fw.name, field=Field("rollout_gpus")))
    share = fw.rollout_share if rollout_share is None else rollout_share
    if not 0 < share < 1:
        raise InputError(msg("rl.share", "{field} must be between 0 and 1 (a fraction of each "
                             "GPU's memory), got {v}", field=Field("rollout_share"), v=share))
    for name, given in (("generations", generations), ("prompt_tokens", prompt_tokens),
                        ("completion_tokens", completion_tokens)):
        if given is not None and given < 1:  # 0 is not 'the default': it is refused
            raise InputError(msg("rl.positive", "{field} must be at least 1, got {v}",
                                 field=Field(name), v=given))
    kl = fw.reference_kl
    return RLSettings(
        task=task, tuning=tuning, framework=fw,
        generations=fw.generations if generations is None else generations, prompts=prompts,
        prompt_tokens=fw.prompt_tokens if prompt_tokens is None else prompt_tokens,
        completion_tokens=fw.completion_tokens if completion_tokens is None
        else completion_tokens, gpus=gpus,
        rollout_gpus=rollout_gpus, rollout_share=share,
        reference=kl and tuning is RLTuning.FULL, kl=kl, rollout_engine=engine)


def _rollout_engine(given: RolloutEngine | str | None, fw: FrameworkDefaults) -> RolloutEngine:
    """The rollout engine given, else the framework's; an unknown one is an input error."""
    if given is None:
        return fw.rollout_engine
    try:
        return RolloutEngine(str(given).strip().lower())
    except ValueError:
        raise InputError(msg("rl.rollout_engine", "unknown rollout engine {v!r}; use one of "
                             "{choices}", v=given, choices=", ".join(RolloutEngine))) from None


@dataclass(frozen=True)
class Part:
    """One named part of the memory on a GPU (training or rollout side)."""

    name: str
    bytes: int
    said: Message

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "bytes": int(self.bytes), "how": str(self.said)}


@dataclass(frozen=True)
class RLPlan:
    """Memory per GPU and, on a named GPU, the time of one step and what dominates it."""

    model: str
    settings: RLSettings
    training_parts: tuple[Part, ...]
    rollout_parts: tuple[Part, ...]  # on the training GPUs when colocated
    peak_training_gpu_bytes: int
    peak_rollout_gpu_bytes: int | None  # separate rollout GPUs only
    gpu: str | None = None
    usable_bytes: int | None = None
    fits: bool | None = None
    times: dict[str, Range] = field(default_factory=dict)  # rollout_s, training_s, sync_s, step_s
    dominant: str | None = None
    suggested_rollout_gpus: int | None = None
    assumptions: tuple[Message, ...] = ()
    warnings: tuple[Message, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model, **self.settings.to_json(),
            "memory": {
                "training_parts": [p.to_json() for p in self.training_parts],
                "rollout_parts": [p.to_json() for p in self.rollout_parts],
                "rollout_bytes": sum(p.bytes for p in self.rollout_parts),
                "rollout_on": "training_gpus" if self.settings.colocated else "rollout_gpus",
                # the peak on each training GPU, with the colocated engine's share (or need)
                "per_training_gpu_bytes": self.peak_training_gpu_bytes,
                "per_training_gpu_gb": round(self.peak_training_gpu_bytes / GB, 3),
                "per_rollout_gpu_bytes": self.peak_rollout_gpu_bytes,
            },
            "gpu": self.gpu, "usable_bytes": self.usable_bytes, "fits": self.fits,
            **{k: r.to_json(4) for k, r in self.times.items()},
            "dominant": self.dominant,
            "suggested_rollout_gpus": self.suggested_rollout_gpus,
            "assumptions": [str(a) for a in self.assumptions],
            "warnings": [str(w) for w in self.warnings],
        }


def _total_without(w: Workload, drop: tuple[str, ...]) -> int:
    from whichgpu.estimate.memory import estimate_memory

    e = estimate_memory(w)
    return sum(t.bytes for t in e.terms if t.name not in drop)


def plan(spec: ModelSpec, s: RLSettings, build: Any, gpu: GPU | None = None, *,
         profile: Any | None = None) -> RLPlan:
    """The plan of ``s`` for ``spec``. ``build(**changes)`` makes a Workload from the request's
    own settings (quant, kv dtype, optimizer, LoRA rank ...) with ``changes`` applied."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.weights import workload_weight_bytes

    fw = s.framework
    train_gpus = s.training_gpus
    per_gpu = math.ceil(s.completions / train_gpus)
    micro = min(per_gpu, fw.train_micro_batch)  # the rest: gradient accumulation
    seq = s.prompt_tokens + s.completion_tokens
    train = build(task=Task(s.tuning.value), context=seq, batch=micro, gpus=train_gpus,
                  framework=fw.training_profile)
    own = not s.uses_vllm  # the training model generates (transformers' generate)
    # Unsloth's vLLM reads the 4-bit training weights; the training model generates with them
    qlora_rollout = s.tuning is RLTuning.QLORA and (fw.shared_weights or own)
    roll_quant = "nf4" if qlora_rollout else None
    roll_engine = Engine.TRANSFORMERS if own else Engine.VLLM
    train_e = estimate_memory(train)
    # the loss needs log-probs of the completion tokens only (TRL logits_to_keep): the
    # training model's logits term for the completions' share of each sequence
    logits = train_e.term("logits")
    kept = int(logits * s.completion_tokens / seq)
    per_logit = fw.logprob_bytes_per_element
    if per_logit is not None and train.loss_kind == "full" and spec.vocab_size:
        # the framework's own log-prob step (TRL: bf16 logits, a row at a time, no fp32 copy)
        kept = int(micro * s.completion_tokens * spec.vocab_size * per_logit)
    parts = [Part("policy_training", train_e.total_bytes - logits + kept, msg(
        "rl.part.policy", "the policy's {tuning} training memory for {n} sequence(s) of "
        "{seq:,} tokens per GPU (the training memory model: weights, gradients, optimizer, "
        "activations), logits for the {c:,} completion tokens only", tuning=str(s.tuning),
        n=micro, seq=seq, c=s.completion_tokens))]
    one = build(task=Task.INFERENCE, engine=Engine.VLLM, batch=1, quant=roll_quant, gpus=1,
                lora_rank=None, framework=None, optimizer=None)
    weights16 = workload_weight_bytes(build(task=Task.INFERENCE, engine=Engine.VLLM, batch=1,
                                            gpus=1, quant="bf16", framework=None,
                                            optimizer=None, lora_rank=None)).total
    shard = train_gpus if train_gpus > 1 else 1  # ZeRO-3/FSDP shards the frozen copies too
    if s.reference:
        parts.append(Part("reference", weights16 // shard, msg(
            "rl.part.reference", "the reference model's 16-bit weights (a KL term with full "
            "fine-tuning){split}", split=_split(shard))))
    if s.task is Task.PPO:
        critic = _total_without(train, ("runtime", "nccl", "logits"))
        parts.append(Part("critic", critic, msg(
            "rl.part.critic", "PPO's critic: a value model the policy's size trained the same "
            "way (the training memory less the runtime and the vocabulary logits)")))
        parts.append(Part("reward_model", weights16 // shard, msg(
            "rl.part.reward", "PPO's reward model: 16-bit weights of a model the policy's "
            "size{split}", split=_split(shard))))
    rollout = build(task=Task.INFERENCE, engine=roll_engine, batch=math.ceil(
        s.completions / max(s.rollout_gpus or train_gpus, 1)), quant=roll_quant, gpus=1,
        prompt_tokens=s.prompt_tokens, output_tokens=s.completion_tokens,
        lora_rank=None, framework=None, optimizer=None, context=seq)
    roll_e = estimate_memory(rollout)
    kv = roll_e.term("kv_cache")
    roll_weights = 0 if fw.shared_weights or own else roll_e.term("weights")
    roll_parts = _own_rollout_parts(rollout.batch, s, kv, roll_e.term("activations")) if own \
        else [
        Part("rollout_weights", roll_weights, msg(
            "rl.part.rollout_weights.shared", "none: {framework}'s vLLM reads the training "
            "weights", framework=fw.name) if fw.shared_weights else msg(
            "rl.part.rollout_weights", "the rollout engine's own copy of the weights")),
        Part("rollout_kv_cache", kv, msg(
            "rl.part.rollout_kv", "KV cache of {n} completion(s) x ({p:,} + {c:,}) tokens "
            "(the serving memory model)", n=rollout.batch, p=s.prompt_tokens,
            c=s.completion_tokens)),
        Part("rollout_runtime", roll_e.term("activations") + roll_e.term("cuda_graphs")
             + roll_e.term("runtime"), msg(
            "rl.part.rollout_runtime", "the engine's activations, CUDA graphs and runtime")),
        ]
    rollout_need = sum(p.bytes for p in roll_parts)
    assumptions: list[Message] = [msg(
        "rl.assume.logits", "log-probs of the completion tokens only, as TRL's "
        "logits_to_keep computes them") if per_logit is None or train.loss_kind != "full"
        else msg(
        "rl.assume.logprob_bytes", "log-probs of the completion tokens only (logits_to_keep), "
        "{per:g} bytes per logit value: {framework} keeps the logits in 16 bits and takes "
        "their log-softmax a completion at a time, with no fp32 copy", per=per_logit,
        framework=fw.name), msg(
        "rl.assume.group", "the {n} completions of a step ({g} per prompt x {b} prompt(s)) "
        "are split over {t} training GPU(s) and trained {m} at a time ({framework}'s "
        "micro-batch), each completion running to {c:,} tokens", n=s.completions,
        g=s.generations, b=s.prompts, t=train_gpus, m=micro, framework=fw.name,
        c=s.completion_tokens)]
    if s.tuning is not RLTuning.FULL and s.kl:
        assumptions.append(msg("rl.assume.lora_reference", "with {tuning} the reference model "
                               "is the base with the adapter disabled: no memory of its own",
                               tuning=str(s.tuning)))
    elif not s.kl:
        assumptions.append(msg("rl.assume.no_kl", "{framework} loads no reference model by "
                               "default (no KL term)", framework=fw.name))
    warnings: list[Message] = []
    train_total = sum(p.bytes for p in parts)
    states = train_total - train_e.term("activations") - kept
    share_bytes = None
    if own:  # generation, then training, on the same model: the larger phase is the peak
        peak = max(train_total, states + rollout_need)
        rollout_peak = None
        assumptions.append(msg(
            "rl.assume.own_generate", "{framework} generates with the training model itself "
            "(transformers' generate, {field} {v}): no engine, no second copy of the weights, "
            "no weight sync; the KV cache lives while the completions are generated and is "
            "freed before training, so the peak is the larger of the two phases",
            framework=fw.name, field=Field("rollout_engine"), v=str(s.rollout_engine)))
    elif s.colocated:
        # vLLM's gpu_memory_utilization budget holds the weights it loads as well as its KV
        # cache (vllm#12330's start-up log: 'total_gpu_memory x gpu_memory_utilization ...
        # model weights take ...; the rest ... for KV Cache'). When the engine reads the
        # training weights (Unsloth) those weights are already in the policy's training
        # memory: only the rest of the budget is added on top of it, never less than the
        # rollouts' own need.
        shared = roll_e.term("weights") if fw.shared_weights else 0
        if gpu is not None:
            share_bytes = int(s.rollout_share * gpu.memory_bytes)
            engine_weights = roll_e.term("weights")
            if engine_weights > share_bytes:  # vLLM stops at start-up: no room for a cache
                warnings.append(msg(
                    "rl.share_below_weights", "the engine's share ({share:.0%} of the GPU, "
                    "{have:.1f} GB) is less than the {w:.1f} GB of weights vLLM loads into it: "
                    "vLLM would not start; raise {field} to at least {least:.2f}",
                    share=s.rollout_share, have=share_bytes / GB,
                    w=engine_weights / GB, field=Field("rollout_share"),
                    least=math.ceil(100 * (rollout_need + shared) / gpu.memory_bytes) / 100))
            elif rollout_need + shared > share_bytes:
                warnings.append(msg(
                    "rl.share_small", "the rollouts need {need:.1f} GB but the engine's share "
                    "({share:.0%} of the GPU) is {have:.1f} GB: vLLM runs fewer completions at "
                    "once (slower rollouts); raise {field}", need=(rollout_need + shared) / GB,
                    share=s.rollout_share, have=share_bytes / GB, field=Field("rollout_share")))
            if shared:
                assumptions.append(msg(
                    "rl.assume.shared_budget", "{framework}'s vLLM takes {share:.0%} of the GPU "
                    "({have:.1f} GB) with the {w:.1f} GB of weights it shares with training "
                    "inside it: {extra:.1f} GB on top of the training memory",
                    framework=fw.name, share=s.rollout_share, have=share_bytes / GB,
                    w=shared / GB, extra=max(share_bytes - shared, rollout_need) / GB))
        side = (max(share_bytes - shared, rollout_need) if share_bytes is not None
                else rollout_need)
        if fw.standby_share is not None and not fw.sleeps:  # named, not modelled
            assumptions.append(msg(
                "rl.assume.no_standby", "{framework}'s Standby mode (vLLM given {standby:.0%} "
                "of the GPU and its memory handed back while training runs) is not modelled: "
                "this plan is {framework}'s default, the engine keeping its share through "
                "training", framework=fw.name, standby=fw.standby_share))
        if fw.sleeps:  # the engine frees its cache while training runs
            peak = max(train_total + roll_weights, states + side)
            assumptions.append(msg("rl.assume.sleep", "{framework} frees the engine's KV cache "
                                   "while training runs: the peak is the larger of the two "
                                   "phases", framework=fw.name))
        else:
            peak = train_total + side
        rollout_peak = None
    else:
        peak = train_total
        rollout_peak = roll_e.total_bytes
    usable = gpu.usable_memory_bytes if gpu is not None else None
    fits = None
    if gpu is not None and usable is not None:
        fits = peak <= usable and (rollout_peak is None or rollout_peak <= usable)
    result = RLPlan(model=spec.name, settings=s, training_parts=tuple(parts),
                    rollout_parts=tuple(roll_parts), peak_training_gpu_bytes=int(peak),
                    peak_rollout_gpu_bytes=rollout_peak, gpu=gpu.id if gpu else None,
                    usable_bytes=usable, fits=fits, assumptions=tuple(assumptions),
                    warnings=tuple(warnings))
    if gpu is None:
        return result
    return _timed(result, train, rollout, one, gpu, profile)


def _own_rollout_parts(batch: int, s: RLSettings, kv: int, activations: int) -> list[Part]:
    """The rollouts' memory when the training model generates them: its KV cache for the
    group and generate's activations, no weights of their own."""
    return [
        Part("rollout_weights", 0, msg(
            "rl.part.rollout_weights.own", "none: the training model generates the "
            "completions")),
        Part("rollout_kv_cache", kv, msg(
            "rl.part.rollout_kv.own", "the training model's KV cache for {n} completion(s) x "
            "({p:,} + {c:,}) tokens (the memory model's KV cache for transformers' generate)",
            n=batch, p=s.prompt_tokens, c=s.completion_tokens)),
        Part("rollout_runtime", activations, msg(
            "rl.part.rollout_runtime.own", "generate's activations (the memory model's for "
            "transformers)")),
    ]


def _split(n: int) -> Message | str:
    return msg("rl.split", ", sharded over {n} GPUs", n=n) if n > 1 else ""


def _timed(p: RLPlan, train: Workload, rollout: Workload, one: Workload, gpu: GPU,
           profile: Any) -> RLPlan:
    """Time per step: rollouts (the serving speed model), training (the training speed
    model) and the weight sync; which dominates; how to split GPUs between the two."""
    from dataclasses import replace

    from whichgpu.estimate.speed import estimate_speed

    s = p.settings
    fw = s.framework
    roll_count = s.rollout_gpus or s.training_gpus  # one engine per GPU (data parallel)
    roll_est = estimate_speed(rollout, gpu, 1, profile=profile, check_fit=False,
                              saturation=False)
    per_engine = rollout.batch * s.completion_tokens  # output tokens each engine decodes
    rollout_s = roll_est.rates["output_tokens_per_s"].inverse(per_engine)
    train_est = estimate_speed(train, gpu, s.training_gpus, profile=profile, check_fit=False)
    tokens = s.completions * (s.prompt_tokens + s.completion_tokens)
    passes = 1.0  # the policy's forward + backward
    extra = []
    if fw.old_logprob_pass:
        passes += 1 / 3
        extra.append("old log-probs")
    if s.reference or (s.kl and s.tuning is not RLTuning.FULL):
        passes += 1 / 3  # a forward of the reference (the base, adapter disabled, for LoRA)
        extra.append("reference")
    if s.task is Task.PPO:
        passes += 1 + 1 / 3  # the critic's forward + backward, the reward model's forward
        extra.append("critic, reward model")
    train_s = train_est.rates["tokens_per_s"].inverse(tokens * passes)
    sync_bytes = _sync_bytes(s, train, one)
    if s.colocated:
        rate = gpu.bandwidth_bytes_per_s / 2  # read + write on the same GPU
        how = msg("rl.sync.local", "a copy in GPU memory (read and write)")
    else:
        rate = gpu.interconnect.one_way_bytes_per_s
        how = msg("rl.sync.link", "over the {link} link", link=str(gpu.interconnect.kind.value))
    sync_s = Range.point(sync_bytes / rate if sync_bytes else 0.0)
    step = Range(rollout_s.low + train_s.low + sync_s.low,
                 rollout_s.typical + train_s.typical + sync_s.typical,
                 rollout_s.high + train_s.high + sync_s.high)
    parts = {"rollout": rollout_s.typical, "training": train_s.typical,
             "weight_sync": sync_s.typical}
    dominant = max(parts, key=lambda k: parts[k])
    suggestion = None
    if s.gpus >= 2 and s.uses_vllm:  # both sides spread linearly over their GPUs
        r1 = rollout_s.typical * roll_count
        t1 = train_s.typical * s.training_gpus
        suggestion = min(s.gpus - 1, max(1, round(s.gpus * r1 / (r1 + t1))))
    rollout_said = msg(
        "rl.assume.rollout_speed", "rollouts: {n} engine(s) on {gpu}, each decoding {b} "
        "completion(s) at once (the serving speed model)", n=roll_count, gpu=gpu.id,
        b=rollout.batch) if s.uses_vllm else msg(
        "rl.assume.rollout_speed.own", "rollouts: the training model's generate on each of "
        "{n} {gpu}, decoding {b} completion(s) at once (the speed model's decode for "
        "transformers, with its efficiency, not vLLM's)", n=roll_count, gpu=gpu.id,
        b=rollout.batch)
    assumptions = [*p.assumptions, rollout_said, msg(
        "rl.assume.training_speed", "training: {tokens:,} tokens per step at the training "
        "speed model's rate, x{passes:.2f} for the extra passes ({extra})", tokens=tokens,
        passes=passes, extra=", ".join(extra) or "none"), msg(
        "rl.assume.sync", "weight sync: {gb:.2f} GB per step, {how}", gb=sync_bytes / GB,
        how=how)]
    if not s.uses_vllm:  # rl.assume.own_generate already says there is no sync
        assumptions.pop()
    return replace(p, times={"rollout_s": rollout_s, "training_s": train_s, "sync_s": sync_s,
                             "step_s": step},
                   dominant=dominant, suggested_rollout_gpus=suggestion,
                   assumptions=tuple(assumptions))


def _sync_bytes(s: RLSettings, train: Workload, one: Workload) -> int:
    """Bytes copied into the rollout engine after each step."""
    from whichgpu.estimate.memory.training import lora_params
    from whichgpu.estimate.memory.weights import workload_weight_bytes

    sync = s.framework.sync
    if sync == "none" or not s.uses_vllm:  # the training model generates: nothing to copy
        return 0
    if sync == "adapter" and s.tuning is not RLTuning.FULL:
        return lora_params(train) * 2
    return int(workload_weight_bytes(one).total)
