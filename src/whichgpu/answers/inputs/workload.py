"""Build a Workload from the strings a person types (CLI flags, web form fields, JSON)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from whichgpu.errors import InputError
from whichgpu.estimate.frameworks import Framework
from whichgpu.estimate.workload import Workload, as_task
from whichgpu.messages import Field, msg
from whichgpu.models.spec import ModelSpec
from whichgpu.units import EngineVersion
from whichgpu.vocabulary import Engine, Task

if TYPE_CHECKING:
    from whichgpu.answers.inputs.values import Drafter, HostMemoryType, TensorOverrides

PARAMS_WORDS = msg("what.params", "parameter count")
_CONTEXT = msg("what.context", "context")
_PROMPT = msg("what.prompt", "prompt length")
_OUTPUT = msg("what.output", "output length")
TRAIN_TOKENS_WORDS = msg("what.train_tokens", "number of training tokens")
_TOKEN_WORDS = {"context": _CONTEXT, "prompt_tokens": _PROMPT, "output_tokens": _OUTPUT}


def token_words(field: str) -> str:
    """What a token-count field is called in its sentences ('context', 'prompt length')."""
    return _TOKEN_WORDS.get(field, field.replace("_", " "))


def parse_resolution(text: str | Iterable[int] | None) -> tuple[int, int] | None:
    """'1024x1024' -> (1024, 1024); a size already read (values.ImageSize, a pair) passes."""
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        width, height = text
        return int(width), int(height)
    try:
        w_, h_ = str(text).lower().replace("*", "x").split("x")
        return int(w_), int(h_)
    except ValueError:
        raise InputError(msg("resolution.unreadable", "cannot read resolution {v!r}; write it "
                             "like 1024x1024", v=text)) from None


def parse_lora_targets(text: str | Iterable[str] | None) -> tuple[str, ...] | None:
    """``q_proj,v_proj`` -> ('q_proj', 'v_proj'); names already read (values.ModuleNames, a
    tuple) pass."""
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        return tuple(text)
    return tuple(t.strip() for t in text.split(",") if t.strip())


def build_workload(model: str | ModelSpec | None, *, task: Task | str = Task.INFERENCE,
                   quant: str | None = None, kv_dtype: str | None = None,
                   context: int | str | None = None, batch: int | None = None,
                   engine: Engine | str | None = None, prompt_tokens: int | str | None = None,
                   output_tokens: int | str | None = None, optimizer: str | None = None,
                   gradient_checkpointing: bool | None = None,
                   master_weights: bool | None = None, fused_loss: bool | None = None,
                   flash_attention: bool | None = None, lora_rank: int | None = None,
                   lora_targets: str | Iterable[str] | None = None, gpus: int | None = None,
                   tp: int | None = None, pp: int | None = None, zero: int | None = None,
                   resolution: str | Iterable[int] | None = None, frames: int | None = None,
                   steps: int | None = None, cfg: bool | None = None,
                   offload: str | None = None, vae_tiling: bool | None = None,
                   params: str | float | None = None, allow_long_context: bool | None = None,
                   framework: str | None = None, activation_offloading: bool | None = None,
                   loss: str | None = None, fp8_training: bool | None = None,
                   gpu_layers: int | None = None, n_cpu_moe: int | None = None,
                   cpu_moe: bool = False,
                   override_tensor: Sequence[str | TensorOverrides] | str | None = None,
                   host_ram: int | str | None = None,
                   host_memory: str | HostMemoryType | None = None,
                   host_bandwidth: str | float | None = None,
                   engine_version: str | EngineVersion | None = None,
                   ubatch: int | None = None, mmap: bool | None = None,
                   imatrix: bool | None = None, backend: str | None = None,
                   speculative: str | Drafter | None = None, draft_tokens: int | None = None,
                   lora_adapters: int | None = None,
                   interconnect: str | None = None, gpus_per_node: int | None = None,
                   # diffusion LoRA training: what stays resident (estimate/diffusion_trainers)
                   cache_embeddings: bool | None = None, blocks_to_swap: int | None = None,
                   # LLM training: layers whose activations go to CPU RAM (Megatron's count)
                   activation_offload_layers: int | None = None,
                   # issue 30: MoE serving with expert parallelism (estimate/speed/expert_parallel)
                   expert_parallel: bool | None = None,
                   # issue 29: ring attention in a diffusion split (estimate/diffusion_parallel)
                   ring_degree: int | None = None):
    """Resolve the model and build a validated Workload from what a person typed.

    The text is read here, once: counts such as ``8k`` (``context``, ``prompt_tokens``,
    ``output_tokens``; numbers pass as they are), ``params`` (``70e9``), ``resolution``
    (``1024x1024``), ``lora_targets`` (``q_proj,v_proj``), the host, the speculative drafter,
    llama.cpp's ``-ot`` and the interconnect; the typed settings then go to
    :func:`whichgpu.estimate.configure.configure_workload`, where a training ``framework``
    fills what is left unset. A setting left as None takes the Workload's own default.

    ``model`` may be an already-resolved ModelSpec (the web resolves names itself, never
    reading paths on the server). llama.cpp's offload flags: ``gpu_layers`` (-ngl),
    ``n_cpu_moe`` / ``cpu_moe`` and ``override_tensor`` (-ot ``PATTERN=DEVICE``, several
    comma-separated as llama.cpp reads them); the host: ``host_ram`` (``64GB``, or bytes),
    ``host_memory`` (``ddr5-6000x2``), ``host_bandwidth`` (``90GB/s``); ``ubatch`` (-ub),
    ``mmap`` (False for --no-mmap) and ``imatrix`` (whether the GGUF used an importance
    matrix); ``backend``: llama.cpp's GPU backend (cuda, vulkan, rocm, metal, sycl; None: the
    card's own); ``speculative``: mtp, eagle or draft:MODEL, with ``draft_tokens`` per verify
    step (estimate/speculative.py). ``interconnect``: the link between servers (``100gbe``,
    ``ib-ndr``; None: the default network) and ``gpus_per_node`` the GPUs of one server
    (None: 8).
    """
    from whichgpu.answers.inputs.framework import parse_framework
    from whichgpu.answers.inputs.host import parse_host
    from whichgpu.answers.inputs.speculative import parse_speculative
    from whichgpu.estimate.configure import configure_workload
    from whichgpu.models import resolve_model

    if isinstance(model, ModelSpec):
        spec = model
    elif model is None and not params:
        raise InputError(msg("model.name_or_params", "name a model (see 'whichgpu models') or "
                             "give {params}, e.g. 70e9", params=Field("params")))
    else:
        spec = resolve_model(model, params=_params(params))
    res = parse_resolution(resolution)
    notes: tuple[str, ...] = ()
    task = as_task(task)  # the word ("lora") as its member; an unknown one is said here
    if task == Task.INFERENCE and spec.family == "diffusion":  # a pipeline's inference generates
        task = Task.VIDEO if spec.diffusion and spec.diffusion.is_video else Task.IMAGE
        notes = (msg("workload.diffusion_task.assumed", "task {task} assumed: {model} is a "
                     "diffusion pipeline", task=str(task), model=spec.name),)
    trainer = _diffusion_trainer(framework, task)  # image-lora: residency, not LLM defaults
    profile = parse_framework(framework) if framework and not trainer else None
    host = (parse_host(host_ram, host_memory, host_bandwidth)
            if host_ram or host_memory or host_bandwidth else None)
    return configure_workload(
        spec, task=task, framework=profile, fused_loss=fused_loss, cpu_moe=cpu_moe,
        n_cpu_moe=n_cpu_moe, quant=quant, optimizer=optimizer or None,
        gradient_checkpointing=gradient_checkpointing, master_weights=master_weights,
        activation_offloading=activation_offloading, loss=loss, lora_rank=lora_rank or None,
        lora_targets=parse_lora_targets(lora_targets),
        kv_dtype=kv_dtype, context=_tokens(context, _CONTEXT), batch=batch, engine=engine,
        prompt_tokens=_tokens(prompt_tokens, _PROMPT),
        output_tokens=_tokens(output_tokens, _OUTPUT),
        flash_attention=flash_attention, gpus=gpus, tp=tp, pp=pp, zero=zero, resolution=res,
        frames=frames, steps=steps, cfg=cfg, offload=offload, vae_tiling=vae_tiling,
        allow_long_context=allow_long_context, fp8_training=fp8_training,
        gpu_layers=gpu_layers, tensor_overrides=parse_overrides(override_tensor), host=host,
        engine_version=_engine_version(engine_version), ubatch=ubatch, mmap=mmap, imatrix=imatrix,
        backend=backend or None,  # Workload checks the name
        speculative=parse_speculative(speculative, draft_tokens, spec),
        lora_adapters=lora_adapters, interconnect=_interconnect(interconnect),
        gpus_per_node=gpus_per_node, cache_embeddings=cache_embeddings,
        blocks_to_swap=blocks_to_swap, diffusion_trainer=trainer, notes=notes,
        activation_offload_layers=activation_offload_layers,
        expert_parallel=expert_parallel or None, ring_degree=ring_degree or None)


def _params(value: str | float | None) -> float | None:
    """A generic model's parameter count (``70e9``; one already read passes)."""
    from whichgpu.units import parse_count

    if value is None or value == "":
        return None
    if isinstance(value, float | int):
        return float(value)
    return float(parse_count(value, what=PARAMS_WORDS))


def _tokens(value: int | str | None, what: str) -> int | None:
    """A token count as typed (``8k`` is 8,192, as model cards write it); a number passes."""
    from whichgpu.units import parse_count

    if value is None or value == "":
        return None
    return int(parse_count(value, binary=True, what=what))  # a TokenCount as a plain int


def _diffusion_trainer(framework: str | None, task: Task) -> str | None:
    """A diffusion LoRA trainer named by ``framework`` (image-lora), else None."""
    from whichgpu.estimate.diffusion_trainers import trainer_name

    return trainer_name(framework) if task == Task.IMAGE_LORA else None


def _engine_version(value: str | EngineVersion | None) -> EngineVersion | None:
    """The engine build a Python caller names as text (``'b4458'``), read once; a request's
    is read as it validates (answers/inputs/values.py EngineBuild)."""
    from whichgpu.units import parse_engine_version

    if value is None or isinstance(value, EngineVersion):
        return value
    return parse_engine_version(value)


def _interconnect(text: str | None) -> str | None:
    """The link's id (``100GbE`` is ``100gbe``; one already read passes); an unknown one is an
    input error."""
    from whichgpu.answers.inputs.interconnect import parse_interconnect

    ident = parse_interconnect(text)
    return str(ident) if ident is not None else None


def parse_overrides(values: Sequence[str | TensorOverrides] | str | None
                    ) -> tuple[tuple[str, str], ...]:
    """llama.cpp's ``-ot``: ``PATTERN=DEVICE``, several per value separated by commas, split
    at the first '=' (common/arg.cpp reads them so); pairs already read (a request's
    values.TensorOverrides) pass."""
    if not values:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    out: list[tuple[str, str]] = []
    for value in items:
        if isinstance(value, tuple):
            out += value
            continue
        for part in str(value or "").split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise InputError(msg("workload.ot_part", "{field} {v!r}: write PATTERN=DEVICE, "
                                     "e.g. exps=CPU", field=Field("override_tensor", flag="-ot"),
                                     v=part))
            pattern, device = part.split("=", 1)
            out.append((pattern.strip(), device.strip()))
    return tuple(out)


class SpeedAnswer:
    """What ``whichgpu speed`` answers: the estimate, or why the job does not fit."""

    def __init__(self, w: Workload, gpu_id: str, count: int, est=None, not_fit=None):
        self.workload, self.gpu_id, self.count = w, gpu_id, count
        self.estimate, self.not_fit = est, not_fit

    def to_json(self) -> dict:
        approximate = bool(self.workload.model.approximate)
        if self.estimate is None:
            exc = self.not_fit
            return {"gpu": self.gpu_id, "count": self.count, "fits": False, "reason": str(exc),
                    "memory_bytes": exc.needed, "usable_bytes": exc.usable,
                    "model": self.workload.model.name, "approximate": approximate}
        data = self.estimate.to_json()
        data.update(fits=True, model=self.workload.model.name, approximate=approximate)
        return data


def speed_answer(w: Workload, gpu, count: int = 1, *, profile=None,
                 framework: Framework | None = None, compile: bool = False,
                 steps: int | None = None, train_tokens: int | str | None = None
                 ) -> SpeedAnswer:
    """The speed of ``w`` on ``count`` x ``gpu`` as the CLI and the web API give it: training
    totals for ``steps`` optimizer steps or ``train_tokens`` tokens; a job that does not fit
    gets no speed, only the memory it needs."""
    from whichgpu.estimate.speed import DoesNotFit, estimate_speed, with_total
    from whichgpu.units import parse_count

    training = w.is_training
    if train_tokens is not None and train_tokens != "" and not training:
        raise InputError(msg("speed.train_tokens", "{field} is for training tasks (lora, "
                             "qlora, full-ft, pretrain)", field=Field("train_tokens")))
    if framework and not training:
        raise InputError(msg("workload.framework_training", "{field} is for training tasks "
                             "(lora, qlora, full-ft, pretrain, image-lora)",
                             field=Field("framework")))
    try:
        est = estimate_speed(w, gpu, count, profile=profile, framework=framework,
                             compile=compile)
    except DoesNotFit as exc:
        return SpeedAnswer(w, gpu.id, count, not_fit=exc)
    if training and (steps is not None or (train_tokens is not None and train_tokens != "")):
        # a request's is read as it validated (answers/inputs/values.py TrainingTokens)
        tokens = (float(parse_count(train_tokens, what=TRAIN_TOKENS_WORDS))
                  if train_tokens is not None and train_tokens != "" else None)
        est = with_total(est, steps=steps, tokens=tokens)
    return SpeedAnswer(w, gpu.id, count, est=est)
