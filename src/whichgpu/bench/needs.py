"""What measuring needs, checked before anything runs, with a message that says what is missing.

``whichgpu bench`` and ``bench model`` need PyTorch built with CUDA and an NVIDIA GPU that it
can see; nvidia-ml-py (or nvidia-smi) reads the cards' names, clocks and power limits. All of
it comes with ``pip install 'whichgpu[bench]'`` on a machine with the NVIDIA driver.
"""

from __future__ import annotations

from typing import Any

from whichgpu.bench.detect import BenchUnavailable, GpuInfo, detect_gpus, with_catalog

INSTALL = "pip install 'whichgpu[bench]'"


def import_torch(what: str = "whichgpu bench") -> Any:
    """PyTorch, or a BenchUnavailable that says how to get it."""
    try:
        import torch
    except ImportError:
        raise BenchUnavailable(f"{what} needs PyTorch (with CUDA) and nvidia-ml-py, which are "
                               f"not installed: {INSTALL}") from None
    return torch


def _uuid(text: Any) -> str:
    return str(text or "").lower().removeprefix("gpu-")


def match_cuda(torch: Any, gpus: list[GpuInfo]) -> list[GpuInfo]:
    """The driver's GPUs that PyTorch can use, each with its CUDA index.

    CUDA numbers devices in its own order and only those in CUDA_VISIBLE_DEVICES; nvidia-smi
    numbers them by PCI bus. The UUID ties the two; without UUIDs the orders are assumed equal
    when the counts are.
    """
    from dataclasses import replace

    n = torch.cuda.device_count()
    by_uuid = {_uuid(g.uuid): g for g in gpus if g.uuid}
    matched = []
    for i in range(n):
        try:
            u = _uuid(getattr(torch.cuda.get_device_properties(i), "uuid", ""))
        except Exception:
            u = ""
        if u and u in by_uuid:
            matched.append(replace(by_uuid[u], cuda_index=i))
    if len(matched) == n:
        return sorted(matched, key=lambda g: g.index)
    if len(gpus) == n:
        return [g if g.cuda_index is not None else replace(g, cuda_index=i)
                for i, g in enumerate(gpus)]
    return [with_catalog(GpuInfo(index=i, name=torch.cuda.get_device_name(i), source="torch",
                                 cuda_index=i)) for i in range(n)]


def require_cuda(what: str = "whichgpu bench") -> tuple[Any, list[GpuInfo]]:
    """PyTorch with a CUDA GPU it can use, and the driver's view of the GPUs.

    Raises :class:`BenchUnavailable` (exit 2) naming the missing piece: PyTorch, a CUDA build
    of it, the driver, or a GPU.
    """
    torch = import_torch(what)
    try:
        gpus = detect_gpus()
        seen = None
    except BenchUnavailable as exc:
        gpus, seen = [], str(exc)
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        if not gpus:  # CUDA works but neither NVML nor nvidia-smi answered
            gpus = [with_catalog(GpuInfo(index=i, name=torch.cuda.get_device_name(i),
                                         source="torch", cuda_index=i))
                    for i in range(torch.cuda.device_count())]
        return torch, match_cuda(torch, gpus)
    missing = []
    if not gpus:
        missing.append(f"an NVIDIA GPU with its driver ({seen or 'none found'})")
    if getattr(torch.version, "cuda", None) is None:
        missing.append(f"a CUDA build of PyTorch (this one, {torch.__version__}, has no CUDA; "
                       "https://pytorch.org/get-started/locally/)")
    elif gpus:
        missing.append(f"a GPU that PyTorch {torch.__version__} (CUDA {torch.version.cuda}) "
                       f"can use: the driver lists {', '.join(g.name for g in gpus)} but CUDA "
                       "sees none (check CUDA_VISIBLE_DEVICES and the driver version)")
    raise BenchUnavailable(f"{what} measures an NVIDIA GPU and needs "
                           + "; and ".join(missing)
                           + ". Nothing was measured ('--device cpu' checks the harness on "
                             "the CPU).")
