"""Score the expert-parallel speed model (estimate/speed/expert_parallel.py, issue 30) on the
published DEP rows of validation/serving.csv: attention data-parallel over dp ranks with the
experts over all the GPUs (TensorRT-LLM --tp N --ep N with enable_attention_dp). The
validation and the serving calibration leave these rows out (not modelled); nothing here is
fitted on them. Usage: python scripts/check_expert_parallel.py"""

from __future__ import annotations

import csv
import statistics
import sys

from whichgpu.errors import InputError
from whichgpu.estimate.validation import default_path
from whichgpu.estimate.validation.serving import predict


def dep_rows(path: str | None = None) -> list[dict[str, str]]:
    """The serving rows with dp > 1 and ep > 1."""
    with open(path or default_path("serving"), newline="") as f:
        return [r for r in csv.DictReader(f)
                if int(float(r.get("dp") or 1)) > 1 and int(float(r.get("ep") or 0)) > 1]


def main() -> int:
    ratios = []
    memo: dict = {}
    for row in dep_rows():
        value = float(row["value"])
        try:
            est, note, _ = predict(row, memo, dep=True)
        except InputError as exc:
            print(f"{row['id'][:62]:62s} {value:>9.0f}  not modelled: {exc}")
            continue
        ratios.append(est / value)
        print(f"{row['id'][:62]:62s} {value:>9.0f} {est:>9.0f} {est / value:5.2f}x  {note}")
    if ratios:
        errs = sorted(abs(r - 1) for r in ratios)
        print(f"\n{len(ratios)} rows scored: median estimate/measured "
              f"{statistics.median(ratios):.2f}x, median |error| {statistics.median(errs):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
