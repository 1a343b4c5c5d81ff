"""Score the step-by-step serving simulation (estimate/speed/serving_sim.py) against the
published latency percentiles of validation/serving.csv: p50 (median), p99 and mean TTFT,
TPOT and end-to-end latency, each run set up as ``whichgpu validate serving`` sets it up
(validation_serving.case_of). Beside each, the mean serving model's figure where it has one
(it gives means only, so a median or a p99 is compared with its mean). Nothing is fitted to
these rows. Usage:

    python -m whichgpu.estimate.validation.traffic [--all-means]
"""

from __future__ import annotations

import re
import statistics
import sys
from typing import Any

_PCT = re.compile(r"^(ttft|tpot|itl|e2e)_(ms|s)_(median|mean|p(\d\d))$")


def _traffic(case, row):
    from whichgpu.estimate.speed.serving_sim import traffic_for
    from whichgpu.estimate.speed.traffic import fixed, sharegpt
    from whichgpu.estimate.validation.serving import range_ratio

    sm = case.model
    spread = range_ratio(row)
    if spread is not None:  # each length uniform in [ratio x stated, stated], independently
        return traffic_for(sm, case.load, _uniform(row, spread), max_in_flight=case.users_cap)
    dataset = (row.get("dataset") or "").strip().lower()
    how = (row.get("lengths") or "").strip().lower()
    if sm.cv2 == 0 or how == "fixed" or dataset in ("random", "synthetic-fixed"):
        lengths = fixed(sm.prompt, sm.output)
    else:
        lengths = sharegpt(sm.prompt, sm.output)
    return traffic_for(sm, case.load, lengths, max_in_flight=case.users_cap)


def _uniform(row, ratio: float, points: int = 9):
    """A random dataset's lengths with a range ratio: a grid of equally likely (prompt,
    output) pairs, each uniform between ``ratio`` x and 1 x the row's stated length."""
    from whichgpu.estimate.speed.traffic import Lengths, LengthShape

    def grid(stated: float) -> list[int]:
        lo = stated * ratio
        return [max(int(round(lo + (stated - lo) * i / (points - 1))), 1)
                for i in range(points)]

    prompts, outputs = grid(float(row["prompt_tokens"])), grid(float(row["output_tokens"]))
    pairs = tuple((p, o) for p in prompts for o in outputs)
    return Lengths(LengthShape.FILE, sum(prompts) / points, sum(outputs) / points,
                   pairs=pairs, source=f"uniform lengths, range ratio {ratio:g}")


def rows(all_means: bool):
    from whichgpu.estimate.validation import default_path, read_rows

    table = read_rows(default_path("serving"))
    groups = {r["group"] for r in table if re.search(r"_(p\d\d|median)$", r["metric"])}
    return [r for r in table if _PCT.match(r["metric"].strip())
            and (r["group"] in groups or all_means)]


def score(table: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Per row: id, label ('ttft p99'), measured, simulated and the mean model's value (the
    row's unit), or 'skipped' with the reason."""
    from whichgpu.errors import InputError
    from whichgpu.estimate.speed.serving_sim import simulate
    from whichgpu.estimate.validation.serving import answer, case_of

    memo: dict[str, tuple] = {}
    out: list[dict[str, Any]] = []
    for row in table:
        m = _PCT.match(row["metric"].strip())
        assert m
        what, unit, stat = m.group(1), m.group(2), m.group(3)
        key = row["group"]
        try:
            if key not in memo:
                case = case_of(row)
                memo[key] = (case, simulate(case.model, _traffic(case, row)), answer(case))
            case, res, pt = memo[key]
        except InputError as exc:
            out.append({"id": row["id"], "skipped": str(exc)})
            continue
        scale = 1e3 if unit == "ms" else 1.0
        spread = {"ttft": res.ttft, "tpot": res.tpot, "itl": res.itl, "e2e": res.e2e}[what]
        pct = 50 if stat == "median" else (int(m.group(4)) if m.group(4) else None)
        sim = (spread.mean if pct is None else spread.at(pct)) * scale
        model = {"ttft": pt.ttft_s, "tpot": pt.tpot_s, "itl": pt.tpot_s,
                 "e2e": pt.e2e_s}[what] * scale
        label = f"{what} {'p50' if stat == 'median' else stat}"
        out.append({"id": row["id"], "label": label, "measured": float(row["value"]),
                    "simulated": sim, "mean_model": model, "engine": row.get("engine", ""),
                    "date": row.get("date", ""), "source_url": row.get("source_url", "")})
    return out


def main(argv: list[str]) -> int:
    errs: dict[str, list[float]] = {}
    mean_errs: dict[str, list[float]] = {}
    print(f"{'id':60} {'meas':>9} {'sim':>9} {'err':>6} {'mean-model':>10} {'err':>6}")
    for r in score(rows("--all-means" in argv)):
        if "skipped" in r:
            print(f"{r['id'][:60]:60} skipped: {r['skipped']}")
            continue
        meas, sim, model = r["measured"], r["simulated"], r["mean_model"]
        e, em = sim / meas - 1, model / meas - 1
        errs.setdefault(r["label"], []).append(abs(e))
        mean_errs.setdefault(r["label"], []).append(abs(em))
        print(f"{r['id'][:60]:60} {meas:9.4g} {sim:9.4g} {e:+6.0%} {model:10.4g} {em:+6.0%}")
    print()
    for label in sorted(errs):
        print(f"{label:10} {len(errs[label]):3} rows: simulation median error "
              f"{statistics.median(errs[label]):.0%}; mean model "
              f"{statistics.median(mean_errs[label]):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
