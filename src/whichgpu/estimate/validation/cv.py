"""Leave-one-GPU-out and leave-one-source-out cross-validation of the speed constants.

For each GPU (or each source of rows), the fitted constants are refitted without that GPU's
(source's) calibration rows, and its rows, calibration and holdout, are predicted with them: how
far off the estimates are for a card, or a publisher, the fit has never seen. The fitting is
scripts/calibrate.py's (the same groups, grids and row minimums as ``make calibrate``), loaded
from the source checkout like the validation data; only the groups that use a left-out row are
refitted, the others keep their fitted values.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal
from urllib.parse import urlparse

from whichgpu.errors import InputError
from whichgpu.estimate.validation import Outcome, _p90, default_path, split_of

LeaveOut = Literal["gpu", "source"]


@cache
def calibrator() -> ModuleType:
    """scripts/calibrate.py of the source checkout (it ships with the validation data)."""
    script = default_path("speed").parents[1] / "scripts" / "calibrate.py"
    if not script.exists():
        raise InputError("cross-validation needs scripts/calibrate.py from the source "
                         "checkout (it is not part of the installed package)")
    spec = importlib.util.spec_from_file_location("whichgpu_calibrate", script)
    assert spec is not None and spec.loader is not None  # a .py file always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["whichgpu_calibrate"] = module
    spec.loader.exec_module(module)
    return module


def gpu_key(row: dict[str, str]) -> str:
    return (row.get("gpu") or "").strip() or "-"


def source_key(row: dict[str, str]) -> str:
    """Who published a row: a GitHub repository (its issue or PR where the row is one), else
    the page's site and path without query or anchor."""
    url = urlparse((row.get("source_url") or "").strip())
    parts = [p for p in url.path.split("/") if p]
    if url.netloc.endswith("github.com") and len(parts) >= 2:
        base = "/".join(parts[:2])
        if len(parts) >= 4 and parts[2] in ("issues", "pull", "discussions"):
            return f"github:{base}/{parts[2]}/{parts[3]}"
        return f"github:{base}"
    return f"{url.netloc}{url.path}" or "-"


KEYS: dict[str, Callable[[dict[str, str]], str]] = {"gpu": gpu_key, "source": source_key}


@dataclass(frozen=True)
class LeftOut:
    """One left-out group's rows, predicted by constants fitted without it."""

    value: str
    outcomes: tuple[Outcome, ...]
    refitted: tuple[str, ...]  # the groups of constants refitted without it
    # rows needing a constant that cannot be refitted without the left-out GPU (source): too few
    # other rows, so it keeps the value fitted on them; their error is not out-of-sample
    kept_fit: tuple[str, ...] = ()


@dataclass(frozen=True)
class CrossValidationSummary:
    category: str
    n: int
    groups: int  # GPUs or sources with rows in the category
    median_abs_error: float
    p90_abs_error: float
    median_signed_error: float
    kept_fit: int = 0  # rows left out of the figures: LeftOut.kept_fit
    # issue 30: of the rows with a stated range (``n_ranged``), how many measured inside it
    # (the shipped bands around the left-out estimate)
    n_ranged: int = 0
    inside: int = 0

    @property
    def coverage(self) -> float | None:
        return self.inside / self.n_ranged if self.n_ranged else None

    def to_json(self) -> dict[str, Any]:
        return {"category": self.category, "n": self.n, "groups": self.groups,
                "median_abs_error": self.median_abs_error, "p90_abs_error": self.p90_abs_error,
                "median_signed_error": self.median_signed_error, "kept_fit": self.kept_fit,
                "n_ranged": self.n_ranged, "inside": self.inside, "coverage": self.coverage}


def fittable(cal: ModuleType, rows: list[dict[str, str]],
             calib_ids: set[str] | None = None) -> set[str]:
    """The groups of constants ``fit_groups`` fits on these calibration rows (enough modelled
    rows per constant), without fitting them."""
    calib = [r for r in rows if split_of(r["id"]) == "calibration" and cal._modelled(r)
             and (calib_ids is None or r["id"] in calib_ids)]
    return {label for label, params, _, pick in cal.GROUPS
            if sum(1 for r in calib if pick(r)) >= cal.MIN_ROWS_PER_PARAMETER * len(params)}


@contextmanager
def shared_refits() -> Iterator[None]:
    """Every leave_one_out inside shares one memo of row estimates (scripts/calibrate.py's
    memo_scope: a row is estimated again only when a constant it reads has changed), e.g.
    leaving out each GPU and then each source. The results are the same."""
    with calibrator().memo_scope():
        yield


def leave_one_out(rows: list[dict[str, str]], by: LeaveOut,
                  values: set[str] | None = None) -> list[LeftOut]:
    """Each GPU (or source) left out in turn; ``values`` restricts which ones."""
    with shared_refits():
        return _leave_one_out(rows, by, values)


def _leave_one_out(rows: list[dict[str, str]], by: LeaveOut,
                   values: set[str] | None) -> list[LeftOut]:
    cal = calibrator()
    key = KEYS[by]
    modelled = [r for r in rows if cal._modelled(r)]
    start = cal._snapshot()
    current = {o.id: o for o in cal._outcomes(modelled)}
    fitted = fittable(cal, rows)
    out: list[LeftOut] = []
    try:
        for value in sorted(values or {key(r) for r in modelled}):
            members = [r for r in modelled if key(r) == value]
            if not members:
                continue
            affected = cal.groups_using(members)
            kept: tuple[str, ...] = ()
            if not affected:  # no fit used these rows: the fitted constants already left them out
                outs = tuple(current[r["id"]] for r in members)
            else:
                train = {r["id"] for r in rows if split_of(r["id"]) == "calibration"
                         and key(r) != value}
                cal.fit_groups(rows, report=lambda *a: None, calib_ids=train, only=affected)
                outs = tuple(cal._outcomes(members))
                cal._restore(start)
                lost = (affected & fitted) - fittable(cal, rows, train)
                kept = tuple(r["id"] for r in members  # calibration and holdout rows
                             if any(pick(r) for label, _, _, pick in cal.GROUPS
                                    if label in lost))
            out.append(LeftOut(value, outs, tuple(sorted(affected)), kept))
    finally:
        cal._restore(start)
    return out


def summarize(results: list[LeftOut]) -> list[CrossValidationSummary]:
    """Per category, the error of the left-out rows, without the rows whose constants could
    not be refitted without them (counted apart: ``kept_fit``), and how many of them measured
    inside the stated range around their left-out estimate."""
    by_cat: dict[str, list[tuple[str, float]]] = {}
    kept: dict[str, int] = {}
    ranged: dict[str, list[bool]] = {}
    for r in results:
        for o in r.outcomes:
            if o.error is None:
                continue
            if o.id in r.kept_fit:
                kept[o.category] = kept.get(o.category, 0) + 1
            else:
                by_cat.setdefault(o.category, []).append((r.value, o.error))
                if o.inside is not None:
                    ranged.setdefault(o.category, []).append(o.inside)
    out = []
    for cat, items in sorted(by_cat.items()):
        errs = [e for _, e in items]
        absolute = [abs(e) for e in errs]
        hits = ranged.get(cat, [])
        out.append(CrossValidationSummary(cat, len(errs), len({v for v, _ in items}),
                                          statistics.median(absolute), _p90(absolute),
                                          statistics.median(errs), kept.get(cat, 0),
                                          len(hits), sum(hits)))
    return out


def run(path: Path | None = None, by: LeaveOut = "gpu") -> list[LeftOut]:
    from whichgpu.estimate.validation import read_rows

    return leave_one_out(read_rows(path or default_path("speed")), by)
