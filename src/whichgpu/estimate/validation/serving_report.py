"""``whichgpu validate serving --json``: the serving rows scored (``serving.py``) and, beside
them, each calibration source's error with the serving constants refitted without it
(``estimate/serving_fit.py``). Above both: the fit scores rows with ``serving.py``."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from whichgpu.errors import InputError
from whichgpu.estimate.serving_fit import _snapshot, loso
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation.scoring_memo import scoring_memo
from whichgpu.estimate.validation.serving import (
    cell,
    evaluate_rows,
    family_of,
    ranges_of,
    source_of,
    split_rule,
    table,
)


def report(path: Path | None = None, split: str = "all",
           leave_one_out: bool = True) -> dict[str, Any]:
    """``validate serving --json``: every row, and median errors by split x family, by engine
    and by GPU, the issue's targets on the holdout, and (``leave_one_out``) each calibration
    source's error with the constants refitted without it."""
    if split not in ("all", "calibration", "holdout"):
        raise InputError("--split must be calibration, holdout or all")
    rows = read_rows(path or default_path("serving"))
    outcomes = evaluate_rows(rows)
    shown = [o for o in outcomes if split == "all" or o.split == split]
    info = {r["id"]: r for r in rows}

    def tab(by: tuple[str, ...]) -> list[dict[str, Any]]:
        return [{**dict(zip(by, k, strict=True)), **c.to_json()}
                for k, c in table(shown, rows, by).items()]

    targets = {}
    held = [o for o in outcomes if o.split == "holdout" and o.error is not None]
    for name, pick, target in (
            ("max_throughput", lambda o: info[o.id]["kind"] == "max_throughput", 0.20),
            ("ttft", lambda o: info[o.id]["kind"] == "latency_under_load"
             and o.category == "ttft", 0.25),
            ("tpot", lambda o: info[o.id]["kind"] == "latency_under_load"
             and o.category == "tpot", 0.25)):
        c = cell([o for o in held if pick(o)])
        targets[name] = {**c.to_json(), "target": target,
                         "met": c.median is not None and c.median <= target}
    loso = _leave_one_source_out(rows) if leave_one_out else None
    return {"what": "serving", "split_rule": sorted(split_rule()),
            "leave_one_source_out": loso,
            "rows": [o.to_json() for o in shown],
            "by_family": tab(("split", "family")), "by_engine": tab(("split", "engine",
                                                                      "family")),
            "by_gpu": tab(("split", "gpu", "family")),
            "by_source": tab(("split", "source", "family")),
            "holdout_targets": targets,
            **ranges_of(shown, rows)}


def _leave_one_source_out(rows: list[dict[str, str]]) -> dict[str, Any]:
    """Median |error| per calibration source and per metric family, each source estimated with
    the serving constants refitted on the other calibration sources (estimate/serving_fit)."""
    with scoring_memo():  # the refits score the same runs under the same values again
        residuals = loso(rows, _snapshot())
    info = {r["id"]: r for r in rows}

    def summary(key) -> list[dict[str, Any]]:
        groups: dict[str, list[float]] = {}
        for rid, lr in residuals.items():
            groups.setdefault(key(info[rid]), []).append(abs(math.exp(-lr) - 1))
        return [{"name": k, "n": len(v), "median_abs_error": statistics.median(v)}
                for k, v in sorted(groups.items())]

    return {"by_source": summary(source_of), "by_family": summary(family_of)}
