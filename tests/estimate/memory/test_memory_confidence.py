"""Memory answers carry a confidence label by the one rule (issue 30): the width of the stated
range and the evidence behind it; the CLI, the REST API and the page say the same label."""

from __future__ import annotations

import re

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.estimate.constants import memory_value
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.confidence import memory_confidence
from whichgpu.estimate.speed.result import label_for


def test_the_label_follows_the_shared_rule() -> None:
    evidence = memory_value("memory_evidence")
    low, high = memory_value("memory_range")["inference"]
    width = high / low
    on_engine = next(k.split("/")[1] for k in evidence if k.startswith("inference/"))
    assert memory_confidence("inference", on_engine).label == label_for(width, 2)
    # an engine without calibration rows of its own: the group's evidence only
    assert memory_confidence("inference", "mlc").label == label_for(width, 1)
    # a bare size is a generic model: no evidence for it
    assert memory_confidence("inference", on_engine, approximate=True).label == "low"


def test_training_is_judged_by_its_framework() -> None:
    evidence = memory_value("memory_evidence")
    with_rows = next(k.split("/")[1] for k, n in evidence.items()
                     if k.startswith("training/") and n)
    est = estimate_memory(build_workload("llama-3.1-8b", task="lora", framework=with_rows))
    assert f"on {with_rows}" in str(est.confidence().why)


def test_cli_rest_and_page_say_the_same_label(cli, web) -> None:
    args = {"model": "llama-3.1-70b", "quant": "q4_k_m", "context": "8k"}
    r = cli("memory", "llama-3.1-70b", "--quant", "q4_k_m", "--context", "8k", "--json")
    assert r.code == 0, r.err
    label = r.json()["confidence"]
    assert label in ("low", "medium", "high")
    rest = web.get("/api/v1/memory", params=args)
    assert rest.status_code == 200, rest.text
    assert rest.json()["confidence"] == label
    page = web.get("/memory", params=args)
    assert page.status_code == 200
    m = re.search(r'data-confidence="(\w+)"', page.text)
    assert m is not None and m.group(1) == label
    fr = web.get("/memory", params={**args, "lang": "fr"})
    assert "Confiance" in fr.text


@pytest.mark.parametrize("model", ["70B", "llama-3.1-70b"])
def test_a_bare_size_is_never_surer_than_the_named_model(model: str) -> None:
    est = estimate_memory(build_workload(model, quant="q4_k_m"))
    named = estimate_memory(build_workload("llama-3.1-70b", quant="q4_k_m"))
    order = ("low", "medium", "high")
    assert order.index(est.confidence().label) <= order.index(named.confidence().label)
