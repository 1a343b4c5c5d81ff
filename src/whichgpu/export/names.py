"""Catalog ids and providers in the launchers' own names (``data/launcher_names.toml``)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg

Launcher = Literal["skypilot", "dstack"]
LAUNCHERS: tuple[Launcher, ...] = ("skypilot", "dstack")
_LABELS = {"skypilot": "SkyPilot", "dstack": "dstack"}


@dataclass(frozen=True)
class DstackGpu:
    name: str
    memory_gb: int  # as gpuhunt lists it (dstack's GB are GiB)
    vendor: str | None = None


@cache
def _data() -> dict[str, Any]:
    text = resources.files("whichgpu.export").joinpath("data/launcher_names.toml").read_text(
        "utf-8")
    return tomllib.loads(text)


def label(launcher: Launcher) -> str:
    return _LABELS[launcher]


def gpu_entries() -> dict[str, dict[str, Any]]:
    return dict(_data()["gpu"])


def provider_entries() -> dict[str, dict[str, Any]]:
    return dict(_data()["provider"])


def _gpu(gpu_id: str, launcher: Launcher) -> dict[str, Any]:
    entry = gpu_entries().get(gpu_id)
    if entry is None or launcher not in entry:  # no name for it in that launcher
        raise InputError(msg("export.no_name", "{launcher} has no name for GPU {gpu} in "
                             "whichgpu's launcher table (export/data/launcher_names.toml); "
                             "pick another option with {field}, or write the task file by "
                             "hand", launcher=label(launcher), gpu=gpu_id,
                             field=Field("export_option")))
    return entry


def skypilot_accelerator(gpu_id: str, cloud: str | None) -> str:
    """SkyPilot's accelerator name for ``gpu_id`` on ``cloud`` (its catalog's name)."""
    entry = _gpu(gpu_id, "skypilot")
    return entry.get("skypilot_clouds", {}).get(cloud or "", entry["skypilot"])


def dstack_gpu(gpu_id: str) -> DstackGpu:
    entry = _gpu(gpu_id, "dstack")
    return DstackGpu(entry["dstack"], int(entry["dstack_memory_gb"]), entry.get("dstack_vendor"))


def provider_key(provider: str) -> str | None:
    """The table's key for a provider as price lists spell it ('Vast.ai' -> 'vast')."""
    p = provider.strip().lower()
    for key, entry in provider_entries().items():
        if p == key or p in (n.lower() for n in entry.get("names", [])):
            return key
    return None


def backend(provider: str, launcher: Launcher) -> str | None:
    """The launcher's cloud (SkyPilot) or backend (dstack) for ``provider``; None if it has
    none."""
    key = provider_key(provider)
    return provider_entries()[key].get(launcher) if key else None


#: SkyPilot's names for the features an export may need (sky.clouds.CloudImplementationFeatures)
Feature = Literal["open_ports", "multi-node", "storage_mounting", "spot_instance",
                  "docker_image"]
_FEATURE_WORDS = {
    "open_ports": msg("export.feature.open_ports", "open ports (the server's port)"),
    "multi-node": msg("export.feature.multi_node", "clusters of several nodes"),
    "storage_mounting": msg("export.feature.storage",
                            "mounting a bucket (the checkpoints' storage)"),
    "spot_instance": msg("export.feature.spot", "spot instances"),
    "docker_image": msg("export.feature.image", "a container image (the ROCm build)")}


def skypilot_unsupported(provider: str) -> frozenset[str]:
    """The export features SkyPilot does not implement on ``provider``'s cloud."""
    key = provider_key(provider)
    return frozenset(provider_entries()[key].get("skypilot_unsupported", ())) if key else \
        frozenset()


def feature_words(feature: str) -> Message | str:
    """A SkyPilot feature in words (a message; an unknown feature as its name)."""
    return _FEATURE_WORDS.get(feature, feature)
