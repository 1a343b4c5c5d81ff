"""A Workload from typed settings, with a training framework's defaults filling the unset ones.

The answer layer (``answers/inputs/workload.py``) reads what people type into these typed
values; a caller inside the engine (the RL plan, the validation tables) calls this directly.
Every default is the Workload's own: a setting left as None is not passed on.
"""

from __future__ import annotations

from typing import Any

from whichgpu.errors import InputError
from whichgpu.estimate.frameworks import Framework
from whichgpu.estimate.workload import Workload
from whichgpu.models.spec import ModelSpec
from whichgpu.vocabulary import Task

# the settings a framework profile may fill (estimate/data/training_frameworks.toml)
_FRAMEWORK_SETTINGS = ("optimizer", "gradient_checkpointing", "activation_offloading", "loss",
                       "master_weights", "optimizer_in_backward", "selective_checkpointing",
                       "lora_rank", "lora_targets", "quant")


def configure_workload(spec: ModelSpec, *, task: Task = Task.INFERENCE,
                       framework: Framework | None = None, fused_loss: bool | None = None,
                       cpu_moe: bool = False, n_cpu_moe: int | None = None,
                       allow_long_context: bool | None = None,
                       **settings: Any) -> Workload:
    """A validated Workload of ``spec``: ``framework`` (a profile's canonical name) fills each
    of its settings left as None (optimizer, checkpointing, loss, LoRA rank and targets, the
    QLoRA base format ...); ``fused_loss`` means the fused loss unless one is named;
    ``cpu_moe`` keeps every layer's experts in host RAM, ``n_cpu_moe`` the first N layers'.
    ``allow_long_context``: True allows a context beyond the model's trained maximum; None is a
    question with no way to allow it (its refusal then names only the context), as given.
    Every other keyword is a Workload field, passed on when it is not None."""
    from whichgpu.estimate.frameworks import apply_framework

    given = {k: settings.pop(k, None) for k in _FRAMEWORK_SETTINGS}
    chosen = apply_framework(framework, task, given)
    if fused_loss and chosen["loss"] is None:
        chosen["loss"] = "fused"
    # FP8 training as a precision (issue 29): an FP8 format on full fine-tuning or pre-training
    # means FP8 matmuls on bf16 weights (Transformer Engine, torchao float8), not FP8 weights
    quant = chosen["quant"]
    if task in (Task.FULL_FT, Task.PRETRAIN) and quant and _fp8_compute(quant):
        chosen["quant"] = None
        settings["fp8_training"] = True
    targets = chosen["lora_targets"]
    if isinstance(targets, str):  # a profile writes them as PEFT does: "q_proj,v_proj"
        targets = tuple(t.strip() for t in targets.split(",") if t.strip())
    chosen["lora_targets"] = targets or None
    chosen["optimizer_in_backward"] = bool(chosen["optimizer_in_backward"])
    values = {k: v for k, v in {**settings, **chosen}.items() if v is not None}
    return Workload(model=spec, task=task,
                    framework=framework, fused_loss=bool(fused_loss),
                    allow_long_context=allow_long_context,
                    cpu_moe_layers=spec.num_layers if cpu_moe else (n_cpu_moe or 0), **values)


def _fp8_compute(quant: str) -> bool:
    """Whether ``quant`` names an FP8 format (fp8, fp8-e4m3, float8 ...); unknown names are
    left for the Workload to refuse."""
    from whichgpu.models.quant import get_quant

    try:
        return get_quant(quant).compute == "fp8"
    except InputError:
        return False
