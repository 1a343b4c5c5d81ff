"""Issue 27: two per-request shortcuts of the web layer say what the long ways said: FastAPI's
"is this query field a list?" remembered per field type, and the calibration profile's path
(part of every memo key) kept per setting and the environment that places it."""

from __future__ import annotations

from typing import get_args

from fastapi.dependencies import utils

from whichgpu.answers import requests as r
from whichgpu.answers.request import for_web
from whichgpu.web import query_fields, services


def test_the_remembered_check_is_installed_and_answers_as_fastapi(web):
    query_fields.install()
    query_fields.install()  # twice: still the one original underneath
    assert utils.field_annotation_is_sequence is query_fields.is_sequence
    original = query_fields._ORIGINAL[0]
    assert len(query_fields._ORIGINAL) == 1 and original is not query_fields.is_sequence
    seen = set()
    for model in (r.Recommend, r.Memory, r.Speed, r.Checklist, r.Tco, r.Cost, r.Gpus,
                  r.PricesList, r.Fits):
        for field in for_web(model).model_fields.values():
            for annotation in (field.annotation, *get_args(field.annotation)):
                assert query_fields.is_sequence(annotation) == original(annotation), annotation
                assert query_fields.is_sequence(annotation) == original(annotation)  # kept
                seen.add(original(annotation))
    assert seen == {True, False}  # list fields (e.g. ``only``) and plain ones were both asked


def test_a_query_is_still_read_field_by_field(web):
    gpus = web.get("/api/v1/recommend", params=[("model", "llama-3.1-8b"), ("tokens", "1M"),
                                                  ("only", "h100-sxm,a100-80gb-sxm"),
                                                  ("top", "0")])
    assert gpus.status_code == 200, gpus.text
    assert {o["gpu"] for o in gpus.json()["options"]} <= {"h100-sxm", "a100-80gb-sxm"}


def test_the_profile_path_follows_the_setting_and_the_home(monkeypatch, tmp_path):
    monkeypatch.setattr(services, "_calibration_setting", ["default"])
    for home in (tmp_path / "a", tmp_path / "b"):
        monkeypatch.setenv("WHICHGPU_HOME", str(home))
        assert services._calibration_stamp() == (str(home / "calibration.json"), None)
        home.mkdir()
        (home / "calibration.json").write_text("{}")
        stamp = services._calibration_stamp()
        assert stamp[0] == str(home / "calibration.json") and stamp[1] is not None
        assert stamp[1] == (home / "calibration.json").stat().st_mtime_ns
    other = tmp_path / "mine.json"
    monkeypatch.setattr(services, "_calibration_setting", [str(other)])
    assert services._calibration_stamp() == (str(other), None)
    monkeypatch.setattr(services, "_calibration_setting", [None])
    assert services._calibration_stamp() == ()
