"""The commented header of an exported task: what was estimated, on what, and assuming what."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from whichgpu.export.names import Launcher, label
from whichgpu.units import format_duration, format_money

if TYPE_CHECKING:
    from whichgpu.advise.options import Option, Recommendation
    from whichgpu.export.commands import LaunchCommands
    from whichgpu.export.target import Target

_LAUNCH = {"skypilot": ("sky launch {file}", "sky jobs launch {file}"),
           "dstack": ("dstack apply -f {file}", "dstack apply -f {file}")}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("whichgpu")
    except PackageNotFoundError:
        return "unknown"


def _range(low: float, typical: float, high: float) -> str:
    if low == high:
        return format_duration(typical)
    return f"{format_duration(typical)} ({format_duration(low)}-{format_duration(high)})"


def header(rec: Recommendation, opt: Option, index: int, launcher: Launcher, where: Target,
           cmds: LaunchCommands, selection, command: str | None, notes: list[str]) -> str:
    """Comment lines (each starting with '# ') ending in a blank line."""
    o = opt.offer
    job = rec.job
    w = job.workload
    plain, spot = _LAUNCH[launcher]
    replicas = where.service_replicas(cmds)
    if replicas is not None:
        plain = "sky serve up {file}" if launcher == "skypilot" else plain
        spares = (f" ({where.replicas} the estimate sized plus {where.spares} spare(s) on "
                  "spot)" if where.spares else "")
        notes = [f"a service of {replicas} replica(s){spares} behind one endpoint, each "
                 "ready once /health answers", *notes]
    launch = (spot if where.spot and w.is_training else plain).format(file="THIS-FILE")
    array = where.job_array(cmds, launcher)
    if array is not None and launcher == "dstack":  # one run per share (a job array)
        from whichgpu.export.dstack import run_prefix

        launch = (f"for i in $(seq 0 {array - 1}); do dstack apply -y -d -f THIS-FILE -n "
                  f"{run_prefix(rec)}-$i -e SHARD_INDEX=$i; done (one machine per share: "
                  f"{array} separate machines, as estimated)")
    elif array is not None:  # separate machines, one launch each (a job array)
        launch = (f"for i in $(seq 0 {array - 1}); do sky launch -y -d -c whichgpu-shard-$i "
                  "--env SHARD_INDEX=$i THIS-FILE; done (one machine per share: "
                  f"{array} separate machines, as estimated)")
    lines = [f"{label(launcher)} {'service' if replicas else 'task'} written by whichgpu "
             f"{_version()} on {date.today().isoformat()}.",
             "Launch: " + launch + (" (a managed job: relaunched after interruptions)"
                                    if where.spot and launcher == "skypilot" and w.is_training
                                    and array is None else ""),
             f"Option {index} of {len(rec.options)} (ranked by {rec.ranking}): {opt.label} "
             f"({opt.layout}) on {opt.shape.describe()} of {o.provider}"
             + (f" {o.instance_type}" if o.instance_type else "")
             + (f", {o.region}" if o.region else "")
             + f", {'spot' if o.spot else 'on-demand'}, {format_money(opt.price_per_hour)}/h",
             f"Job: {w.model.name}, {w.task}, {w.quant_name}: {job.describe()}"]
    if opt.time_s is not None:
        t = opt.time_s
        lines.append(f"Estimate: {_range(t.low, t.typical, t.high)}, {opt.cost}"
                     + (" uninterrupted" if o.spot else ""))
    else:
        lines.append(f"Estimate: {format_money(opt.cost.typical)}/h")
    risk = opt.spot_risk
    if risk is not None:
        cost = getattr(risk, "cost", None) or getattr(risk, "cost_per_hour", None)
        extra = ""
        if getattr(risk, "expected_time_s", None) is not None:
            t = risk.expected_time_s
            extra = f", {_range(t.low, t.typical, t.high)}"
        lines.append(f"Spot, interruptions included: expected {cost}{extra}"
                     + ("/h" if getattr(risk, "cost_per_hour", None) is not None else ""))
    lines.append(f"Memory: {opt.memory_bytes / 1e9:.1f} GB per GPU of "
                 f"{opt.gpu.usable_memory_bytes / 1e9:.1f} GB usable; speed "
                 f"{opt.speed.bound}-bound at {opt.speed.precision}, confidence "
                 f"{opt.speed.confidence}")
    lines.append(f"Price: {format_money(o.price_per_hour)}/h for {o.gpu_count} x {o.gpu}, "
                 f"billed {o.billing.describe()}, observed {o.observed_at or 'undated'}"
                 + (f", from {o.source}" if o.source else ""))
    run_notes = [*cmds.settings, *notes, *opt.assumptions, *opt.notes]
    if run_notes:
        lines.append("Assumes:")
        lines += [f"  - {n}" for n in dict.fromkeys(run_notes)]
    if cmds.placeholder:
        lines.append("The run command is a PLACEHOLDER: replace it with your own.")
    if cmds.to_fill:
        lines.append("Fill in before launching: " + ", ".join(cmds.to_fill)
                     + " (marked FILL-IN).")
    if cmds.checkpoints:
        lines.append("Checkpoints go to /checkpoints: mount storage that outlives the "
                     "machine there (the file_mounts / volumes entry).")
    if command:
        lines.append(f"Reproduce: {command}")
    return "".join(f"# {line}\n" for line in lines) + "\n"
