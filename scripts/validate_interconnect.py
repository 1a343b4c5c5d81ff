"""Print the link model's NCCL bus bandwidth against nccl-tests measurements in
validation/interconnect.csv, row by row, with the median error.

    .venv/bin/python scripts/validate_interconnect.py

The model (estimate/interconnect.py, data/interconnects.toml) gives each link kind one
effective bandwidth: line rate x efficiency. A row's measured bus bandwidth is per NIC (the
server's busbw divided by its NICs of that kind), which is what the model's per-link figure
stands for. Rows marked in_sample are the ones the toml's efficiency cites: they are shown but
kept out of the out-of-sample median.
"""

from __future__ import annotations

import csv
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from whichgpu.estimate.interconnect import node_link

DEFAULT_CSV = Path(__file__).resolve().parents[1] / "validation" / "interconnect.csv"


@dataclass(frozen=True)
class Scored:
    """One row: the measured bus bandwidth per NIC and the model's, in GB/s (1e9 B/s)."""

    id: str
    link: str
    nodes: int
    collective: str
    measured_gb_s: float
    predicted_gb_s: float
    in_sample: bool

    @property
    def error(self) -> float:
        """Signed relative error of the model: predicted / measured - 1."""
        return self.predicted_gb_s / self.measured_gb_s - 1


def score(path: str | Path = DEFAULT_CSV) -> list[Scored]:
    """Every row of the CSV with the model's per-link NCCL bus bandwidth beside it."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = []
    for row in rows:
        link = node_link(row["link"])
        out.append(Scored(row["id"], str(link.id), int(row["nodes"]), row["collective"],
                          float(row["measured_busbw_gb_s"]),
                          link.effective_bytes_per_s / 1e9, row["in_sample"] == "yes"))
    return out


def median_abs_error(rows: list[Scored], in_sample: bool | None = False) -> float:
    """Median |error| over the out-of-sample rows (in_sample=None: over all rows)."""
    picked = [r for r in rows if in_sample is None or r.in_sample == in_sample]
    return statistics.median(abs(r.error) for r in picked)


def main(path: str | None = None) -> int:
    rows = score(path or DEFAULT_CSV)
    print(f"{'row':28} {'link':9} {'nodes':>5} {'collective':10} {'measured':>9} "
          f"{'model':>7} {'error':>7}  in-sample")
    for r in rows:
        print(f"{r.id:28} {r.link:9} {r.nodes:5d} {r.collective:10} {r.measured_gb_s:9.2f} "
              f"{r.predicted_gb_s:7.2f} {r.error:+7.1%}  {'yes' if r.in_sample else ''}")
    out = [r for r in rows if not r.in_sample]
    print(f"\nNCCL bus bandwidth per NIC (GB/s): {len(out)} out-of-sample rows, median |error| "
          f"{median_abs_error(rows):.1%} (model above the measurement in "
          f"{sum(r.error > 0 for r in out)}/{len(out)}); all {len(rows)} rows: median |error| "
          f"{median_abs_error(rows, None):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
