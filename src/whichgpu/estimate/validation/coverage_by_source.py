"""What the serving bands' coverage depends on (issue 30): whether a row's configuration has
measured neighbours, and which source it comes from. Reported by scripts/calibrate_serving.py
and ``validate serving --json``; nothing here chooses a band.

- *Neighbours*: calibration runs of the same engine x GPU x model family x metric family from
  another source. A held-out source never has calibration rows of its own (the split is by
  source), but its configuration may have been measured by another publisher.
- *New-source coverage*: each calibration source checked against the bands derived without its
  residuals (the band's own leave-one-source-out), per source and balanced over sources (each
  source one vote), which is what a held-out source sees; the band rule's own check
  (serving_fit.loo_share) leaves out one row at a time, so a source's other rows stay in.
- *Per-source holdout coverage*: the holdout's share inside the range per source and balanced
  over sources, since one source's many rows (a vendor's table) can carry the pooled share.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from whichgpu.estimate import serving_fit as sf
from whichgpu.estimate.validation import Outcome
from whichgpu.estimate.validation import serving as vs
from whichgpu.estimate.validation.serving import holdout_by_source

Row = dict[str, str]
Config = tuple[str | None, str, str | None, str]


def config_of(row: Row) -> Config:
    """(engine, GPU, model family, metric family) of a serving row."""
    return (sf._engine(row), (row.get("gpu") or "").strip(), sf._family(row), vs.family_of(row))


def run_of(row: Row) -> str:
    """A row's run: its group (one run's metrics share one)."""
    return row.get("group") or row["id"]


class Neighbours:
    """Calibration runs by configuration, to count a row's measured neighbours."""

    def __init__(self, rows: Iterable[Row], holdout: frozenset[str] | None = None) -> None:
        held = vs.split_rule() if holdout is None else holdout
        self._runs: dict[Config, dict[str, str]] = {}  # config -> {run: source}
        for r in rows:
            if vs.source_of(r) not in held:
                self._runs.setdefault(config_of(r), {})[run_of(r)] = vs.source_of(r)

    def of(self, row: Row) -> int:
        """Calibration runs of ``row``'s configuration from sources other than its own."""
        own = vs.source_of(row)
        return sum(1 for s in self._runs.get(config_of(row), {}).values() if s != own)


@dataclass(frozen=True)
class Spread:
    """Log errors log(measured / estimated) of a set of rows."""

    n: int
    median_abs: float | None  # median |measured / estimated - 1|
    width80: float | None  # high / low of their 80 % interval (serving_fit.interval80)

    @classmethod
    def of(cls, lrs: list[float]) -> Spread:
        if not lrs:
            return cls(0, None, None)
        width = None
        if len(lrs) > 2:
            lo, hi = sf.interval80(lrs)
            width = math.exp(hi - lo)
        return cls(len(lrs), statistics.median(abs(math.exp(x) - 1) for x in lrs), width)

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "median_abs_error": self.median_abs, "width80": self.width80}


def proximity(rows: list[Row], residuals: dict[str, float], outcomes: list[Outcome]
              ) -> list[dict[str, Any]]:
    """Per metric family x model family x (with / without measured neighbours): the spread of
    the calibration rows' leave-one-source-out residuals, and the holdout rows' spread and
    share inside their range."""
    info = {r["id"]: r for r in rows}
    near = Neighbours(rows)
    cells: dict[tuple[str, str, bool], tuple[list[float], list[float], list[bool]]] = {}
    for rid, lr in residuals.items():
        r = info[rid]
        key = (vs.family_of(r), str(sf._family(r)), near.of(r) > 0)
        cells.setdefault(key, ([], [], []))[0].append(lr)
    for o in outcomes:
        if o.split != "holdout" or not o.predicted or not o.measured:
            continue
        r = info[o.id]
        key = (o.category, str(sf._family(r)), near.of(r) > 0)
        cell = cells.setdefault(key, ([], [], []))
        cell[1].append(math.log(o.measured / o.predicted))
        if o.inside is not None:
            cell[2].append(o.inside)
    return [{"metric": m, "model_family": f, "neighbours": n,
             "calibration": Spread.of(c).to_json(), "holdout": Spread.of(h).to_json(),
             "holdout_inside": sum(i), "holdout_ranged": len(i)}
            for (m, f, n), (c, h, i) in sorted(cells.items())]


def new_source_coverage(rows: list[Row], residuals: dict[str, float],
                        offsets: dict[str, float] | None = None,
                        scales: dict[str, float] | None = None) -> dict[str, dict[str, Any]]:
    """Per metric family: each calibration source's rows against the bands derived (by
    serving_fit.bands, the shipped rule) without that source's residuals."""
    info = {r["id"]: r for r in rows}
    per: dict[str, dict[str, list[bool]]] = {}
    for source in sorted({vs.source_of(info[rid]) for rid in residuals}):
        without = {k: v for k, v in residuals.items() if vs.source_of(info[k]) != source}
        band_set = sf.bands(rows, without, offsets, scales)
        for rid, lr in residuals.items():
            row = info[rid]
            if vs.source_of(row) != source:
                continue
            metric = vs.family_of(row)
            band = sf._look(band_set, metric, sf._family(row))
            if band is None:
                continue
            r = sf._shifted(row, lr, (offsets or {}).get(metric, 0.0))
            per.setdefault(metric, {}).setdefault(source, []).append(
                math.log(band[0]) <= r <= math.log(band[1]))
    return {m: vs.coverage_json(v) for m, v in sorted(per.items())}


def new_source_scale(rows: list[Row], residuals: dict[str, float], metric: str,
                     offsets: dict[str, float] | None, scales: dict[str, float] | None
                     ) -> tuple[float, float] | None:
    """(factor, balanced share): the smallest log-width factor on serving_fit.SCALE_GRID, at
    least 1, over the shipped one whose bands hold COVERAGE's low end of each calibration
    source's rows balanced over sources, when derived without that source (None: none
    does). What a new-source rule would widen the bands by; nothing applies it."""
    base = (scales or {}).get(metric, 1.0)
    for f in (x for x in sf.SCALE_GRID if x >= 1.0):
        c = new_source_coverage(rows, residuals, offsets, {**(scales or {}),
                                                           metric: base * f}).get(metric)
        if c and c["balanced"] is not None and c["balanced"] >= sf.COVERAGE[0]:
            return f, c["balanced"]
    return None


def source_bootstrap(per_source: dict[str, dict[str, int]], draws: int = 4000,
                     seed: int = 30) -> tuple[float, float]:
    """The 10th and 90th percentiles of the pooled share inside when the sources themselves
    are resampled with replacement (a source's rows are not independent of each other)."""
    import random

    rng = random.Random(seed)
    cells = list(per_source.values())
    shares = []
    for _ in range(draws):
        pick = [rng.choice(cells) for _ in cells]
        n = sum(p["n"] for p in pick)
        shares.append(sum(p["inside"] for p in pick) / n if n else 0.0)
    shares.sort()
    return shares[int(0.1 * draws)], shares[int(0.9 * draws) - 1]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _w(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def report(rows: list[Row], residuals: dict[str, float], outcomes: list[Outcome],
           offsets: dict[str, float] | None, scales: dict[str, float] | None,
           say=print) -> None:
    """The three views above, as scripts/calibrate_serving.py prints them."""
    say("\nEvidence proximity (reported, never chosen on): per metric x model family, rows "
        "whose engine x GPU x model family has calibration runs from another source or not;\n"
        "calibration: leave-one-source-out residuals (n, median |error|, 80 % interval width);"
        " holdout: n, median |error|, inside its range")
    for c in proximity(rows, residuals, outcomes):
        cal, hold = c["calibration"], c["holdout"]
        say(f"  {c['metric']:10s} {c['model_family']:8s} "
            f"{'measured' if c['neighbours'] else 'unmeasured':10s}  calibration "
            f"{cal['n']:3d} {_pct(cal['median_abs_error']):>4s} {_w(cal['width80']):>6s}   "
            f"holdout {hold['n']:3d} {_pct(hold['median_abs_error']):>4s} "
            f"{c['holdout_inside']}/{c['holdout_ranged']}")
    say("\nNew-source coverage of the calibration rows (each source against the bands derived "
        "without it; balanced = mean over sources):")
    for metric, c in new_source_coverage(rows, residuals, offsets, scales).items():
        wider = new_source_scale(rows, residuals, metric, offsets, scales)
        need = (f"; {_pct(sf.COVERAGE[0])} balanced would take x{wider[0]:g} "
                f"({_pct(wider[1])})" if wider else "")
        say(f"  {metric:10s} {c['inside']}/{c['n']} = {_pct(c['pooled'])}, balanced "
            f"{_pct(c['balanced'])}{need}: " + ", ".join(
                f"{s} {v['inside']}/{v['n']}" for s, v in c["by_source"].items()))
    say("Holdout inside the range, per source (balanced = mean over sources; 80 % interval of "
        "the pooled share with the sources resampled):")
    for metric, c in holdout_by_source(outcomes, rows).items():
        lo, hi = source_bootstrap(c["by_source"])
        say(f"  {metric:10s} {c['inside']}/{c['n']} = {_pct(c['pooled'])} ({_pct(lo)}-"
            f"{_pct(hi)}), balanced {_pct(c['balanced'])}: " + ", ".join(
                f"{s} {v['inside']}/{v['n']}" for s, v in c["by_source"].items()))
