"""Sizing for a request rate (issue 18): replicas x tensor-parallel layout per GPU that meet
the TTFT and TPOT targets at the lowest cost, priced per hour and per million tokens; the same
answer from the CLI, the REST API and the web advisor; clear refusals of bad input."""

from __future__ import annotations

import math

import pytest

from whichgpu.advise.ranking import shown_cost
from whichgpu.advise.serving import Targets, max_rate
from whichgpu.answers.inputs.serving import parse_latency, parse_rate
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model

DONE_WHEN = ("recommend", "llama-3.1-8b", "--engine", "vllm", "--requests-per-s", "20",
             "--prompt-tokens", "1000", "--output-tokens", "200", "--ttft", "2s", "--tpot",
             "60ms", "--prices", "vramfarm-2026-11")
DONE_WHEN_QUERY = ("/api/v1/recommend?model=llama-3.1-8b&engine=vllm&requests_per_s=20"
                   "&prompt_tokens=1000&output_tokens=200&ttft=2s&tpot=60ms"
                   "&prices=vramfarm-2026-11")


def test_the_issues_command_returns_options_that_meet_both_targets_with_their_prices(cli):
    res = cli(*DONE_WHEN, "--json")
    assert res.code == 0, res.err
    data = res.json()
    assert data["options"]
    for o in data["options"]:
        assert o["ttft_s"]["typical"] <= 2.0 and o["tpot_s"]["typical"] <= 0.060
        assert o["ttft_s"]["low"] <= o["ttft_s"]["typical"] <= o["ttft_s"]["high"]
        assert o["replicas"] >= 1 and o["count"] == o["replicas"] * o["tp"]
        assert 0 < o["utilisation"] <= 1
        assert o["requests_per_s_per_replica"] == pytest.approx(20 / o["replicas"], rel=1e-5)
        # per hour for all replicas, and per million tokens from the same hour of traffic
        per_hour = o["cost_per_hour"]["amount"]
        assert per_hour == pytest.approx(o["price_per_hour"]["amount"])
        out_m = per_hour / (20 * 200 * 3600 / 1e6)
        all_m = per_hour / (20 * 1200 * 3600 / 1e6)
        assert o["cost_per_million_tokens"]["output"]["amount"] == pytest.approx(out_m, abs=1e-6)
        assert o["cost_per_million_tokens"]["input_and_output"]["amount"] == pytest.approx(
            all_m, abs=1e-6)
    costs = [shown_cost(o["cost_per_hour"]["amount"]) for o in data["options"]]
    assert costs == sorted(costs)  # ranked by cost per hour
    assert len({o["gpu"] for o in data["options"]}) == len(data["options"])  # one per GPU


def test_rest_get_and_post_give_the_clis_answer(web, cli):
    from web_parity import same_as_cli

    data = same_as_cli(web, cli, DONE_WHEN_QUERY, *DONE_WHEN)
    body = {"model": "llama-3.1-8b", "engine": "vllm", "requests_per_s": "20",
            "prompt_tokens": "1000", "output_tokens": "200", "ttft": "2s", "tpot": "60ms",
            "prices": "vramfarm-2026-11"}
    posted = web.post("/api/v1/recommend", json=body)
    assert posted.status_code == 200
    assert posted.json()["options"] == data["options"]


def test_the_web_advisor_shows_the_same_sizing_and_the_cli_command(web, cli):
    url = ("/?task=inference&model=llama-3.1-8b&engine=vllm&requests_per_s=20"
           "&prompt_tokens=1000&output_tokens=200&ttft=2s&tpot=60ms&prices=vramfarm-2026-11")
    html = web.get(url).text
    best = cli(*DONE_WHEN, "--json").json()["options"][0]
    assert 'class="options serving"' in html
    assert f'data-gpu="{best["gpu"]}"' in html
    assert f'{best["replicas"]} × {best["tp"]}' in html
    assert "--requests-per-s 20" in html and "--tpot 60ms" in html
    french = web.get(url + "&lang=fr").text
    assert "Dimensionné pour" in french


def test_a_target_no_layout_meets_is_excluded_with_the_closest_miss_and_what_would_meet_it(cli):
    res = cli("recommend", "llama-3.1-70b", "--engine", "vllm", "--requests-per-s", "2",
              "--prompt-tokens", "500", "--output-tokens", "200", "--tpot", "3ms",
              "--prices", "vramfarm-2026-11", "--json")
    assert res.code == 0, res.err
    data = res.json()
    assert data["options"] == []
    misses = [e for e in data["excluded"] if e["kind"] == "latency"]
    assert misses
    for e in misses:
        assert "TPOT at least" in e["reason"] and "--tpot" in e["reason"]
        asked = int(e["reason"].split("--tpot ")[1].split("ms")[0])
        assert asked > 3
    assert data["closest"] is not None


def test_the_looser_target_the_exclusion_names_is_met(cli):
    first = cli("recommend", "llama-3.1-8b", "--engine", "vllm", "--requests-per-s", "1",
                "--prompt-tokens", "500", "--output-tokens", "200", "--tpot", "2ms",
                "--only", "h100-sxm", "--prices", "vramfarm-2026-11", "--json").json()
    miss = next(e for e in first["excluded"] if e["kind"] == "latency")
    looser = miss["reason"].split("--tpot ")[1].split()[0].rstrip(",;")
    again = cli("recommend", "llama-3.1-8b", "--engine", "vllm", "--requests-per-s", "1",
                "--prompt-tokens", "500", "--output-tokens", "200", "--tpot", looser,
                "--only", "h100-sxm", "--prices", "vramfarm-2026-11", "--json").json()
    assert again["options"] and again["options"][0]["gpu"] == "h100-sxm"


def test_twice_the_traffic_needs_at_least_as_many_replicas(cli):
    def replicas(rate: str) -> int:
        data = cli("recommend", "llama-3.1-8b", "--engine", "vllm", "--requests-per-s", rate,
                   "--prompt-tokens", "1000", "--output-tokens", "200", "--tpot", "60ms",
                   "--only", "l40s", "--prices", "vramfarm-2026-11", "--json").json()
        return data["options"][0]["replicas"]

    counts = [replicas(r) for r in ("5", "10", "20", "40")]
    assert counts == sorted(counts) and counts[-1] > counts[0]


def test_max_gpus_bounds_replicas_times_tensor_parallel(cli):
    data = cli("recommend", "llama-3.1-8b", "--engine", "vllm", "--requests-per-s", "60",
               "--prompt-tokens", "1000", "--output-tokens", "200", "--tpot", "60ms",
               "--max-gpus", "2", "--prices", "vramfarm-2026-11", "--json").json()
    assert all(o["count"] <= 2 for o in data["options"])
    over = [e for e in data["excluded"] if "more than --max-gpus 2" in e["reason"]]
    assert over


def test_the_replicas_rate_is_the_highest_that_meets_the_targets():
    sm = ServingModel(Workload(resolve_model("llama-3.1-8b"), engine="vllm", prompt_tokens=1000,
                               output_tokens=200), get_gpu("l40s"), lengths="mean")
    targets = Targets(20, 2.0, 0.060)
    best = max_rate(sm, targets)
    at = sm.at_rate(best)
    assert targets.met(at.ttft_s, at.tpot_s)
    over = sm.at_rate(best * 1.02)
    assert over.saturated or not targets.met(over.ttft_s, over.tpot_s)


@pytest.mark.parametrize(("text", "seconds"), [("2s", 2.0), ("60ms", 0.06), ("0.5 s", 0.5),
                                               ("1,5s", 1.5)])
def test_latency_targets_are_read_with_their_unit(text, seconds):
    assert parse_latency(text, "--ttft") == pytest.approx(seconds)


@pytest.mark.parametrize(("text", "rate"), [("20", 20.0), ("20/s", 20.0), ("1200/min", 20.0),
                                            ("72000/h", 20.0)])
def test_request_rates_are_read_per_second(text, rate):
    assert parse_rate(text) == pytest.approx(rate)


@pytest.mark.parametrize(("args", "reason"), [
    (("--requests-per-s", "20", "--ttft", "2"), "needs a unit"),
    (("--requests-per-s", "20", "--tpot", "fast"), "cannot read 'fast'"),
    (("--requests-per-s", "-3"), "cannot read '-3'"),
    (("--requests-per-s", "0"), "must be positive"),
    (("--ttft", "2s"), "give --requests-per-s too"),
    (("--requests-per-s", "20", "--tokens", "1M"), "give one amount of work"),
    (("--requests-per-s", "20", "--engine", "llamacpp", "--quant", "q4_k_m"),
     "vLLM, SGLang and TensorRT-LLM"),
])
def test_bad_serving_input_is_one_line_and_exit_2(cli, args, reason):
    res = cli("recommend", "llama-3.1-8b", *args, "--prices", "vramfarm-2026-11")
    assert res.code == 2, res.out
    assert reason in res.err
    assert "Traceback" not in res.err and res.err.count("\n") <= 2


def test_serving_is_for_llm_inference(cli):
    res = cli("recommend", "flux.1-dev", "--task", "image", "--requests-per-s", "2")
    assert res.code == 2 and "LLM inference" in res.err


def test_bad_rest_input_is_422_with_the_clis_reason(web, cli):
    from web_parity import same_error

    same_error(web, cli, "/api/v1/recommend?model=llama-3.1-8b&requests_per_s=20&ttft=2",
               "recommend", "llama-3.1-8b", "--requests-per-s", "20", "--ttft", "2")


def test_a_tiny_target_raises_no_error_but_no_option():
    with pytest.raises(InputError):
        parse_latency("0ms", "--tpot")
    assert math.isclose(parse_latency("3600s", "--ttft"), 3600)
    with pytest.raises(InputError):
        parse_latency("2h", "--ttft")


@pytest.mark.parametrize("query", [
    "requests_per_s=20&prompt_tokens=1000&output_tokens=200&ttft=2s&tpot=60ms",
    "requests_per_s=2&prompt_tokens=500&output_tokens=200&tpot=3ms"])
def test_the_french_serving_answer_has_no_unmarked_english(web, query):
    from french_text import ENGLISH, _Text

    model = "llama-3.1-70b" if "tpot=3ms" in query else "llama-3.1-8b"
    html = web.get(f"/?task=inference&model={model}&engine=vllm&{query}"
                   "&prices=vramfarm-2026-11&lang=fr").text
    parser = _Text()
    parser.feed(html)
    assert not [t for t in parser.text if ENGLISH.search(t)]


def test_objective_time_ranks_by_tpot_and_the_front_is_cost_against_tpot(cli):
    args = [a for a in DONE_WHEN] + ["--json"]
    by_cost = cli(*args).json()["options"]
    by_time = cli(*args, "--objective", "time").json()["options"]
    tpots = [o["tpot_s"]["typical"] for o in by_time]
    assert tpots == sorted(tpots)
    assert {o["gpu"] for o in by_cost} == {o["gpu"] for o in by_time}
    for o in by_cost:
        dominated = any(p["price_per_hour"]["amount"] <= o["price_per_hour"]["amount"]
                        and p["tpot_s"]["typical"] <= o["tpot_s"]["typical"]
                        and p is not o and (p["price_per_hour"]["amount"]
                                            < o["price_per_hour"]["amount"]
                                            or p["tpot_s"]["typical"] < o["tpot_s"]["typical"])
                        for p in by_cost)
        assert o["pareto"] == (not dominated)
