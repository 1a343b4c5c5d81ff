"""The host side of a GPU machine: system RAM and its bandwidth (``data/host_memory.toml``).

llama.cpp can keep layers or MoE experts in system RAM; then the RAM must hold them and the
CPU streams them from it for every generated token. ``--host-ram`` says how much RAM there is,
``--host-memory`` its type (``ddr5-6000x2``: DDR5 at 6,000 MT/s on two 64-bit channels) and
``--host-bandwidth`` overrides the peak that follows from the type.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from whichgpu.errors import InputError
from whichgpu.messages import msg
from whichgpu.units import GB

MAX_RAM = 64 * 1024 * GB  # far above any single machine (64 TB)
MAX_BANDWIDTH = 20_000 * GB  # far above any CPU memory system (20 TB/s)


@cache
def _table() -> dict[str, Any]:
    from whichgpu.parse_cache import cached_toml

    return cached_toml("whichgpu.estimate", "data/host_memory.toml")


@dataclass(frozen=True)
class Host:
    """System RAM and its peak bandwidth, with where each value came from."""

    ram_bytes: int
    memory: str  # "ddr5-5600x2", or "custom" with an explicit bandwidth
    bandwidth_bytes_per_s: float
    ram_source: str
    bandwidth_source: str

    @property
    def usable_ram_bytes(self) -> int:
        """RAM left for the engine after the operating system's own share."""
        return max(0, self.ram_bytes - int(os_reserve_bytes()))

    def describe(self) -> str:
        return (f"{self.ram_bytes / GB:,.0f} GB host RAM, {self.memory} "
                f"({self.bandwidth_bytes_per_s / GB:,.0f} GB/s peak)")

    def to_json(self) -> dict[str, Any]:
        return {"ram_bytes": self.ram_bytes, "memory": self.memory,
                "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
                "usable_ram_bytes": self.usable_ram_bytes, "ram_source": self.ram_source,
                "bandwidth_source": self.bandwidth_source}


def os_reserve_bytes() -> float:
    return float(_table()["reserve"]["os_gb"]) * GB


def os_reserve_source() -> str:
    return str(_table()["reserve"]["source"])


@dataclass(frozen=True)
class MemorySpec:
    """A host memory's standard (a ``[type.*]`` table of data/host_memory.toml: ddr4, ddr5,
    lpddr5x), its transfer rate in MT/s and its 64-bit channels (None: the type's own)."""

    standard: str
    mt_s: int | None = None
    channels: int | None = None


def memory_bandwidth(spec: MemorySpec) -> tuple[str, float, str]:
    """A memory spec's name (``ddr5-6400x2``), its peak bytes/s (DDR5, DDR5-6400, DDR4-3200
    x 8 channels) and why."""
    kind = _table()["type"][spec.standard]
    mt_s = int(kind["mt_s"] if spec.mt_s is None else spec.mt_s)
    channels = int(kind["channels"] if spec.channels is None else spec.channels)
    if not 800 <= mt_s <= 20000:
        raise InputError(msg("host.speed", "host memory speed {v} MT/s is outside 800..20,000",
                             v=mt_s))
    if not 1 <= channels <= 24:
        raise InputError(msg("host.channels", "host memory channels {v} is outside 1..24",
                             v=channels))
    bw = mt_s * 1e6 * 8 * channels
    name = f"{spec.standard}-{mt_s}x{channels}"
    return name, bw, (f"{name}: {mt_s} MT/s x 8 bytes x {channels} channels = "
                      f"{bw / GB:,.1f} GB/s (JEDEC 64-bit channels; {kind['source']})")


@cache  # the table is read once per process (_table): so is the default host it states
def default_host() -> Host:
    """The stated default host (data/host_memory.toml ``[default]``): its RAM and memory."""
    d = _table()["default"]
    m = d["memory"]
    name, bw, why = memory_bandwidth(MemorySpec(m["type"], m["mt_s"], m["channels"]))
    return Host(int(float(d["ram_gb"]) * GB), name, bw, d["ram_source"],
                f"{why}; default: {d['memory_source']}")


def host_with(ram_bytes: int | None = None, memory_type: MemorySpec | None = None,
              bandwidth_bytes_per_s: float | None = None) -> Host:
    """A Host from typed values (each optional; the rest from the defaults). People's text is
    read in answers/inputs/host.py."""
    host = default_host()
    ram, ram_source = host.ram_bytes, host.ram_source
    if ram_bytes is not None:
        ram, ram_source = ram_bytes, "as given (--host-ram)"
    name, bw, bw_source = host.memory, host.bandwidth_bytes_per_s, host.bandwidth_source
    if memory_type:
        name, bw, bw_source = memory_bandwidth(memory_type)
    if bandwidth_bytes_per_s is not None:
        bw = bandwidth_bytes_per_s
        name = name if memory_type else "custom"
        bw_source = "as given (--host-bandwidth)"
    return Host(ram, name, bw, ram_source, bw_source)
