"""How the local GPUs are linked: ``nvidia-smi topo -m`` read into pairs (S28).

The matrix names, for each pair of GPUs, the path between them:

    NV#   a bonded set of # NVLinks
    PIX   at most one PCIe bridge (a PCIe switch)    PXB  several PCIe bridges, no host bridge
    PHB   a PCIe host bridge (the CPU)               NODE host bridges within one NUMA node
    SYS   the SMP interconnect between NUMA nodes (QPI/UPI/Infinity Fabric)

``nvidia-smi topo -p2p r`` says whether peer-to-peer reads work (OK) or not (NS, GNS, CNS,
TNS, DR, U). A GeForce pair behind one PCIe switch is PIX yet has no peer-to-peer, so the
link kind the speed model uses needs both.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from whichgpu.errors import DataError

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GPU = re.compile(r"GPU(\d+)$")
LINK_MEANING = {
    "NV": "NVLink",
    "PIX": "PCIe, at most one bridge (PCIe switch)",
    "PXB": "PCIe, several bridges, no host bridge",
    "PHB": "PCIe through a host bridge (the CPU)",
    "NODE": "PCIe and host bridges within one NUMA node",
    "SYS": "PCIe and the interconnect between NUMA nodes",
}
P2P_MEANING = {"OK": "peer-to-peer works", "NS": "not supported", "GNS": "GPU not supported",
               "CNS": "chipset not supported", "TNS": "topology not supported",
               "DR": "disabled by regkey", "U": "unknown"}


@dataclass(frozen=True)
class Pair:
    """The link between two GPUs (``a < b``) as the driver reports it."""

    a: int
    b: int
    link: str  # NV18, PIX, PXB, PHB, NODE, SYS
    p2p: str | None = None  # OK, NS, GNS ... from topo -p2p r (None: not read)
    p2p_bytes_per_s: float | None = None  # measured by whichgpu bench (one direction)

    @property
    def nvlinks(self) -> int:
        m = re.fullmatch(r"NV(\d+)", self.link)
        return int(m.group(1)) if m else 0

    @property
    def kind(self) -> str:
        """The speed model's link kind: nvlink, pcie_p2p or pcie_host."""
        if self.nvlinks:
            return "nvlink"
        if self.p2p == "OK" or (self.p2p is None and self.link in ("PIX", "PXB")):
            return "pcie_p2p"
        return "pcie_host"

    @property
    def meaning(self) -> str:
        text = LINK_MEANING["NV"] + f" x{self.nvlinks}" if self.nvlinks else \
            LINK_MEANING.get(self.link, self.link)
        if self.p2p:
            text += f"; P2P {P2P_MEANING.get(self.p2p, self.p2p)}"
        return text

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(kind=self.kind, nvlinks=self.nvlinks, meaning=self.meaning)
        return data


@dataclass(frozen=True)
class Topology:
    gpus: tuple[int, ...]
    pairs: tuple[Pair, ...] = ()
    cpu_affinity: dict[int, str] = field(default_factory=dict)
    numa_affinity: dict[int, str] = field(default_factory=dict)
    source: str = "nvidia-smi topo -m"

    @property
    def kind(self) -> str:
        """The weakest link between any two GPUs (what a ring over all of them sees)."""
        if not self.pairs:
            return "none"
        order = ("pcie_host", "pcie_p2p", "nvlink")
        return min((p.kind for p in self.pairs), key=order.index)

    def pair(self, a: int, b: int) -> Pair | None:
        lo, hi = sorted((a, b))
        return next((p for p in self.pairs if p.a == lo and p.b == hi), None)

    def with_p2p(self, status: dict[tuple[int, int], str]) -> Topology:
        from dataclasses import replace

        pairs = tuple(replace(p, p2p=status.get((p.a, p.b), p.p2p)) for p in self.pairs)
        return replace(self, pairs=pairs)

    def with_bandwidth(self, measured: dict[tuple[int, int], float]) -> Topology:
        from dataclasses import replace

        pairs = tuple(replace(p, p2p_bytes_per_s=measured.get((p.a, p.b), p.p2p_bytes_per_s))
                      for p in self.pairs)
        return replace(self, pairs=pairs)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "gpus": list(self.gpus), "kind": self.kind,
                "pairs": [p.to_json() for p in self.pairs],
                "cpu_affinity": {str(k): v for k, v in self.cpu_affinity.items()},
                "numa_affinity": {str(k): v for k, v in self.numa_affinity.items()}}


def _matrix(text: str, source: str) -> tuple[list[str], dict[str, list[str]], dict[str, list]]:
    """Column names, and per GPU row its cells and the trailing (affinity) values."""
    lines = [_ANSI.sub("", ln).rstrip() for ln in text.splitlines()]
    # The header names GPU0 and has no self cell "X"; every matrix row has one.
    header_at = next((i for i, ln in enumerate(lines)
                      if re.match(r"\s*GPU0\b", ln) and "X" not in ln.split()), None)
    if header_at is None:
        raise DataError(source, "no header row with GPU0: is this 'nvidia-smi topo' output?")
    names = [c.strip() for c in re.split(r"\t+|\s{2,}", lines[header_at].strip()) if c.strip()]
    devices = []
    for n in names:
        if " " in n or "Affinity" in n:
            break  # CPU Affinity, NUMA Affinity, GPU NUMA ID
        devices.append(n)
    extra = names[len(devices):]
    rows: dict[str, list[str]] = {}
    tails: dict[str, list[str]] = {}
    for ln in lines[header_at + 1:]:
        if not ln.strip() or ln.strip().startswith("Legend"):
            break
        tokens = ln.split()
        label = tokens[0]
        if not _GPU.fullmatch(label):
            continue
        cells = tokens[1:1 + len(devices)]
        if len(cells) < len(devices):
            raise DataError(source, f"row {label} has {len(cells)} cells for "
                            f"{len(devices)} columns")
        rows[label] = cells
        tails[label] = tokens[1 + len(devices):]
    return devices, rows, {"extra": extra, **tails}


def _gpu_index(label: str) -> int:
    """3 for "GPU3" (labels _matrix kept as GPU rows, or columns filtered as GPUs)."""
    m = _GPU.fullmatch(label)
    assert m is not None, label
    return int(m.group(1))


def parse_topo_matrix(text: str, source: str = "nvidia-smi topo -m") -> Topology:
    """The GPU-to-GPU part of ``nvidia-smi topo -m`` (NIC rows and columns are skipped)."""
    devices, rows, tails = _matrix(text, source)
    gpu_cols = [(i, _gpu_index(d)) for i, d in enumerate(devices)
                if _GPU.fullmatch(d)]
    gpus = tuple(sorted(_gpu_index(r) for r in rows))
    if not gpus:
        raise DataError(source, "no GPU rows")
    pairs = []
    for label, cells in rows.items():
        a = _gpu_index(label)
        for col, b in gpu_cols:
            cell = cells[col]
            if b <= a:
                continue
            if not re.fullmatch(r"NV\d+|PIX|PXB|PHB|NODE|SYS|SOC", cell):
                raise DataError(source, f"unknown link {cell!r} between GPU{a} and GPU{b}")
            pairs.append(Pair(a, b, "SYS" if cell == "SOC" else cell))
    extra = tails.pop("extra")
    cpu, numa = {}, {}
    for label, tail in tails.items():
        g = _gpu_index(label)
        if "CPU Affinity" in extra and tail:
            cpu[g] = tail[0]
        if "NUMA Affinity" in extra and len(tail) > 1:
            numa[g] = tail[1]
    return Topology(gpus, tuple(sorted(pairs, key=lambda p: (p.a, p.b))), cpu, numa, source)


def parse_p2p_matrix(text: str, source: str = "nvidia-smi topo -p2p r") -> dict[tuple[int, int],
                                                                               str]:
    """``{(a, b): status}`` for a < b from ``nvidia-smi topo -p2p r`` (or w, rw ...)."""
    devices, rows, _ = _matrix(text, source)
    out: dict[tuple[int, int], str] = {}
    for label, cells in rows.items():
        a = _gpu_index(label)
        for col, d in enumerate(devices):
            m = _GPU.fullmatch(d)
            if m and int(m.group(1)) > a:
                out[(a, int(m.group(1)))] = cells[col]
    return out


# NVML common-ancestor levels, in the order of the topo -m codes.
_NVML_LEVEL = {0: "PIX", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}


def from_nvml(nvml: Any, count: int) -> Topology:
    """The same pairs through NVML: common PCIe ancestor, NVLinks counted link by link."""
    handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
    buses = [str(getattr(nvml.nvmlDeviceGetPciInfo(h), "busId", "")).lower() for h in handles]
    pairs = []
    for a in range(count):
        for b in range(a + 1, count):
            links = 0
            for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
                try:
                    if not nvml.nvmlDeviceGetNvLinkState(handles[a], link):
                        continue
                    remote = nvml.nvmlDeviceGetNvLinkRemotePciInfo(handles[a], link)
                except Exception:
                    continue
                if str(getattr(remote, "busId", "")).lower() == buses[b]:
                    links += 1
            if links:
                cell = f"NV{links}"
            else:
                level = nvml.nvmlDeviceGetTopologyCommonAncestor(handles[a], handles[b])
                cell = _NVML_LEVEL.get(int(level), "SYS")
            pairs.append(Pair(a, b, cell))
    return Topology(tuple(range(count)), tuple(pairs), source="NVML")


def read_topology(count: int) -> Topology:
    """The local topology: nvidia-smi topo -m (and -p2p r), else NVML, else nothing known."""
    from whichgpu.bench.detect import BenchUnavailable, run_nvidia_smi

    if count <= 1:
        return Topology(tuple(range(count)), source="single GPU")
    try:
        topo = parse_topo_matrix(run_nvidia_smi("topo", "-m"))
    except BenchUnavailable:
        try:
            import pynvml

            pynvml.nvmlInit()
            try:
                return from_nvml(pynvml, count)
            finally:
                pynvml.nvmlShutdown()
        except Exception:
            return Topology(tuple(range(count)), source="unknown (no nvidia-smi, no NVML)")
    try:
        topo = topo.with_p2p(parse_p2p_matrix(run_nvidia_smi("topo", "-p2p", "r")))
    except (BenchUnavailable, DataError):
        pass  # older drivers have no -p2p; the link code alone decides
    return topo
