"""Build a Workload from the strings a person types (CLI flags, web form fields, JSON)."""

from __future__ import annotations

from typing import cast

from whichgpu.errors import InputError
from whichgpu.estimate.workload import Backend, Workload
from whichgpu.messages import Field, msg
from whichgpu.models.spec import ModelSpec
from whichgpu.vocabulary import Engine, Task

PARAMS_WORDS = msg("what.params", "parameter count")
_CONTEXT = msg("what.context", "context")
_PROMPT = msg("what.prompt", "prompt length")
_OUTPUT = msg("what.output", "output length")
_TRAIN_TOKENS = msg("what.train_tokens", "number of training tokens")


def parse_resolution(text: str | None) -> tuple[int, int] | None:
    """'1024x1024' -> (1024, 1024)."""
    if not text:
        return None
    try:
        w_, h_ = str(text).lower().replace("*", "x").split("x")
        return int(w_), int(h_)
    except ValueError:
        raise InputError(msg("resolution.unreadable", "cannot read resolution {v!r}; write it "
                             "like 1024x1024", v=text)) from None


def build_workload(model: str | ModelSpec | None, *, task: Task | str = Task.INFERENCE,
                   quant: str | None = None, kv_dtype: str = "f16",
                   context: str | None = None, batch: int = 1,
                   engine: Engine | str | None = None, prompt_tokens: str | None = None,
                   output_tokens: str | None = None, optimizer: str | None = None,
                   gradient_checkpointing: bool | None = None,
                   master_weights: bool | None = None, fused_loss: bool | None = None,
                   flash_attention: bool = True, lora_rank: int | None = None,
                   lora_targets: str | None = None, gpus: int = 1, tp: int | None = None,
                   pp: int = 1, zero: int | None = None, resolution: str | None = None,
                   frames: int | None = None, steps: int | None = None,
                   cfg: bool | None = None, offload: str = "none", vae_tiling: bool = False,
                   params: str | None = None, allow_long_context: bool = False,
                   framework: str | None = None, activation_offloading: bool | None = None,
                   loss: str | None = None, fp8_training: bool = False,
                   gpu_layers: int | None = None, n_cpu_moe: int | None = None,
                   cpu_moe: bool = False, override_tensor: list[str] | str | None = None,
                   host_ram: str | None = None, host_memory: str | None = None,
                   host_bandwidth: str | None = None, engine_version: str | None = None,
                   ubatch: int | None = None, mmap: bool = True,
                   imatrix: bool | None = None, backend: str | None = None,
                   speculative: str | None = None, draft_tokens: int | None = None,
                   lora_adapters: int | None = None,
                   interconnect: str | None = None, gpus_per_node: int | None = None):
    """Resolve the model and build a validated Workload from typed values.

    ``model`` may be an already-resolved ModelSpec (the web resolves names itself, never
    reading paths on the server). ``framework`` (training) fills every setting left as None
    (optimizer, checkpointing, activation offloading, loss, LoRA rank and targets, the QLoRA
    base format ...) from that framework's defaults (estimate/frameworks.py); what is still
    unset takes the engine-neutral defaults (AdamW, LoRA rank 16 on all linears).
    llama.cpp's offload flags: ``gpu_layers`` (-ngl), ``n_cpu_moe`` / ``cpu_moe`` and
    ``override_tensor`` (-ot ``PATTERN=DEVICE``, several comma-separated as llama.cpp reads
    them); the host: ``host_ram`` (``64GB``), ``host_memory`` (``ddr5-6000x2``),
    ``host_bandwidth`` (``90GB/s``); ``ubatch`` (-ub), ``mmap`` (False for --no-mmap) and
    ``imatrix`` (whether the GGUF used an importance matrix); ``backend``: llama.cpp's GPU
    backend (cuda, vulkan, rocm, metal, sycl; None: the card's own); ``speculative``: mtp,
    eagle or draft:MODEL, with ``draft_tokens`` per verify step (estimate/speculative.py).
    ``interconnect``: the link between servers (``100gbe``, ``ib-ndr``; None: the default
    network) and ``gpus_per_node`` the GPUs of one server (None: 8).
    """
    from whichgpu.estimate.frameworks import apply_framework, canonical
    from whichgpu.estimate.host import parse_host
    from whichgpu.estimate.speculative import parse_speculative
    from whichgpu.models import resolve_model
    from whichgpu.units import parse_count

    if isinstance(model, ModelSpec):
        spec = model
    elif model is None and not params:
        raise InputError(msg("model.name_or_params", "name a model (see 'whichgpu models') or "
                             "give {params}, e.g. 70e9", params=Field("params")))
    else:
        spec = resolve_model(model, params=float(parse_count(params, what=PARAMS_WORDS))
                             if params else None)
    res = parse_resolution(resolution)
    if framework:
        framework = canonical(framework)
    chosen = apply_framework(framework, task, {
        "optimizer": optimizer, "gradient_checkpointing": gradient_checkpointing,
        "activation_offloading": activation_offloading, "loss": loss,
        "master_weights": master_weights, "optimizer_in_backward": None,
        "selective_checkpointing": None,
        "lora_rank": lora_rank, "lora_targets": lora_targets, "quant": quant})
    if fused_loss and chosen["loss"] is None:
        chosen["loss"] = "fused"
    lora_targets = chosen["lora_targets"] or "all-linear"
    cpu_moe_layers = spec.num_layers if cpu_moe else (n_cpu_moe or 0)
    host = (parse_host(host_ram, host_memory, host_bandwidth)
            if host_ram or host_memory or host_bandwidth else None)
    return Workload(
        # Workload reads a task's or an engine's word as its member (or names the unknown one)
        model=spec, task=cast(Task, task), quant=chosen["quant"], kv_dtype=kv_dtype,
        context=parse_count(context, binary=True, what=_CONTEXT) if context else None,
        batch=batch, engine=cast(Engine | None, engine),
        prompt_tokens=parse_count(prompt_tokens, binary=True, what=_PROMPT)
        if prompt_tokens else None,
        output_tokens=parse_count(output_tokens, binary=True, what=_OUTPUT)
        if output_tokens else None,
        optimizer=chosen["optimizer"] or "adamw",
        gradient_checkpointing=chosen["gradient_checkpointing"],
        master_weights=chosen["master_weights"], fused_loss=bool(fused_loss),
        flash_attention=flash_attention, lora_rank=chosen["lora_rank"] or 16,
        lora_targets=tuple(t.strip() for t in lora_targets.split(",") if t.strip()),
        gpus=gpus, tp=tp, pp=pp, zero=zero, resolution=res, frames=frames, steps=steps,
        cfg=cfg, offload=offload, vae_tiling=vae_tiling, allow_long_context=allow_long_context,
        framework=framework, activation_offloading=chosen["activation_offloading"],
        loss=chosen["loss"], optimizer_in_backward=bool(chosen["optimizer_in_backward"]),
        selective_checkpointing=chosen["selective_checkpointing"],
        fp8_training=fp8_training,
        gpu_layers=gpu_layers, cpu_moe_layers=cpu_moe_layers,
        tensor_overrides=parse_overrides(override_tensor), host=host,
        engine_version=engine_version or None, ubatch=ubatch, mmap=mmap, imatrix=imatrix,
        backend=cast(Backend | None, backend or None),  # Workload checks the name
        speculative=parse_speculative(speculative, draft_tokens, spec),
        lora_adapters=lora_adapters or 0,
        interconnect=_interconnect(interconnect), gpus_per_node=gpus_per_node)


def _interconnect(text: str | None) -> str | None:
    """The link's id (``100GbE`` is ``100gbe``); an unknown one is an input error."""
    from whichgpu.estimate.interconnect import parse_interconnect

    ident = parse_interconnect(text)
    return str(ident) if ident is not None else None


def parse_overrides(values: list[str] | str | None) -> tuple[tuple[str, str], ...]:
    """llama.cpp's ``-ot``: ``PATTERN=DEVICE``, several per value separated by commas, split
    at the first '=' (common/arg.cpp reads them so)."""
    if not values:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    out = []
    for value in items:
        for part in str(value).split(","):
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
                 framework: str | None = None, compile: bool = False,
                 steps: int | None = None, train_tokens: str | None = None) -> SpeedAnswer:
    """The speed of ``w`` on ``count`` x ``gpu`` as the CLI and the web API give it: training
    totals for ``steps`` optimizer steps or ``train_tokens`` tokens; a job that does not fit
    gets no speed, only the memory it needs."""
    from whichgpu.estimate.speed import DoesNotFit, estimate_speed, with_total
    from whichgpu.units import parse_count

    training = w.is_training
    if train_tokens and not training:
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
    if training and (steps is not None or train_tokens):
        tokens = (float(parse_count(train_tokens, what=_TRAIN_TOKENS))
                  if train_tokens else None)
        est = with_total(est, steps=steps, tokens=tokens)
    return SpeedAnswer(w, gpu.id, count, est=est)
