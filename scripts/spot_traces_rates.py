"""Interruption rates and capacity waits from SkyPilot's published spot traces.

The figures behind the prior in src/whichgpu/cost/data/spot.toml. Reads a git copy of
skypilot-org/spot-traces (the NSDI'24 "Can't Be Late" traces), at the commit the data file
names, and prints per trace: the running hours, the interruptions (a running tick followed by
a not-running one), interruptions per running hour, and the mean time until capacity returned.

    python scripts/spot_traces_rates.py /path/to/spot-traces.git

In a 1-node preemption trace each tick is 1 while the instance runs and 0 while it does not
(preempted, or waiting for capacity); the trace ends while running or not, so the last period
is cut short (counted, never as an interruption).
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess

COMMIT = "221da1ab9bdfe7966da296265d7694d52dc0c5a6"
FOLDERS = ("preemption/1-node/aws-04-22-2023/", "preemption/1-node/gcp-04-30-2023/")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def rates(ticks: list[int], gap_s: float) -> dict[str, float]:
    """Running hours, interruptions, the rate and the mean wait of one 1-node trace."""
    runs = [(v > 0, len(list(g))) for v, g in itertools.groupby(ticks, key=lambda v: v > 0)]
    running_h = sum(n for up, n in runs if up) * gap_s / 3600
    interruptions = sum(1 for (up, _), _nxt in itertools.pairwise(runs) if up)
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
    for folder in FOLDERS:
        for path in sorted(f for f in files if f.startswith(folder)):
            data = json.loads(_git(args.repo, "show", f"{args.commit}:{path}"))
            r = rates(data["data"], float(data["metadata"]["gap_seconds"]))
            print(f"{path}: {r['running_h']:.1f} running h, {r['interruptions']} interruptions, "
                  f"{r['per_hour']:.2f}/h, capacity back after {r['mean_wait_h']:.2f} h (mean)")
            if folder.startswith("preemption/1-node/aws"):
                total_h += r["running_h"]
                total_n += r["interruptions"]
    print(f"AWS p3.2xlarge, 4 zones: {total_n:.0f} interruptions in {total_h:.1f} running h = "
          f"{total_n / total_h:.2f}/h")


if __name__ == "__main__":
    main()
