"""Interruption rates and capacity waits from SkyPilot's published spot traces.

The figures behind the GPU prior in src/whichgpu/cost/data/spot.toml. Reads a git copy of
skypilot-org/spot-traces (the NSDI'24 "Can't Be Late" traces), at the commit the data file
names, and prints per trace: the running instance-hours, the interruptions, interruptions per
running instance-hour, and (1-node traces) the mean time until capacity returned; then the
GPU traces pooled (every interruption over every running instance-hour: the rate that best
explains all of them at once, the maximum-likelihood rate of one Poisson process).

    python scripts/spot_traces_rates.py /path/to/spot-traces.git

Each tick is the number of instances running (a 1-node trace: 1 or 0; a 4-node trace: 0 to
4). A fall from one tick to the next is that many interruptions; running instance-hours are
the ticks summed times the tick. The traces end while running or not, so the last period is
cut short (counted, never as an interruption). The 4-node traces tick every 300 s, so an
instance interrupted and replaced within one tick is missed: their rates are lower bounds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess

COMMIT = "221da1ab9bdfe7966da296265d7694d52dc0c5a6"
#: folder -> what it measured (the GPU traces are the V100 ones; GCP's are CPU instances)
FOLDERS = {"preemption/1-node/aws-04-22-2023/": "gpu", "preemption/4-node/aws-08-03-2023/": "gpu",
           "preemption/1-node/gcp-04-30-2023/": "cpu"}


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def rates(ticks: list[int], gap_s: float) -> dict[str, float]:
    """Running instance-hours, interruptions, the rate and (1-node) the mean wait of a trace."""
    running_h = sum(ticks) * gap_s / 3600
    interruptions = sum(max(0, a - b) for a, b in itertools.pairwise(ticks))
    waits: list[float] = []
    if max(ticks, default=0) <= 1:
        runs = [(v > 0, len(list(g))) for v, g in itertools.groupby(ticks, key=lambda v: v > 0)]
        waits = [n * gap_s / 3600 for i, (up, n) in enumerate(runs) if not up and i > 0]
    return {"running_h": running_h, "interruptions": interruptions,
            "per_hour": interruptions / running_h if running_h else 0.0,
            "mean_wait_h": sum(waits) / len(waits) if waits else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", help="the git directory of a skypilot-org/spot-traces copy")
    parser.add_argument("--commit", default=COMMIT)
    args = parser.parse_args()
    files = _git(args.repo, "ls-tree", "-r", "--name-only", args.commit).split()
    total_h = total_n = 0.0
    gpu_rates: list[float] = []
    for folder, kind in FOLDERS.items():
        for path in sorted(f for f in files if f.startswith(folder)):
            data = json.loads(_git(args.repo, "show", f"{args.commit}:{path}"))
            r = rates(data["data"], float(data["metadata"]["gap_seconds"]))
            wait = (f", capacity back after {r['mean_wait_h']:.2f} h (mean)"
                    if "1-node" in folder else "")
            print(f"{path}: {r['running_h']:.1f} running instance-h, {r['interruptions']} "
                  f"interruptions, {r['per_hour']:.3f}/h{wait}")
            if kind == "gpu":
                total_h += r["running_h"]
                total_n += r["interruptions"]
                gpu_rates.append(r["per_hour"])
    print(f"GPU traces (p3.2xlarge, 1 x V100; {len(gpu_rates)} zone traces): "
          f"{total_n:.0f} interruptions in {total_h:.1f} running instance-h = "
          f"{total_n / total_h:.3f}/h pooled; by zone {min(gpu_rates):.3f} to "
          f"{max(gpu_rates):.3f}/h")


if __name__ == "__main__":
    main()
