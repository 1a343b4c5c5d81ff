"""The link between servers (``--interconnect``): its bandwidth, latency and what a collective
reaches of it, each from ``data/interconnects.toml`` with its source.

A job that spans several servers sends its data-parallel gradients (all-reduce, or ZeRO-3/FSDP
all-gathers and reduce-scatters), tensor or pipeline-parallel activations that cross servers,
and a disaggregated server's KV cache over this link. Without ``--interconnect`` the speed
model keeps its per-architecture default (``cluster_network_gb_s`` in the speed constants:
400 Gb/s InfiniBand per GPU for Hopper and Blackwell, 200 Gb/s for Ampere, 100 Gb/s Ethernet
for other cards).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg


class Interconnect(StrEnum):
    """A link between servers (``--interconnect``); its figures: data/interconnects.toml."""

    GBE_10 = "10gbe"
    GBE_25 = "25gbe"
    GBE_100 = "100gbe"
    GBE_200 = "200gbe"
    GBE_400 = "400gbe"
    ROCE_100 = "roce-100"
    ROCE_200 = "roce-200"
    ROCE_400 = "roce-400"
    IB_HDR = "ib-hdr"
    IB_NDR = "ib-ndr"
    IB_XDR = "ib-xdr"
    TB4 = "tb4"
    TB5 = "tb5"
    TB5_RDMA = "tb5-rdma"


@dataclass(frozen=True)
class NodeLink:
    """One link kind between servers, with where its figures come from."""

    id: Interconnect
    name: str
    line_rate_bytes_per_s: float  # one direction
    transport: str  # rdma or tcp
    efficiency: float
    latency_s: float
    source: str

    @property
    def effective_bytes_per_s(self) -> float:
        return self.line_rate_bytes_per_s * self.efficiency

    def transfer_s(self, nbytes: float) -> float:
        """Seconds to move ``nbytes`` one way (a KV cache, a pipeline stage's activations)."""
        if nbytes <= 0:
            return 0.0
        return nbytes / self.effective_bytes_per_s + self.latency_s

    def to_json(self) -> dict[str, Any]:
        return {"id": str(self.id), "name": self.name,
                "line_rate_bytes_per_s": self.line_rate_bytes_per_s,
                "effective_bytes_per_s": self.effective_bytes_per_s,
                "efficiency": self.efficiency, "latency_s": self.latency_s,
                "transport": self.transport, "source": self.source}


@cache
def links() -> dict[Interconnect, NodeLink]:
    """Every link of data/interconnects.toml, by id."""
    text = resources.files("whichgpu.estimate").joinpath(
        "data/interconnects.toml").read_text("utf-8")
    out: dict[Interconnect, NodeLink] = {}
    for key, row in tomllib.loads(text)["link"].items():
        ident = Interconnect(key)
        out[ident] = NodeLink(ident, row["name"], float(row["line_rate_gbit_s"]) * 1e9 / 8,
                              row["transport"], float(row["efficiency"]),
                              float(row["latency_us"]) * 1e-6, row["source"])
    return out


def interconnect_of(ident: str | Interconnect) -> Interconnect:
    """The link of a canonical id (``100gbe``, ``ib-ndr``); people's spellings are read in
    answers/inputs/interconnect.py. Anything else is an input error that lists the links."""
    try:
        return Interconnect(ident)
    except ValueError:
        raise InputError(msg("interconnect.unknown", "unknown link between servers {v!r}; use "
                             "one of {choices}", v=str(ident),
                             choices=", ".join(str(i) for i in Interconnect))) from None


def node_link(which: str | Interconnect) -> NodeLink:
    """The figures of a link kind."""
    return links()[interconnect_of(which)]


def check_gpus_per_node(n: int | None) -> int | None:
    """A server holds at least one GPU; None: the default (one server of up to 8 GPUs, or
    the card's NVLink domain)."""
    if n is not None and n < 1:
        raise InputError(msg("bound.gpus_per_node", "{field} must be at least 1, got {v}",
                             field=Field("gpus_per_node"), v=n))
    return n


def default_network(arch: str) -> dict[str, Any]:
    """The network assumed between servers when no link is named (the speed constants)."""
    from whichgpu.estimate.constants import per_key, speed_constant, speed_value

    bw = per_key("cluster_network_gb_s", arch) * 1e9
    return {"id": None, "name": f"default for {arch}: {bw * 8 / 1e9:,.0f} Gb/s per GPU",
            "line_rate_bytes_per_s": bw, "efficiency": speed_value("cluster_network_efficiency"),
            "latency_s": speed_value("cluster_network_latency_us") * 1e-6,
            "source": speed_constant("cluster_network_gb_s").source}


def network_effect(hw: Any, added_s: float, step_s: float, what: str = "step"
                   ) -> tuple[Message, dict[str, Any]]:
    """What the link between servers adds to a step: a sentence and its JSON.

    ``added_s`` is the time the link costs per ``what`` (a training step, a decode step)
    beyond what the same GPUs would take in one server."""
    share = added_s / step_s if step_s > 0 else 0.0
    name: Message | str
    if hw.network is not None:
        link = hw.network.to_json()
        name = str(hw.network.id)
    else:
        link = default_network(str(hw.gpu.architecture.value))
        name = msg("interconnect.default_name", "default {gbit:,.0f} Gb/s",
                   gbit=link["line_rate_bytes_per_s"] * 8 / 1e9)
    data = {"link": link, "stated": hw.network is not None, "servers": hw.servers,
            "gpus_per_server": hw.per_server, "added_s_per_step": added_s,
            "share_of_step": share, "per": what,
            "effective_bytes_per_s": hw.fabric.one_way_bytes_per_s * hw.fabric.efficiency}
    if what == "decode step":
        said = msg("interconnect.effect.decode", "the {link} link between {servers} servers "
                   "adds {ms:.3g} ms per decode step, {share:.0%} of the step{default}",
                   link=name, servers=hw.servers, ms=added_s * 1e3, share=share,
                   default=_default_said(hw))
    else:
        said = msg("interconnect.effect", "the {link} link between {servers} servers adds "
                   "{s:.3g} s per step, {share:.0%} of the step{default}", link=name,
                   servers=hw.servers, s=added_s, share=share,
                   default=_default_said(hw))
    return said, data


def _default_said(hw: Any) -> Message | str:
    if hw.network is not None:
        return ""
    return msg("interconnect.default", " (no link given: {flag} names yours)",
               flag=Field("interconnect"))
