"""Error tables beyond the calibration/holdout split: per (category, engine, architecture), with
the dates of the rows, so a reader sees where the estimates are calibrated and where not."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from whichgpu.estimate.validation import Outcome, _p90


@dataclass(frozen=True)
class GroupError:
    """The error of one group of rows (all splits), and of its holdout rows."""

    key: tuple[str, ...]
    n: int
    median_abs_error: float
    p90_abs_error: float
    median_signed_error: float
    n_holdout: int
    holdout_median_abs_error: float | None
    first_date: str
    last_date: str

    def to_json(self) -> dict[str, Any]:
        return {"key": list(self.key), "n": self.n, "median_abs_error": self.median_abs_error,
                "p90_abs_error": self.p90_abs_error,
                "median_signed_error": self.median_signed_error, "n_holdout": self.n_holdout,
                "holdout_median_abs_error": self.holdout_median_abs_error,
                "first_date": self.first_date, "last_date": self.last_date}


def engine_arch_key(row: dict[str, str]) -> tuple[str, str, str]:
    """(category, engine as modelled (with the llama.cpp build era), GPU architecture)."""
    from whichgpu.estimate.speed.hardware import arch_key
    from whichgpu.estimate.validation.rows import ENGINE_ALIASES, gpu_of

    engine = (row.get("engine") or "").strip().lower()
    modelled = ENGINE_ALIASES.get(engine, engine) or "-"
    if modelled == "llamacpp":
        from whichgpu.estimate.speed.kernels import era_of
        from whichgpu.estimate.validation.rows import measured_build

        era = era_of("llamacpp", measured_build(row))
        modelled = f"llamacpp ({era})" if era else modelled
    try:
        arch = arch_key(gpu_of(row))
    except Exception:
        arch = (row.get("gpu") or "-").strip()
    return (row.get("category", ""), modelled, arch)


def group_errors(outcomes: list[Outcome], rows: dict[str, dict[str, str]],
                 key: Callable[[dict[str, str]], tuple[str, ...]]) -> list[GroupError]:
    """Median / p90 absolute error of the modelled rows, grouped by ``key``."""
    groups: dict[tuple[str, ...], list[Outcome]] = {}
    for o in outcomes:
        if o.error is None:
            continue
        groups.setdefault(key(rows[o.id]), []).append(o)
    out = []
    for k, members in sorted(groups.items()):
        errs = [o.error for o in members if o.error is not None]  # every one: filtered above
        absolute = [abs(e) for e in errs]
        hold = [abs(o.error) for o in members if o.split == "holdout" and o.error is not None]
        dates = sorted(d for o in members if (d := (rows[o.id].get("date") or "").strip()))
        out.append(GroupError(k, len(errs), statistics.median(absolute), _p90(absolute),
                              statistics.median(errs), len(hold),
                              statistics.median(hold) if hold else None,
                              dates[0] if dates else "undated",
                              dates[-1] if dates else "undated"))
    return out
