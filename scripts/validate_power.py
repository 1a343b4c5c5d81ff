"""Check estimate/energy.py against published power measurements (validation/power.csv).

    .venv/bin/python scripts/validate_power.py

board_power rows: what the phase's fallback share of TDP says for the card (as for a card with
no measurement of its own) against the watts measured. cap_speed rows: the speed the cap curve
keeps at that cap against the speed measured. Prints each row's error and the median absolute
error per kind and split (calibration rows set a constant; holdout rows set nothing).
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.energy import (
    PowerPhase,
    board_power,
    cap_speed_factor,
    fallback_fraction,
)

TABLE = Path(__file__).resolve().parent.parent / "validation" / "power.csv"


def rows(path: Path = TABLE) -> list[dict[str, str]]:
    lines = [line for line in path.read_text("utf-8").splitlines()
             if line and not line.startswith("#")]
    return list(csv.DictReader(lines))


def predict(row: dict[str, str]) -> float:
    """What whichgpu says for one row (see the module's docstring)."""
    gpu = default_catalog().get(row["gpu"])
    phase = PowerPhase(row["phase"])
    batch = int(row["batch"] or 1)
    if row["kind"] == "board_power":
        return fallback_fraction(gpu, phase, batch).typical * gpu.tdp_watts
    draw = board_power(gpu, phase, batch).watts.typical
    return cap_speed_factor(phase, float(row["power_cap_w"]) / draw)


def main() -> int:
    errors: dict[tuple[str, str], list[float]] = {}
    print(f"{'id':28} {'kind':12} {'split':12} {'measured':>9} {'whichgpu':>9} {'error':>8}")
    for row in rows():
        measured, said = float(row["measured"]), predict(row)
        err = (said - measured) / measured
        errors.setdefault((row["kind"], row["split"]), []).append(abs(err))
        print(f"{row['id']:28} {row['kind']:12} {row['split']:12} {measured:9.3f} "
              f"{said:9.3f} {err:+8.1%}")
    print()
    for (kind, split), errs in sorted(errors.items()):
        print(f"{kind:12} {split:12} rows {len(errs):2}  median |error| "
              f"{statistics.median(errs):6.1%}  max {max(errs):6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
