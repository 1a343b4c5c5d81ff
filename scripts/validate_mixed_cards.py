"""Print the mixed-cards speed model's errors against validation/mixed_cards.csv.

    .venv/bin/python scripts/validate_mixed_cards.py
"""

from __future__ import annotations

import statistics
import sys

from whichgpu.estimate.validation.mixed import DEFAULT_CSV, validate_mixed


def main(path: str | None = None) -> int:
    rows = validate_mixed(path or DEFAULT_CSV)
    print(f"{'row':32} {'cards':42} {'measured':>9} {'estimate (80 % range)':>24} "
          f"{'error':>7} {'in':>3} {'ratio to control: measured / est / error':>42}")
    for r in rows:
        rng = f"{r.estimate.typical:.1f} ({r.estimate.low:.1f}-{r.estimate.high:.1f})"
        ratio = ""
        if r.control_ratio is not None and r.estimated_ratio is not None:
            ratio = (f"{r.control_ratio:.3f} / {r.estimated_ratio:.3f} / "
                     f"{r.ratio_error:+.1%}")
        if r.ratio_only:  # a stand-in job: the absolute figures say nothing
            print(f"{r.id:32} {r.gpus:42} {'-':>9} {'-':>24} {'-':>7} {'-':>3} {ratio:>42}")
            continue
        print(f"{r.id:32} {r.gpus:42} {r.measured:9.2f} {rng:>24} {r.error:+7.1%} "
              f"{'yes' if r.inside else 'no':>3} {ratio:>42}")
    rows_abs = [r for r in rows if not r.ratio_only]
    errors = [abs(r.error) for r in rows_abs]
    ratios = [abs(r.ratio_error) for r in rows if r.ratio_error is not None]
    print(f"\n{len(rows_abs)} rows: median |error| {statistics.median(errors):.1%}, "
          f"{sum(r.inside for r in rows_abs)}/{len(rows_abs)} inside the 80 % range"
          + (f"; ratios to a control: median |error| {statistics.median(ratios):.1%} over "
             f"{len(ratios)} rows" if ratios else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
