"""An alias of another model on a shared architecture answers with that model's name
(flaws8 3): ``deepseek-r1`` was titled "DeepSeek-V3" on every surface, and its launcher
served DeepSeek-V3's weights. DeepSeek-R1 is trained from DeepSeek-V3-Base with the same
architecture (https://huggingface.co/deepseek-ai/DeepSeek-R1, model card), so it keeps the V3
preset's config and counts, with its own name and Hub id."""

from __future__ import annotations

import pytest

from whichgpu.errors import DataError
from whichgpu.models import preset_index
from whichgpu.models.resolve import resolve_model


@pytest.mark.parametrize(("asked", "name", "hub_id"), [
    ("deepseek-r1", "DeepSeek-R1", "deepseek-ai/DeepSeek-R1"),
    ("DeepSeek R1", "DeepSeek-R1", "deepseek-ai/DeepSeek-R1"),
    ("deepseek-ai/DeepSeek-R1-0528", "DeepSeek-R1-0528", "deepseek-ai/DeepSeek-R1-0528"),
    ("deepseek-v3", "DeepSeek-V3", "deepseek-ai/DeepSeek-V3"),
    ("mistral-small-3.1", "Mistral Small 3.1 24B",
     "mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
    ("mistral-small", "Mistral Small 3.2 24B", "mistralai/Mistral-Small-3.2-24B-Instruct-2506"),
])
def test_the_name_asked_is_the_model_answered(asked, name, hub_id):
    spec = resolve_model(asked)
    assert (spec.name, spec.hub_id) == (name, hub_id)


def test_the_alias_keeps_the_architecture_and_its_counts():
    r1, v3 = resolve_model("deepseek-r1"), resolve_model("deepseek-v3")
    assert r1.id == v3.id == "deepseek-v3"  # the preset it is read with
    assert r1.params_total == v3.params_total and r1.params_active == v3.params_active


def test_cli_and_rest_title_the_answer_with_the_model_asked(cli, web):
    r = cli("speed", "deepseek-r1", "--quant", "q4_k_m", "--gpu", "h200-sxm", "--count", "8",
            "--json")
    assert r.code == 0, r.err
    assert r.json()["model"] == "DeepSeek-R1"
    rest = web.get("/api/v1/speed?model=deepseek-r1&quant=q4_k_m&gpu=h200-sxm&count=8")
    assert rest.status_code == 200, rest.text
    assert rest.json()["model"] == "DeepSeek-R1"
    page = web.get("/memory?model=deepseek-r1&quant=q4_k_m&lang=fr")
    assert page.status_code == 200
    assert '<h2 id="results-h">DeepSeek-R1:' in page.text  # the answer's heading


def test_an_alias_hub_id_outside_the_preset_is_refused(monkeypatch):
    data = {"model": [{"alias": "x", "name": "X", "hub_ids": ["o/x"], "aliases": ["y"],
                       "official_params": 1e9, "official_precision": "exact",
                       "official_source": "s", "config_source": "s",
                       "alias_hub_ids": {"y": "o/not-listed"}}]}
    monkeypatch.setattr(preset_index, "_index_data", lambda: data)
    preset_index._index.cache_clear()
    try:
        with pytest.raises(DataError, match="not in hub_ids"):
            preset_index._index()
    finally:
        preset_index._index.cache_clear()
