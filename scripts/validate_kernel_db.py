"""Error of each step-time path on the serving rows (issue 28): whichgpu's model against the
measured-kernel database of aiconfigurator-core, where the database covers the row.

For every row of validation/serving.csv whose metric the serving model estimates, this runs the
serving model twice (measured-kernel path refused, then asked for) and prints, per engine and
GPU and metric family (throughput, TTFT, TPOT), the median absolute error (|predicted /
measured - 1|) of each path and which path answered the opted-in run. Rows the database does
not cover are answered by whichgpu's model both times and counted apart. Needs
``pip install 'whichgpu[kernels]'``; without it every row says whichgpu's model answered.

    python scripts/validate_kernel_db.py [--rows]   # --rows: one line per row
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
from collections import defaultdict

from whichgpu.errors import InputError
from whichgpu.estimate.speed.kernel_db import use_kernel_db
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation import serving as vs

_ERRORS = (InputError, KeyError, ValueError, ZeroDivisionError)


def _run(row: dict[str, str], memo: dict) -> tuple[float | None, str, str]:
    """(prediction or None, path label, why the measured path did not answer, whether the
    measured kernels answered)."""
    try:
        value, _note, _span = vs.predict(row, memo)
    except _ERRORS:
        return None, "", "", False
    case, _pt = memo[row.get("group") or row["id"]]
    steps = case.model.steps
    return value, steps.label, steps.why, steps.path == "measured"


def rows_by_path(rows: list[dict[str, str]]) -> list[dict]:
    """Per row: measured value, whichgpu's estimate, the opted-in estimate and its path."""
    base_memo: dict = {}
    kern_memo: dict = {}
    out = []
    for row in rows:
        with use_kernel_db(False):
            base, _, _, _ = _run(row, base_memo)
        if base is None:
            continue
        with use_kernel_db(True):
            kern, label, why, measured_path = _run(row, kern_memo)
        out.append({"id": row["id"], "engine": row["engine"], "gpu": row["gpu"],
                    "family": vs.family_of(row), "measured": float(row["value"]),
                    "model": base, "opted": kern, "path": label, "why": why,
                    "measured_path": measured_path, "split": vs.split_of_row(row)})
    return out


def _err(pred: float, meas: float) -> float:
    return abs(pred / meas - 1)


def report(out: list[dict], per_row: bool = False) -> None:
    groups: dict[tuple[str, str, str, bool], list[dict]] = defaultdict(list)
    for r in out:
        groups[(r["engine"], r["gpu"], r["family"], r["measured_path"])].append(r)
    print(f"{'engine':8} {'gpu':20} {'metric':10} {'path':9} {'n':>3} "
          f"{'model err':>9} {'kernel err':>10}")
    for (engine, gpu, fam, measured_path), rs in sorted(groups.items()):
        m = statistics.median(_err(r["model"], r["measured"]) for r in rs)
        path = "measured" if measured_path else "model"
        k = (f"{statistics.median(_err(r['opted'], r['measured']) for r in rs if r['opted']):9.0%}"
             if measured_path and any(r["opted"] for r in rs) else f"{'-':>9}")
        print(f"{engine:8} {gpu:20} {fam:10} {path:9} {len(rs):3d} {m:9.0%} {k:>10}")
    covered = [r for r in out if r["measured_path"] and r["opted"]]
    if covered:
        mm = statistics.median(_err(r["model"], r["measured"]) for r in covered)
        kk = statistics.median(_err(r["opted"], r["measured"]) for r in covered)
        print(f"\npath 'measured': {covered[0]['path']}; 'model': whichgpu's model")
        print(f"covered rows: {len(covered)} of {len(out)}; median |error| on them: whichgpu's "
              f"model {mm:.0%}, measured kernels {kk:.0%}")
        held = [r for r in covered if r["split"] != "calibration"]
        if held:  # whichgpu's constants were fitted on the calibration rows, not on these
            print(f"  held-out rows only ({len(held)}): whichgpu's model "
                  f"{statistics.median(_err(r['model'], r['measured']) for r in held):.0%}, "
                  "measured kernels "
                  f"{statistics.median(_err(r['opted'], r['measured']) for r in held):.0%}")
        for engine in sorted({r["engine"] for r in covered}):
            rs = [r for r in covered if r["engine"] == engine]
            sm = statistics.median(r["model"] / r["measured"] - 1 for r in rs)
            sk = statistics.median(r["opted"] / r["measured"] - 1 for r in rs)
            print(f"  {engine:8} {len(rs):3d} rows: |error| model "
                  f"{statistics.median(_err(r['model'], r['measured']) for r in rs):.0%} "
                  f"(signed {sm:+.0%}), measured kernels "
                  f"{statistics.median(_err(r['opted'], r['measured']) for r in rs):.0%} "
                  f"(signed {sk:+.0%})")
    else:
        print(f"\ncovered rows: 0 of {len(out)} (is aiconfigurator-core installed?)")
    whys: dict[str, int] = defaultdict(int)
    for r in out:
        if r["why"]:
            whys[r["why"]] += 1
    for why, n in sorted(whys.items(), key=lambda x: -x[1])[:12]:
        print(f"  not covered ({n}): {why}")
    if per_row:
        for r in out:
            opted = f"{r['opted']:.4g}" if r["opted"] is not None else "-"
            print(f"{r['id']}: measured {r['measured']:.4g}, model {r['model']:.4g}, "
                  f"opted-in {opted} ({r['path']})")


def speed_rows(rows: list[dict[str, str]]) -> list[dict]:
    """The decode and prefill rows of validation/speed.csv on a serving engine: whichgpu's
    estimate (the path `speed` answers them by; the kernel database times only serving steps)
    and, where the database covers the row, what its decode step / prefill would give."""
    from whichgpu.estimate.speed.kernel_db import BACKENDS, Coverage, _engine, coverage
    from whichgpu.estimate.speed.lengths import inference_lengths
    from whichgpu.estimate.validation import speed as vsp
    from whichgpu.estimate.validation.rows import gpu_of, workload_of

    out = []
    for row in rows:
        if row["category"] not in ("decode", "prefill") or row["engine"] not in BACKENDS:
            continue
        try:
            model, _note, _span = vsp.predict(row)
            w = workload_of(vsp.speed_settings(row)[0], global_batch=True)
            c = coverage(w, gpu_of(row).id)
        except _ERRORS:
            continue
        kern, why = None, c if isinstance(c, str) else ""
        if isinstance(c, Coverage):
            engine = _engine(c)
            if isinstance(engine, str):
                why = engine
            else:
                prompt, output, _ = inference_lengths(w)
                batch = max(w.batch or 1, 1)
                try:
                    if row["metric"] == "decode_tokens_per_s":
                        kern = batch * 1e3 / engine.decode_step_latency(batch, prompt, output)
                    elif row["metric"] == "ttft_s":
                        kern = engine.predict_prefill_latency(batch, prompt) * 1e-3
                except Exception as exc:  # the package's missing-table errors
                    why = str(exc).splitlines()[0][:160]
        out.append({"id": row["id"], "engine": row["engine"], "gpu": row["gpu"],
                    "measured": float(row["value"]), "model": model, "kernel": kern,
                    "why": why})
    return out


def report_speed(out: list[dict]) -> None:
    print("\nvalidation/speed.csv decode and prefill rows on vLLM / SGLang / TensorRT-LLM "
          "(answered by whichgpu's model):")
    for r in out:
        k = (f"measured kernels {_err(r['kernel'], r['measured']):.0%}"
             if r["kernel"] else f"not covered: {r['why']}")
        print(f"  {r['id']}: whichgpu's model {_err(r['model'], r['measured']):.0%}; {k}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", action="store_true", help="one line per row")
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)  # the package logs every fallback table it loads
    report(rows_by_path(read_rows(default_path("serving"))), args.rows)
    report_speed(speed_rows(read_rows(default_path("speed"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
