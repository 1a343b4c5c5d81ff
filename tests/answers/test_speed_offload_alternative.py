"""A job the engine picked for it cannot fit (gpt-oss-120b's MXFP4 picks vLLM; 2 x rtx-3090
hold 2 x 25.8 GB, it needs 38.9 GB per GPU) names llama.cpp's offload to host RAM and its
speed on every surface, instead of stopping at "does not fit" (audit7, defect 2)."""

from __future__ import annotations

import json

import pytest

from whichgpu.answers.estimates import speed
from whichgpu.answers.requests import Speed

ASK = {"model": "gpt-oss-120b", "gpu": "rtx-3090", "count": 2}


@pytest.fixture(scope="module")
def asked():
    return speed(Speed(**ASK)).to_json()


def test_the_default_engine_still_says_it_does_not_fit(asked):
    assert asked["status"] == "does_not_fit" and asked["fits"] is False


def test_the_alternative_is_llamacpp_at_the_speed_its_own_answer_gives(asked):
    alt = asked["offload_alternative"]
    assert alt["engine"] == "llamacpp" and alt["instead_of"] == "vllm"
    own = speed(Speed(**ASK, engine="llamacpp")).to_json()  # what --engine llamacpp answers
    assert own["status"] == "ok"
    for key in ("decode_tokens_per_s_per_sequence", "prefill_tokens_per_s"):
        assert alt[key] == own[key]
    # the exact request that asks for it, and a layout that fits the cards
    assert alt["settings"]["engine"] == "llamacpp" and alt["settings"]["n_cpu_moe"] >= 1
    assert alt["plan"]["gpu_bytes"] < 25.8e9 and alt["plan"]["expert_layers_in_ram"] >= 1
    note = " ".join(asked["notes"])
    assert "llama.cpp" in note and "vLLM" in note and "tokens/s" in note


def test_a_job_that_fits_gets_no_alternative():
    data = speed(Speed(model="gpt-oss-120b", gpu="h100-sxm")).to_json()
    assert data["status"] == "ok" and "offload_alternative" not in data
    assert not any("llama.cpp" in n for n in data["notes"])


def test_an_engine_named_is_answered_as_named():
    data = speed(Speed(**ASK, engine="vllm")).to_json()
    assert data["status"] == "does_not_fit" and "offload_alternative" not in data


def test_cli_names_llamacpp_and_its_speed(cli):
    out = cli("speed", "gpt-oss-120b", "--gpu", "rtx-3090", "--count", "2")
    assert out.code == 0 and "does not fit" in out.out
    assert "llama.cpp (--engine llamacpp)" in " ".join(out.err.split())
    assert "--host-ram" in out.err and "tokens/s" in out.err
    data = json.loads(cli("speed", "gpt-oss-120b", "--gpu", "rtx-3090", "--count", "2",
                          "--json").out)
    assert data["offload_alternative"]["engine"] == "llamacpp"


def test_rest_names_it_with_its_speed(web):
    r = web.get("/api/v1/speed", params=ASK)
    assert r.status_code == 200
    data = r.json()
    assert data["status"] == "does_not_fit"
    alt = data["offload_alternative"]
    assert alt["engine"] == "llamacpp" and alt["decode_tokens_per_s_per_sequence"]["typical"] > 0
    assert any("llama.cpp" in n and "tokens/s" in n for n in data["notes"])


def test_the_french_page_names_llamacpp(web):
    page = web.get("/", params={"model": "gpt-oss-120b", "only": "rtx-3090", "max_gpus": "2",
                                "lang": "fr"}).text
    # the alternative's own French sentence, with its speed, and no CLI flag in it
    said = page[page.index("le ferait tourner"):][:600]
    assert "llama.cpp" in page[page.index("le ferait tourner") - 200:][:200]
    assert "tokens/s par" in said
    assert "--engine" not in said and "--host-ram" not in said  # whichgpu flags: not on a page


def test_recommend_names_it_when_nothing_runs_the_job(cli):
    out = cli("recommend", "gpt-oss-120b", "--only", "rtx-3090", "--max-gpus", "2", "--json")
    said = json.dumps(json.loads(out.out)["explanation"])
    assert "llama.cpp" in said and "--n-cpu-moe" in said and "tokens/s" in said


def test_the_alternative_says_the_host_it_assumed_and_follows_the_one_given(asked):
    alt = asked["offload_alternative"]
    assert alt["host"]["memory"] in alt["description"]  # the default host, said
    slower = speed(Speed(**ASK, host_memory="ddr4-3200x2")).to_json()["offload_alternative"]
    assert slower["host"]["memory"] == "ddr4-3200x2" and "ddr4-3200x2" in slower["description"]
    # experts in host RAM are read at the host's bandwidth: slower RAM, slower decode
    assert (slower["decode_tokens_per_s_per_sequence"]["typical"]
            < alt["decode_tokens_per_s_per_sequence"]["typical"])


def test_the_memory_answer_names_the_same_alternative(asked):
    from whichgpu.answers.estimates import memory
    from whichgpu.answers.requests import Memory

    data = memory(Memory(model="gpt-oss-120b", gpu="rtx-3090", gpus=2)).to_json()
    assert data["target"]["fits"] is False
    assert data["offload_alternative"] == asked["offload_alternative"]
    fits = memory(Memory(model="gpt-oss-120b", gpu="h100-sxm")).to_json()
    assert fits["target"]["fits"] is True and "offload_alternative" not in fits


def test_a_format_llamacpp_has_no_file_of_gets_no_alternative():
    data = speed(Speed(model="llama-3.1-70b", quant="awq", gpu="rtx-3090")).to_json()
    assert data["status"] == "does_not_fit" and "offload_alternative" not in data
    gguf_able = speed(Speed(model="llama-3.1-8b", gpu="rtx-3060")).to_json()  # bf16: F16 GGUF
    assert gguf_able["offload_alternative"]["engine"] == "llamacpp"


def test_no_alternative_that_the_host_ram_cannot_hold():
    # llama-3.1-70b bf16 on one rtx-3090 would put ~120 GB in host RAM: more than the stated
    # default host (64 GB) or the 32 GB given; the speed answer does not follow it either
    for ram in (None, "32GB"):
        data = speed(Speed(model="llama-3.1-70b", gpu="rtx-3090", host_ram=ram)).to_json()
        assert data["status"] == "does_not_fit" and "offload_alternative" not in data
