"""exllamav3 (EXL3) is refused on every path, never answered with ExLlamaV2's numbers (issue 28,
item 4: it once ran as an exllamav2 stand-in at 0.95 of bandwidth, about 3x too fast on 4 x
RTX 3090). The published EXL3 rows sit in validation/incoming/ as evidence only: none is read by
calibration while the engine is refused, and no constant is keyed by a refused engine."""

from __future__ import annotations

import csv
import json
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from paths import DATA, ROOT
from whichgpu.engines import not_modelled
from whichgpu.estimate.validation import split_of

VALIDATION = ROOT / "validation"


@pytest.mark.parametrize("args", [
    # the old stand-in: EXL3 weights on ExLlamaV2's kernels
    ("speed", "llama-3.1-8b", "--gpu", "rtx-3090", "--engine", "exllamav2",
     "--quant", "exl3-4.0bpw"),
    ("speed", "llama-3.1-8b", "--gpu", "rtx-3090", "--quant", "EXL3_4.0"),
    ("speed", "llama-3.1-8b", "--gpu", "rtx-3090", "--quant", "exl3"),
    ("recommend", "llama-3.1-8b", "--quant", "exl3-3.0bpw"),
])
def test_exl3_weights_are_refused_not_run_as_exl2(cli, args: tuple[str, ...]) -> None:
    r = cli(*args)
    assert r.code == 2, r.out
    assert "EXL3" in r.err and "not modelled" in r.err
    assert "does not answer with EXL2's numbers" in r.err
    assert "tok/s" not in r.out


@pytest.mark.parametrize("engine", ["exllamav3", "exl3", "tabbyapi-exl3", "ExLlamaV3"])
@pytest.mark.parametrize("command", ["speed", "recommend"])
def test_every_name_of_the_engine_is_refused(cli, command: str, engine: str) -> None:
    args = ["llama-3.1-8b", "--engine", engine]
    if command == "speed":
        args += ["--gpu", "rtx-4090"]
    r = cli(command, *args)
    assert r.code == 2, r.out
    assert "exllamav3 is not modelled" in r.err and "another engine's numbers" in r.err


def test_rest_refuses_exl3_with_422(web) -> None:
    by_quant = web.get("/api/v1/speed", params={
        "model": "llama-3.1-8b", "gpu": "rtx-3090", "quant": "exl3-4.0bpw"})
    assert by_quant.status_code == 422
    assert "EXL3" in by_quant.json()["detail"]
    by_engine = web.get("/api/v1/speed", params={
        "model": "llama-3.1-8b", "gpu": "rtx-3090", "engine": "exllamav3"})
    assert by_engine.status_code == 422
    assert "not modelled" in by_engine.json()["detail"]


def _exl3_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f)
                if r["engine"] == "exllamav3" or r["quant"].lower().startswith("exl3")]


def test_the_evidence_is_kept_but_not_calibrated_on() -> None:
    incoming = _exl3_rows(VALIDATION / "incoming" / "speed-2026.csv")
    # issue 144's three rows and the four added for issue 28 item 4, each with its source
    assert len(incoming) >= 7
    assert all(r["source_url"].startswith(("https://", "http://")) and r["date"]
               for r in incoming)
    # the project's fixed split by id spreads them over both halves
    assert {split_of(r["id"]) for r in incoming} == {"calibration", "holdout"}
    # while the engine is refused, no scored file holds an EXL3 row
    for scored in ("speed.csv", "serving.csv", "memory.csv"):
        assert _exl3_rows(VALIDATION / scored) == [], scored


def _keys(value: object) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value] + [k for v in value.values() for k in _keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


@pytest.mark.parametrize("table", [
    "estimate/data/speed_constants.toml", "estimate/data/engine_kernels.toml",
    "estimate/data/serving_constants.toml", "estimate/data/memory_constants.toml",
    "data/engines.toml",
])
def test_no_constant_is_keyed_by_a_refused_engine(table: str) -> None:
    """A constant for exllamav3 (or any refused engine with no honest equivalent) would be a number
    with nothing behind it; whoever models the engine removes its refusal in the same change.
    (An entry with ``use``, like Ollama, is answered as another engine's version: its name may
    key that version, e.g. ``llamacpp@ollama``.)"""
    data = tomllib.loads(resources.files("whichgpu").joinpath(table).read_text("utf-8"))
    refused = []
    for key in _keys(data):
        for part in key.replace("@", "/").split("/"):
            entry = not_modelled(part)
            if entry is not None and not entry.use:
                refused.append(key)
    assert refused == [], f"{table} keys a refused engine: {refused}"


def test_an_exl3_checkpoint_is_refused_not_read_as_bf16(cli, tmp_path, monkeypatch) -> None:
    """An EXL3 repository's config.json names its format (``quant_method: exl3``, the bits and
    head bits, as exllamav3's converter writes them); it is refused like ``--quant exl3``, not
    answered as an unquantised model on vLLM."""
    config = json.loads((DATA / "bench" / "tiny-llama" / "config.json").read_text("utf-8"))
    config["quantization_config"] = {"quant_method": "exl3", "bits": 4.0, "head_bits": 6}
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(config), "utf-8")
    monkeypatch.chdir(tmp_path)
    for args in (("speed", "m", "--gpu", "rtx-3090"), ("memory", "m/config.json")):
        r = cli(*args)
        assert r.code == 2, r.out
        assert "EXL3" in r.err and "not modelled" in r.err
