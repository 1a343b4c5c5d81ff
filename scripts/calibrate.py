"""Fit the speed model's main efficiency constants on the CALIBRATION rows of
validation/speed.csv, and print the error of each choice on both splits.

    .venv/bin/python scripts/calibrate.py            (or: make calibrate)

Each constant is fitted alone, on the calibration rows of the categories it drives, by a grid
search that minimises the median absolute log error. A constant is only reported when at
least three calibration rows inform it. The script prints; a person copies a value into
src/whichgpu/estimate/data/speed_constants.toml with the rows it came from. Holdout rows are
never used to choose a value: their error is shown so the README can report it.
"""

from __future__ import annotations

import copy
import math
import statistics
import sys

from whichgpu.estimate import validation_speed
from whichgpu.estimate.constants import _load, overridden
from whichgpu.estimate.validation import default_path, read_rows, split_of


def _is_unet(row) -> bool:
    m = row["model"].lower()
    return "xl-base" in m or "stable-diffusion-v1" in m or "sdxl" in m


# (constant, key(s) inside a per-key table or None, grid, selector of rows it drives)
FITS = [
    ("training_mfu", "full-ft", [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65],
     lambda r: r["category"] == "training" and r["task"] in ("full-ft", "pretrain")),
    ("compute_arch_factor", "Hopper", [0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 1.0],
     lambda r: r["category"] == "training" and r["task"] in ("full-ft", "pretrain")),
    ("training_mfu", "lora", [0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
     lambda r: r["category"] == "training" and r["task"] == "lora"),
    ("diffusion_compute_efficiency", ("dit", "mmdit"), [0.4, 0.5, 0.6, 0.7, 0.8],
     lambda r: r["category"] in ("diffusion", "video") and not _is_unet(r)),
    ("diffusion_compute_efficiency", "unet", [0.3, 0.4, 0.5, 0.6, 0.7],
     lambda r: r["category"] == "diffusion" and _is_unet(r)),
    ("decode_bandwidth_efficiency", "llamacpp", [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85],
     lambda r: r["category"] == "decode" and r["engine"].startswith("llamacpp")),
    ("decode_bandwidth_efficiency", "exllamav2", [0.6, 0.7, 0.8, 0.85, 0.9],
     lambda r: r["category"] == "decode" and r["engine"].startswith("exllama")),
    ("prefill_compute_efficiency", "trtllm", [0.4, 0.5, 0.6, 0.7, 0.8],
     lambda r: r["category"] in ("prefill", "serving") and r["engine"] in ("trtllm", "nim")),
]


def _errors(rows):
    out = []
    for o in validation_speed.evaluate(rows, validation_speed.predict,
                                       validation_speed.measured):
        if o.predicted and o.measured:
            out.append(math.log(o.predicted / o.measured))
    return out


def _score(errs):
    return statistics.median(abs(e) for e in errs) if errs else math.inf


def main() -> int:
    rows = read_rows(default_path("speed"))
    print(f"{'constant':46s} {'rows':>4s} {'now':>6s} {'best':>6s} "
          f"{'calib err now->best':>20s} {'holdout err now->best':>22s}")
    for name, key, grid, pick in FITS:
        chosen = [r for r in rows if pick(r)]
        calib = [r for r in chosen if split_of(r["id"]) == "calibration"]
        hold = [r for r in chosen if split_of(r["id"]) == "holdout"]
        if len(calib) < 3:
            print(f"{name}[{key}]: only {len(calib)} calibration rows; not fitted")
            continue
        current = _load("speed_constants")[name].value
        keys = key if isinstance(key, tuple) else (key,) if key else ()
        now = current[keys[0]] if keys else current
        results = []
        for value in grid:
            new = copy.deepcopy(current)
            for k in keys:
                new[k] = value
            if not keys:
                new = value
            with overridden("speed_constants", name, new):
                results.append((_score(_errors(calib)), value, _score(_errors(hold))))
        base_c, base_h = _score(_errors(calib)), _score(_errors(hold))
        best = min(results)
        label = f"{name}[{'/'.join(keys)}]" if keys else name
        print(f"{label:46s} {len(calib):4d} {now:6.2f} {best[1]:6.2f} "
              f"{base_c:9.1%} -> {best[0]:6.1%} {base_h:11.1%} -> {best[2]:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
