"""``speed`` answers the plan ``memory`` finds (issue 31): a job that does not fit the card
whole gets the speed of llama.cpp's offload, said in a note, with the same flags; host RAM
given means llama.cpp's offload is considered; a job that cannot run says so in a field."""

from __future__ import annotations

QWEN_ON_12GB = ("qwen3-30b-a3b", "--quant", "q4_k_m", "--gpu", "rtx-4070")


def test_speed_follows_the_offload_memory_finds(cli):
    mem = cli("memory", *QWEN_ON_12GB, "--json").json()
    assert mem["target"]["fits"] is False and mem["offload"] is not None
    flags = mem["offload"]["flags"]
    speed = cli("speed", *QWEN_ON_12GB, "--json").json()
    assert speed["status"] == "ok" and speed["decode_tokens_per_s"]["typical"] > 0
    assert any("offload" in n and flags in n for n in speed["notes"]), speed["notes"]


def test_the_speed_of_the_plan_is_the_one_memory_quotes(cli):
    """memory prints the offload's decode speed; speed gives the same range."""
    mem = cli("memory", *QWEN_ON_12GB, "--json").json()
    speed = cli("speed", *QWEN_ON_12GB, "--json").json()
    assert speed["decode_tokens_per_s_per_sequence"] == mem["offload"][
        "decode_tokens_per_s_per_sequence"]


def test_host_ram_given_means_llamacpp_offload_is_considered(cli):
    args = ("llama-3.1-70b", "--quant", "q4_k_m", "--engine", "vllm", "--gpu", "rtx-4090")
    named = cli("speed", *args, "--json").json()  # vLLM named: no offload, no speed
    assert named["status"] == "does_not_fit" and named["fits"] is False
    free = ("llama-3.1-70b", "--gpu", "rtx-4090", "--host-ram", "256GB")
    mem = cli("memory", *free, "--json").json()  # bf16 picks vLLM, which keeps it all
    assert mem["offload"] is not None
    r = cli("memory", *free)
    assert "llama.cpp's offload to host RAM is answered instead" in r.err
    speed = cli("speed", *free, "--json").json()
    assert speed["status"] == "ok" and speed["decode_tokens_per_s"]["typical"] > 0
    assert any("llama.cpp's offload" in n for n in speed["notes"])


def test_without_host_ram_the_chosen_engine_stays(cli):
    speed = cli("speed", "llama-3.1-70b", "--gpu", "rtx-4090", "--json").json()
    assert speed["status"] == "does_not_fit" and "decode_tokens_per_s" not in speed


def test_an_offload_the_host_cannot_hold_gives_no_speed(cli):
    """70B in bf16 on a 24 GB card needs about 120 GB of host RAM: 64 GB cannot run it."""
    speed = cli("speed", "llama-3.1-70b", "--gpu", "rtx-4090", "--host-ram", "64GB",
                "--json").json()
    assert speed["status"] == "does_not_fit"


def test_rest_speed_follows_the_same_plan(web):
    r = web.get("/api/v1/speed", params={"model": "qwen3-30b-a3b", "quant": "q4_k_m",
                                         "gpu": "rtx-4070"})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["status"] == "ok" and data["decode_tokens_per_s"]["typical"] > 0
    assert any("offload" in n for n in data["notes"])


def test_recommend_says_what_your_card_does_with_memorys_offload(cli):
    mem = cli("memory", *QWEN_ON_12GB, "--json").json()
    rec = cli("recommend", *QWEN_ON_12GB, "--prices", "article-000", "--top", "1", "--json")
    assert rec.code == 0, rec.err
    notes = rec.json()["notes"]
    assert any(mem["offload"]["flags"] in n and "tokens/s per sequence" in n for n in notes)


def test_recommend_says_nothing_of_the_kind_when_your_card_holds_it(cli):
    rec = cli("recommend", "llama-3.1-8b", "--quant", "q4_k_m", "--gpu", "rtx-4070",
              "--prices", "article-000", "--top", "1", "--json").json()
    assert not any("offload" in n for n in rec["notes"])
