"""One row of the shipped speed measurements (validation/speed.csv) by id, for tests that
estimate a measured row, optionally with some of its fields changed."""

from __future__ import annotations

import csv

from paths import ROOT


def speed_row(row_id: str, **change: str) -> dict[str, str]:
    """The row ``row_id`` of validation/speed.csv with ``change`` applied to its fields."""
    with open(ROOT / "validation/speed.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["id"] == row_id:
                return {**row, **change}
    raise AssertionError(f"{row_id} not in validation/speed.csv")
