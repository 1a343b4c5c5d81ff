"""A max-throughput answer held by the engine's default cap on running sequences says so and
what the launch option would give (audit 8, q11 / fix9): vLLM defaults max_num_seqs to 256 on
GPUs under 70 GiB (an RTX 5090) and 1,024 above (an RTX PRO 6000 Max-Q), so the 5090's batch
stops at the cap while the KV cache holds more; raised to what the KV cache holds, the answer
gives the throughput there and the option (--max-num-seqs) that does it."""

from __future__ import annotations

ASK = ("speed", "llama-3.1-8b", "--quant", "nvfp4", "--max-throughput", "--json")


def _ask(cli, gpu: str) -> dict:
    r = cli(*ASK, "--gpu", gpu)
    assert r.code == 0, r.err
    return r.json()


def test_a_batch_held_by_the_default_cap_says_the_flag_and_its_throughput(cli):
    d = _ask(cli, "rtx-5090")
    assert d["limited_by"] == "max-num-seqs" and d["engine"]["max_num_seqs"] == 256
    up = d["raised_cap"]
    holds = d["kv_capacity"]["sequences"]
    assert up["flag"] == "--max-num-seqs" and up["default"] == 256
    assert up["raised_to"] == holds > 256 and up["limited_by"] == "kv-capacity"
    # more sequences in one bandwidth-bound step: at least the default's throughput
    assert up["output_tokens_per_s_typical"] >= d["throughput_tokens_per_s"]["typical"]
    said = d["assumptions"][0]
    assert f"--max-num-seqs {holds:,}" in said and "default cap of 256" in said


def test_a_batch_held_by_the_kv_cache_has_no_cap_to_raise(cli):
    d = _ask(cli, "rtx-pro-6000-maxq")
    assert d["limited_by"] == "kv-capacity" and d["engine"]["max_num_seqs"] == 1024
    assert "raised_cap" not in d
    assert not any("--max-num-seqs" in a for a in d["assumptions"])
