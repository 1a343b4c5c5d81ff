"""Summarise a GPU check (scripts/gpu_check.sh): measured vs datasheet, and each bench model
measurement beside whichgpu's estimate with and without the new calibration profile.

    python scripts/gpu_check_summary.py validation/calibration/<host>-<day>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _load(path: Path):
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def _pct(x) -> str:
    return "-" if x is None else f"{x:+.0%}"


def summarise(folder: Path) -> list[str]:
    out = [f"GPU check in {folder}"]
    bench = _load(folder / "bench.json")
    if not bench:
        out.append("  no bench.json: whichgpu bench did not finish")
    else:
        for g in bench.get("gpus", []):
            out.append(f"  {g.get('name')} -> {g.get('catalog_id')}")
            for v in g.get("versus_datasheet", []):
                ratio = v.get("ratio")
                out.append(f"    {v['name']:18s} measured {v['measured']:.4g} {v['unit']}, "
                           f"datasheet {v.get('datasheet') or '-'}"
                           + (f", ratio {ratio:.2f}" if ratio else ""))
    errors, calibrated = [], []
    for path in sorted(folder.glob("model-*.json")):
        data = _load(path)
        if not data:
            out.append(f"  {path.name}: no result (the run failed)")
            continue
        out.append(f"  bench model {data['model']} ({data['settings']}):")
        for r in data["results"]:
            est = (r.get("estimate") or {}).get("typical")
            cal = (r.get("calibrated_estimate") or {}).get("typical")
            out.append(f"    {r['name']:38s} measured {r['measured']:.4g} {r['unit']}; "
                       f"estimate {est if est is None else f'{est:.4g}'} "
                       f"({_pct(r.get('error'))}); with profile "
                       f"{cal if cal is None else f'{cal:.4g}'} "
                       f"({_pct(r.get('calibrated_error'))})")
            if r.get("error") is not None:
                errors.append(abs(r["error"]))
            if r.get("calibrated_error") is not None:
                calibrated.append(abs(r["calibrated_error"]))
    if errors:
        errors.sort()
        calibrated.sort()
        out.append(f"  median |error|: {errors[len(errors) // 2]:.0%} datasheet, "
                   + (f"{calibrated[len(calibrated) // 2]:.0%} with the profile"
                      if calibrated else "no calibrated estimate"))
    val = _load(folder / "validate.json")
    if val:
        for s in val.get("summary", []):
            if s["split"] == "all":
                out.append(f"  validate speed ({s['category']}): {s['n']} rows, median "
                           f"{s['median_abs_error']:.0%}")
    out.append("Commit the folder as validation data (its conditions are in each row), and "
               "merge the rows into validation/speed.csv and memory.csv if they should count.")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    print("\n".join(summarise(Path(sys.argv[1]))))
