"""Expert parallelism as a user option (issue 30): ``--expert-parallel`` on memory, speed and
recommend, the REST field, the MCP tools' schemas and the page's control, and the one-line
refusals where it makes no sense (a dense model, one GPU, an engine without it)."""

from __future__ import annotations

import pytest

from whichgpu.agents.tools import TOOLS_BY_NAME, input_schema

_MOE = ("Qwen/Qwen3-Coder-480B-A35B-Instruct", "--quant", "fp8", "--engine", "vllm")


def _terms(data: dict) -> dict[str, float]:
    return {t["name"]: t["bytes"] for t in data["terms"]}


def test_memory_spreads_the_experts_and_keeps_each_ranks_whole_kv_cache(cli):
    """The published case: vLLM -dp 8 --enable-expert-parallel of Qwen3-Coder-480B FP8 at
    262,144 tokens on 8 x H20 says '62.00 GiB KV cache is needed' (the questions file)."""
    args = ("memory", *_MOE, "--gpus", "8", "--context", "262144", "--json")
    ep = cli(*args, "--expert-parallel")
    tp = cli(*args)
    assert ep.code == 0 and tp.code == 0, ep.err + tp.err
    ep_t, tp_t = _terms(ep.json()), _terms(tp.json())
    assert ep_t["kv_cache"] / 2**30 == pytest.approx(62.0, abs=0.1)
    assert ep_t["kv_cache"] == pytest.approx(8 * tp_t["kv_cache"], rel=0.01)
    # experts over all eight, attention and embeddings whole on each: more than TP's eighth,
    # far less than a whole replica
    assert tp_t["weights"] < ep_t["weights"] < 2 * tp_t["weights"]
    whole = _terms(cli("memory", *_MOE, "--context", "262144", "--json").json())
    assert ep_t["weights"] < whole["weights"] / 4


def test_a_named_tp_keeps_the_experts_in_the_tp_group(cli):
    """vLLM -tp 8 --enable-expert-parallel: one data-parallel rank, so each GPU holds an
    eighth of everything, as under tensor parallelism."""
    base = ("memory", *_MOE, "--gpus", "8", "--tp", "8", "--context", "32k", "--json")
    ep = _terms(cli(*base, "--expert-parallel").json())
    tp = _terms(cli(*base).json())
    assert ep["weights"] == pytest.approx(tp["weights"], rel=1e-6)


@pytest.mark.parametrize("args, needle", [
    (("memory", "llama-3.1-8b", "--gpus", "2", "--expert-parallel"), "has none to spread"),
    (("memory", "qwen3-30b-a3b", "--engine", "llamacpp", "--quant", "q4_k_m", "--gpus", "2",
      "--expert-parallel"), "has none to spread"),
    (("memory", "qwen3-30b-a3b", "--expert-parallel"), "--gpus"),
    (("speed", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--expert-parallel"), "--count"),
])
def test_the_cli_refuses_in_one_line(cli, args, needle):
    r = cli(*args)
    assert r.code == 2
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0]


def test_rest_takes_the_field_and_answers_422(web):
    q = {"model": "qwen3-30b-a3b", "quant": "fp8", "engine": "vllm", "gpus": "4"}
    ep = web.get("/api/v1/memory", params={**q, "expert_parallel": "true"})
    tp = web.get("/api/v1/memory", params=q)
    assert ep.status_code == 200 and tp.status_code == 200
    assert _terms(ep.json())["weights"] > _terms(tp.json())["weights"]
    bad = web.get("/api/v1/memory", params={**q, "gpus": "1", "expert_parallel": "true"})
    assert bad.status_code == 422 and "several GPUs" in bad.json()["detail"]
    dense = web.get("/api/v1/speed", params={"model": "llama-3.1-8b", "gpu": "h100-sxm",
                                             "count": "2", "expert_parallel": "true"})
    assert dense.status_code == 422 and "none to spread" in dense.json()["detail"]


def test_the_page_has_the_control_and_refuses_in_its_own_words(web):
    page = web.get("/memory", params={"model": "qwen3-30b-a3b", "gpus": "1",
                                      "expert_parallel": "true"})
    assert 'name="expert_parallel"' in page.text
    assert "several GPUs" in page.text and "--gpus" not in page.text
    fr = web.get("/memory", params={"model": "qwen3-30b-a3b", "gpus": "1",
                                    "expert_parallel": "true", "lang": "fr"})
    assert "Parallélisme d’experts" in fr.text and "plusieurs GPU" in fr.text


@pytest.mark.parametrize("tool", ["memory", "speed", "recommend"])
def test_the_mcp_tools_take_it(tool):
    assert "expert_parallel" in input_schema(TOOLS_BY_NAME[tool].model)["properties"]


def test_recommend_tries_the_ep_layout_on_several_gpus(cli):
    """With the option, recommend's multi-GPU layouts of an MoE are tp=1 x dp=N (data-parallel
    attention, experts over all N); without it they stay tensor-parallel."""
    args = ("recommend", "qwen3-235b-a22b", "--quant", "fp8", "--engine", "vllm", "--tokens",
            "100M", "--top", "3", "--json")
    ep, tp = cli(*args, "--expert-parallel"), cli(*args)
    assert ep.code == 0 and tp.code == 0, ep.err + tp.err
    ep_layouts = [o["layout"] for o in ep.json()["options"] if o["count"] > 1]
    tp_layouts = [o["layout"] for o in tp.json()["options"] if o["count"] > 1]
    assert ep_layouts and all(lay.startswith("tp=1 x dp=") for lay in ep_layouts)
    assert tp_layouts and not any("dp=" in lay for lay in tp_layouts)
    dense = cli("recommend", "llama-3.1-8b", "--tokens", "1M", "--expert-parallel")
    assert dense.code == 2 and "none to spread" in dense.err


def test_rest_speed_takes_it_and_the_all_to_all_shows(web):
    q = {"model": "qwen3-30b-a3b", "quant": "fp8", "engine": "vllm", "gpu": "h100-sxm",
         "count": "8", "batch": "64"}
    ep = web.get("/api/v1/speed", params={**q, "expert_parallel": "true"})
    assert ep.status_code == 200, ep.text
    assert "expert parallel over 8 GPUs" in ep.text
    replica = web.get("/api/v1/speed", params={**q, "tp": "1"})
    assert (ep.json()["decode_tokens_per_s"]["typical"]
            > 2 * replica.json()["decode_tokens_per_s"]["typical"])
