"""``whichgpu bench``: measure every local GPU, compare with its datasheet, build a profile.

The plan is a list of steps (one per measurement) so that a progress bar can show what is
being measured; the caller passes a :class:`Reporter` (the CLI's is a rich progress bar).
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from whichgpu.bench.detect import GpuInfo
from whichgpu.bench.kernels import Device, Measurement
from whichgpu.bench.profile import SCHEMA
from whichgpu.bench.topology import Topology
from whichgpu.units import GB


@dataclass(frozen=True)
class Options:
    matmul_n: int = 8192
    bandwidth_bytes: int = 1 << 30
    transfer_bytes: int = 256 << 20
    warmup: int = 3
    repeat: int = 10
    precisions: tuple[str, ...] | None = None  # None: every one the card supports
    p2p: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"matmul_n": self.matmul_n, "bandwidth_bytes": self.bandwidth_bytes,
                "transfer_bytes": self.transfer_bytes, "warmup": self.warmup,
                "repeat": self.repeat, "statistic": "median of the repetitions"}


QUICK = Options(matmul_n=4096, bandwidth_bytes=256 << 20, transfer_bytes=64 << 20, warmup=2,
                repeat=5)


class Reporter(Protocol):
    def start(self, total: int) -> None: ...

    def step(self, description: str) -> None: ...

    def done(self) -> None: ...


class Silent:
    def start(self, total: int) -> None:
        pass

    def step(self, description: str) -> None:
        pass

    def done(self) -> None:
        pass


@dataclass(frozen=True)
class Versus:
    """A measurement beside the datasheet figure it is compared with."""

    name: str
    measured: float
    unit: str
    datasheet: float | None
    source: str | None
    note: str | None = None

    @property
    def ratio(self) -> float | None:
        return self.measured / self.datasheet if self.datasheet else None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "measured": self.measured, "unit": self.unit,
                "datasheet": self.datasheet, "ratio": self.ratio, "source": self.source,
                "note": self.note}


@dataclass
class GpuResult:
    info: GpuInfo
    measurements: list[Measurement] = field(default_factory=list)
    versus: list[Versus] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def value(self, name: str) -> float | None:
        return next((m.value for m in self.measurements if m.name == name), None)

    def to_profile_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {k: v for k, v in self.info.to_json().items() if v is not None}
        tflops = {m.name.removeprefix("matmul_"): round(m.value / 1e12, 3)
                  for m in self.measurements if m.name.startswith("matmul_")}
        if tflops:
            entry["matmul_tflops"] = tflops
        for name, key in (("memory_bandwidth", "memory_bandwidth_bytes_per_s"),
                          ("h2d", "h2d_bytes_per_s"), ("d2h", "d2h_bytes_per_s")):
            v = self.value(name)
            if v:
                entry[key] = round(v)
        entry["versus_datasheet"] = [v.to_json() for v in self.versus]
        entry["measurements"] = [m.to_json() for m in self.measurements
                                 if not m.name.startswith("p2p_")]
        entry["notes"] = list(self.notes)
        return entry


@dataclass
class BenchResult:
    gpus: list[GpuResult]
    topology: Topology
    options: Options
    conditions: dict[str, Any]
    created_at: str
    host: str
    p2p: list[Measurement] = field(default_factory=list)

    def to_profile(self) -> dict[str, Any]:
        from whichgpu.estimate.speed.hardware import (
            REFERENCE_BANDWIDTH_FRACTION,
            REFERENCE_MATMUL_FRACTION,
        )

        return {
            "schema": SCHEMA, "created_at": self.created_at, "host": self.host,
            "conditions": self.conditions, "method": self.options.to_json(),
            "reference": {"matmul_fraction": REFERENCE_MATMUL_FRACTION,
                          "bandwidth_fraction": REFERENCE_BANDWIDTH_FRACTION,
                          "meaning": "what a healthy card reaches of its datasheet in these "
                                     "benchmarks (whichgpu.estimate.speed.hardware); the "
                                     "speed model scales a card by measured ratio / this"},
            "gpus": [g.to_profile_entry() for g in self.gpus if g.info.catalog_id],
            "topology": self.topology.to_json(),
            "p2p": [m.to_json() for m in self.p2p],
        }

    def to_json(self) -> dict[str, Any]:
        data = self.to_profile()
        data["gpus"] = [g.to_profile_entry() for g in self.gpus]
        return data


# ------------------------------------------------------------------ datasheet

_PCIE_ONE_WAY_GB_S = {"pcie3": 16, "pcie4": 32, "pcie5": 64}


def datasheet_for(catalog_id: str | None, name: str) -> tuple[float | None, str | None]:
    """The catalog figure a measurement ``name`` is compared with, and its source key."""
    if not catalog_id:
        return None, None
    from whichgpu.catalog.gpus import get_gpu

    g = get_gpu(catalog_id)
    if name.startswith("matmul_"):
        p = name.removeprefix("matmul_")
        t = g.throughput_at(p)
        return (t.tflops * 1e12, t.source) if t.status == "supported" and t.tflops else \
            (None, None)
    if name == "memory_bandwidth":
        return g.bandwidth_bytes_per_s, g.bandwidth_gb_s.source
    if name in ("h2d", "d2h"):
        host = str(g.interconnect.host_link.value)
        gb = _PCIE_ONE_WAY_GB_S.get(host)
        return (gb * GB, host) if gb else (None, None)
    return None, None


def link_datasheet(catalog_id: str | None, kind: str) -> tuple[float | None, str | None]:
    if not catalog_id:
        return None, None
    from whichgpu.catalog.gpus import get_gpu

    ic = get_gpu(catalog_id).interconnect
    if kind == "nvlink" and ic.is_nvlink:
        return ic.one_way_bytes_per_s, str(ic.bandwidth_gb_s.source)
    return datasheet_for(catalog_id, "h2d")


def _notes(info: GpuInfo) -> list[str]:
    from whichgpu.catalog.gpus import get_gpu

    notes: list[str] = []
    if info.source == "cpu":
        return notes
    if not info.catalog_id:
        notes.append(f"not in the catalog ({info.catalog_note}): measured, but not compared "
                     "and not saved; 'whichgpu bench --as ID' names the card")
        return notes
    tdp = get_gpu(info.catalog_id).tdp_watts
    if info.power_limit_w and info.power_limit_w < 0.95 * tdp:
        notes.append(f"power limit {info.power_limit_w:.0f} W is below the {tdp:.0f} W of the "
                     "datasheet: matmul throughput is capped with it")
    elif (info.power_limit_w and info.default_power_limit_w
          and info.power_limit_w < 0.95 * info.default_power_limit_w):
        notes.append(f"power limit {info.power_limit_w:.0f} W is below the card's default "
                     f"{info.default_power_limit_w:.0f} W")
    return notes


# ------------------------------------------------------------------ the run

def conditions(torch: Any, gpus: list[GpuInfo]) -> dict[str, Any]:
    from importlib.metadata import version

    out: dict[str, Any] = {"whichgpu": version("whichgpu"), "python": platform.python_version(),
                           "torch": torch.__version__,
                           "cuda": getattr(torch.version, "cuda", None)}
    drivers = sorted({g.driver_version for g in gpus if g.driver_version})
    if drivers:
        out["driver"] = ", ".join(drivers)
    return out


def plan(gpus: list[GpuInfo], precisions: dict[int, list[str]], topology: Topology,
         options: Options) -> list[str]:
    """What will be measured, in order (the progress bar's steps)."""
    steps = []
    for g in gpus:
        steps += [f"GPU{g.index} matmul {p}" for p in precisions[g.index]]
        steps += [f"GPU{g.index} memory bandwidth", f"GPU{g.index} host to device",
                  f"GPU{g.index} device to host"]
    if options.p2p:
        indices = {g.index for g in gpus}
        steps += [f"GPU{p.a} -> GPU{p.b} peer copy" for p in topology.pairs
                  if p.a in indices and p.b in indices]
    return steps


def run_bench(torch: Any, gpus: list[GpuInfo], topology: Topology, *,
              options: Options = Options(), reporter: Reporter | None = None,
              device_type: str = "cuda") -> BenchResult:
    """Measure each GPU in ``gpus`` (and each pair in ``topology``) and compare with the
    catalog. ``device_type="cpu"`` runs the same harness on the CPU (a check of the tool)."""
    from whichgpu.bench import kernels

    rep = reporter or Silent()
    indices = {g.index for g in gpus}
    topology = replace(topology, pairs=tuple(p for p in topology.pairs
                                             if p.a in indices and p.b in indices))
    devices = {g.index: Device(torch, "cpu" if device_type != "cuda" else
                               f"cuda:{g.index if g.cuda_index is None else g.cuda_index}")
               for g in gpus}
    precisions = {g.index: [p for p in kernels.supported_precisions(devices[g.index])
                            if options.precisions is None or p in options.precisions]
                  for g in gpus}
    steps = plan(gpus, precisions, topology, options)
    rep.start(len(steps))
    kw = {"warmup": options.warmup, "repeat": options.repeat}
    results = []
    for g in gpus:
        dev = devices[g.index]
        r = GpuResult(g, notes=_notes(g))
        for p in precisions[g.index]:
            rep.step(f"GPU{g.index} matmul {p}")
            r.measurements.append(kernels.matmul(dev, p, options.matmul_n, **kw))
        rep.step(f"GPU{g.index} memory bandwidth")
        r.measurements.append(kernels.memory_bandwidth(dev, options.bandwidth_bytes, **kw))
        for direction, text in (("h2d", "host to device"), ("d2h", "device to host")):
            rep.step(f"GPU{g.index} {text}")
            r.measurements.append(kernels.host_transfer(dev, options.transfer_bytes, direction,
                                                        **kw))
        for m in r.measurements:
            ds, src = datasheet_for(g.catalog_id, m.name)
            r.versus.append(Versus(m.name, m.value, m.unit, ds, src))
        results.append(r)
    p2p: list[Measurement] = []
    measured: dict[tuple[int, int], float] = {}
    if options.p2p:
        by_index = {g.index: g for g in gpus}
        for pair in topology.pairs:
            rep.step(f"GPU{pair.a} -> GPU{pair.b} peer copy")
            m = replace(kernels.peer_transfer(devices[pair.a], devices[pair.b],
                                              options.transfer_bytes, **kw),
                        name=f"p2p_{pair.a}_{pair.b}")  # driver indices, as in topo -m
            p2p.append(m)
            measured[(pair.a, pair.b)] = m.value
            ds, src = link_datasheet(by_index[pair.a].catalog_id, pair.kind)
            results[[g.index for g in gpus].index(pair.a)].versus.append(
                Versus(m.name, m.value, m.unit, ds, src, note=f"{pair.link}: {pair.meaning}"))
        topology = topology.with_bandwidth(measured)
    rep.done()
    return BenchResult(
        gpus=results, topology=topology, options=options,
        conditions=conditions(torch, gpus) | {"device": device_type},
        created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        host=platform.node() or "unknown", p2p=p2p)
