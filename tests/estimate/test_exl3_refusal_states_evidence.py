"""exllamav3 (EXL3) stays refused, and the refusal says what is known and why it is not enough
(issue 28, item 4). The bar to model the engine is current-build rows with the whole model on
the GPU on at least two GPU classes; the published rows (validation/incoming/speed-2026.csv) hold
one such class (a DGX Spark, stock 1.5.0) and RTX 3090s with MoE experts on the CPU worker. The
figures the refusal quotes are checked against those rows, so neither can drift alone, and the
day a second class of current GPU-only rows arrives this file says the refusal no longer holds."""

from __future__ import annotations

import csv
import re

import pytest

from paths import ROOT
from whichgpu.answers.request import engine_not_modelled
from whichgpu.engines import not_modelled
from whichgpu.errors import InputError
from whichgpu.messages import Message
from whichgpu.models.quant import get_quant
from whichgpu.web.i18n import locale
from whichgpu.web.words import say_text

INCOMING = ROOT / "validation" / "incoming" / "speed-2026.csv"
#: exllamav3 builds with the July 2026 decode kernels (GEMV, int8 GEMV, paged attention)
CURRENT = re.compile(r"exllamav3 (1\.(?:[5-9]|\d\d)\b|after v1\.4\.1)")


def _rows() -> list[dict[str, str]]:
    with INCOMING.open(newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r["engine"] == "exllamav3"]


def _gpu_only(row: dict[str, str]) -> bool:
    tags = row["settings"].partition("unmodelled=")[2]
    return "CPU" not in tags and "speculative" not in tags


def _why() -> str:
    entry = not_modelled("exllamav3")
    assert entry is not None
    return entry.why


def test_current_gpu_only_rows_span_one_gpu_class_as_the_refusal_says() -> None:
    current = [r for r in _rows() if CURRENT.search(r["engine_version"])]
    gpu_only = {r["gpu"] for r in current if _gpu_only(r)}
    offloaded = {r["gpu"] for r in current if not _gpu_only(r)}
    assert gpu_only, "no current GPU-only row: the refusal's 'one GPU class' is wrong"
    assert len(gpu_only) < 2, (
        f"current GPU-only exllamav3 rows now span {sorted(gpu_only)}: the refusal's reason no "
        "longer holds; model the engine (issue 28 item 4) or reword data/engines_not_modelled.toml")
    assert gpu_only == {"dgx-spark"} and "DGX Spark" in _why()
    assert offloaded == {"rtx-3090"} and "RTX 3090s with MoE experts on the CPU" in _why()
    assert {r["engine_version"] for r in current if _gpu_only(r)} == {"exllamav3 1.5.0 (stock)"}
    assert "1.5.0" in _why()


def test_the_early_2026_slowdown_quoted_is_the_rows() -> None:
    """'1.7-3.2x slower than EXL2' is the spread of issue 144's EXL2/EXL3 medians, per context."""
    ratios = []
    for r in _rows():
        if "issues/144" not in r["source_url"]:
            continue
        m = re.search(r"EXL2 4\.25bpw median was ([\d.]+) t/s", r["conditions"])
        assert m, r["id"]
        ratios.append(float(m.group(1)) / float(r["value"]))
    assert len(ratios) == 3
    assert f"{min(ratios):.1f}-{max(ratios):.1f}x slower than EXL2" in _why()


def _quant_refusal() -> Message:
    with pytest.raises(InputError) as e:
        get_quant("exl3-4.0bpw")
    said = e.value.args[0]
    assert isinstance(said, Message)
    return said


def test_both_refusals_carry_the_evidence(cli) -> None:
    for args in (("--quant", "exl3-4.0bpw"), ("--engine", "exllamav3")):
        r = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", *args)
        assert r.code == 2, r.out
        assert "too few to fit its kernels' speed per GPU architecture" in r.err
        assert "tok/s" not in r.out
    assert _why() in str(_quant_refusal())


def test_the_rest_refusal_carries_the_evidence(web) -> None:
    r = web.get("/api/v1/speed", params={
        "model": "llama-3.1-8b", "gpu": "rtx-3090", "quant": "exl3-3.0bpw"})
    assert r.status_code == 422
    assert "1.5.0" in r.json()["detail"] and "DGX Spark" in r.json()["detail"]


@pytest.mark.parametrize("refusal", ["quant", "engine"])
def test_the_refusal_is_said_in_french(refusal: str) -> None:
    entry = not_modelled("exllamav3")
    said = _quant_refusal() if refusal == "quant" else engine_not_modelled(entry, ["vllm"])
    fr = say_text(locale("fr"), said)
    assert fr.complete, fr.text
    assert "trop peu pour ajuster" in fr.text and "n’est pas modélisé" in fr.text
    assert "too few" not in fr.text


def test_the_french_page_says_the_refusal_in_french(web) -> None:
    r = web.get("/", params={"task": "inference", "model": "llama-3.1-8b", "gpu": "rtx-3090",
                             "quant": "exl3-4.0bpw", "lang": "fr"})
    assert r.status_code == 422
    assert "trop peu pour ajuster la vitesse de ses noyaux" in r.text
    assert "too few to fit" not in r.text
