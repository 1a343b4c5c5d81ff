"""Score speculative decoding (estimate/speed/speculative.py) against published runs that
measured the same set-up with and without a drafter (validation/speculative.csv; nothing is
fitted to these rows: the acceptance constants are priors with their own sources).

Each row gives the decode speed without and with speculation; the model's speed-up (the
drafter's decode rate over the plain one, same workload) is compared with the measured
ratio, and the speculative speed itself with the measurement. Usage:

    python scripts/check_speculative.py
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path
from typing import Any

ROWS = Path(__file__).resolve().parents[1] / "validation/speculative.csv"


def predict(row: dict[str, str]) -> dict[str, Any]:
    """The model's plain and speculative decode rates (per sequence) for one row."""
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.estimate.speed import estimate_speed

    n = int(row["gpu_count"])
    gpu = default_catalog().get(row["gpu"])
    out = {}
    for spec in (None, row["speculative"]):
        w = build_workload(row["model"], quant=row["quant"], kv_dtype=row["kv_dtype"] or "f16",
                           engine=row["engine"], prompt_tokens=row["prompt_tokens"],
                           output_tokens=row["output_tokens"], gpus=n,
                           speculative=spec,
                           draft_tokens=int(row["draft_tokens"]) if spec else None)
        est = estimate_speed(w, gpu, n, check_fit=False, saturation=False)
        out["speculative" if spec else "plain"] = est.rates["decode_tokens_per_s_per_sequence"]
    plain, spec_rate = out["plain"].typical, out["speculative"]
    measured = float(row["speculative_tokens_per_s"]) / float(row["baseline_tokens_per_s"])
    return {"speedup": spec_rate.typical / plain, "measured_speedup": measured,
            "rate": spec_rate, "measured_rate": float(row["speculative_tokens_per_s"])}


def rows() -> list[dict[str, str]]:
    with ROWS.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main() -> int:
    errors, inside = [], 0
    print(f"{'id':42} {'speed-up meas':>13} {'model':>7} {'error':>7}  "
          f"{'tok/s meas':>10} {'model range':>17}")
    table = rows()
    for row in table:
        r = predict(row)
        err = r["speedup"] / r["measured_speedup"] - 1
        errors.append(abs(err))
        rate = r["rate"]
        held = rate.low <= r["measured_rate"] <= rate.high
        inside += held
        print(f"{row['id']:42} {r['measured_speedup']:13.2f} {r['speedup']:7.2f} {err:+7.0%}  "
              f"{r['measured_rate']:10.1f} {rate.low:7.1f}-{rate.high:<7.1f}"
              f"{'' if held else ' outside'}")
    print(f"\n{len(table)} runs; speed-up median error {statistics.median(errors):.0%}, "
          f"p90 {sorted(errors)[int(0.9 * (len(errors) - 1))]:.0%}; the measured speed "
          f"inside the range in {inside} of {len(table)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
