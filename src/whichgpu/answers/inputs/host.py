"""The host's RAM and memory as people type them (``96GB``, ``ddr5-6000x2``, ``200GB/s``),
read once in the answer layer (issue 35); the engine takes a Host (estimate/host.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.errors import InputError
from whichgpu.estimate.host import MAX_BANDWIDTH, MAX_RAM, Host, MemorySpec, host_with
from whichgpu.messages import Field, msg
from whichgpu.units import parse_memory_type, parse_size

if TYPE_CHECKING:
    from whichgpu.answers.inputs.values import HostMemoryType


def parse_host(ram: str | int | None = None, memory: str | HostMemoryType | None = None,
               bandwidth: str | float | None = None) -> Host:
    """A Host from the flags a person types (each optional; the rest from the defaults);
    each may be already read (a request's ``host_ram``, ``host_memory``, ``host_bandwidth``)."""
    ram_bytes = None if ram is None or ram == "" else parse_ram(ram)
    bw = None if bandwidth is None or bandwidth == "" else parse_bandwidth(bandwidth)
    return host_with(ram_bytes, parse_memory(memory), bw)


def parse_memory(memory: str | HostMemoryType | None) -> MemorySpec | None:
    """``ddr5``, ``ddr5-6000``, ``ddr4-3200x8`` (or one already read) as a MemorySpec."""
    if not memory:
        return None
    if isinstance(memory, str):
        return MemorySpec(*parse_memory_type(memory))
    return memory.spec


def parse_ram(ram: str | int) -> int:
    """The host's RAM in bytes (``96GB``, ``64GiB``; a number is bytes), within the bounds."""
    ram_bytes = parse_size(ram)
    if ram_bytes <= 0 or ram_bytes > MAX_RAM:
        raise InputError(msg("host.ram", "{field} must be between 1 GB and 64 TB, got {v}",
                             field=Field("host_ram"), v=str(ram)))
    return int(ram_bytes)


def parse_bandwidth(text: str | float) -> float:
    """The host's memory bandwidth in bytes/s (``90GB/s``, ``200GBps``; a number is bytes/s),
    within the bounds."""
    if isinstance(text, int | float):
        value = float(text)
    else:
        s = str(text).strip().lower().replace(" ", "")
        s = s.removesuffix("/s").removesuffix("ps")
        value = float(parse_size(s))
    if value <= 0 or value > MAX_BANDWIDTH:
        raise InputError(msg("host.bandwidth", "{field} must be between 1 B/s and 20 TB/s, got "
                             "{v}", field=Field("host_bandwidth"), v=str(text)))
    return value
