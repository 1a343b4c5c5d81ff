"""Stand-ins for a GPU machine: nvidia-smi replaying recorded output, a fake NVML, a fake torch.

The recorded outputs are in tests/data/bench/<machine>/ (see its README). ``fake_smi`` writes an
executable ``nvidia-smi`` into a folder put first on PATH, so the code runs the real subprocess
path; ``FakeNVML`` answers the pynvml calls the detector makes.
"""

from __future__ import annotations

import os
import stat
import sys
import types
from pathlib import Path

DATA = Path(__file__).parent / "data" / "bench"

_SCRIPT = """#!{python}
import sys
from pathlib import Path
folder = Path({folder!r})
args = sys.argv[1:]
if args and args[0].startswith("--query-gpu="):
    fields = args[0].split("=", 1)[1].split(",")
    if "compute_cap" in fields and {old_driver!r}:
        print('Field "compute_cap" is not a valid field to query.')
        sys.exit(2)
    text = (folder / "query.csv").read_text()
    if "compute_cap" not in fields:  # what an older driver prints: no such column
        lines = [ln.rsplit(",", 1)[0] for ln in text.splitlines()]
        text = "\\n".join(lines) + "\\n"
    sys.stdout.write(text)
elif args == ["topo", "-m"]:
    sys.stdout.write((folder / "topo.txt").read_text())
elif args[:2] == ["topo", "-p2p"]:
    p = folder / "p2p.txt"
    if not p.exists():
        print("Invalid combination of input arguments.")
        sys.exit(2)
    sys.stdout.write(p.read_text())
else:
    print("unexpected arguments", args)
    sys.exit(3)
"""


def fake_smi(monkeypatch, tmp_path: Path, machine: str, *, old_driver: bool = False) -> Path:
    """Put an ``nvidia-smi`` that replays tests/data/bench/<machine>/ first on PATH."""
    bindir = tmp_path / "fake-bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / "nvidia-smi"
    exe.write_text(_SCRIPT.format(python=sys.executable, folder=str(DATA / machine),
                                  old_driver=old_driver))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    return exe


def no_driver(monkeypatch, tmp_path: Path) -> None:
    """No nvidia-smi on PATH and no pynvml to import."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setitem(sys.modules, "pynvml", None)


class NVMLError(Exception):
    pass


class FakeNVML:
    """The pynvml calls whichgpu makes, answered for ``cards``: (name, MiB, mW, cc, bus)."""

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_NVLINK_MAX_LINKS = 18

    def __init__(self, cards, *, nvlinks: dict | None = None, ancestor: int = 30,
                 fail_init: bool = False) -> None:
        self.cards = cards
        self.nvlinks = nvlinks or {}  # (a, b) -> number of links
        self.ancestor = ancestor
        self.fail_init = fail_init
        self.shutdowns = 0

    def nvmlInit(self):
        if self.fail_init:
            raise NVMLError("Driver Not Loaded")

    def nvmlShutdown(self):
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self):
        return b"550.127.05"  # older pynvml returns bytes

    def nvmlDeviceGetCount(self):
        return len(self.cards)

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return self.cards[h][0]

    def nvmlDeviceGetMemoryInfo(self, h):
        return types.SimpleNamespace(total=self.cards[h][1] * 2**20)

    def nvmlDeviceGetPowerManagementLimit(self, h):
        return self.cards[h][2]

    def nvmlDeviceGetPowerManagementDefaultLimit(self, h):
        raise NVMLError("Not Supported")

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return self.cards[h][3]

    def nvmlDeviceGetPciInfo(self, h):
        return types.SimpleNamespace(busId=self.cards[h][4])

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-fake-{h}"

    def nvmlDeviceGetMaxClockInfo(self, h, clock):
        return 1980 if clock == self.NVML_CLOCK_SM else 2619

    # topology
    def _links(self, h):
        out = []
        for (a, b), n in self.nvlinks.items():
            if h in (a, b):
                out += [b if h == a else a] * n
        return out

    def nvmlDeviceGetNvLinkState(self, h, link):
        if link >= len(self._links(h)):
            raise NVMLError("Invalid Argument")
        return 1

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h, link):
        return types.SimpleNamespace(busId=self.cards[self._links(h)[link]][4])

    def nvmlDeviceGetTopologyCommonAncestor(self, a, b):
        return self.ancestor


def fake_torch(cuda_devices: int = 1, cuda_version: str | None = "12.8",
               uuids: list[str] | None = None):
    """A module that looks enough like torch for the CLI's checks and the bench's bookkeeping
    (the kernels themselves are replaced in the tests that use it)."""
    torch = types.ModuleType("torch")
    torch.__version__ = "2.13.0"
    torch.version = types.SimpleNamespace(cuda=cuda_version)

    class _Device:
        def __init__(self, name):
            self.type, _, idx = str(name).partition(":")
            self.index = int(idx) if idx else None

        def __str__(self):
            return self.type if self.index is None else f"{self.type}:{self.index}"

    torch.device = _Device
    torch.cuda = types.SimpleNamespace(
        is_available=lambda: cuda_devices > 0, device_count=lambda: cuda_devices,
        get_device_name=lambda i: "NVIDIA H200", synchronize=lambda *a: None,
        get_device_properties=lambda i: types.SimpleNamespace(
            uuid=(uuids[i] if uuids else "")))
    return torch
