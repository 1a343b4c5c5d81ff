"""Fit the serving model's engine constants on the CALIBRATION sources of
validation/serving.csv, derive its ranges from leave-one-source-out residuals, and print the
errors: calibration (in sample and leave-one-source-out) and holdout.

    .venv/bin/python scripts/calibrate_serving.py          print (make calibrate-serving)
    .venv/bin/python scripts/calibrate_serving.py --write  also write the results into
                                                           src/whichgpu/estimate/data/serving_constants.toml
    .venv/bin/python scripts/calibrate_serving.py --check  exit 1 if the TOML differs

The split (validation/serving_split.toml) was decided before any fit: holdout sources never
choose a value; their error is printed for the README. Fits, in order, each a 1-D grid search
minimising the mean absolute log error of the rows the constant drives (ties: the value
closest to the prior):

- ``serving_prefill_token_us[family]``: time per prompt token of a replica beyond the speed
  model's prefill, for the model family whose prefill it does not calibrate (moe-mla), on
  every TTFT, throughput and TPOT row of that family (every engine and load: the steps that
  carry prompt tokens drive all three);
- ``serving_step_per_sequence_us[engine/family]``: CPU and kernel time per running sequence
  per step beyond the speed model's roofline (scheduler, sampler, MoE routing), on the
  throughput and TPOT rows of that engine and model family (dense, moe, moe-mla);
- ``serving_ttft_overhead_ms[engine]``: the time a request waits beyond its prefill steps (API
  server, tokenizer, scheduler), on that engine's TTFT rows of dense models at low load
  (concurrency or rate of at most LOW_LOAD): a front-end property, measured where the speed
  model's prefill is calibrated (MoE and MLA prefill is not, see README).

A key is fitted only with at least MIN_ROWS modelled calibration rows from at least
MIN_GROUPS runs (one run's metrics are not independent); otherwise its prior stays.

Derived: ``band_ratios`` per metric family, an 80 % prediction interval of measured /
estimated from the leave-one-source-out residuals of the calibration rows (each source
estimated with the constants fitted without it): the empirical 10th-90th percentiles with 10
rows or more, else log-normal with Student t (the speed bands' rule); TTFT's of (measured +
A) / (estimated + A), ``band_offset_ms`` A chosen on the same residuals (serving_fit.band_offsets:
the narrowest median range whose leave-one-out coverage is 75-85 %), since published setups
differ by tens of ms in the fixed first-token cost, which a plain ratio band spreads over every
TTFT however long.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path

from whichgpu.estimate.constants import Constant, _load
from whichgpu.estimate.serving_fit import (  # noqa: F401  (re-exported for the tests)
    FITTED,
    MIN_GROUPS,
    MIN_ROWS,
    TABLE,
    TARGETS,
    _family,
    _outcomes,
    _restore,
    _snapshot,
    band_offsets,
    bands,
    coverage_scales,
    fit_all,
    fits,
    loso,
)
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation import serving as vs
from whichgpu.estimate.validation.scoring_memo import scoring_memo

TOML = (Path(__file__).resolve().parents[1]
        / "src/whichgpu/estimate/data/serving_constants.toml")


# ------------------------------------------------------------------ reports

def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:6.1%}"


def report_tables(rows, residuals: dict[str, float] | None = None, report=print) -> dict:
    """Median |error| by split x family, by engine and GPU (holdout), LOSO by source."""
    outs = _outcomes(rows)
    info = {r["id"]: r for r in rows}
    summary = {}
    report(f"\n{'family':11s} {'calib n':>7s} {'median':>7s} {'LOSO':>7s}   "
           f"{'holdout n':>9s} {'median':>7s}  target")
    for family in ("throughput", "ttft", "tpot", "e2e"):
        cal = [abs(o.error) for o in outs if o.category == family and o.split == "calibration"
               and o.error is not None]
        hold = [abs(o.error) for o in outs if o.category == family and o.split == "holdout"
                and o.error is not None]
        lo = [abs(math.exp(-residuals[o.id]) - 1) for o in outs if residuals and
              o.id in residuals and o.category == family]
        med = _med
        summary[family] = {"calibration": med(cal), "loso": med(lo), "holdout": med(hold),
                           "n_holdout": len(hold)}
        target = f"{TARGETS[family]:.0%}" if family in TARGETS else ""
        report(f"{family:11s} {len(cal):7d} {_pct(med(cal)):>7s} {_pct(med(lo)):>7s}   "
               f"{len(hold):9d} {_pct(med(hold)):>7s}  {target}")
    mt = [abs(o.error) for o in outs if o.split == "holdout" and o.error is not None
          and info[o.id]["kind"] == "max_throughput"]
    lat = {f: [abs(o.error) for o in outs if o.split == "holdout" and o.error is not None
               and info[o.id]["kind"] == "latency_under_load" and o.category == f]
           for f in ("ttft", "tpot")}
    report(f"\nissue targets on the holdout: max-throughput tables {_pct(_med(mt))} "
           f"({len(mt)} rows, target 20 %); latency under load: TTFT "
           f"{_pct(_med(lat['ttft']))} ({len(lat['ttft'])}), TPOT {_pct(_med(lat['tpot']))} "
           f"({len(lat['tpot'])}) (target 25 %)")
    for by in (("split", "engine", "family"), ("split", "gpu", "family")):
        report("")
        for k, c in vs.table(outs, rows, by).items():
            report(f"  {' / '.join(k):42s} {c.n:4d} rows  median {_pct(c.median)}")
    if residuals:
        report("\nleave-one-source-out (each calibration source with constants fitted "
               "without it):")
        by_source: dict[str, list[float]] = {}
        for rid, lr in residuals.items():
            by_source.setdefault(vs.source_of(info[rid]), []).append(abs(math.exp(-lr) - 1))
        for source, errs in sorted(by_source.items()):
            report(f"  {source:14s} {len(errs):4d} rows  median {_pct(statistics.median(errs))}")
    return summary


def _med(v):
    return statistics.median(v) if v else None


# ------------------------------------------------------------------ TOML

def _toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}" if value != int(value) else f"{value:.1f}"
    return str(value)


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else f'"{k}"'


def _set_line(text: str, name: str, field: str, line: str) -> str:
    """Replace (or add after ``source``) the ``field`` line of ``[constant.name]``."""
    start = text.index(f"[constant.{name}]\n")
    end = text.find("\n[", start + 1)
    end = len(text) if end < 0 else end + 1
    block = text[start:end]
    pattern = re.compile(rf"^{field} = .*$", re.M)
    if pattern.search(block):
        block = pattern.sub(lambda m: line, block, count=1)
    else:
        block = re.sub(r"^(source = .*)$", lambda m: m.group(1) + "\n" + line, block, count=1,
                       flags=re.M)
    return text[:start] + block + text[end:]


def desired_text(text: str, chosen: dict, band: dict, counts: dict,
                 offsets: dict | None = None, scales: dict | None = None) -> str:
    import tomllib

    current = tomllib.loads(text)["constant"]
    for name in FITTED:
        value = dict(current[name]["value"])
        notes = []
        for (c, k), (v, n, g) in sorted(chosen.items()):
            if c == name:
                value[k] = float(v)
                notes.append(f"{k} = {v:g} on {n} calibration rows of {g} runs")
        text = _set_line(text, name, "value", f"value = {_toml_value(value)}")
        if notes:
            text = _set_line(text, name, "fitted", 'fitted = "by scripts/calibrate_serving.py '
                             '(make calibrate-serving): ' + "; ".join(notes) + '"')
    n = ", ".join(f"{k} {counts.get(k, 0)}" for k in sorted(band))
    text = _set_line(text, "band_ratios", "value", f"value = {_toml_value(band)}")
    text = _set_line(text, "band_ratios", "source",
                     'source = "scripts/calibrate_serving.py: 80 % prediction interval of '
                     'measured / estimated from leave-one-source-out residuals of the '
                     'calibration sources of validation/serving.csv (the empirical 10th-90th '
                     'percentiles with 10 rows or more, else log-normal: mean +- '
                     't(0.90, n-1) x sd x sqrt(1 + 1/n)), per metric family and per metric '
                     'family / model family (' + n
                     + ' rows; fewer than 5 rows: the speed model\'s low-confidence factors); '
                     'TTFT: of (measured + band_offset_ms) / (estimated + band_offset_ms); a '
                     'metric whose bands hold outside 75-85 % of its calibration rows left out '
                     'one at a time is scaled in log width by the factor nearest 1 that brings '
                     'it inside (' + (", ".join(f"{k} x{v:g}" for k, v in sorted(
                         (scales or {}).items()) if v != 1.0) or "none scaled") + ')"')
    if offsets is not None:
        text = _set_line(text, "band_offset_ms", "value",
                         f"value = {_toml_value({k: float(v) for k, v in offsets.items()})}")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--rows", action="store_true", help="print every row after the fit "
                        "(error in sample, then leave-one-source-out)")
    args = parser.parse_args(argv)
    # the fits and leave-one-source-out refits score the same runs under the same values
    # again and again: kept by value for this run (estimate/validation/scoring_memo.py)
    with scoring_memo():
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    rows = read_rows(default_path("serving"))
    start = _snapshot()
    print("Fits on the calibration sources (holdout sources never choose a value):")
    chosen = fit_all(rows)
    full = _snapshot()
    residuals = loso(rows, start)
    _restore(full)
    print("\nBand offsets (leave-one-out coverage and median width on the calibration rows):")
    offsets = band_offsets(rows, residuals, report=print)
    print("Band widths (leave-one-out coverage of the calibration rows, 75-85 %):")
    scales = coverage_scales(rows, residuals, offsets, report=print)
    band = bands(rows, residuals, offsets, scales)
    table = _load(TABLE)
    old = table["band_ratios"]
    table["band_ratios"] = Constant("band_ratios", band, old.source, old.note)
    if "band_offset_ms" in table:
        old = table["band_offset_ms"]
        table["band_offset_ms"] = Constant("band_offset_ms", offsets, old.source, old.note)
    counts: dict[str, int] = {}
    info = {r["id"]: r for r in rows}
    for rid in residuals:
        for k in (vs.family_of(info[rid]), f"{vs.family_of(info[rid])}/{_family(info[rid])}"):
            counts[k] = counts.get(k, 0) + 1
    report_tables(rows, residuals)
    # issue 30: why the holdout's coverage differs from the calibration's (printed only)
    from whichgpu.estimate.validation import coverage_by_source

    coverage_by_source.report(rows, residuals, _outcomes(rows), offsets, scales)
    print(f"\nband_ratios: {band}\nband_offset_ms: {offsets}")
    if args.rows:
        for o in sorted(_outcomes(rows), key=lambda o: (o.split, o.category, o.id)):
            err = "-" if o.error is None else f"{o.error:+.0%}"
            held = f"{math.exp(-residuals[o.id]) - 1:+.0%}" if o.id in residuals else "-"
            print(f"  {o.split[:5]} {o.category:10s} {o.id[:60]:60s} {o.measured:10.4g} "
                  f"{o.predicted or 0:10.4g} {err:>6s} {held:>6s} {o.note[:60]}")
    text = TOML.read_text("utf-8")
    new = desired_text(text, chosen, band, counts, offsets, scales)
    if args.write and new != text:
        TOML.write_text(new, "utf-8")
        print(f"\nwrote {TOML}")
    if args.check and new != text:
        import difflib

        sys.stdout.writelines(difflib.unified_diff(
            text.splitlines(True), new.splitlines(True), "serving_constants.toml (now)",
            "serving_constants.toml (make calibrate-serving)"))
        print("\nthe TOML differs from what make calibrate-serving produces: run "
              "'python scripts/calibrate_serving.py --write'")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
