"""What a diffusion LoRA trainer keeps on the GPU: the text encoders and the VAE, cached or live.

Trainers differ: musubi-tuner, OneTrainer and SimpleTuner compute the text embeddings and the
VAE latents before training and leave only the denoiser on the GPU; kohya's sd-scripts and
ai-toolkit keep the text encoders and the VAE resident unless told to cache; diffusers' scripts
cache the prompt embeddings but keep the VAE. ``--framework NAME`` (``image-lora``) takes the
trainer's defaults from ``data/diffusion_trainers.toml`` (each with its source);
``--cache-embeddings`` / ``--no-cache-embeddings`` overrides both.

Block swap (``--blocks-to-swap N``, kohya's and musubi-tuner's ``--blocks_to_swap``): N of the
denoiser's blocks live in host RAM and are copied in for their forward and backward.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from whichgpu.errors import InputError
from whichgpu.messages import Message, msg

#: the trainer assumed when none is named: the engine's own scripts
DEFAULT_TRAINER = "diffusers"
# musubi-tuner's Qwen-Image table: 64 GB of main RAM recommended with 45 of 60 blocks swapped
BLOCK_SWAP_SOURCE = ("https://github.com/kohya-ss/musubi-tuner/blob/30c658c4f4b0bf05038b3346e"
                     "ff9670259b10fc7/docs/qwen_image.md (VRAM Usage Estimates: 42 GB bf16, 30 "
                     "GB fp8, 24 GB with 16 blocks swapped, 12 GB with 45)")


@dataclass(frozen=True)
class Trainer:
    """One trainer's residency defaults, with where they come from."""

    name: str
    title: str
    text_encoders_cached: bool
    latents_cached: bool
    source: str
    aliases: tuple[str, ...] = ()


@cache
def trainers() -> dict[str, Trainer]:
    raw = tomllib.loads(resources.files("whichgpu.estimate").joinpath(
        "data/diffusion_trainers.toml").read_text("utf-8"))["trainer"]
    return {name: Trainer(name=name, title=v["title"],
                          text_encoders_cached=bool(v["text_encoders_cached"]),
                          latents_cached=bool(v["latents_cached"]), source=v["source"],
                          aliases=tuple(v.get("aliases", ()))) for name, v in raw.items()}


def trainer_name(text: str | None) -> str | None:
    """The trainer's canonical name for ``text`` (a name or an alias), None if it names none."""
    if not text:
        return None
    key = text.strip().lower()
    for t in trainers().values():
        if key == t.name or key in t.aliases:
            return t.name
    return None


def is_trainer(text: str | None) -> bool:
    return trainer_name(text) is not None


@dataclass(frozen=True)
class Residency:
    """What stays on the GPU while the LoRA trains, and why."""

    text_encoders: bool
    vae: bool
    trainer: Trainer
    said: Message


def residency(framework: str | None, cache_embeddings: bool | None) -> Residency:
    """The text encoders' and the VAE's residency: ``cache_embeddings`` as asked, else the
    trainer's defaults (diffusers' scripts when none is named)."""
    name = trainer_name(framework) or DEFAULT_TRAINER
    t = trainers()[name]
    if cache_embeddings is not None:
        te_live = vae_live = not cache_embeddings
        said = (msg("trainer.cached", "text embeddings and latents cached before training "
                    "(as asked): the text encoders and the VAE are not on the GPU")
                if cache_embeddings else
                msg("trainer.live", "text encoders and VAE kept on the GPU (as asked): they "
                    "encode every batch"))
    else:
        te_live, vae_live = not t.text_encoders_cached, not t.latents_cached
        said = msg("trainer.default", "{trainer}'s default: text encoders {te}, VAE {vae}",
                   trainer=t.title,
                   te=msg("trainer.te_cached", "cached (embeddings computed first)")
                   if not te_live else msg("trainer.te_live", "on the GPU"),
                   vae=msg("trainer.vae_cached", "cached (latents computed first)")
                   if not vae_live else msg("trainer.vae_live", "on the GPU"))
    return Residency(text_encoders=te_live, vae=vae_live, trainer=t, said=said)


def check_blocks_to_swap(n: int, blocks: int) -> None:
    """Refuse a block count the denoiser does not have (one block stays to compute in)."""
    if n < 0 or (blocks and n >= blocks):
        raise InputError(msg("trainer.blocks", "blocks to swap must be between 0 and {n} (the "
                             "diffusion model has {blocks} blocks)", n=max(blocks - 1, 0),
                             blocks=blocks))
