"""Issue 31: one JSON shape per field. ``fits`` is a boolean wherever it appears: speed --json,
memory --json (top level and its target) and each GPU that holds the job; the GPUs that hold
it are listed under ``gpus_that_fit`` (before, memory's top-level ``fits`` was that list)."""

from __future__ import annotations


def test_memory_fits_is_a_boolean_like_speed_and_the_target(cli):
    on = cli("memory", "llama-3.1-70b", "--quant", "q4_k_m", "--gpu", "rtx-4090",
             "--json").json()
    speed = cli("speed", "llama-3.1-70b", "--quant", "q4_k_m", "--gpu", "rtx-4090",
                "--engine", "vllm", "--json").json()
    assert on["fits"] is False and on["target"]["fits"] is False  # S25: not on a 4090
    assert speed["fits"] is on["fits"]
    fits = cli("memory", "llama-3.1-8b", "--gpu", "h100-sxm", "--json").json()
    assert fits["fits"] is True is fits["target"]["fits"]


def test_memory_without_a_gpu_says_whether_any_gpu_holds_it_and_lists_them(cli):
    d = cli("memory", "llama-3.1-8b", "--json").json()
    assert d["fits"] is True and d["target"] is None
    held = d["gpus_that_fit"]
    assert held and all(isinstance(f["fits"], bool) for f in held)
    assert {"gpu", "count", "headroom_bytes"} <= set(held[0])


def test_the_rest_answer_has_the_same_shape(cli, web):
    api = web.get("/api/v1/memory?model=llama-3.1-8b&gpu=rtx-3060").json()
    here = cli("memory", "llama-3.1-8b", "--gpu", "rtx-3060", "--json").json()
    assert isinstance(api["fits"], bool) and api["fits"] == here["fits"]
    assert [f["gpu"] for f in api["gpus_that_fit"]] == [f["gpu"] for f in here["gpus_that_fit"]]
