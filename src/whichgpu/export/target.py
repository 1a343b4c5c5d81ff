"""Where an option runs, in launcher terms: provider, region, instance, GPUs per node, nodes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from whichgpu.errors import InputError
from whichgpu.export.names import Launcher, backend, label

if TYPE_CHECKING:
    from whichgpu.advise.recommend import Option

SERVER_GPUS = 8  # GPUs one node holds (HGX/DGX boards): more is a cluster of nodes
_DISK_FLOOR_GB = 100  # the OS, CUDA, the engine and its caches
_DISK_STEP_GB = 50


@dataclass(frozen=True)
class Target:
    """The machine(s) an option runs on, as a launcher asks for them."""

    cloud: str  # the launcher's cloud / backend name
    provider: str  # as the price list spells it
    region: str | None
    instance_type: str | None  # None when the option is not one instance of the offer
    gpus_per_node: int
    nodes: int
    spot: bool
    disk_gb: int  # per node, GB (10^9 bytes)
    price_per_node_hour: float  # what the estimate paid per node and hour, offer currency
    currency: str
    notes: tuple[str, ...] = ()


def target(option: Option, launcher: Launcher) -> Target:
    """The option's machines, or an InputError saying why ``launcher`` cannot express it."""
    offer = option.offer
    if offer.offer_set == "owned" or offer.provider == "you (owned)":
        raise InputError(f"option {option.label} is your own card: {label(launcher)} launches "
                         "rented machines (for your own machine, run the engine directly, or "
                         "register it with the launcher: SkyPilot's ssh node pools, dstack's "
                         "ssh fleets)")
    cloud = backend(offer.provider, launcher)
    if cloud is None:
        other: Launcher = "dstack" if launcher == "skypilot" else "skypilot"
        alt = backend(offer.provider, other)
        hint = f"use --export {other}, which has one, or " if alt else ""
        raise InputError(f"{label(launcher)} has no backend for {offer.provider} (option "
                         f"{option.label}): {hint}pick an option on another provider with "
                         "--export-option N, or narrow the price list with --prices")
    per_replica = option.count
    notes: list[str] = []
    if per_replica <= offer.gpu_count:
        gpus, nodes, instance = offer.gpu_count, 1, offer.instance_type
        if offer.gpu_count > per_replica:
            notes.append(f"the {offer.gpu_count}-GPU instance is rented whole ({per_replica} "
                         "used)")
        price = offer.price_per_hour.amount
    elif per_replica <= SERVER_GPUS:
        gpus, nodes, instance = per_replica, 1, None
        price = offer.price_per_gpu_hour.amount * per_replica
        notes.append(f"one {per_replica}-GPU machine asked for without an instance type: the "
                     f"estimate priced {math.ceil(per_replica / offer.gpu_count)} x "
                     f"{offer.provider}'s {offer.gpu_count}-GPU offer as one server")
    else:
        gpus = offer.gpu_count if offer.gpu_count >= SERVER_GPUS else SERVER_GPUS
        nodes = math.ceil(per_replica / gpus)
        instance = offer.instance_type if offer.gpu_count == gpus else None
        price = offer.price_per_gpu_hour.amount * gpus
        notes.append(f"a cluster of {nodes} nodes of {gpus} GPUs")
    if option.replicas > 1:
        notes.append(f"this file runs one replica; the estimate runs {option.replicas} "
                     "(launch it that many times, or as a service with replicas)")
    return Target(cloud, offer.provider, offer.region, instance, gpus, nodes, offer.spot,
                  disk_gb(option), price, offer.price_per_hour.currency, tuple(notes))


def disk_gb(option: Option) -> int:
    """Disk per node: the weights (and, training, two checkpoints) with room for the OS,
    the engine and its caches, rounded up to 50 GB."""
    from whichgpu.advise.spot_risk import job_bytes

    w = option.workload
    if w is None:
        return _DISK_FLOOR_GB
    ckpt, load = job_bytes(w)
    need = (load + 2 * ckpt) / 1e9 * 1.2 + _DISK_FLOOR_GB
    return int(math.ceil(need / _DISK_STEP_GB) * _DISK_STEP_GB)
