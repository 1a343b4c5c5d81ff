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
                                         source="torch"))
                    for i in range(torch.cuda.device_count())]
        return torch, gpus
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
