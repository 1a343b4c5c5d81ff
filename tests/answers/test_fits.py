"""``whichgpu fits``: what runs on my card (issue 31). Each answer is checked against the
commands it summarises: the format is the most precise one ``memory`` says fits, the longest
context is ``memory``'s, and an offload is the plan ``memory`` finds."""

from __future__ import annotations

import pytest

CARD = ("--gpu", "rtx-4070")
THREE = "llama-3.1-8b,qwen3-30b-a3b,llama-3.1-70b"


@pytest.fixture
def answer(cli):
    r = cli("fits", *CARD, "--models", THREE, "--host-ram", "64GB", "--json")
    assert r.code == 0, r.err
    return r.json()


def _row(answer, model):
    return next(m for m in answer["models"] if m["model"] == model)


def test_the_format_is_the_most_precise_that_memory_says_fits(cli, answer):
    row = _row(answer, "llama-3.1-8b")
    assert row["placement"] == "gpu" and row["quant"] == "q8_0"
    def fits(quant):
        return cli("memory", "llama-3.1-8b", "--quant", quant, "--engine", "llamacpp", *CARD,
                   "--json").json()["target"]["fits"]
    assert fits("q8_0") and not fits("bf16")


def test_the_longest_context_and_speed_are_memorys_and_speeds(cli, answer):
    row = _row(answer, "llama-3.1-8b")
    mem = cli("memory", "llama-3.1-8b", "--quant", "q8_0", "--engine", "llamacpp", *CARD,
              "--json").json()
    assert row["longest_context_tokens"] == mem["capacity"]["max_context_tokens"] > 4096
    speed = cli("speed", "llama-3.1-8b", "--quant", "q8_0", "--engine", "llamacpp", *CARD,
                "--context", "4k", "--json").json()  # the context fits asks for
    assert row["decode_tokens_per_s"] == speed["decode_tokens_per_s_per_sequence"]


def test_a_model_too_big_for_the_card_runs_with_memorys_offload(cli, answer):
    row = _row(answer, "qwen3-30b-a3b")
    mem = cli("memory", "qwen3-30b-a3b", "--quant", "q4_k_m", *CARD, "--json").json()
    assert row["placement"] == "offload" and row["quant"] == "q4_k_m"
    assert row["offload"]["flags"] == mem["offload"]["flags"]
    assert row["decode_tokens_per_s"]["typical"] > 0


def test_without_host_ram_no_offload_is_offered(cli):
    data = cli("fits", *CARD, "--models", THREE, "--json").json()
    assert [m["model"] for m in data["models"]] == ["llama-3.1-8b"]
    assert set(data["not_run"]) == {"qwen3-30b-a3b", "llama-3.1-70b"}


def test_ranked_by_size_on_the_gpu_first_or_by_speed(cli, answer):
    assert [m["placement"] for m in answer["models"]] == ["gpu", "offload", "offload"]
    offload = [m["params"] for m in answer["models"] if m["placement"] == "offload"]
    assert offload == sorted(offload, reverse=True)
    fast = cli("fits", *CARD, "--models", THREE, "--host-ram", "64GB", "--sort", "speed",
               "--json").json()
    speeds = [m["decode_tokens_per_s"]["typical"] for m in fast["models"]]
    assert speeds == sorted(speeds, reverse=True)


def test_a_card_by_its_memory_gets_fits_and_contexts_but_no_speed(cli):
    r = cli("fits", "--gpu", "12GB", "--models", "llama-3.1-8b,qwen3-8b", "--json")
    data = r.json()
    assert r.code == 0 and len(data["models"]) == 2
    assert all(m["decode_tokens_per_s"] is None and m["longest_context_tokens"] > 4096
               for m in data["models"])
    assert any("no speeds" in n for n in data["notes"])


def test_every_preset_is_tried_by_default(cli):
    data = cli("fits", "--gpu", "h100-sxm", "--top", "3", "--json").json()
    assert len(data["models"]) + len(data["not_run"]) > 60
    table = cli("fits", "--gpu", "h100-sxm", "--top", "3")
    assert "What runs on h100-sxm" in table.out and "more (--top 0 shows all" in table.out


@pytest.mark.parametrize("args", [(), ("--gpu", "h10"), ("--gpu", "12GB", "--sort", "x"),
                                  ("--gpu", "12GB", "--task", "image")])
def test_bad_questions_are_usage_errors(cli, args):
    r = cli("fits", *args)
    assert r.code == 2 and r.err.startswith("error: "), r


def test_rest_answers_the_same(cli, web):
    params = {"gpu": "rtx-4070", "models": THREE, "host_ram": "64GB"}
    rest = web.get("/api/v1/fits", params=params)
    assert rest.status_code == 200, rest.text
    assert rest.json() == cli("fits", *CARD, "--models", THREE, "--host-ram", "64GB",
                              "--json").json()
    assert web.get("/api/v1/fits", params={"gpu": "h10"}).status_code == 422
