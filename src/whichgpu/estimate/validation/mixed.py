"""The speed of a machine of different cards against published measurements
(validation/mixed_cards.csv): each row's estimate, its error and whether the 80 % range holds
the measurement; a row with a control (the same source's figure on other cards) compares the
ratio mixed / control, which the single-card calibration does not enter."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from whichgpu.units import Range

DEFAULT_CSV = Path(__file__).resolve().parents[4] / "validation" / "mixed_cards.csv"


@dataclass(frozen=True)
class MixedRow:
    """One measurement and what whichgpu says for it."""

    id: str
    gpus: str
    model: str
    measured: float
    estimate: Range
    control_ratio: float | None = None  # measured mixed / measured control
    estimated_ratio: float | None = None
    ratio_only: bool = False  # the job is a stand-in: only the ratio to the control counts

    @property
    def error(self) -> float:
        """estimate / measured - 1 (typical)."""
        return self.estimate.typical / self.measured - 1

    @property
    def inside(self) -> bool:
        return self.estimate.low <= self.measured <= self.estimate.high

    @property
    def ratio_error(self) -> float | None:
        if self.control_ratio is None or self.estimated_ratio is None:
            return None
        return self.estimated_ratio / self.control_ratio - 1


def _decode(row: dict[str, str], gpus: str) -> Range:
    """The estimated decode tokens/s per sequence of ``row``'s job on ``gpus``."""
    from whichgpu.catalog.gpu_list import all_same, parse_gpu_list
    from whichgpu.estimate.configure import configure_workload
    from whichgpu.estimate.mixed_cards import mixed_cards
    from whichgpu.estimate.speed import estimate_speed
    from whichgpu.models.resolve import resolve_model
    from whichgpu.vocabulary import SplitMode

    w = configure_workload(resolve_model(row["model"]), quant=row["quant"],
                           engine=row["engine"], context=int(row["context"]),
                           kv_dtype=row["kv_dtype"] or None)
    cards = parse_gpu_list(gpus)
    ts = tuple(float(t) for t in row["tensor_split"].split(",")) if row["tensor_split"] else None
    if all_same(cards) and ts is None:
        est = estimate_speed(w.with_(gpus=len(cards)), cards[0], len(cards), check_fit=False,
                             saturation=False)
        return est.rates["decode_tokens_per_s_per_sequence"]
    mode = SplitMode(row["split_mode"]) if row.get("split_mode") else None
    result = mixed_cards(w, cards, split_mode=mode, tensor_split=ts, speed=False)
    from whichgpu.estimate.mixed_cards import layer_speed, tp_speed

    plan = result.plan  # the split the row ran (its --tensor-split, else llama.cpp's own)
    speed = layer_speed(w, plan) if plan.method != "tensor-parallel" else tp_speed(w, cards)
    return speed.decode_tokens_per_s_per_sequence


def validate_mixed(path: Path | str = DEFAULT_CSV) -> list[MixedRow]:
    """Every row of the table with its estimate (memory not checked: the rows ran)."""
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            est = _decode(row, row["gpus"])
            ratio = est_ratio = None
            if row.get("control_gpus"):
                ratio = float(row["value"]) / float(row["control_value"])
                est_ratio = est.typical / _decode({**row, "tensor_split": ""},
                                                  row["control_gpus"]).typical
            out.append(MixedRow(row["id"], row["gpus"], row["model"], float(row["value"]), est,
                                ratio, est_ratio, row.get("compare") == "ratio"))
    return out
