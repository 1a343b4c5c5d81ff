"""Decode residuals of the calibration rows, by mechanism, and whether a candidate constant
earns its place out of sample (issue 28).

    python scripts/decode_residuals.py                      # groups: engine x arch x MoE/dense
    python scripts/decode_residuals.py --set 'decode_moe_layer_us[llamacpp/Ampere]=100'
    python scripts/decode_residuals.py --choose 'decode_moe_layer_us[llamacpp/Ampere]=0,50,100'

Only the calibration split of validation/speed.csv is read: the holdout is never looked at
(it is for the one look at the end). ``--set`` overrides a constant for the whole run;
``--choose`` picks a value from the grid the way a fit would (the least mean absolute log
error), three times: on every calibration row, leaving each GPU out and leaving each source
out (each left-out group's rows predicted with the value chosen without them), beside the
constant as it is. A candidate that does not lower the leave-one-out errors has not shown a
mechanism; it has fitted the rows it was chosen on.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SPEC = re.compile(r"^(\w+)(?:\[([^\]]+)\])?=(.+)$")


def calibration_decode_rows(rows: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """The decode rows of the calibration split (never a holdout row)."""
    from whichgpu.estimate.validation import split_of

    return [r for r in rows if r.get("category") == "decode"
            and split_of(r["id"]) == "calibration"]


def parse_spec(text: str) -> tuple[str, str | None, list[float]]:
    """'name[key]=v1,v2' -> (name, key or None, [v1, v2])."""
    m = _SPEC.match(text.strip())
    if not m:
        raise SystemExit(f"error: expected NAME[KEY]=VALUE[,VALUE...], got {text!r}")
    try:
        values = [float(v) for v in m.group(3).split(",")]
    except ValueError:
        raise SystemExit(f"error: not numbers after '=': {m.group(3)!r}") from None
    return m.group(1), m.group(2), values


@contextlib.contextmanager
def constants_set(settings: Iterable[tuple[str, str | None, float]]):
    """The speed constants with ``settings`` (name, key or None, value) in force."""
    from whichgpu.estimate.constants import _load, overridden

    with contextlib.ExitStack() as stack:
        for name, key, value in settings:
            base = _load("speed_constants")[name].value
            new = {**base, key: value} if key is not None else value
            stack.enter_context(overridden("speed_constants", name, new))
        yield


def log_errors(rows: list[dict[str, str]]) -> dict[str, float]:
    """log(predicted / measured) of each row the model answers."""
    from whichgpu.errors import InputError
    from whichgpu.estimate.validation.speed import measured, predict

    out = {}
    for r in rows:
        try:
            value = predict(r)[0]
        except (InputError, KeyError, ValueError, ZeroDivisionError):
            continue
        if value:
            out[r["id"]] = math.log(value / measured(r)[0])
    return out


def mechanism(row: dict[str, str]) -> str:
    """engine / architecture / moe|dense (+ host offload) of a row, as the model reads it."""
    from whichgpu.estimate.speed.hardware import arch_key
    from whichgpu.estimate.validation.speed import estimate_of

    w, gpu, _, _ = estimate_of(row)
    kind = "moe" if w.model.moe else "dense"
    offload = "+offload" if "ngl=" in row.get("settings", "") or "n_cpu_moe" in row.get(
        "settings", "") else ""
    return f"{row['engine']} / {arch_key(gpu)} / {kind}{offload}"


def _pct(x: float) -> str:
    return f"{math.exp(x) - 1:+6.1%}"


def groups(rows: list[dict[str, str]], errs: dict[str, float]) -> list[str]:
    """One line per mechanism: rows, median signed and median absolute error."""
    by: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r["id"] in errs:
            by[mechanism(r)].append(errs[r["id"]])
    lines = []
    for key, values in sorted(by.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"{len(values):3d}  {_pct(statistics.median(values))}  "
                     f"{math.exp(statistics.median(abs(v) for v in values)) - 1:6.1%}  {key}")
    return lines


def choose(table: dict[tuple[float, ...], dict[str, float]],
           group_of: Callable[[str], str]) -> list[float]:
    """Absolute log errors of each row predicted with the grid value chosen without its
    group (the least mean absolute log error over the other groups' rows)."""
    ids = next(iter(table.values())).keys()
    out = []
    for g in sorted({group_of(i) for i in ids}):
        def without(k: tuple[float, ...], g: str = g) -> float:
            rest = [abs(v) for i, v in table[k].items() if group_of(i) != g]
            return statistics.mean(rest) if rest else 0.0

        best = min(table, key=without)
        out += [abs(v) for i, v in table[best].items() if group_of(i) == g]
    return out


def summary(values: list[float]) -> str:
    return (f"median {math.exp(statistics.median(values)) - 1:5.1%}  "
            f"mean {math.exp(statistics.mean(values)) - 1:5.1%}  ({len(values)} rows)")


def main(argv: list[str] | None = None) -> int:
    from whichgpu.estimate.validation import read_rows

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", default=[], metavar="NAME[KEY]=VALUE",
                    help="override a speed constant for the whole run")
    ap.add_argument("--choose", action="append", default=[], metavar="NAME[KEY]=V1,V2,...",
                    help="a candidate grid, chosen in and out of sample")
    args = ap.parse_args(argv)
    rows = calibration_decode_rows(read_rows(ROOT / "validation" / "speed.csv"))
    fixed = []
    for text in args.set:
        name, key, values = parse_spec(text)
        fixed.append((name, key, values[0]))
    with constants_set(fixed):
        errs = log_errors(rows)
        print("rows  median  |median|  engine / architecture / kind (calibration split)")
        print("\n".join(groups(rows, errs)))
        print(f"all: {summary([abs(v) for v in errs.values()])}")
        if not args.choose:
            return 0
        specs = [parse_spec(t) for t in args.choose]
        table = {}
        for combo in itertools.product(*(values for _, _, values in specs)):
            with constants_set((n, k, v) for (n, k, _), v in zip(specs, combo, strict=True)):
                table[combo] = log_errors(rows)
    gpu = {r["id"]: r["gpu"] for r in rows}
    source = {r["id"]: r["source_url"].split("/blob/")[0].split("#")[0] for r in rows}
    best = min(table, key=lambda k: statistics.mean(abs(v) for v in table[k].values()))
    print(f"chosen on every calibration row: {best}: "
          f"{summary([abs(v) for v in table[best].values()])}")
    print(f"as it is:                   {summary([abs(v) for v in errs.values()])}")
    print(f"leaving each GPU out:       {summary(choose(table, gpu.__getitem__))}")
    print(f"leaving each source out:    {summary(choose(table, source.__getitem__))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
