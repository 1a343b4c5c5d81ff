"""Which models ``whichgpu bench model`` can build: its decoder stands in for dense decoder
LLMs only. Apart from the decoder (torch) and the benchmark, which both ask."""

from __future__ import annotations

from whichgpu.errors import InputError
from whichgpu.models.spec import ModelSpec


def check_buildable(spec: ModelSpec) -> None:
    """Refuse models this decoder cannot stand in for, saying why."""
    if spec.family != "decoder":
        raise InputError(f"bench model runs decoder LLMs; {spec.name} is a {spec.family} model")
    if spec.moe is not None:
        raise InputError(f"{spec.name} is a mixture-of-experts model: bench model builds dense "
                         "decoders only (a naive expert loop would measure the wrong thing)")
    if spec.mla is not None:
        raise InputError(f"{spec.name} uses multi-head latent attention, which bench model "
                         "does not build")
    missing = [n for n in ("num_layers", "hidden_size", "num_attention_heads", "head_dim",
                           "intermediate_size", "vocab_size") if not getattr(spec, n)]
    if missing:
        raise InputError(f"{spec.name} lacks {', '.join(missing)} in its config: cannot build it")
