"""``speed --requests-per-s R`` (issue 28, item 3): a replica's throughput and TTFT, TPOT, ITL
and end-to-end latency at p50/p90/p95/p99 under Poisson arrivals, with request lengths fixed,
spread, ShareGPT's or a histogram, and a prefix-cache hit rate; the same over REST."""

from __future__ import annotations

import pytest

BASE = ("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "vllm",
        "--prompt-tokens", "1000", "--output-tokens", "200")


def _pcts(d: dict) -> list[float]:
    return [d[k] for k in ("p50", "p90", "p95", "p99")]


def test_the_rate_gives_ordered_percentiles_and_the_rate_served(cli):
    res = cli(*BASE, "--requests-per-s", "10", "--json")
    assert res.code == 0, res.err
    data = res.json()
    for name in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):
        p = _pcts(data[name])
        assert p == sorted(p) and p[0] > 0
    assert data["requests_per_s"] == pytest.approx(10, rel=0.1)
    assert data["output_tokens_per_s"] == pytest.approx(10 * 200, rel=0.1)
    assert 0 < data["utilisation"] < 1


def test_spread_lengths_widen_the_tails_and_cached_prefixes_shorten_the_first_token(cli):
    fixed = cli(*BASE, "--requests-per-s", "10", "--json").json()
    spread = cli(*BASE, "--requests-per-s", "10", "--lengths", "spread", "--json").json()
    assert spread["e2e_s"]["p99"] > 1.5 * fixed["e2e_s"]["p99"]
    cached = cli(*BASE, "--requests-per-s", "10", "--prefix-cache-hit", "0.8",
                 "--json").json()
    assert cached["ttft_s"]["p50"] < 0.75 * fixed["ttft_s"]["p50"]  # dispatch stays


def test_a_histogram_of_lengths(cli):
    data = cli(*BASE, "--requests-per-s", "5", "--lengths", "200:100:3,2000:300:1",
               "--json").json()
    assert "histogram" in data["traffic"]
    # a quarter of the prompts are 10x longer: the TTFT p95 is theirs, well above p50
    assert data["ttft_s"]["p95"] > 2 * data["ttft_s"]["p50"]


@pytest.mark.parametrize("args", [("--lengths", "200:x"), ("--lengths", "200:100:0"),
                                  ("--requests-per-s", "fast")])
def test_bad_traffic_is_one_line(cli, args):
    res = cli(*BASE, *(("--requests-per-s", "5") if args[0] != "--requests-per-s" else ()),
              *args)
    assert res.code == 2
    assert "Traceback" not in res.err and len(res.err.strip().splitlines()) == 1


def test_only_serving_engines(cli):
    res = cli("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "llamacpp",
              "--requests-per-s", "5")
    assert res.code == 2 and "serving engines" in res.err


def test_rest_gives_the_clis_answer(web, cli):
    from web_parity import same_as_cli

    same_as_cli(web, cli, "/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&engine=vllm"
                "&prompt_tokens=1000&output_tokens=200&requests_per_s=10&lengths=spread",
                *BASE, "--requests-per-s", "10", "--lengths", "spread")
