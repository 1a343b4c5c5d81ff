"""The timing harness: warm-up, then timed repetitions of one operation.

On a GPU each repetition is timed with CUDA events (the time the GPU spent, not the time the
CPU took to queue the work); on the CPU with ``time.perf_counter``. The median repetition is
the result and the spread is kept. Rates are work / median time:

- dense matmul: ``2 n^3`` FLOPs for an n x n by n x n product (each multiply-add is 2 FLOPs);
- device memory bandwidth: a device-to-device copy reads and writes every byte, ``2 x bytes``;
- host<->device and peer-to-peer: ``bytes`` per copy, one direction (pinned host memory).

PyTorch is imported by the caller and passed in, so this module imports without it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from whichgpu.errors import InputError

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "tf32": "float32", "fp32": "float32",
          "fp8": "float8_e4m3fn"}


@dataclass(frozen=True)
class Timing:
    """Seconds per repetition (after warm-up)."""

    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def spread(self) -> float:
        """(slowest - fastest) / median: how steady the repetitions were."""
        return (max(self.seconds) - min(self.seconds)) / self.median if self.median else 0.0


@dataclass(frozen=True)
class Measurement:
    """One rate: what was measured, the value (per second), and how."""

    name: str  # matmul_bf16, memory_bandwidth, h2d, d2h, p2p_0_1
    value: float  # FLOP/s or bytes/s
    unit: str  # "FLOP/s" or "bytes/s"
    timing: Timing
    work: float  # FLOPs or bytes per repetition
    method: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit,
                "median_s": self.timing.median, "best_s": self.timing.best,
                "spread": round(self.timing.spread, 4), "repetitions": len(self.timing.seconds),
                "work": self.work, "method": self.method}


class Device:
    """A torch device and how to wait for it and time work on it."""

    def __init__(self, torch: Any, name: str = "cuda:0") -> None:
        self.torch = torch
        self.device = torch.device(name)
        self.is_cuda = self.device.type == "cuda"

    def __str__(self) -> str:
        return str(self.device)

    def sync(self) -> None:
        if self.is_cuda:
            self.torch.cuda.synchronize(self.device)

    def time(self, fn: Callable[[], Any], *, warmup: int = 3, repeat: int = 10) -> Timing:
        """Run ``fn`` ``warmup`` times untimed, then ``repeat`` times timed."""
        if repeat < 1:
            raise InputError("repeat must be at least 1")
        for _ in range(max(0, warmup)):
            fn()
        self.sync()
        if not self.is_cuda:
            out = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t0)
            return Timing(tuple(out))
        cuda = self.torch.cuda
        with cuda.device(self.device):
            events = [(cuda.Event(enable_timing=True), cuda.Event(enable_timing=True))
                      for _ in range(repeat)]
            for start, end in events:
                start.record()
                fn()
                end.record()
            self.sync()
        return Timing(tuple(start.elapsed_time(end) / 1000 for start, end in events))


def supported_precisions(dev: Device) -> list[str]:
    """Matmul precisions this device runs: bf16/fp16/tf32 everywhere CUDA has tensor cores,
    fp8 from compute capability 8.9 (Ada, Hopper, Blackwell); bf16 from 8.0."""
    torch = dev.torch
    if not dev.is_cuda:
        return ["fp32", "bf16"]
    major, minor = torch.cuda.get_device_capability(dev.device)
    cc = major + minor / 10
    out = ["fp16"]
    if cc >= 8.0:
        out = ["bf16", "fp16", "tf32"]
    if cc >= 8.9 and hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm"):
        out.append("fp8")
    return out


def matmul(dev: Device, precision: str, n: int, *, warmup: int = 3,
           repeat: int = 10) -> Measurement:
    """Dense n x n x n matmul throughput at ``precision`` (FLOP/s)."""
    torch = dev.torch
    if precision not in DTYPES:
        raise InputError(f"unknown matmul precision {precision!r}; use one of "
                         f"{', '.join(DTYPES)}")
    if precision == "fp8":
        return _matmul_fp8(dev, n, warmup=warmup, repeat=repeat)
    dtype = getattr(torch, DTYPES[precision])
    a = torch.randn(n, n, device=dev.device, dtype=torch.float32).to(dtype)
    b = torch.randn(n, n, device=dev.device, dtype=torch.float32).to(dtype)
    out = torch.empty(n, n, device=dev.device, dtype=dtype)
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")
    try:
        t = dev.time(lambda: torch.matmul(a, b, out=out), warmup=warmup, repeat=repeat)
    finally:
        torch.set_float32_matmul_precision(before)
    flops = 2.0 * n ** 3
    how = f"torch.matmul {n}x{n}x{n} in {DTYPES[precision]}"
    if precision == "tf32":
        how += " with TF32 tensor cores allowed"
    return Measurement(f"matmul_{precision}", flops / t.median, "FLOP/s", t, flops, how)


def _matmul_fp8(dev: Device, n: int, *, warmup: int, repeat: int) -> Measurement:
    torch = dev.torch
    a = torch.randn(n, n, device=dev.device).to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device=dev.device).to(torch.float8_e4m3fn).t()  # column-major
    one = torch.ones((), device=dev.device, dtype=torch.float32)

    def run():
        return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                use_fast_accum=True)

    t = dev.time(run, warmup=warmup, repeat=repeat)
    flops = 2.0 * n ** 3
    return Measurement("matmul_fp8", flops / t.median, "FLOP/s", t, flops,
                       f"torch._scaled_mm {n}x{n}x{n}, float8_e4m3fn in, bfloat16 out, "
                       "fast accumulation")


def memory_bandwidth(dev: Device, nbytes: int, *, warmup: int = 3,
                     repeat: int = 10) -> Measurement:
    """Device memory bandwidth from a device-to-device copy (reads + writes: 2 x bytes)."""
    torch = dev.torch
    n = max(1, nbytes // 4)
    src = torch.ones(n, device=dev.device, dtype=torch.float32)
    dst = torch.empty_like(src)
    t = dev.time(lambda: dst.copy_(src), warmup=warmup, repeat=repeat)
    moved = 2.0 * n * 4
    return Measurement("memory_bandwidth", moved / t.median, "bytes/s", t, moved,
                       f"copy of {n * 4 / 2**20:,.0f} MiB on the device, read + write counted")


def host_transfer(dev: Device, nbytes: int, direction: str, *, warmup: int = 3,
                  repeat: int = 10) -> Measurement:
    """Host-to-device (``h2d``) or device-to-host (``d2h``) bandwidth, pinned host memory."""
    torch = dev.torch
    n = max(1, nbytes // 4)
    pinned = dev.is_cuda
    host = torch.ones(n, dtype=torch.float32, pin_memory=pinned)
    gpu = torch.empty(n, device=dev.device, dtype=torch.float32)
    if direction == "h2d":
        def fn():
            return gpu.copy_(host, non_blocking=pinned)
    elif direction == "d2h":
        def fn():
            return host.copy_(gpu, non_blocking=pinned)
    else:
        raise InputError(f"direction must be h2d or d2h, got {direction!r}")
    t = dev.time(fn, warmup=warmup, repeat=repeat)
    moved = float(n * 4)
    return Measurement(direction, moved / t.median, "bytes/s", t, moved,
                       f"copy of {n * 4 / 2**20:,.0f} MiB "
                       + ("host to device" if direction == "h2d" else "device to host")
                       + (", pinned host memory" if pinned else ""))


def peer_transfer(src: Device, dst: Device, nbytes: int, *, warmup: int = 3,
                  repeat: int = 10) -> Measurement:
    """One-way copy bandwidth from ``src`` to ``dst`` (through the host if no peer access)."""
    torch = src.torch
    n = max(1, nbytes // 4)
    a = torch.ones(n, device=src.device, dtype=torch.float32)
    b = torch.empty(n, device=dst.device, dtype=torch.float32)
    t = src.time(lambda: b.copy_(a), warmup=warmup, repeat=repeat)
    dst.sync()
    moved = float(n * 4)
    direct = True
    if src.is_cuda and dst.is_cuda:
        direct = bool(torch.cuda.can_device_access_peer(src.device, dst.device))
    name = f"p2p_{src.device.index or 0}_{dst.device.index or 0}"
    return Measurement(name, moved / t.median, "bytes/s", t, moved,
                       f"copy of {n * 4 / 2**20:,.0f} MiB {src} -> {dst}"
                       + ("" if direct else " (no peer access: staged through the host)"))
