"""Load whichgpu's task files with the launchers' own code (run in the launchers' environment).

Runs under the environment ``make setup`` builds for SkyPilot and dstack (.venv-launchers: they
cannot share whichgpu's, see docs/export.md); the tests call it and read its JSON.

    python scripts/check_launcher_files.py skypilot FILE...   # sky.Task.from_yaml, feasibility
    python scripts/check_launcher_files.py dstack FILE...     # dstack apply's own loader
    python scripts/check_launcher_files.py names              # names the launchers accept
    python scripts/check_launcher_files.py serve              # many checks, one process

``serve`` reads one request a line on stdin (``{"mode": ..., "paths": [...], "cwd": ...}``)
and answers each on one stdout line after ``@@answer ``: the tests start the launchers once
(importing SkyPilot takes seconds) and ask it everything.

SkyPilot reads its catalog from $SKY_RUNTIME_DIR/.sky/catalogs (the tests point it at recorded
rows, so nothing is downloaded); a file is feasible when SkyPilot's cloud finds a launchable
resource for it, as ``sky launch`` does before provisioning.
"""

from __future__ import annotations

import json
import sys
import traceback


def _skypilot(path: str) -> dict:
    import sky

    task = sky.Task.from_yaml(path)
    (res,) = list(task.resources)
    feasible = res.cloud.get_feasible_launchable_resources(res, num_nodes=task.num_nodes)
    # what sky launch checks next: every feature the task and its resources need (open ports,
    # several nodes, a mounted bucket, spot, a container image) is implemented on that cloud
    features = task.get_required_cloud_features() | res.get_required_cloud_features()
    try:
        res.cloud.check_features_are_supported(res, features)
        features_error = None
    except Exception as exc:  # sky.exceptions.NotSupportedError
        features_error = f"{type(exc).__name__}: {exc}"
    return {"cloud": str(res.cloud), "region": res.region, "instance_type": res.instance_type,
            "accelerators": res.accelerators, "use_spot": res.use_spot,
            "disk_size": res.disk_size, "num_nodes": task.num_nodes,
            "envs": dict(task.envs), "run": task.run, "setup": task.setup,
            "job_recovery": res.job_recovery,
            "launchable": [str(r) for r in feasible.resources_list],
            "launchable_instance_types": [r.instance_type for r in feasible.resources_list],
            "hint": feasible.hint, "features": sorted(f.value for f in features),
            "features_error": features_error, "image_id": res.image_id,
            "service_replicas": task.service.min_replicas if task.service else None,
            "readiness_path": task.service.readiness_path if task.service else None,
            "ports": res.ports}


def _dstack(path: str) -> dict:
    from dstack._internal.cli.services.configurators import load_apply_configuration

    _, conf = load_apply_configuration(path)
    gpu = conf.resources.gpu
    return {"type": conf.type, "gpu_name": gpu.name, "gpu_count": [gpu.count.min, gpu.count.max],
            "gpu_memory_gb": [gpu.memory.min, gpu.memory.max] if gpu.memory else None,
            "gpu_vendor": gpu.vendor.value if gpu.vendor else None,
            "disk_min_gb": conf.resources.disk.size.min if conf.resources.disk else None,
            "spot_policy": conf.spot_policy.value if conf.spot_policy else None,
            "max_price": conf.max_price,
            "backends": [b.value for b in conf.backends or []], "regions": conf.regions,
            "instance_types": conf.instance_types, "nodes": getattr(conf, "nodes", None),
            "replicas": _replicas(conf), "port": _port(conf),
            "commands": conf.commands,
            "env": {k: (v if isinstance(v, str) else None) for k, v in conf.env.root.items()}}


def _replicas(conf) -> list[int] | None:
    r = getattr(conf, "replicas", None)
    return None if r is None else [r.min, r.max]


def _port(conf) -> int | None:
    p = getattr(conf, "port", None)
    return None if p is None else p.container_port


def _names() -> dict:
    import gpuhunt
    from dstack._internal.core.models.backends.base import BackendType
    from sky import catalog
    from sky.utils import registry

    clouds = sorted(registry.CLOUD_REGISTRY.keys())
    accelerators = {}
    for cloud in ("aws", "cudo", "hyperbolic", "lambda", "mithril", "nebius", "primeintellect",
                  "runpod", "vast"):
        # gpus_only would need the GpuInfo column, which the recorded rows leave empty
        listed = catalog.list_accelerators(gpus_only=False, clouds=cloud, case_sensitive=False)
        accelerators[cloud] = sorted(listed)
    known = [{"name": g.name, "memory": g.memory, "vendor": "nvidia"}
             for g in gpuhunt.KNOWN_NVIDIA_GPUS]
    known += [{"name": g.name, "memory": g.memory, "vendor": "amd"}
              for g in gpuhunt.KNOWN_AMD_GPUS]
    from dstack._internal.core.backends.features import BACKENDS_WITH_MULTINODE_SUPPORT

    return {"skypilot_clouds": clouds, "skypilot_accelerators": accelerators,
            "dstack_backends": [b.value for b in BackendType], "dstack_gpus": known,
            "dstack_multinode_backends": [b.value for b in BACKENDS_WITH_MULTINODE_SUPPORT],
            "skypilot_unsupported": _unsupported(clouds)}


def _unsupported(clouds: list[str]) -> dict[str, list[str]]:
    """Per cloud, the features SkyPilot does not implement there (its own table)."""
    from sky.utils import registry

    out = {}
    for name in clouds:
        cloud = registry.CLOUD_REGISTRY.from_str(name)
        table = getattr(type(cloud), "_CLOUD_UNSUPPORTED_FEATURES", {})
        out[name] = sorted(f.value for f in table)
    return out


def answer(mode: str, paths: list[str]) -> dict:
    """The launchers' verdict on each of ``paths`` (or their names, for ``names``)."""
    if mode == "names":
        return _names()
    check = {"skypilot": _skypilot, "dstack": _dstack}[mode]
    out = {}
    for p in paths:
        try:
            out[p] = {"ok": True, **check(p)}
        except Exception as exc:  # the loader's own refusal is the result
            out[p] = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                      "trace": traceback.format_exc(limit=3)}
    return out


def serve() -> None:
    """Answer requests from stdin, one a line, until it closes."""
    import os

    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        os.chdir(request.get("cwd") or ".")
        out = answer(request["mode"], request["paths"])
        sys.stdout.write("@@answer " + json.dumps(out, default=str) + "\n")
        sys.stdout.flush()


def main() -> None:
    mode, paths = sys.argv[1], sys.argv[2:]
    if mode == "serve":
        serve()
        return
    print(json.dumps(answer(mode, paths), default=str))


if __name__ == "__main__":
    main()
