"""scripts/decode_residuals.py (issue 28): it reads the calibration split only, and its
leave-one-out choice never sees the rows it predicts."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from paths import ROOT
from whichgpu.estimate.validation import default_path, read_rows, split_of


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("decode_residuals",
                                                  ROOT / "scripts/decode_residuals.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["decode_residuals"] = module
    spec.loader.exec_module(module)
    return module


def test_reads_no_holdout_row() -> None:
    rows = read_rows(default_path("speed"))
    decode = [r for r in rows if r["category"] == "decode"]
    assert any(split_of(r["id"]) == "holdout" for r in decode)  # there are some to leave out
    picked = _script().calibration_decode_rows(rows)
    assert picked and all(split_of(r["id"]) == "calibration" for r in picked)
    assert {r["id"] for r in picked} == {r["id"] for r in decode
                                         if split_of(r["id"]) == "calibration"}


def test_leave_one_out_choice_never_sees_the_left_out_rows() -> None:
    # each value fits one row exactly and misses the other: chosen in sample the mean
    # absolute error is 0.5; chosen without each row, each row gets the other's value
    table = {(0.0,): {"a": 0.0, "b": 1.0}, (1.0,): {"a": 1.0, "b": 0.0}}
    assert sorted(_script().choose(table, lambda i: i)) == [1.0, 1.0]
    # one group holding both rows: nothing is left to choose on, the first value answers
    assert sorted(_script().choose(table, lambda i: "all")) == [0.0, 1.0]


def test_spec_is_read_or_refused() -> None:
    s = _script()
    assert s.parse_spec("decode_moe_layer_us[llamacpp/Ampere]=0,50") == (
        "decode_moe_layer_us", "llamacpp/Ampere", [0.0, 50.0])
    assert s.parse_spec("host_decode_bandwidth_efficiency=0.6") == (
        "host_decode_bandwidth_efficiency", None, [0.6])
    with pytest.raises(SystemExit, match="NAME"):
        s.parse_spec("no equals sign")
