"""Build a Workload from the strings a person types (CLI flags, web form fields, JSON)."""

from __future__ import annotations

from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.models.spec import ModelSpec


def parse_resolution(text: str | None) -> tuple[int, int] | None:
    """'1024x1024' -> (1024, 1024)."""
    if not text:
        return None
    try:
        w_, h_ = str(text).lower().replace("*", "x").split("x")
        return int(w_), int(h_)
    except ValueError:
        raise InputError(f"cannot read resolution {text!r}; write it like 1024x1024") from None


def build_workload(model: str | ModelSpec | None, *, task: str = "inference",
                   quant: str | None = None, kv_dtype: str = "f16",
                   context: str | None = None, batch: int = 1,
                   engine: str | None = None, prompt_tokens: str | None = None,
                   output_tokens: str | None = None, optimizer: str = "adamw",
                   gradient_checkpointing: bool | None = None,
                   master_weights: bool | None = None, fused_loss: bool = False,
                   flash_attention: bool = True, lora_rank: int = 16,
                   lora_targets: str = "all-linear", gpus: int = 1, tp: int | None = None,
                   pp: int = 1, zero: int | None = None, resolution: str | None = None,
                   frames: int | None = None, steps: int | None = None,
                   cfg: bool | None = None, offload: str = "none", vae_tiling: bool = False,
                   params: str | None = None, allow_long_context: bool = False):
    """Resolve the model and build a validated Workload from typed values.

    ``model`` may be an already-resolved ModelSpec (the web resolves names itself, never
    reading paths on the server).
    """
    from whichgpu.models import resolve_model
    from whichgpu.units import parse_count

    if isinstance(model, ModelSpec):
        spec = model
    elif model is None and not params:
        raise InputError("name a model (see 'whichgpu models') or give --params, e.g. 70e9")
    else:
        spec = resolve_model(model, params=float(parse_count(params, what="parameter count"))
                             if params else None)
    res = parse_resolution(resolution)
    return Workload(
        model=spec, task=task, quant=quant, kv_dtype=kv_dtype,
        context=parse_count(context, binary=True, what="context") if context else None,
        batch=batch, engine=engine,
        prompt_tokens=parse_count(prompt_tokens, binary=True, what="prompt length")
        if prompt_tokens else None,
        output_tokens=parse_count(output_tokens, binary=True, what="output length")
        if output_tokens else None,
        optimizer=optimizer, gradient_checkpointing=gradient_checkpointing,
        master_weights=master_weights, fused_loss=fused_loss, flash_attention=flash_attention,
        lora_rank=lora_rank,
        lora_targets=tuple(t.strip() for t in lora_targets.split(",") if t.strip()),
        gpus=gpus, tp=tp, pp=pp, zero=zero, resolution=res, frames=frames, steps=steps,
        cfg=cfg, offload=offload, vae_tiling=vae_tiling, allow_long_context=allow_long_context)
