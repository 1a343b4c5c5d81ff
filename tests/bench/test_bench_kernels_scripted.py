"""The timing harness's arithmetic and CUDA-event path without PyTorch: a scripted torch whose
kernels do nothing and whose CUDA events report chosen times. (The same functions run for real
in the CPU tests when torch is installed, and on a GPU in scripts/gpu_check.sh.)"""

from __future__ import annotations

import contextlib
import types

import pytest

from whichgpu.bench import kernels
from whichgpu.bench.kernels import Device


class _Tensor:
    def __init__(self, log):
        self.log = log

    def to(self, dtype):
        return self

    def t(self):
        return self

    def copy_(self, other, non_blocking=False):
        self.log.append(("copy", non_blocking))
        return self


def scripted_torch(elapsed_ms, *, peer=True, capability=(9, 0)):
    """A torch stand-in: CUDA events return ``elapsed_ms`` in turn; every op is logged."""
    log: list = []
    times = iter(elapsed_ms)
    torch = types.SimpleNamespace(log=log, precision="highest")

    class _Dev:
        def __init__(self, name):
            self.type, _, idx = str(name).partition(":")
            self.index = int(idx) if idx else None

        def __str__(self):
            return self.type if self.index is None else f"{self.type}:{self.index}"

    class _Event:
        def __init__(self, enable_timing=False):
            assert enable_timing
            self.ms = None

        def record(self):
            log.append(("record",))

        def elapsed_time(self, end):
            return next(times)

    def make(*args, **kw):
        log.append(("alloc", kw.get("pin_memory", False)))
        return _Tensor(log)

    def matmul(a, b, out=None):
        log.append(("matmul", torch.precision))

    def set_precision(p):
        torch.precision = p

    torch.device = _Dev
    torch.float32, torch.bfloat16, torch.float16 = "float32", "bfloat16", "float16"
    torch.float8_e4m3fn = "float8_e4m3fn"
    torch.randn = torch.ones = torch.empty = make
    torch.empty_like = lambda t: _Tensor(log)
    torch.matmul = matmul
    torch._scaled_mm = lambda *a, **kw: log.append(("scaled_mm", kw.get("use_fast_accum")))
    torch.get_float32_matmul_precision = lambda: torch.precision
    torch.set_float32_matmul_precision = set_precision
    torch.cuda = types.SimpleNamespace(
        Event=_Event, synchronize=lambda *a: log.append(("sync",)),
        device=lambda d: contextlib.nullcontext(),
        get_device_capability=lambda d: capability,
        can_device_access_peer=lambda a, b: peer)
    return torch


def test_cuda_events_time_each_repetition_in_seconds_after_the_warmup():
    torch = scripted_torch([2.0, 4.0, 3.0])
    calls = []
    t = Device(torch, "cuda:0").time(lambda: calls.append(1), warmup=2, repeat=3)
    assert len(calls) == 5
    assert t.seconds == (0.002, 0.004, 0.003) and t.median == 0.003
    assert torch.log.count(("record",)) == 6  # a start and an end event per repetition


def test_matmul_rate_is_two_n_cubed_over_the_median_and_tf32_is_switched_back():
    torch = scripted_torch([10.0, 12.0, 11.0])
    m = kernels.matmul(Device(torch, "cuda:0"), "tf32", 1024, warmup=0, repeat=3)
    assert m.work == 2 * 1024**3
    assert m.value == pytest.approx(2 * 1024**3 / 0.011)
    assert m.name == "matmul_tf32" and "TF32" in m.method
    assert ("matmul", "high") in torch.log and torch.precision == "highest"


def test_fp8_matmul_uses_scaled_mm_with_fast_accumulation():
    torch = scripted_torch([1.0])
    m = kernels.matmul(Device(torch, "cuda:0"), "fp8", 256, warmup=0, repeat=1)
    assert ("scaled_mm", True) in torch.log
    assert m.value == pytest.approx(2 * 256**3 / 0.001)


def test_device_bandwidth_counts_read_plus_write_and_host_copies_use_pinned_memory():
    torch = scripted_torch([1.0, 1.0, 1.0])
    dev = Device(torch, "cuda:0")
    bw = kernels.memory_bandwidth(dev, 1 << 30, warmup=0, repeat=1)
    assert bw.work == 2 * (1 << 30) and bw.value == pytest.approx(2 * (1 << 30) / 0.001)
    h2d = kernels.host_transfer(dev, 1 << 20, "h2d", warmup=0, repeat=1)
    assert h2d.work == 1 << 20 and "pinned" in h2d.method
    assert ("alloc", True) in torch.log and ("copy", True) in torch.log


def test_peer_copies_name_the_pair_and_say_when_they_go_through_the_host():
    torch = scripted_torch([1.0, 1.0], peer=False)
    m = kernels.peer_transfer(Device(torch, "cuda:0"), Device(torch, "cuda:1"), 1 << 20,
                              warmup=0, repeat=1)
    assert m.name == "p2p_0_1" and "staged through the host" in m.method
    torch = scripted_torch([1.0], peer=True)
    m = kernels.peer_transfer(Device(torch, "cuda:1"), Device(torch, "cuda:0"), 1 << 20,
                              warmup=0, repeat=1)
    assert m.name == "p2p_1_0" and "host" not in m.method


@pytest.mark.parametrize(("capability", "expected"), [
    ((7, 0), ["fp16"]), ((8, 0), ["bf16", "fp16", "tf32"]),
    ((9, 0), ["bf16", "fp16", "tf32", "fp8"])])
def test_precisions_follow_the_compute_capability(capability, expected):
    assert kernels.supported_precisions(
        Device(scripted_torch([], capability=capability), "cuda:0")) == expected
