"""The hardware as the speed model sees it: peaks at a precision, bandwidth, the links.

Peaks come from the catalog (dense, datasheet). A calibration profile measured on the user's
own card (``whichgpu bench``) rescales them: the efficiencies in the speed constants are
fractions of the datasheet, so a card measured 10 % below its datasheet runs 10 % slower.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

from whichgpu.catalog.gpus import GPU
from whichgpu.engines import module
from whichgpu.estimate.calibration import Calibration
from whichgpu.estimate.constants import speed_value
from whichgpu.estimate.memo import Table
from whichgpu.models.quant import QuantFormat
from whichgpu.units import GB
from whichgpu.vocabulary import Engine

# What a typical matmul / bandwidth benchmark reaches of the datasheet on a healthy card;
# a calibration profile is compared with these, not with 100 %.
REFERENCE_MATMUL_FRACTION = 0.80
REFERENCE_BANDWIDTH_FRACTION = 0.90


#: how GPUs reach each other: nothing to cross (one card), NVLink, PCIe peer to peer, PCIe
#: through the host, or the network between servers (its keys in speed_constants.toml)
LinkKind = Literal["none", "nvlink", "pcie_p2p", "pcie_host", "network"]


@dataclass(frozen=True)
class Link:
    kind: LinkKind
    one_way_bytes_per_s: float
    latency_s: float
    efficiency: float
    via: tuple[str, ...] = ()  # the link kinds a collective crosses (several across servers)

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.via or (self.kind,)

    def all_reduce_s(self, nbytes: float, n: int) -> float:
        """All-reduce: a ring moves 2 (n-1)/n of the message over each link; small messages
        pay a fixed latency (NCCL switches to low-latency tree/LL protocols for them)."""
        if n <= 1 or nbytes <= 0:
            return 0.0
        bw = self.one_way_bytes_per_s * self.efficiency
        return 2 * (n - 1) / n * nbytes / bw + self.latency_s

    def all_gather_s(self, nbytes: float, n: int) -> float:
        """All-gather (or reduce-scatter) of a ``nbytes`` tensor over ``n`` GPUs."""
        if n <= 1 or nbytes <= 0:
            return 0.0
        bw = self.one_way_bytes_per_s * self.efficiency
        return (n - 1) / n * nbytes / bw + self.latency_s

    def send_s(self, nbytes: float) -> float:
        """One point-to-point send of ``nbytes`` (a pipeline stage's activations, a KV cache)."""
        if nbytes <= 0:
            return 0.0
        return nbytes / (self.one_way_bytes_per_s * self.efficiency) + self.latency_s

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "one_way_bytes_per_s": self.one_way_bytes_per_s,
                "latency_s": self.latency_s, "efficiency": self.efficiency,
                "via": list(self.kinds)}


@dataclass(frozen=True)
class Hardware:
    gpu: GPU
    count: int
    link: Link  # between GPUs of one server
    fabric: Link  # between servers (the same as ``link`` when the job fits one server)
    compute_scale: float = 1.0  # from a calibration profile
    bandwidth_scale: float = 1.0
    calibration: str | None = None  # where the scales came from
    per_server: int = 8  # GPUs of one server (--gpus-per-node; default 8 or the NVLink domain)
    network: Any = None  # the NodeLink between servers the user named (--interconnect)

    @property
    def servers(self) -> int:
        """How many servers the ``count`` GPUs span."""
        return max(1, -(-self.count // max(self.per_server, 1)))

    def link_over(self, gpus: int) -> Link:
        """The link a collective over ``gpus`` of the job's GPUs crosses: the server's own,
        or the fabric between servers when they do not fit one server."""
        return self.fabric if gpus > self.per_server and self.servers > 1 else self.link

    @property
    def bandwidth(self) -> float:
        return self.gpu.bandwidth_bytes_per_s * self.bandwidth_scale


    def peak(self, precision: str) -> float:
        """Dense FLOP/s at ``precision`` (0 if the card has no such unit); also the derived
        ``mma_sync_int8`` rate (:func:`mma_sync_int8_tflops`)."""
        if precision == MMA_SYNC_INT8:
            tf = mma_sync_int8_tflops(self.gpu)
        else:
            tf = self.gpu.tflops(precision)
        return (tf or 0.0) * 1e12 * self.compute_scale


# The int8 rate of warp-level mma.sync tiles at a consumer SM's width, the peak llama.cpp's
# MMQ kernels are measured against (engine_kernels.toml).
MMA_SYNC_INT8 = "mma_sync_int8"
# FP32 lanes per SM: 64 on Volta, Turing and the A100 (GA100, compute capability 8.0), 128 on
# GA10x, Ada, Hopper and Blackwell (NVIDIA's architecture whitepapers: the GA102 SM doubled
# the FP32 datapath of GA100's; Hopper's SM has 128 FP32 cores)
_FP32_LANES_64 = ("7.", "8.0")


def mma_sync_int8_tflops(gpu: GPU) -> float | None:
    """The int8 tensor rate of a consumer-class SM (GA10x, AD10x, GB20x: 8 x their FP32
    vector rate, which is their datasheet int8) at this card's SM count and clock, from its
    FP32 vector rate; NVIDIA only (other vendors: their int8 peak). llama.cpp's MMQ tiles
    (mma.sync on int8, dequantised in registers) run at this per-SM rate: the A100's doubled
    per-SM int8 and Hopper's and data-centre Blackwell's wgmma/tcgen05 peaks go unused."""
    if str(gpu.vendor) != "nvidia":
        return gpu.tflops("int8")
    fp32, int8 = gpu.tflops("fp32"), gpu.tflops("int8")
    if not int8 or not fp32:  # no int8 tensor cores (Volta), or no FP32 figure
        return int8
    cc = str(gpu.compute_capability.value)
    lanes = 64 if cc.startswith(_FP32_LANES_64) else 128
    return min(8 * fp32 * 128 / lanes, int8) * mma_sync_rate_factor(gpu)


def mma_sync_rate_factor(gpu: GPU) -> float:
    """The share of its boost-clock mma.sync rate a card sustains (speed_constants.toml
    ``mma_sync_rate_factor``, by catalog id: 1 but for the power-limited GB10 of the DGX
    Spark, fitted on its llama.cpp prefill rows)."""
    table = speed_value("mma_sync_rate_factor")
    return float(table.get(gpu.id, table["default"]))


def link_for(gpu: GPU, count: int) -> Link:
    """The link between ``count`` GPUs of this kind in one server (S23, S28).

    A job larger than the NVLink domain still uses NVLink within each server; what crosses
    servers goes over :func:`fabric_for`.
    """
    if count <= 1:
        return Link("none", float("inf"), 0.0, 1.0)
    ic = gpu.interconnect
    latency = speed_value("link_latency_us")
    eff = speed_value("link_efficiency")
    kind = str(ic.kind.value)
    domain = int(ic.domain_gpus.value)
    # switched fabrics (NVLink switches, Infinity Fabric meshes, Gaudi's on-die RoCE) and
    # bridges within their domain (NVLink or Infinity Fabric bridges of 2-4 cards)
    switched = (kind.startswith("nvlink") and kind != "nvlink-bridge") or kind in (
        "infinity-fabric", "roce-scaleup")
    # a bridge joins at most its domain's cards, and only where it is fitted (the catalog's
    # bridge_fitted: a GeForce RTX 3090's is sold apart, most machines have none)
    fitted = ic.bridge_fitted is None or bool(ic.bridge_fitted.value)
    if switched or (kind.endswith("-bridge") and count <= domain and fitted):
        return Link("nvlink", ic.one_way_bytes_per_s, latency["nvlink"] * 1e-6, eff["nvlink"])
    pcie_one_way = pcie_one_way_bytes_per_s(gpu)
    if kind.startswith("pcie"):
        pcie_one_way = ic.one_way_bytes_per_s
    if ic.peer_to_peer.value:
        return Link("pcie_p2p", pcie_one_way, latency["pcie_p2p"] * 1e-6, eff["pcie_p2p"])
    return Link("pcie_host", pcie_one_way, latency["pcie_host"] * 1e-6, eff["pcie_host"])


def measured_link(gpu: GPU, count: int, measured: dict[str, Any]) -> Link:
    """The link a calibration profile measured (``nvidia-smi topo -m`` and a timed copy).

    The kind comes from the real topology; a measured one-way copy bandwidth replaces the
    datasheet figure times the link efficiency (the copy already pays what the link loses).
    """
    kind = measured["kind"]
    assumed = link_for(gpu, count)
    latency = speed_value("link_latency_us")[kind] * 1e-6
    bw = measured.get("one_way_bytes_per_s")
    if bw:
        return Link(kind, float(bw), latency, 1.0)
    if kind == assumed.kind:
        return assumed
    pcie_one_way = pcie_one_way_bytes_per_s(gpu)
    if kind == "nvlink":
        pcie_one_way = gpu.interconnect.one_way_bytes_per_s
    return Link(kind, pcie_one_way, latency, speed_value("link_efficiency")[kind])


def pcie_one_way_bytes_per_s(gpu: GPU) -> float:
    """One direction of the card's x16 host link (PCI-SIG: 16, 32, 64 GB/s for PCIe 3/4/5)."""
    table = speed_value("pcie_one_way_gb_s")
    return float(table.get(str(gpu.interconnect.host_link.value), table["default"])) * GB


def server_size(gpu: GPU, gpus_per_node: int | None = None) -> int:
    """GPUs of one server: as given (``--gpus-per-node``), else 8 or the card's NVLink domain
    when larger (an NVL72 rack is one domain)."""
    if gpus_per_node:
        return gpus_per_node
    return max(int(gpu.interconnect.domain_gpus.value), 1, 8)


def fabric_for(gpu: GPU, count: int, link: Link | None = None, network: Any = None,
               gpus_per_node: int | None = None) -> Link:
    """What a collective over all ``count`` GPUs crosses when they span several servers.

    Within one server (or one NVLink domain) that is the server's own link. Across servers a
    ring collective passes both the network and each server's internal link, so it runs at the
    slower of the two (S28: a PCIe box without peer-to-peer stays PCIe-limited inside, however
    fast its network) and hides as little behind compute as the worse of them. ``network``
    (a NodeLink, ``--interconnect``) replaces the per-architecture default network.
    """
    server = server_size(gpu, gpus_per_node)
    if count <= server:
        return link_for(gpu, count)
    from whichgpu.estimate.constants import per_key

    if network is not None:
        net_bw, net_eff = network.line_rate_bytes_per_s, network.efficiency
        latency = network.latency_s
    else:
        net_bw = per_key("cluster_network_gb_s", str(gpu.architecture.value)) * 1e9
        net_eff = speed_value("cluster_network_efficiency")
        latency = speed_value("cluster_network_latency_us") * 1e-6
    inner = link or link_for(gpu, min(count, server))
    if inner.kind == "none":
        return Link("network", net_bw, latency, net_eff, ("network",))
    effective = min(net_bw * net_eff, inner.one_way_bytes_per_s * inner.efficiency)
    return Link("network", effective, max(latency, inner.latency_s), 1.0,
                ("network", inner.kind))


def hardware(gpu: GPU, count: int = 1, profile: Calibration | None = None,
             interconnect: Any = None, gpus_per_node: int | None = None) -> Hardware:
    """The hardware view of ``count`` x ``gpu``, rescaled by a calibration profile if given.

    A profile that measured the topology of up to one server's GPUs replaces the assumed link
    within the server (and, for a job that fits one server, the fabric too). ``interconnect``
    (an id or NodeLink, ``--interconnect``) is the link between servers and ``gpus_per_node``
    how many GPUs each server holds (default: the speed constants' network, 8 per server).
    """
    if profile is not None:
        return _hardware(gpu, count, profile, interconnect, gpus_per_node)
    key = (id(gpu), count, interconnect, gpus_per_node)
    try:
        hit = _HARDWARE.get(key)
    except TypeError:  # an unhashable interconnect: no memo
        return _hardware(gpu, count, profile, interconnect, gpus_per_node)
    if hit is not None and hit[0] is gpu:
        return cast(Hardware, hit[1])
    view = _hardware(gpu, count, profile, interconnect, gpus_per_node)
    _HARDWARE.put(key, (gpu, view))
    return view


# the views without a calibration profile, by GPU (identity), count, interconnect and server
# size: one object per view, so the per-(workload, hardware) memos of the speed model hit by
# identity across the options of a recommendation
_HARDWARE = Table(1024)


def _hardware(gpu: GPU, count: int, profile: Calibration | None, interconnect: Any,
              gpus_per_node: int | None) -> Hardware:
    from whichgpu.estimate.interconnect import NodeLink, node_link

    network = (interconnect if isinstance(interconnect, NodeLink) or interconnect is None
               else node_link(interconnect))
    cs = bs = 1.0
    source = None
    in_server = min(count, gpus_per_node or 8)
    link = link_for(gpu, in_server)
    if profile is not None:
        cs, bs = profile.scales_for(gpu.id, REFERENCE_MATMUL_FRACTION,
                                    REFERENCE_BANDWIDTH_FRACTION)
        measured = profile.link_for(gpu.id, in_server)
        if measured:
            link = measured_link(gpu, in_server, measured)
        if profile.entries(gpu.id):  # a profile speaks only for the GPUs it measured
            source = profile.describe()
    fabric = fabric_for(gpu, count, link, network, gpus_per_node)
    if fabric.kind != "network":
        fabric = link
    return Hardware(gpu, count, link, fabric, cs, bs, source,
                    per_server=server_size(gpu, gpus_per_node), network=network)


def arch_key(gpu: GPU) -> str:
    """The architecture key of the per-architecture speed constants.

    GeForce Blackwell (sm_120) is its own key: it computes with mma.sync like Ampere and Ada,
    not with the data-centre Blackwell's tcgen05 (https://github.com/triton-lang/triton/pull/6680).
    """
    arch = str(gpu.architecture.value)
    # sm_12x (RTX 50, RTX PRO Blackwell, GB10 in DGX Spark) computes like GeForce Blackwell
    if arch == "Blackwell" and (gpu.form_factor == "consumer"
                                or str(gpu.compute_capability.value).startswith("12.")):
        return "Blackwell GeForce"
    return arch


def _first_supported(gpu: GPU, *keys: str) -> str:
    for k in keys:
        if gpu.supports(k):
            return k
    return "fp32"


def compute_precision(gpu: GPU, quant: QuantFormat, engine: Engine = Engine.VLLM,
                      training: bool = False) -> tuple[str, str]:
    """The precision key the matmuls run at, and why.

    Weight-only formats (AWQ, GPTQ, GGUF, NF4, EXL2) compute in 16-bit: bytes shrink, compute
    does not. FP8/INT8/FP4 formats compute natively only where the card has the unit (the
    A100 has no FP8: there FP8 weights are dequantized to 16-bit). GeForce cards use the
    FP32-accumulate rate except under llama.cpp, whose cuBLAS path accumulates in FP16 (S22).
    """
    sixteen = _first_supported(gpu, "bf16", "fp16")
    if quant.compute in ("fp8", "int8", "fp4") and not training:
        if gpu.supports(quant.compute):
            return quant.compute, f"{quant.name} runs natively at {quant.compute}"
        if quant.compute == "fp4" and gpu.supports("fp8"):
            return sixteen, f"{gpu.id} has no FP4: {quant.name} weights are dequantized"
        return sixteen, (f"{gpu.id} has no {quant.compute.upper()} unit: {quant.name} weights "
                         f"are dequantized and the matmuls run at {sixteen}")
    if quant.compute == "fp32":
        return _first_supported(gpu, "tf32", "fp32"), "fp32 weights: TF32 tensor cores"
    consumer: tuple[str, str] | None = getattr(module(engine), "CONSUMER_GEMM", None)
    if consumer is not None and gpu.form_factor == "consumer" and not training:
        return consumer  # llama.cpp's FP16 accumulate (engines/llamacpp.py)
    return sixteen, f"16-bit compute ({sixteen}, FP32 accumulate)"
