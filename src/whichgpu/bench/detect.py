"""Which GPUs this machine has: NVML (nvidia-ml-py) first, ``nvidia-smi`` second.

Each card is read as a :class:`GpuInfo` (name, memory, power limit, clocks) and mapped to a
catalog id. The nvidia-smi path runs ``nvidia-smi --query-gpu=... --format=csv`` and parses
the CSV with its header, so units in the header (``memory.total [MiB]``) are checked, not
assumed.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import tomllib
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from typing import Any

from whichgpu.errors import DataError, InputError, NotFoundError

QUERY_FIELDS = ("index", "name", "uuid", "pci.bus_id", "memory.total", "power.limit",
                "power.default_limit", "clocks.max.sm", "clocks.max.memory", "driver_version",
                "compute_cap")
# compute_cap is missing from older drivers: the query is retried without it.
_OPTIONAL_FIELDS = ("compute_cap",)
MEMORY_TOLERANCE = 0.10  # reported total vs catalog memory_usable_mib


class BenchUnavailable(InputError):
    """What measuring needs is missing here (a GPU, a driver tool, PyTorch): exit status 2."""


@dataclass(frozen=True)
class GpuInfo:
    """One local GPU as the driver reports it, and the catalog card it is."""

    index: int
    name: str
    memory_total_mib: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    power_limit_w: float | None = None
    default_power_limit_w: float | None = None
    max_sm_clock_mhz: int | None = None
    max_memory_clock_mhz: int | None = None
    driver_version: str | None = None
    compute_capability: str | None = None
    catalog_id: str | None = None
    catalog_note: str | None = None
    source: str = "nvidia-smi"
    cuda_index: int | None = None  # PyTorch's index (CUDA order and CUDA_VISIBLE_DEVICES)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------ catalog mapping

@cache
def _name_table() -> dict[str, tuple[str, str]]:
    text = resources.files("whichgpu.bench").joinpath("data/nvidia_names.toml").read_text("utf-8")
    return {row["nvidia_smi"].lower(): (row["catalog_id"], row["source"])
            for row in tomllib.loads(text)["name"]}


def catalog_id_for(name: str, memory_total_mib: int | None = None) -> tuple[str | None, str]:
    """The catalog id of a card named as nvidia-smi names it, and how it was decided.

    The reported memory must agree with the catalog (within 10 %): an "A100-PCIE-40GB" is not
    the catalog's A100 PCIe 80GB. Returns ``(None, reason)`` when no catalog card matches.
    """
    from whichgpu.catalog.gpus import default_catalog, resolve_gpu

    catalog = default_catalog()
    known = _name_table().get(name.strip().lower())
    if known:
        gpu = catalog.get(known[0])
        how = f"nvidia-smi name {name!r} (source {known[1]})"
        candidates = [gpu]
    else:
        try:
            res = resolve_gpu(name, catalog)
        except NotFoundError:
            return None, f"no catalog card is named like {name!r}"
        gpu = res.gpu
        how = f"resolved from {name!r}"
        candidates = [catalog.get(c) for c in res.candidates] or [gpu]
    if memory_total_mib:
        def off(g) -> float:
            usable = float(g.memory_usable_mib.value)
            return abs(usable - memory_total_mib) / usable

        best = min(candidates, key=off)
        if off(best) > MEMORY_TOLERANCE:
            return None, (f"{name!r} reports {memory_total_mib:,} MiB; the closest catalog card "
                          f"{best.id} has {int(best.memory_usable_mib.value):,} MiB")
        if best.id != gpu.id:
            how += f"; {best.id} by its {memory_total_mib:,} MiB"
        gpu = best
    return gpu.id, how


def with_catalog(info: GpuInfo) -> GpuInfo:
    from dataclasses import replace

    gid, how = catalog_id_for(info.name, info.memory_total_mib)
    return replace(info, catalog_id=gid, catalog_note=how)


# ------------------------------------------------------------------ nvidia-smi

def _value(text: str | None) -> str | None:
    if text is None:
        return None
    t = text.strip()
    if not t or t.startswith("[") or t.upper() in ("N/A", "NOT SUPPORTED"):
        return None  # "[N/A]", "[Not Supported]", "[Unknown Error]"
    return t


def _number(text: str | None, unit: str | None) -> float | None:
    t = _value(text)
    if t is None:
        return None
    if unit and t.endswith(unit):
        t = t[: -len(unit)].strip()
    try:
        return float(t)
    except ValueError:
        return None


_UNITS = {"memory.total": "MiB", "power.limit": "W", "power.default_limit": "W",
          "clocks.max.sm": "MHz", "clocks.max.memory": "MHz"}


def parse_query_csv(text: str, source: str = "nvidia-smi") -> list[GpuInfo]:
    """GPUs from ``nvidia-smi --query-gpu=<QUERY_FIELDS> --format=csv`` (header included)."""
    rows = list(csv.reader(io.StringIO(text.strip()), skipinitialspace=True))
    if not rows or not rows[0]:
        raise DataError(source, "empty nvidia-smi output")
    header = []
    for h in rows[0]:
        key, _, bracketed = h.strip().partition(" [")
        unit = bracketed.rstrip("]") or None
        if key in _UNITS and unit and unit != _UNITS[key]:
            raise DataError(source, f"{key} is in {unit}, expected {_UNITS[key]}", field=key)
        header.append(key)
    if "index" not in header or "name" not in header:
        raise DataError(source, "no index and name columns: is this nvidia-smi --query-gpu "
                        "CSV output with its header?")
    gpus = []
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise DataError(source, f"{len(row)} values for {len(header)} columns", row=n)
        f = dict(zip(header, row, strict=True))
        power = _number(f.get("power.limit"), "W")
        default_power = _number(f.get("power.default_limit"), "W")
        mem = _number(f.get("memory.total"), "MiB")
        sm = _number(f.get("clocks.max.sm"), "MHz")
        memclk = _number(f.get("clocks.max.memory"), "MHz")
        try:
            index = int(f["index"])
        except ValueError:
            raise DataError(source, f"index {f['index']!r} is not a number", row=n) from None
        gpus.append(with_catalog(GpuInfo(
            index=index, name=f["name"].strip(),
            memory_total_mib=int(mem) if mem is not None else None,
            uuid=_value(f.get("uuid")), pci_bus_id=_value(f.get("pci.bus_id")),
            power_limit_w=power, default_power_limit_w=default_power,
            max_sm_clock_mhz=int(sm) if sm is not None else None,
            max_memory_clock_mhz=int(memclk) if memclk is not None else None,
            driver_version=_value(f.get("driver_version")),
            compute_capability=_value(f.get("compute_cap")), source=source)))
    return gpus


def nvidia_smi_path() -> str | None:
    return shutil.which("nvidia-smi")


def run_nvidia_smi(*args: str, timeout: float = 30) -> str:
    """Run nvidia-smi and return its stdout; a failure says what nvidia-smi said."""
    exe = nvidia_smi_path()
    if exe is None:
        raise BenchUnavailable("nvidia-smi is not on PATH (it comes with the NVIDIA driver)")
    try:
        out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout,
                             check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BenchUnavailable(f"nvidia-smi could not run: {exc}") from exc
    if out.returncode != 0:
        said = (out.stdout + out.stderr).strip().splitlines()
        raise BenchUnavailable(f"nvidia-smi {' '.join(args)} failed (status {out.returncode})"
                               + (f": {said[0]}" if said else ""))
    return out.stdout


def from_nvidia_smi() -> list[GpuInfo]:
    fields: tuple[str, ...] = QUERY_FIELDS
    try:
        text = run_nvidia_smi(f"--query-gpu={','.join(fields)}", "--format=csv")
    except BenchUnavailable as exc:
        if "not a valid field" not in str(exc):
            raise
        fields = tuple(f for f in QUERY_FIELDS if f not in _OPTIONAL_FIELDS)
        text = run_nvidia_smi(f"--query-gpu={','.join(fields)}", "--format=csv")
    return parse_query_csv(text)


# ------------------------------------------------------------------ NVML

def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _try(fn, *args) -> Any:
    try:
        return fn(*args)
    except Exception:  # NVMLError_NotSupported and friends: the value is simply unknown
        return None


def from_nvml(nvml: Any | None = None) -> list[GpuInfo]:
    """GPUs through NVML (the ``pynvml`` module of nvidia-ml-py)."""
    if nvml is None:
        try:
            import pynvml
        except ImportError as exc:
            raise BenchUnavailable("nvidia-ml-py is not installed") from exc
        nvml = pynvml
    try:
        nvml.nvmlInit()
    except Exception as exc:
        raise BenchUnavailable(f"NVML could not start ({_text(exc) or type(exc).__name__}): "
                               "is the NVIDIA driver loaded?") from exc
    try:
        driver = _text(_try(nvml.nvmlSystemGetDriverVersion) or "") or None
        gpus = []
        for i in range(nvml.nvmlDeviceGetCount()):
            h = nvml.nvmlDeviceGetHandleByIndex(i)
            mem = _try(nvml.nvmlDeviceGetMemoryInfo, h)
            limit = _try(nvml.nvmlDeviceGetPowerManagementLimit, h)  # milliwatts
            default = _try(nvml.nvmlDeviceGetPowerManagementDefaultLimit, h)
            cc = _try(nvml.nvmlDeviceGetCudaComputeCapability, h)
            pci = _try(nvml.nvmlDeviceGetPciInfo, h)
            gpus.append(with_catalog(GpuInfo(
                index=i, name=_text(nvml.nvmlDeviceGetName(h)),
                memory_total_mib=int(mem.total // 2**20) if mem is not None else None,
                uuid=_text(_try(nvml.nvmlDeviceGetUUID, h) or "") or None,
                pci_bus_id=_text(pci.busId) if pci is not None else None,
                power_limit_w=limit / 1000 if limit is not None else None,
                default_power_limit_w=default / 1000 if default is not None else None,
                max_sm_clock_mhz=_try(nvml.nvmlDeviceGetMaxClockInfo, h, nvml.NVML_CLOCK_SM),
                max_memory_clock_mhz=_try(nvml.nvmlDeviceGetMaxClockInfo, h,
                                          nvml.NVML_CLOCK_MEM),
                driver_version=driver,
                compute_capability=f"{cc[0]}.{cc[1]}" if cc else None, source="nvml")))
        return gpus
    finally:
        _try(nvml.nvmlShutdown)


# ------------------------------------------------------------------ entry point

def detect_gpus() -> list[GpuInfo]:
    """The local NVIDIA GPUs; raises :class:`BenchUnavailable` naming what is missing."""
    reasons = []
    for reader in (from_nvml, from_nvidia_smi):
        try:
            gpus = reader()
        except BenchUnavailable as exc:
            reasons.append(str(exc))
            continue
        if gpus:
            return gpus
        reasons.append(f"{reader.__name__.removeprefix('from_')} lists no GPU")
    raise BenchUnavailable("no NVIDIA GPU found: " + "; ".join(reasons))
