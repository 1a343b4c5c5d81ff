"""The serving constants are what `make calibrate-serving` produces from the calibration
sources only; the split is by source and was written down before any fit; `validate serving`
reports the holdout apart, by engine and GPU."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import sys

import pytest

from paths import ROOT
from refit_cache import cached, shared_serving_loso
from whichgpu.estimate.validation import serving as vs
from whichgpu.estimate.validation.scoring_memo import scoring_memo


def _calibrate():
    spec = importlib.util.spec_from_file_location("calibrate_serving",
                                                  ROOT / "scripts/calibrate_serving.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibrate_serving"] = module
    spec.loader.exec_module(module)
    return module


def _rows():
    with (ROOT / "validation/serving.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_toml_is_exactly_what_make_calibrate_serving_produces(request, capsys):
    """A passing check is kept for the same inputs; its leave-one-source-out residuals are
    shared with validate serving's (tests/refit_cache.py)."""
    def check() -> dict:
        with shared_serving_loso(request.config):
            status = _calibrate().main(["--check"])
        return {"status": status, "out": capsys.readouterr().out[-3000:]}

    result = cached(request.config, "calibrate-serving-check", check,
                    keep=lambda r: r["status"] == 0)
    assert result["status"] == 0, result["out"]


def test_the_holdout_is_whole_sources_named_before_fitting():
    held = vs.split_rule()
    assert held == {"trt017", "ix828", "dbmart", "sglvllm060", "mr", "vllmi20469"}
    rows = _rows()
    sides: dict[str, set[str]] = {}
    for r in rows:
        sides.setdefault(r["group"], set()).add(vs.split_of_row(r))
    assert all(len(s) == 1 for s in sides.values())  # a run never straddles the split
    # the speed model's calibration already uses these sources: they cannot be holdout
    assert not held & {"trt10", "nim", "ix870"}


def test_holdout_values_never_move_a_fitted_constant(monkeypatch, request):
    """Change every holdout measurement: the fits are the same (the two fits' comparison is
    kept for the same inputs: tests/refit_cache.py)."""
    calibrate = _calibrate()
    rows = _rows()
    held = vs.split_rule()
    only = {("serving_step_per_sequence_us", "trtllm/dense"),
            ("serving_ttft_overhead_ms", "trtllm")}

    def compare() -> dict:
        # the second fit reuses the first's simulations of unchanged runs (scoring_memo); a
        # scrambled row it read would be another run's rows, so simulated again
        with scoring_memo():
            base = calibrate.fit_all(rows, report=lambda *a: None, only=only)
            scrambled = [{**r, "value": str(float(r["value"]) * 7)} if vs.source_of(r) in held
                         else r for r in rows]
            moved = calibrate.fit_all(scrambled, report=lambda *a: None, only=only)
        return {"same": moved == base, "base": repr(base), "scrambled": repr(moved)}

    result = cached(request.config, "serving-holdout-scrambled", compare,
                    keep=lambda r: r["same"])
    assert result["same"], (result["base"], result["scrambled"])


def test_every_fitted_key_names_its_rows_and_runs():
    calibrate = _calibrate()
    text = (ROOT / "src/whichgpu/estimate/data/serving_constants.toml").read_text("utf-8")
    for name in calibrate.FITTED:
        block = text[text.index(f"[constant.{name}]"):]
        block = block[:block.index("\n\n")]
        fitted = [ln for ln in block.splitlines() if ln.startswith("fitted = ")]
        assert fitted, name
        for rows, runs in re.findall(r"on (\d+) calibration rows of (\d+) runs", fitted[0]):
            assert int(rows) >= calibrate.MIN_ROWS and int(runs) >= calibrate.MIN_GROUPS


def test_every_engine_default_has_a_source():
    from whichgpu.estimate.constants import all_constants

    for name, c in all_constants("serving_constants").items():
        assert c.source and len(c.source) > 20, name


def test_validate_serving_reports_by_engine_and_gpu_with_the_holdout_apart(cli, request):
    """(Its leave-one-source-out refits are kept for the same inputs, and shared with
    calibrate_serving.py --check's: tests/refit_cache.py.)"""
    def run() -> dict:
        with shared_serving_loso(request.config):
            res = cli("validate", "serving", "--json")
        return {"code": res.code, "out": res.out, "err": res.err}

    res = cached(request.config, "validate-serving-json", run, keep=lambda r: r["code"] == 0)
    assert res["code"] == 0, res["err"]
    data = json.loads(res["out"])
    assert data["split_rule"] == sorted(vs.split_rule())
    loso = {c["name"]: c for c in data["leave_one_source_out"]["by_source"]}
    assert set(loso) and not set(loso) & vs.split_rule()  # calibration sources only
    splits = {r["split"] for r in data["rows"]}
    assert splits == {"calibration", "holdout"}
    for r in data["rows"]:
        if r["predicted"] is None:
            assert r["note"].startswith("not modelled:")
        else:
            assert r["low"] <= r["predicted"] <= r["high"]
    engines = {(c["split"], c["engine"]) for c in data["by_engine"]}
    assert ("holdout", "vllm") in engines and ("calibration", "trtllm") in engines
    assert {c["gpu"] for c in data["by_gpu"]} >= {"h100-sxm", "a100-80gb-sxm", "rtx-4090"}
    for name in ("max_throughput", "ttft", "tpot"):
        t = data["holdout_targets"][name]
        assert t["n"] > 0 and t["met"] == (t["median_abs_error"] <= t["target"])
    text = cli("validate", "serving", "--split", "holdout", "--no-loso")
    assert text.code == 0 and "Holdout (sources" in text.out


def test_rows_the_model_cannot_describe_are_listed_with_the_reason():
    outs = {o.id: o for o in vs.run()}
    assert "tail percentiles" in outs["srv-mr-mistral7b-4090-vllm-c4-ttft-p99"].note
    assert "unmodelled" not in outs["srv-mr-mistral7b-4090-vllm-c4-out"].note
    assert outs["srv-mr-mistral7b-4090-vllm-c4-out"].predicted is not None
    eagle = next(o for i, o in outs.items() if "eagle" in i)
    assert "speculative decoding" in eagle.note


@pytest.mark.parametrize("split", ["bogus"])
def test_validate_serving_refuses_an_unknown_split(cli, split):
    res = cli("validate", "serving", "--split", split, "--no-loso")
    assert res.code == 2 and "--split" in res.err
