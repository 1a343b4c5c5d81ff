"""Score the multi-GPU diffusion rows of validation/incoming/speed-2026.csv (xDiT, cache-dit,
ParaAttention) against the split-pipeline model, with their 1-GPU baselines (nothing is fitted
here).

The rows run xDiT's, cache-dit's or ParaAttention's Ulysses/ring sequence parallelism, which
the model has as SGLang's layout (``--engine sglang``, tp=1: every GPU beyond CFG parallel is
sequence parallel); ring attention is scored as Ulysses (the model has no ring term). Usage:

    python scripts/check_multigpu_diffusion.py
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.models.resolve import resolve_model

ROWS = Path(__file__).resolve().parents[1] / "validation/incoming/speed-2026.csv"
PREFIXES = ("in-img-xdit-flux", "in-vid-xdit-hyv", "in-img-cachedit-flux", "in-img-paraattn-flux")


def predict(row: dict[str, str]) -> float:
    model = resolve_model(row["model"])
    width, height = (int(v) for v in row["resolution"].split("x"))
    n = int(row["gpu_count"])
    w = Workload(model=model, task=row["task"], engine="sglang" if n > 1 else None,
                 resolution=(width, height), steps=int(row["steps"]),
                 frames=int(row["frames"]) if row["frames"] else None,
                 cfg=row["cfg"] == "true" if row["cfg"] else None, gpus=n)
    gpu = default_catalog().get(row["gpu"])
    est = estimate_speed(w, gpu, n, compile="compile=true" in row["settings"],
                         check_fit=False)
    key = "seconds_per_video" if row["task"] == "video" else "seconds_per_image"
    return est.times[key].typical


def _key(row: dict[str, str]) -> tuple[str, ...]:
    return (row["model"], row["resolution"], row["gpu"], row["source_url"],
            str("compile=true" in row["settings"]))


def main() -> None:
    errors, scaling = [], []
    with ROWS.open() as f:
        rows = [r for r in csv.DictReader(f) if r["id"].startswith(PREFIXES)
                and "cannot be 1024px" not in r["settings"]]
    base = {_key(r): r for r in rows if r["gpu_count"] == "1"}
    print(f"{'id':52} {'meas':>8} {'model':>8} {'error':>7} {'speed-up meas/model':>20}")
    for row in rows:
        got = predict(row)
        meas = float(row["value"])
        err = got / meas - 1
        ratio = ""
        if int(row["gpu_count"]) > 1:
            errors.append(abs(err))
            one = base.get(_key(row))
            if one:  # the speed-up over the same source's 1-GPU run, measured vs modelled
                m_up, p_up = float(one["value"]) / meas, predict(one) / got
                scaling.append(abs(p_up / m_up - 1))
                ratio = f"{m_up:5.2f} / {p_up:5.2f}"
        print(f"{row['id'][:52]:52} {meas:8.2f} {got:8.2f} {err:+7.0%} {ratio:>20}")
    print(f"multi-GPU rows: {len(errors)}, median |error| {statistics.median(errors):.0%}, "
          f"max {max(errors):.0%}")
    if scaling:
        print(f"speed-up over the same source's 1-GPU run ({len(scaling)} rows): median "
              f"|error| {statistics.median(scaling):.0%}, max {max(scaling):.0%}")


if __name__ == "__main__":
    main()
