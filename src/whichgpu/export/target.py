"""Where an option runs, in launcher terms: provider, region, instance, GPUs per node, nodes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from whichgpu.errors import InputError
from whichgpu.export.names import Launcher, backend, label
from whichgpu.messages import Field, Join, msg
from whichgpu.units import format_money

if TYPE_CHECKING:
    from collections.abc import Sequence

    from whichgpu.advise.options import Option
    from whichgpu.catalog.offers import Offer
    from whichgpu.export.commands import LaunchCommands

SERVER_GPUS = 8  # GPUs one node holds (HGX/DGX boards): more is a cluster of nodes
_DISK_FLOOR_GB = 100  # the OS, CUDA, the engine and its caches
_DISK_STEP_GB = 50


@dataclass(frozen=True)
class Target:
    """The machine(s) an option runs on, as a launcher asks for them."""

    cloud: str  # the launcher's cloud / backend name
    provider: str  # as the price list spells it
    region: str | None
    instance_type: str | None  # None when the option is not one instance of the offer
    gpus_per_node: int
    nodes: int  # per replica
    spot: bool
    disk_gb: int  # per node, GB (10^9 bytes)
    price_per_node_hour: float  # what the estimate paid per node and hour, offer currency
    currency: str
    notes: tuple[str, ...] = ()
    replicas: int = 1  # replicas the estimate runs (a service: SkyServe / dstack replicas)
    spares: int = 0  # spare replicas on spot, to stay up through interruptions
    separate: bool = False  # the machines run independent shares of the work
    service: bool = True  # open-ended (serving): replicas behind one endpoint; else a batch

    def job_array(self, cmds: LaunchCommands, launcher: Launcher) -> int | None:
        """Separate machines launched one by one (a job array of this many runs, each with
        SHARD_INDEX set): always with dstack, where SkyPilot cannot put several nodes on the
        provider; None when the file asks for its nodes itself.

        dstack's ``nodes: N`` is a distributed task (dstack 0.22.5, server/services/offers.py
        and jobs_submitted.py): its nodes are provisioned together, in the first node's backend
        and region, with host networking, and only on backends with multi-node support (not
        vastai, lambda, datacrunch/verda, hotaisle, cloudrift ...). Independent shares need
        none of that, so they are N runs of one task, each told its share."""
        from whichgpu.export.names import skypilot_unsupported

        n = self.launch_nodes(cmds)
        if not self.separate or n <= 1:
            return None
        if launcher == "dstack" or "multi-node" in skypilot_unsupported(self.provider):
            return n
        return None

    def launch_nodes(self, cmds: LaunchCommands) -> int:
        """Nodes the task file asks for: a service's nodes per replica (the launcher runs the
        replicas), else every machine the answer priced (its replicas' included)."""
        if self.service_replicas(cmds) is not None:
            return self.nodes
        return self.nodes * self.replicas

    def service_replicas(self, cmds: LaunchCommands) -> int | None:
        """Replicas to run as a service (a server run as several replicas, or on spot with
        spares); None: a single task."""
        if not self.service or not cmds.ports or (self.replicas <= 1 and not self.spares):
            return None  # a batch's shares are runs that end, not a service
        return self.replicas + self.spares


def target(option: Option, launcher: Launcher, offers: Sequence[Offer] | None = None) -> Target:
    """The option's machines, or an InputError saying why ``launcher`` cannot express it.
    ``offers`` (the price list the answer used) says which machine sizes the provider sells:
    an option priced from smaller offers is exported only as machines that exist."""
    offer = option.offer
    if offer.offer_set == "owned" or offer.provider == "you (owned)":
        raise InputError(msg("export.owned", "option {option} is your own card: {launcher} "
                             "launches rented machines (for your own machine, run the engine "
                             "directly, or register it with the launcher: SkyPilot's ssh node "
                             "pools, dstack's ssh fleets)", option=option.label,
                             launcher=label(launcher)))
    cloud = backend(offer.provider, launcher)
    if cloud is None:
        other: Launcher = "dstack" if launcher == "skypilot" else "skypilot"
        alt = backend(offer.provider, other)
        where = {"launcher": label(launcher), "provider": offer.provider,
                 "option": option.label, "field": Field("export_option"),
                 "prices": Field("prices")}
        if alt:
            raise InputError(msg("export.no_backend.other", "{launcher} has no backend for "
                                 "{provider} (option {option}): use {other}, which has one, "
                                 "or pick an option on another provider with {field}, or "
                                 "narrow the price list with {prices}",
                                 other=Field("export", other), **where))
        raise InputError(msg("export.no_backend", "{launcher} has no backend for {provider} "
                             "(option {option}): pick an option on another provider with "
                             "{field}, or narrow the price list with {prices}", **where))
    shape = option.machines
    notes: list[str] = []
    if shape is None and option.count > offer.gpu_count:  # an option priced before machines
        gpus, nodes, instance, price, note = _machines(option, offers)
        notes.append(note)
    else:
        # the machines the answer priced, as sold: its offer's machine, as many as it said
        gpus, instance, price = offer.gpu_count, offer.instance_type, offer.price_per_hour.amount
        nodes = 1 if shape is None else shape.machines
        used = option.gpus if shape is None else shape.used
        if gpus * nodes > used:
            notes.append(f"{nodes} x {gpus}-GPU machine(s) rented whole ({used} GPU(s) used)")
        if shape is not None and shape.spread == "separate machines":
            notes.append(f"{nodes} separate machines, each running its own share of the work "
                         "(nothing links them): "
                         + {"skypilot": "a node finds its share from its rank, "
                                        "SKYPILOT_NODE_RANK of SKYPILOT_NUM_NODES (or "
                                        "SHARD_INDEX of SHARD_COUNT when launched one by one)",
                            "dstack": "one dstack run each, which finds its share from "
                                      "SHARD_INDEX of SHARD_COUNT (a multi-node task would "
                                      "tie them to one backend and region, on backends with "
                                      "multi-node support only)"}[launcher])
    if shape is not None and option.replicas > 1:
        nodes = max(1, nodes // option.replicas)  # per replica (launch_nodes counts them all)
    return Target(cloud, offer.provider, offer.region, instance, gpus, nodes,
                  offer.spot, disk_gb(option), price, offer.price_per_hour.currency,
                  tuple(notes), replicas=option.replicas, spares=_spares(option),
                  separate=shape is not None and shape.spread == "separate machines",
                  service=option.time_s is None)


def _spares(option: Option) -> int:
    """Spare replicas a spot service runs (its spot risk's typical count)."""
    spares = getattr(option.spot_risk, "spares", None)
    return int(spares.typical) if spares is not None else 0


def disk_gb(option: Option) -> int:
    """Disk per node: the weights (and, training, two checkpoints) with room for the OS,
    the engine and its caches, rounded up to 50 GB."""
    from whichgpu.advise.spot_risk import job_bytes

    w = option.workload
    if w is None:
        return _DISK_FLOOR_GB
    ckpt, load = job_bytes(w)
    need = (load + 2 * ckpt) / 1e9 * 1.2 + _DISK_FLOOR_GB
    return int(math.ceil(need / _DISK_STEP_GB) * _DISK_STEP_GB)


def _machines(option: Option, offers: Sequence[Offer] | None
              ) -> tuple[int, int, str | None, float, str]:
    """GPUs per node, nodes, instance type, price per node-hour and a note for an option that
    needs more GPUs than its offer holds: one machine of exactly that size, or whole nodes of
    the largest size, from the offers of the same provider, GPU and pricing; an InputError
    when the provider sells no such machine."""
    offer, need = option.offer, option.count
    same = [o for o in offers or () if o.provider == offer.provider and o.gpu == offer.gpu
            and o.spot == offer.spot]
    if not same:  # no price list to check sizes against: ask for the count, as priced
        nodes = math.ceil(need / SERVER_GPUS)
        gpus = need if nodes == 1 else SERVER_GPUS
        return (gpus, nodes, None, offer.price_per_gpu_hour.amount * gpus,
                f"{nodes} x {gpus}-GPU machine(s) asked for without an instance type: the "
                f"estimate priced {math.ceil(need / offer.gpu_count)} x {offer.provider}'s "
                f"{offer.gpu_count}-GPU offer")
    sizes = sorted({o.gpu_count for o in same})

    def cheapest(n: int) -> Offer:
        return min((o for o in same if o.gpu_count == n), key=lambda o: o.price_per_hour.amount)

    if need in sizes:
        o = cheapest(need)
        return (need, 1, o.instance_type, o.price_per_hour.amount,
                f"one {need}-GPU machine ({o.instance_type or 'its offer'}, "
                f"{format_money(o.price_per_hour)}/h); the estimate "
                f"priced {math.ceil(need / offer.gpu_count)} x the {offer.gpu_count}-GPU offer")
    top = sizes[-1]
    if need > SERVER_GPUS and need > top and (need % top == 0 or offer.gpu_count == top):
        o = cheapest(top)  # whole nodes (the estimate paid whole instances of its offer)
        nodes = math.ceil(need / top)
        return (top, nodes, o.instance_type, o.price_per_hour.amount,
                f"a cluster of {nodes} nodes of {top} GPUs")
    priced = math.ceil(need / offer.gpu_count)
    raise InputError(msg("export.sizes", "{provider} sells {gpu} in machines of {sold} GPU(s) "
                         "in this price list, none of {need} (the estimate priced {priced} x "
                         "its {per}-GPU offer as one server): pick another option with "
                         "{field}, or cap the count with {max_gpus}", provider=offer.provider,
                         gpu=option.gpu.id, sold=Join(sizes), need=need, priced=priced,
                         per=offer.gpu_count, field=Field("export_option"),
                         max_gpus=Field("max_gpus")))


def check_features(option: Option, where: Target, cmds: LaunchCommands,
                   launcher: Launcher) -> None:
    """An InputError when the file would use a feature the launcher does not implement on the
    option's cloud (SkyPilot: open ports, several nodes, a mounted bucket, spot)."""
    if launcher != "skypilot":
        return
    from whichgpu.export.names import feature_words, skypilot_unsupported

    used = set()
    if cmds.ports:
        used.add("open_ports")
    if where.launch_nodes(cmds) > 1 and where.job_array(cmds, launcher) is None:
        used.add("multi-node")
    if cmds.checkpoints:
        used.add("storage_mounting")
    if where.spot:
        used.add("spot_instance")
    if cmds.image:
        used.add("docker_image")
    missing = sorted(used & skypilot_unsupported(where.provider))
    if missing:
        raise InputError(msg("export.features", "SkyPilot does not support {features} on "
                             "{provider} (option {option}), which this file needs: pick an "
                             "option on another provider with {field}",
                             features=Join((feature_words(f) for f in missing), sep=" or "),
                             provider=where.provider, option=option.label,
                             field=Field("export_option")))
