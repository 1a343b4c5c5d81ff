"""A dstack task (``dstack apply -f``) for one ranked option."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from whichgpu.export.commands import CHECKPOINT_DIR
from whichgpu.export.names import dstack_gpu

if TYPE_CHECKING:
    from whichgpu.advise.options import Option, Recommendation
    from whichgpu.export.commands import LaunchCommands
    from whichgpu.export.target import Target

VOLUME = "fill-in-your-checkpoint-volume"  # a dstack volume name the user replaces


def _name(rec: Recommendation) -> str:
    w = rec.job.workload
    text = f"whichgpu-{w.model.id}-{w.task}".lower()
    return re.sub(r"[^a-z0-9-]+", "-", text).strip("-")[:40].strip("-")


def run_prefix(rec: Recommendation) -> str:
    """The runs of a job array are named PREFIX-0, PREFIX-1 ...: room left for the index in
    dstack's 41 characters ('^[a-z][a-z0-9-]{1,40}$', is_valid_dstack_resource_name)."""
    return _name(rec)[:34].strip("-")


def _commands(text: str) -> list[str]:
    """A shell script as dstack's list of commands: one entry per command, a heredoc or a
    line continued with a backslash kept whole."""
    out: list[str] = []
    buf: list[str] = []
    heredoc: str | None = None
    for line in text.rstrip("\n").split("\n"):
        buf.append(line)
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            else:
                continue
        else:
            m = re.search(r"<<\s*'?([A-Za-z_]+)'?\s*$", line)
            if m:
                heredoc = m.group(1)
                continue
            if line.endswith("\\"):
                continue
        out.append("\n".join(buf))
        buf = []
    if buf:
        out.append("\n".join(buf))
    return [c for c in out if c.strip()]


def task(rec: Recommendation, opt: Option, where: Target, cmds: LaunchCommands
         ) -> dict[str, Any]:
    """The task as a dict in dstack's schema (type task, resources.gpu, spot_policy ...)."""
    gpu = dstack_gpu(opt.gpu.id)
    spec: dict[str, Any] = {"name": [gpu.name], "memory": f"{gpu.memory_gb}GB",
                            "count": where.gpus_per_node}
    if gpu.vendor:
        spec = {"vendor": gpu.vendor, **spec}
    out: dict[str, Any] = {"type": "task", "name": _name(rec)}
    if cmds.image:
        out["image"] = cmds.image
    array = where.job_array(cmds, "dstack")
    envs = dict(cmds.envs)
    if array is not None:  # separate machines: one run each, told its share (a job array)
        envs = {"SHARD_INDEX": "0", "SHARD_COUNT": str(array), **envs}
    elif where.launch_nodes(cmds) > 1:  # a cluster: one distributed task over its nodes
        out["nodes"] = where.launch_nodes(cmds)
    env: list[str] = [f"{k}={v}" for k, v in envs.items()] + list(cmds.secrets)
    if env:
        out["env"] = env
    out["commands"] = _commands(cmds.setup) + _commands(cmds.run)
    replicas = where.service_replicas(cmds)
    if replicas is not None:  # a dstack service: its replicas behind one endpoint
        out["type"] = "service"
        out["port"] = cmds.ports[0]
        out["replicas"] = replicas
        out["probes"] = [{"type": "http", "url": "/health"}]
    elif cmds.ports:
        out["ports"] = list(cmds.ports)
    out["resources"] = {"gpu": spec, "disk": f"{math.ceil(where.disk_gb * 1e9 / 2**30)}GB.."}
    out["backends"] = [where.cloud]
    if where.region:
        out["regions"] = [where.region]
    if where.instance_type:
        out["instance_types"] = [where.instance_type]
    out["spot_policy"] = "spot" if where.spot else "on-demand"
    # the offer's price per node and hour in USD (dstack's unit), rounded up to the cent (a
    # hair of float error from a currency round trip is not a cent): no dearer machine is taken
    out["max_price"] = math.ceil(round(where.price_per_node_hour * 100, 6)) / 100
    if where.spot and rec.job.workload.is_training:
        out["retry"] = {"on_events": ["no-capacity", "interruption"], "duration": "1d"}
    if cmds.checkpoints:
        out["volumes"] = [{"name": VOLUME, "path": CHECKPOINT_DIR}]
    return out
