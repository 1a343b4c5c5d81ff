"""Check the estimates against published measurements (``validation/*.csv``).

Each row becomes a Workload; the estimate of the quantity the row measured is compared with
the measurement. Rows are split once and for all into a calibration half and a holdout half
by a hash of their id: constants may be fitted on calibration rows only, and the error that
the README reports is the holdout error.
"""

from __future__ import annotations

import csv
import hashlib
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from whichgpu.errors import DataError, InputError


def split_of(row_id: str) -> str:
    """'calibration' or 'holdout', fixed by the row id (SHA-1, so stable across runs)."""
    digest = hashlib.sha1(row_id.encode("utf-8")).digest()
    return "calibration" if digest[0] % 2 == 0 else "holdout"


@dataclass(frozen=True)
class Outcome:
    id: str
    category: str
    split: str
    measured: float
    predicted: float | None
    unit: str
    note: str = ""
    source_url: str = ""
    low: float | None = None  # the estimate's range, where the predictor gives one
    high: float | None = None

    @property
    def inside(self) -> bool | None:
        """Whether the measurement lies inside the estimate's low..high range (None: no range)."""
        if self.low is None or self.high is None or self.predicted is None:
            return None
        return self.low <= self.measured <= self.high

    @property
    def error(self) -> float | None:
        """Signed relative error: predicted / measured - 1."""
        if self.predicted is None or not self.measured:
            return None
        return self.predicted / self.measured - 1

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "category": self.category, "split": self.split,
                "measured": self.measured, "predicted": self.predicted, "unit": self.unit,
                "error": self.error, "note": self.note, "source_url": self.source_url}
        if self.low is not None:
            data.update(low=self.low, high=self.high, inside=self.inside)
        return data


def default_path(name: str) -> Path:
    """validation/<name>.csv in a source checkout (the data set is not part of the wheel)."""
    here = Path(str(resources.files("whichgpu"))).resolve()
    for parent in here.parents:
        candidate = parent / "validation" / f"{name}.csv"
        if candidate.exists():
            return candidate
    raise InputError(f"validation/{name}.csv not found: the data set ships with the source "
                     "repository, not the installed package; run from a checkout or pass "
                     f"--file path/to/{name}.csv")


def read_rows(path: Path) -> list[dict[str, str]]:
    import io

    from whichgpu.user_files import read_text

    try:  # a regular file only: never a FIFO or /dev/zero
        rows = list(csv.DictReader(io.StringIO(read_text(path), newline="")))
    except OSError as exc:
        raise DataError(path, f"cannot read the file ({exc.strerror})") from exc
    if not rows or "id" not in rows[0]:
        raise DataError(path, "expected a CSV with an 'id' column")
    return rows


def evaluate(rows: Iterable[dict[str, str]],
             predict: Callable[[dict[str, str]], tuple],
             measured: Callable[[dict[str, str]], tuple[float, str]]) -> list[Outcome]:
    """Predict every row; a row that cannot be modelled keeps predicted=None and says why.

    ``predict`` returns (value, note) or (value, note, (low, high)) with the estimate's range.
    """
    out = []
    for row in rows:
        value, unit = measured(row)
        span: tuple[float, float] | None = None
        try:
            result = predict(row)
            predicted, note = result[0], result[1]
            if len(result) > 2:
                span = result[2]
        except (InputError, KeyError, ValueError, ZeroDivisionError) as exc:
            predicted, note = None, f"not modelled: {exc}"
        out.append(Outcome(row["id"], row.get("category", ""), split_of(row["id"]), value,
                           predicted, unit, note, row.get("source_url", ""),
                           span[0] if span else None, span[1] if span else None))
    return out


@dataclass(frozen=True)
class Summary:
    category: str
    split: str
    n: int
    median_abs_error: float
    p90_abs_error: float
    median_signed_error: float
    coverage: float | None = None  # share of rows measured inside the estimate's range
    n_ranged: int = 0  # rows that had a range

    def to_json(self) -> dict[str, Any]:
        data = {"category": self.category, "split": self.split, "n": self.n,
                "median_abs_error": self.median_abs_error, "p90_abs_error": self.p90_abs_error,
                "median_signed_error": self.median_signed_error}
        if self.coverage is not None:
            data.update(coverage=self.coverage, n_ranged=self.n_ranged)
        return data


def quantile(values: Iterable[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, interpolated linearly between the two nearest
    ranks (numpy's default, "linear"): the one rule of the validation tables, the speed bands
    (scripts/calibrate.py) and the serving bands (serving_fit.py)."""
    ordered = sorted(values)
    k = q * (len(ordered) - 1)
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _p90(values: list[float]) -> float:
    return quantile(values, 0.9)


# Categories reported together as well as one by one (the targets are per group).
GROUPS = {"lora": "training", "qlora": "training", "full-ft": "training",
          "pretrain": "training", "image": "diffusion+video", "video": "diffusion+video",
          "diffusion": "diffusion+video"}


def summarize(outcomes: list[Outcome]) -> list[Summary]:
    """Median and 90th percentile absolute error by category and split (and 'all')."""
    groups: dict[tuple[str, str], list[float]] = {}
    inside: dict[tuple[str, str], list[bool]] = {}
    for o in outcomes:
        if o.error is None:
            continue
        cats = {o.category, "all", GROUPS.get(o.category, o.category)}
        for cat in cats:
            for split in (o.split, "all"):
                groups.setdefault((cat, split), []).append(o.error)
                if o.inside is not None:
                    inside.setdefault((cat, split), []).append(o.inside)
    out = []
    for (cat, split), errs in sorted(groups.items()):
        absolute = [abs(e) for e in errs]
        hits = inside.get((cat, split), [])
        out.append(Summary(cat, split, len(errs), statistics.median(absolute), _p90(absolute),
                           statistics.median(errs),
                           sum(hits) / len(hits) if hits else None, len(hits)))
    return out
