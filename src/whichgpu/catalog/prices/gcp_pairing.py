"""GCP offers from SkyPilot's catalog: a host VM row plus the GPU row of the same zone.

GCP bills the GPUs of a VM as their own SKUs, and SkyPilot's ``gcp/vms.csv`` keeps them apart:
a machine-type row (``a3-highgpu-8g``, ``n1-highmem-4`` ...) carries the host's vCPU and memory
price only, and a row with an AcceleratorName and no InstanceType carries the price of
AcceleratorCount GPUs in one zone. SkyPilot's maintainers say so
(skypilot-org/skypilot-catalog issue 31: "we separate the price for the a2-highgpu-1g to two
parts: the host machine a2-highgpu-1g and the A100 GPU"), and ``sky show-gpus`` adds the two.

This module pairs them the way SkyPilot does, read from ``sky/catalog/gcp_catalog.py``
(skypilot-org/skypilot@005261080a6b8102f3d95ff2147a855250f40272, ``list_accelerators`` and its
``_get_host_instance_type``): in the GPU row's own region and zone, among the priced host rows,

* a GPU with fixed machine types (A100, A100-80GB, L4, H100, H100-MEGA, H200, B200) takes the
  cheapest of the machine types listed for its count (:data:`HOST_MACHINE_TYPES`);
* any other GPU (T4, V100, P100, P4, K80) takes the cheapest N1 machine (n1-standard,
  n1-highmem, n1-highcpu) with at least :data:`N1_HOST_VCPUS` vCPUs for its count and
  :data:`N1_MEMORY_PER_VCPU_GIB` GiB of memory per such vCPU.

The offer's on-demand price is host + GPU; its spot price is host spot + GPU spot where both
exist (SkyPilot's sum, which is empty when either is). A GPU row with no host row in its zone is
reported, never priced alone. TPU rows are not GPUs and are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: SkyPilot's ``_ACC_INSTANCE_TYPE_DICTS``: GPU name -> GPU count -> host machine types.
HOST_MACHINE_TYPES: dict[str, dict[int, tuple[str, ...]]] = {
    "A100": {1: ("a2-highgpu-1g",), 2: ("a2-highgpu-2g",), 4: ("a2-highgpu-4g",),
             8: ("a2-highgpu-8g",), 16: ("a2-megagpu-16g",)},
    "A100-80GB": {1: ("a2-ultragpu-1g",), 2: ("a2-ultragpu-2g",), 4: ("a2-ultragpu-4g",),
                  8: ("a2-ultragpu-8g",)},
    "L4": {1: ("g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16",
               "g2-standard-32"),
           2: ("g2-standard-24",), 4: ("g2-standard-48",), 8: ("g2-standard-96",)},
    "H100": {1: ("a3-highgpu-1g",), 2: ("a3-highgpu-2g",), 4: ("a3-highgpu-4g",),
             8: ("a3-highgpu-8g",)},
    "H100-MEGA": {8: ("a3-megagpu-8g",)},
    "H200": {8: ("a3-ultragpu-8g",)},
    "B200": {8: ("a4-highgpu-8g",)},
}
#: SkyPilot's ``_NUM_ACC_TO_NUM_CPU``: the least vCPUs of an N1 host per GPU name and count.
N1_HOST_VCPUS: dict[str, dict[int, int]] = {
    "K80": {1: 4, 2: 8, 4: 16, 8: 32, 16: 64},
    "V100": {1: 8, 2: 16, 4: 32, 8: 64},
    "T4": {1: 4, 2: 8, 4: 48},
    "P100": {1: 8, 2: 16, 4: 32, 8: 64},
    "DEFAULT": {1: 8, 2: 16, 4: 32, 8: 64, 16: 128},
}
#: SkyPilot's ``_DEFAULT_GPU_MEMORY_CPU_RATIO``: host memory (GiB) at least 4x its vCPUs.
N1_MEMORY_PER_VCPU_GIB = 4
N1_FAMILIES = ("n1-standard-", "n1-highmem-", "n1-highcpu-")


@dataclass(frozen=True)
class HostRow:
    """A GCP machine-type row without a GPU: the host VM's own price in one zone."""

    instance: str
    vcpus: float
    memory_gib: float
    region: str
    zone: str
    price: float | None
    spot: float | None


@dataclass(frozen=True)
class GpuRow:
    """A GCP accelerator row: the price of ``count`` GPUs in one zone, without a VM."""

    accelerator: str
    count: int
    region: str
    zone: str
    price: float | None
    spot: float | None
    info: str | None


@dataclass(frozen=True)
class Paired:
    """A GPU row with the host SkyPilot would attach it to."""

    gpu: GpuRow
    host: HostRow

    @property
    def price(self) -> float | None:
        return _add(self.host.price, self.gpu.price)

    @property
    def spot(self) -> float | None:
        return _add(self.host.spot, self.gpu.spot)


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a + b, 5)


def host_candidates(accelerator: str, count: int) -> Callable[[HostRow], bool] | None:
    """Which host rows may carry ``count`` x ``accelerator`` (None: no host for that count)."""
    fixed = HOST_MACHINE_TYPES.get(accelerator)
    if fixed is not None:
        names = fixed.get(count)
        return None if names is None else (lambda h: h.instance in names)
    vcpus = N1_HOST_VCPUS.get(accelerator, N1_HOST_VCPUS["DEFAULT"]).get(count)
    if vcpus is None:
        return None
    memory = vcpus * N1_MEMORY_PER_VCPU_GIB
    return lambda h: (h.instance.startswith(N1_FAMILIES) and h.vcpus >= vcpus
                      and h.memory_gib >= memory)


def pair(gpus: list[GpuRow], hosts: list[HostRow]) -> tuple[list[Paired], dict[str, int]]:
    """Each GPU row with its cheapest eligible host in the same zone, and what could not be
    paired (reason -> rows). Deterministic: ties go to the machine type first by name."""
    by_zone: dict[tuple[str, str], list[HostRow]] = {}
    for h in hosts:
        if h.price is not None:
            by_zone.setdefault((h.region, h.zone), []).append(h)
    paired: list[Paired] = []
    unpaired: dict[str, int] = {}
    for g in gpus:
        fits = host_candidates(g.accelerator, g.count)
        if fits is None:
            why = f"GCP GPU row with no host machine type for {g.count} x {g.accelerator}"
            unpaired[why] = unpaired.get(why, 0) + 1
            continue
        options = [h for h in by_zone.get((g.region, g.zone), []) if fits(h)]
        if not options:
            why = (f"GCP GPU row with no host VM row in its zone (not priced alone): "
                   f"{g.count} x {g.accelerator}")
            unpaired[why] = unpaired.get(why, 0) + 1
            continue
        host = min(options, key=lambda h: (h.price, h.instance))
        paired.append(Paired(g, host))
    return paired, unpaired
