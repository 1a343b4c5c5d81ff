"""The seven questions of issue 33 each have a control on the advisor page (and the RL ones on
the VRAM selector), and a REST field of the same name: a control dropped from a page or a
field renamed fails here."""

from __future__ import annotations

import pytest

from whichgpu.answers import requests as r

#: question -> the request fields that ask it (Recommend's; the CLI flags are their spellings)
ADVISOR = {
    "rl": ("generations", "completion_tokens", "tuning", "rollout_engine", "rollout_gpus",
           "rollout_share", "framework"),
    "many_lora_adapters": ("lora_adapters", "lora_rank"),
    "prefill_decode_split": ("disaggregate", "requests_per_s"),
    "different_cards": ("gpu",),
    "self_host_or_api": ("vs_api", "cached_tokens"),
    "energy": ("power_budget",),
    "several_machines": ("interconnect", "gpus_per_node"),
}
MEMORY = ("generations", "completion_tokens", "tuning", "rollout_engine", "rollout_gpus",
          "rollout_share", "lora_adapters", "lora_rank", "gpu")


@pytest.mark.parametrize("question", sorted(ADVISOR))
def test_each_question_is_a_field_of_recommend_and_a_control_of_the_advisor(web, question):
    page = web.get("/").text
    for name in ADVISOR[question]:
        assert name in r.Recommend.model_fields, name
        assert f'name="{name}"' in page, name


def test_the_rl_tasks_are_offered_on_both_pages_and_the_rl_fields_on_the_vram_selector(web):
    memory = web.get("/memory").text
    for name in MEMORY:
        assert name in r.Memory.model_fields and f'name="{name}"' in memory, name
    for page in (memory, web.get("/").text):
        assert 'value="grpo"' in page and 'value="ppo"' in page


def test_the_power_cap_is_a_speed_field(web):
    """No page times one GPU (there is no speed page): the cap is a REST and CLI field."""
    assert "power_cap" in r.Speed.model_fields
    ok = web.get("/api/v1/speed", params={"model": "llama-3.1-8b", "gpu": "h100-sxm",
                                          "power_cap": "250"})
    assert ok.status_code == 200
    power = ok.json()["energy"]["power"]
    assert power and all(p["power_cap_w"] == 250 and p["speed_factor"] < 1 for p in power)
