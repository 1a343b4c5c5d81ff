"""Machines as sold: how the GPUs of one option sit in the machines its offer rents.

An offer is a machine: a provider's instance type or marketplace host with its GPU count
(``Offer.gpu_count``), rented whole. GPUs that work on one model together (tensor or pipeline
parallel inference, data-parallel training) must be *linked* in one machine, over that
machine's own links (NVLink/SXM or PCIe, as the catalog says for the variant): they are priced
only from offers whose machine holds them all. Work that splits into independent parts
(diffusion pipelines, serving or batch replicas) may run on several separate machines.
Training beyond one server (more than :data:`SERVER_GPUS`) runs on whole servers linked by a
cluster network.

An offer without an instance type (the articles' offer sets, offer files without the column)
states a price per GPU, not a machine: it is taken as one machine of the size the job needs
(a server at most) at that price per GPU, and the answer says so (``sized_as_asked``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from whichgpu.cost.capacity import SERVER_GPUS, Spread
from whichgpu.estimate import memo
from whichgpu.messages import Message, msg

if TYPE_CHECKING:
    from whichgpu.catalog.gpus import GPU
    from whichgpu.catalog.offers import Offer
    from whichgpu.estimate.speed.hardware import LinkKind
    from whichgpu.estimate.workload import Workload
    from whichgpu.units import Range

__all__ = ["SERVER_GPUS", "SETUP_SOURCE", "Machines", "Spread", "as_machine", "link_words",
           "linked_gpus", "machine_setup", "machines_for", "per_gpu_price", "sizes_sold"]


@dataclass(frozen=True)
class Machines:
    """The machines one option rents: ``machines`` x ``per_machine`` GPUs (its offer's size),
    ``used`` of them working; ``linked`` GPUs of one part must share a machine."""

    machines: int
    per_machine: int
    used: int
    linked: int
    spread: Spread
    sized_as_asked: bool = False  # the offer gives a price per GPU, not a machine

    @property
    def paid(self) -> int:
        """GPUs paid for (whole machines)."""
        return self.machines * self.per_machine

    def describe(self) -> Message:
        """'one 2-GPU machine', '5 separate machines of 1 GPU', '8 machines of 8 GPUs ...'
        (said once per record: machines_for shares one record per shape)."""
        said = self.__dict__.get("_said")
        if said is None:
            said = self.__dict__["_said"] = self._describe()
        return said

    def _describe(self) -> Message:
        if self.spread is Spread.ONE:
            if self.used < self.per_machine:
                return msg("machines.one.part", "one {size}-GPU machine ({used} GPU(s) used)",
                           size=self.per_machine, used=self.used)
            return msg("machines.one", "one {size}-GPU machine", size=self.per_machine)
        if self.spread is Spread.SEPARATE:
            return msg("machines.separate", "{n} separate machines of {size} GPU(s)",
                       n=self.machines, size=self.per_machine)
        return msg("machines.cluster", "{n} machines of {size} GPUs linked by a cluster "
                   "network", n=self.machines, size=self.per_machine)

    def to_json(self) -> dict[str, Any]:
        return {"machines": self.machines, "gpus_per_machine": self.per_machine,
                "gpus_used": self.used, "gpus_paid": self.paid,
                "linked_gpus": self.linked, "spread": self.spread,
                "shape": self.describe()}


def linked_gpus(wl: Workload, count: int) -> int:
    """GPUs of one part (one replica) that must share a machine: all of them, except for
    diffusion, where they are the GPUs of one pipeline: 1 where each GPU runs its own, more
    where one pipeline is split over GPUs (diffusers' context parallelism for a video, SGLang's
    tensor, sequence and CFG parallelism), whose all-to-alls need the machine's link (once
    priced as separate 1-GPU machines with nothing between them)."""
    if not wl.is_diffusion:
        return count
    from whichgpu.errors import InputError
    from whichgpu.estimate.diffusion_parallel import diffusion_layout

    try:
        return min(count, diffusion_layout(wl.with_(gpus=count)).per_pipeline)
    except InputError:  # a degree that does not divide these GPUs: refused where it is run
        return 1


def per_gpu_price(offer: Offer) -> bool:
    """The offer states a price per GPU, not a machine (no instance type, one GPU)."""
    return offer.instance_type is None and offer.gpu_count == 1


def as_machine(offer: Offer, wl: Workload, count: int) -> Offer:
    """``offer`` as the machine a part of ``count`` linked GPUs runs on: itself, or (a price
    per GPU) one machine of that many GPUs, a server at most, at that price per GPU."""
    linked = linked_gpus(wl, count)
    if linked == 1 or not per_gpu_price(offer):
        return offer
    return _per_gpu_machine(offer, min(linked, SERVER_GPUS))


@memo.by_identity(512)  # an offer priced per GPU, as a machine of each size, made once
def _per_gpu_machine(offer: Offer, size: int) -> Offer:
    """One machine of ``size`` GPUs of an offer priced per GPU, at that price per GPU."""
    return offer.model_copy(update={"gpu_count": size,
                                    "price_per_hour": offer.price_per_hour * size})


def machines_for(offer: Offer, wl: Workload, count: int, replicas: int = 1
                 ) -> tuple[Offer, Machines] | None:
    """The machine offer and the machines of it that run ``replicas`` parts of ``count`` GPUs,
    or None when its machine cannot hold the GPUs that must be linked."""
    linked = linked_gpus(wl, count)
    if linked == 1 or not per_gpu_price(offer):
        sized, as_asked = offer, False
    else:
        sized, as_asked = _per_gpu_machine(offer, min(linked, SERVER_GPUS)), True
    key = (sized.gpu_count, linked, count, replicas, as_asked)
    got = _SHAPES.get(key)
    if got is None:
        m = _shape(sized.gpu_count, linked, count, replicas)
        if m is not None and as_asked:
            from dataclasses import replace

            m = replace(m, sized_as_asked=True)
        got = _SHAPES.put(key, (m,))
    return None if got[0] is None else (sized, got[0])


# machines_for's shapes by value: (GPUs per machine, linked GPUs, count, replicas, priced per
# GPU) -> Machines (or None)
_SHAPES = memo.Table(4096)


def _shape(size: int, linked: int, count: int, replicas: int) -> Machines | None:
    """The machines of ``size`` GPUs that run ``replicas`` parts of ``count`` GPUs, ``linked``
    of which must share a machine (None: a machine cannot hold them)."""
    if linked == 1 and count > 1:  # independent pipelines: as many machines as they need
        parts = count * replicas
        n = math.ceil(parts / size)
        return Machines(n, size, parts, 1, Spread.SEPARATE if n > 1 else Spread.ONE)
    if count > SERVER_GPUS:  # a cluster of whole servers (training past one server)
        if size < SERVER_GPUS or count % size:
            return None
        return Machines(count // size * replicas, size, count * replicas, count, Spread.CLUSTER)
    if size < count:
        return None
    return Machines(replicas, size, count * replicas, count,
                    Spread.SEPARATE if replicas > 1 else Spread.ONE)


#: Where a machine's setup time comes from (machine_setup).
SETUP_SOURCE = "cost/data/spot.toml"


def machine_setup(wl: Workload) -> Range:
    """Seconds a machine spends before its share of independent work: it boots, sets up the
    engine and loads the replica's weights from storage (the restart a spot interruption
    costs, cost/data/spot.toml; low to high). Remembered per workload of a shared model
    (asked per option priced)."""
    return _setup_kept(wl) if memo.shared(wl.model) else _setup(wl)


@memo.by_identity(1024)
def _setup_kept(wl: Workload) -> Range:
    return _setup(wl)


def _setup(wl: Workload) -> Range:
    from whichgpu.advise.spot_risk import job_bytes
    from whichgpu.cost.spot import restart_assumption
    from whichgpu.units import Range

    rs = restart_assumption()
    _ckpt, load = job_bytes(wl)
    boot, speed = rs.boot_setup_s, rs.storage_bytes_per_s
    return Range(boot.low + load / speed.high, boot.typical + load / speed.typical,
                 boot.high + load / speed.low)


def _link_kind(link: str | None) -> LinkKind | None:
    """A speed estimate's ``link`` scalar (text in its JSON) as the link vocabulary; an
    unknown word is dropped (the catalog's rule then decides, as with no estimate)."""
    from typing import get_args

    from whichgpu.estimate.speed.hardware import LinkKind as _Kinds

    return next((k for k in get_args(_Kinds) if k == link), None)


def link_words(gpu: GPU, count: int, kind: LinkKind | None = None) -> Message | str:
    """The link between ``count`` GPUs of one machine of ``gpu``: the one the speed model
    used (``kind``, its estimate's ``link``; else the same rule, ``link_for``), so an answer's
    assumption and its speed never disagree. NVLink (a switch, or a bridge within its 2-4
    cards) is named as the catalog sells it; past a bridge's cards, or without one, the
    cards talk over PCIe (the catalog's note on the RTX 3090: most rented ones have no bridge)."""
    if kind is None:
        from whichgpu.estimate.speed.hardware import link_for

        kind = link_for(gpu, count).kind
    ic = gpu.interconnect
    if kind in ("pcie_p2p", "pcie_host"):  # the generation as the catalog says it (pcie4)
        pcie = next((str(v) for v in (ic.kind.value, ic.host_link.value)
                     if str(v).startswith("pcie")), "pcie")
        if kind == "pcie_p2p":
            return msg("link.pcie_p2p", "{pcie}, peer to peer", pcie=pcie)
        return msg("link.pcie_host", "{pcie} through the host (GPUs without peer-to-peer)",
                   pcie=pcie)
    return str(ic.kind.value)


def sizes_sold(pool: list[Offer]) -> list[int]:
    """The machine sizes (GPUs per machine) a pool of offers sells, smallest first."""
    return sorted({o.gpu_count for o in pool})


def offer_assumptions(offer: Offer, m: Machines, gpu: GPU,
                      link: str | None = None) -> list[Message]:
    """What renting ``m`` machines of ``offer`` assumes (the machine as sold, its links, GPUs
    paid for and not used, several machines, clusters); ``link`` is the link kind the speed
    estimate used between the linked GPUs (its ``link`` scalar)."""
    out = []
    machine = dict(provider=offer.provider, size=offer.gpu_count,
                   instance=f" ({offer.instance_type})" if offer.instance_type else "")
    if m.sized_as_asked:
        out.append(msg("assume.machine.per_gpu", "{provider} gives a price per GPU, not the "
                       "machines it sells: assumed one {size}-GPU machine at {size} x that "
                       "price", **machine))
    if m.spread is Spread.CLUSTER:
        out.append(msg("assume.cluster.machines", "{n} machines of {size} GPUs from "
                       "{provider}{instance}, linked by a cluster network: the price list "
                       "does not say such a cluster can be rented; large clusters are "
                       "usually reserved in advance, at other prices", n=m.machines, **machine))
    elif m.linked > 1:
        out.append(msg("assume.machine.linked", "the {linked} GPUs that work together are in "
                       "one {size}-GPU machine of {provider}{instance}, linked by its "
                       "{link} (the speed assumes these links)", linked=m.linked,
                       link=link_words(gpu, m.linked, _link_kind(link)), **machine))
    if m.spread is Spread.SEPARATE:
        out.append(msg("assume.machines.separate", "{n} separate {size}-GPU machines of "
                       "{provider}: the work splits into independent parts, each machine "
                       "runs its share, nothing links them", n=m.machines, **machine))
    if m.paid > m.used:
        out.append(msg("assume.machines.paid", "{provider} rents {gpu} in {size}-GPU "
                       "machines: {paid} GPUs paid for, {used} used", gpu=gpu.id,
                       paid=m.paid, used=m.used, **machine))
    return out
