"""A SkyPilot task (``sky launch`` / ``sky jobs launch``) for one ranked option."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from whichgpu.export.commands import CHECKPOINT_DIR
from whichgpu.export.names import skypilot_accelerator

BUCKET = "fill-in-your-checkpoint-bucket"  # a bucket name the user replaces

if TYPE_CHECKING:
    from whichgpu.advise.options import Option, Recommendation
    from whichgpu.export.commands import LaunchCommands
    from whichgpu.export.target import Target


def _name(rec: Recommendation) -> str:
    w = rec.job.workload
    text = f"whichgpu-{w.model.id}-{w.task}".lower()
    return re.sub(r"[^a-z0-9-]+", "-", text).strip("-")[:60]


def task(rec: Recommendation, opt: Option, where: Target, cmds: LaunchCommands
         ) -> dict[str, Any]:
    """The task as a dict in SkyPilot's schema (resources, envs, setup, run)."""
    resources: dict[str, Any] = {
        "infra": where.cloud + (f"/{where.region}" if where.region else ""),
        "accelerators": f"{skypilot_accelerator(opt.gpu.id, where.cloud)}:"
                        f"{where.gpus_per_node}",
    }
    if where.instance_type:
        resources["instance_type"] = where.instance_type
    if cmds.image:
        resources["image_id"] = f"docker:{cmds.image}"
    resources["use_spot"] = where.spot
    resources["disk_size"] = where.disk_gb
    if cmds.ports:
        resources["ports"] = list(cmds.ports)
    if where.spot and rec.job.workload.is_training:
        # a managed job relaunches after an interruption, here or in another region
        resources["job_recovery"] = {"strategy": "EAGER_NEXT_REGION",
                                     "max_restarts_on_errors": 3}
    out: dict[str, Any] = {"name": _name(rec), "resources": resources}
    replicas = where.service_replicas(cmds)
    if replicas is not None:  # SkyServe: sky serve up runs the replicas behind one endpoint
        out["service"] = {"readiness_probe": "/health", "replicas": replicas}
    array = where.job_array(cmds, "skypilot")
    envs = dict(cmds.envs)
    if array is not None:  # separate machines launched one by one, each with its share
        envs = {"SHARD_INDEX": "0", "SHARD_COUNT": str(array), **envs}
    elif where.launch_nodes(cmds) > 1:
        out["num_nodes"] = where.launch_nodes(cmds)
    if envs:
        out["envs"] = envs
    if cmds.secrets:
        out["secrets"] = {s: None for s in cmds.secrets}
    if cmds.checkpoints:
        # a bucket outlives the machine; its name is the user's (FILL-IN, as a valid name)
        out["file_mounts"] = {CHECKPOINT_DIR: {"name": BUCKET, "mode": "MOUNT"}}
    out["setup"] = cmds.setup
    out["run"] = cmds.run
    return out
