"""Training frameworks as data: the settings each one uses unless told otherwise.

``--framework unsloth`` means Unsloth's own defaults (offloaded gradient checkpointing, fused
cross-entropy, 8-bit AdamW ...); ``--framework torchtune`` a torchtune recipe's (paged 8-bit
AdamW stepped inside backward, activation checkpointing ...). The profiles live in
``data/training_frameworks.toml``, each value with its source; :func:`framework_defaults` gives
the settings for one task, and :func:`apply_framework` fills the ones a caller left unset.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from whichgpu.errors import InputError
from whichgpu.messages import Join, Message, data_text, msg
from whichgpu.vocabulary import Task


class Framework(StrEnum):
    """A training framework's profile (``--framework``): one member per entry of
    ``data/training_frameworks.toml``, and back (:func:`profiles` refuses an entry without one;
    tests/project/test_framework_vocabulary.py checks both ways). People's spellings and the
    aliases (peft, trl, hf) are read by :func:`framework_id`."""

    PYTORCH = "pytorch"
    TRANSFORMERS = "transformers"
    UNSLOTH = "unsloth"
    TORCHTUNE = "torchtune"
    AXOLOTL = "axolotl"
    LLM_FOUNDRY = "llm-foundry"
    TORCHTITAN = "torchtitan"
    MEGATRON = "megatron"


# The Workload settings a profile may set (anything else in the file is an error).
SETTINGS = ("optimizer", "gradient_checkpointing", "selective_checkpointing",
            "activation_offloading", "loss", "master_weights", "optimizer_in_backward",
            "lora_rank", "lora_targets", "adapter_bytes", "qlora_quant", "fused_mlp_backward",
            # read by the memory model itself (multi-GPU sharding): FSDP's gradient-reduction
            # dtype in bytes, and what FSDP keeps gathered from forward through backward
            "fsdp_reduce_bytes", "fsdp_resident",
            # bytes per logit element of the framework's own full-logits loss (Megatron with
            # Transformer Engine's fused cross-entropy: 2, against transformers' 16)
            "logits_bytes_per_element",
            # Megatron's sequence parallelism: with TP, the activations TP leaves whole are
            # sharded over the TP ranks as well
            "sequence_parallel",
            # under FP8 training, the linears keep their inputs for backward in FP8
            # (Transformer Engine), not in bf16
            "fp8_saved_inputs",
            # a gated MLP's activation saves only the gate-and-up output and recomputes SiLU in
            # backward (Megatron Core's fused SwiGLU)
            "fused_swiglu",
            # the framework runs transformers' own MoE code: a training loop over stacked
            # experts (gpt-oss) that copies each expert's weights by indexing
            "stacked_expert_loop",
            # bytes per gradient element the framework keeps for full training (Megatron's
            # grad_reduce_in_fp32: fp32 main_grad buffers, 4)
            "grad_bytes")
# What FSDP keeps gathered from forward through backward (``fsdp_resident``): the root unit's
# parameters (the embedding and the output head, outside every wrapped block), or only the
# output head (torchtitan shards the embedding on its own and keeps [norm, output] gathered), or
# nothing (torchtune's custom_sharded_layers shards both as units of their own).
FSDP_RESIDENT = ("embedding+head", "head", "none")


@dataclass(frozen=True)
class FrameworkProfile:
    """One framework's defaults per task group, with where they come from."""

    name: Framework
    title: str
    sources: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    lora: dict[str, Any] = field(default_factory=dict)  # LoRA (and QLoRA unless overridden)
    qlora: dict[str, Any] = field(default_factory=dict)  # QLoRA's differences from ``lora``
    full: dict[str, Any] = field(default_factory=dict)  # full fine-tuning and pre-training
    pretrain: dict[str, Any] = field(default_factory=dict)  # pre-training's differences

    def settings(self, task: Task) -> dict[str, Any]:
        """The defaults for ``task`` (lora, qlora, full-ft, pretrain; others: none)."""
        if task == Task.LORA:
            return dict(self.lora)
        if task == Task.QLORA:
            return {**self.lora, **self.qlora}
        if task == Task.PRETRAIN:
            return {**self.full, **self.pretrain}
        if task == Task.FULL_FT:
            return dict(self.full)
        return {}


@cache
def profiles() -> dict[Framework, FrameworkProfile]:
    text = resources.files("whichgpu.estimate").joinpath(
        "data/training_frameworks.toml").read_text("utf-8")
    raw = tomllib.loads(text)["framework"]
    out = {}
    for name, entry in raw.items():
        groups = {}
        for group in ("lora", "qlora", "full", "pretrain"):
            values = dict(entry.get(group, {}))
            unknown = set(values) - set(SETTINGS)
            if unknown:
                raise ValueError(f"training_frameworks.toml: {name}.{group} has unknown "
                                 f"settings {sorted(unknown)}")
            if values.get("fsdp_resident", FSDP_RESIDENT[0]) not in FSDP_RESIDENT:
                raise ValueError(f"training_frameworks.toml: {name}.{group}.fsdp_resident must "
                                 f"be one of {FSDP_RESIDENT}")
            groups[group] = values
        try:
            member = Framework(name)
        except ValueError:
            raise ValueError(f"training_frameworks.toml: {name} is not a Framework member "
                             "(estimate/frameworks.py)") from None
        out[member] = FrameworkProfile(member, entry["title"], tuple(entry["sources"]),
                                     tuple(entry.get("aliases", ())), **groups)
    return out


def framework_names() -> tuple[Framework, ...]:
    return tuple(profiles())


def framework_id(name: str, said: str | None = None) -> Framework:
    """The profile name for a profile name or one of its aliases (data/training_frameworks.toml);
    people's spellings are read in answers/inputs/framework.py. An unknown name is an input
    error naming the closest ones (``said``: the text as typed, for the message)."""
    table = profiles()
    if name in table:
        return Framework(name)
    for p in table.values():
        if name in p.aliases:
            return p.name
    shown = name if said is None else said
    known = list(table) + [a for p in table.values() for a in p.aliases]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if close:
        raise InputError(msg("choice.framework.near", "unknown training framework {v!r}; did "
                             "you mean {near}? (use one of {choices})", v=shown,
                             near=", ".join(close), choices=", ".join(table)))
    raise InputError(msg("choice.framework", "unknown training framework {v!r} (use one of "
                         "{choices})", v=shown, choices=", ".join(table)))


def get_framework(name: str) -> FrameworkProfile:
    return profiles()[framework_id(name)]


def framework_defaults(name: Framework | None, task: Task) -> dict[str, Any]:
    """The settings framework ``name`` uses for ``task`` (empty for None or a non-training
    task)."""
    if not name:
        return {}
    return get_framework(name).settings(task)


def apply_framework(name: Framework | None, task: Task, given: dict[str, Any]) -> dict[str, Any]:
    """``given`` (a caller's settings, None meaning unset) with the unset ones taken from the
    framework's defaults; ``adapter_bytes`` and ``qlora_quant`` are returned too, as the
    profile states them (the memory model reads the first, the QLoRA base format the second)."""
    defaults = framework_defaults(name, task)
    out = dict(given)
    for key, value in defaults.items():
        if key == "qlora_quant":
            if task == Task.QLORA and out.get("quant") is None:
                out["quant"] = value
            continue
        if key in ("adapter_bytes", "fused_mlp_backward", "fsdp_reduce_bytes",
                   "fsdp_resident", "logits_bytes_per_element",
                   "sequence_parallel", "fp8_saved_inputs",
                   "fused_swiglu", "stacked_expert_loop",
                   "grad_bytes"):  # read by the memory model
            continue
        if out.get(key) is None:
            out[key] = value
    return out


def describe(name: Framework, task: Task) -> list[Message]:
    """What a framework sets for this task, for the estimate's assumptions: the settings in
    one line (joined by '; '), where they come from in another."""
    p = get_framework(name)
    s = p.settings(task)
    if not s:
        return [msg("framework.none", "framework {name} ({title}): no memory defaults for "
                    "{task}", name=p.name, title=data_text(p.title), task=task)]
    parts: list[Message] = []
    if s.get("selective_checkpointing"):
        parts.append(msg("framework.selective", "selective (op-level) activation "
                         "checkpointing"))
    if s.get("gradient_checkpointing"):
        parts.append(msg("framework.checkpointing.offloaded", "gradient checkpointing with the "
                         "kept activations offloaded to CPU RAM")
                     if s.get("activation_offloading") else
                     msg("framework.checkpointing", "gradient checkpointing"))
    if s.get("loss") == "fused":
        parts.append(msg("framework.fused_loss", "fused/chunked cross-entropy (no full "
                         "logits)"))
    elif s.get("loss") == "chunked":
        parts.append(msg("framework.chunked_loss", "cross-entropy in fp32 per output chunk"))
    elif s.get("logits_bytes_per_element", 16) <= 2:
        parts.append(msg("framework.vocab_parallel_loss", "fused vocab-parallel cross-entropy "
                         "({bytes} bytes per logit: fp32 only inside the kernel, the gradient "
                         "written over the bf16 logits)", bytes=s["logits_bytes_per_element"]))
    elif s.get("logits_bytes_per_element"):
        parts.append(msg("framework.vocab_parallel_loss.native", "vocab-parallel "
                         "cross-entropy ({bytes} bytes per logit: one fp32 softmax, which "
                         "becomes its own gradient, beside the bf16 logits)",
                         bytes=s["logits_bytes_per_element"]))
    elif s.get("loss") == "compiled":
        parts.append(msg("framework.compiled_loss", "cross-entropy compiled with the model "
                         "(bf16 logits and gradient only)"))
    if s.get("sequence_parallel"):
        parts.append(msg("framework.sequence_parallel", "sequence parallelism with tensor "
                         "parallelism"))
    if s.get("fused_swiglu"):
        parts.append(msg("framework.fused_swiglu", "fused SwiGLU (SiLU recomputed in "
                         "backward)"))
    if s.get("grad_bytes", 0) >= 4:
        parts.append(msg("framework.fp32_grads", "gradients kept and reduced in fp32"))
    if s.get("optimizer"):
        parts.append(msg("framework.optimizer", "optimizer {optimizer}",
                         optimizer=s["optimizer"]))
    if s.get("optimizer_in_backward"):
        parts.append(msg("framework.in_backward", "optimizer step fused into backward"))
    if s.get("master_weights") is False:
        parts.append(msg("framework.pure_bf16", "pure bf16 (no fp32 master copy)"))
    if "lora_rank" in s:
        parts.append(msg("framework.lora", "LoRA rank {rank} on {targets}",
                         rank=s["lora_rank"], targets=s.get("lora_targets", "all-linear")))
    if s.get("adapter_bytes") == 2:
        parts.append(msg("framework.bf16_adapters", "bf16 adapters"))
    return [msg("framework.defaults", "framework {name} defaults: {settings}", name=p.name,
                settings=Join(parts, "; ")),
            msg("framework.sources", "{name} defaults from {source}", name=p.name,
                source=p.sources[0])]
