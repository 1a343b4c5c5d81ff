"""Fine-tuning work as examples and epochs, and "own this card or rent that one" (issue 31):
each is the question it stands for, asked the long way (training tokens; a rent price)."""

from __future__ import annotations

import pytest

JOB = ("recommend", "llama-3.1-8b", "--task", "lora", "--context", "1k", "--prices",
       "article-000", "--top", "5")


def _options(data):
    return [(o["gpu"], o["count"], o["time_s"], o["cost"]) for o in data["options"]]


def test_examples_and_epochs_are_their_training_tokens(cli):
    short = cli(*JOB, "--examples", "20k", "--epochs", "3", "--json")
    assert short.code == 0, short.err
    long = cli(*JOB, "--train-tokens", str(20_000 * 3 * 1024), "--json")
    assert _options(short.json()) == _options(long.json())
    assert any("20,000 examples x 3 epoch(s) x 1,024 tokens" in n for n in short.json()["notes"])


def test_the_mean_example_length_when_given(cli):
    short = cli(*JOB, "--examples", "1000", "--example-tokens", "500", "--json")
    long = cli(*JOB, "--train-tokens", "500000", "--json")
    assert _options(short.json()) == _options(long.json())


@pytest.mark.parametrize("extra", [
    ("--epochs", "3"),                                   # epochs without examples
    ("--examples", "20k", "--steps", "100"),             # the work twice
    ("--examples", "0"),
    ("--examples", "20k", "--epochs", "0"),
])
def test_examples_misused_are_usage_errors(cli, extra):
    r = cli(*JOB, *extra)
    assert r.code == 2 and r.err.startswith("error: "), r


def test_examples_need_a_training_task(cli):
    r = cli("recommend", "llama-3.1-8b", "--examples", "20k")
    assert r.code == 2 and "--task" in r.err


def test_rest_takes_examples_and_epochs(cli, web):
    rest = web.get("/api/v1/recommend", params={
        "model": "llama-3.1-8b", "task": "lora", "context": "1k", "prices": "article-000",
        "top": 5, "examples": "20k", "epochs": 3})
    assert rest.status_code == 200, rest.text
    assert _options(rest.json()) == _options(cli(*JOB, "--examples", "20k", "--epochs", "3",
                                                 "--json").json())


def _cheapest_on_demand(cli, gpu):
    offers = cli("prices", "list", gpu, "--json").json()["offers"]
    return min((o for o in offers if o["gpu"] == gpu and not o["spot"]),
               key=lambda o: o["price_per_gpu_hour"]["amount"])["price_per_gpu_hour"]


def test_own_this_or_rent_that_prices_the_rent_from_that_card(cli):
    vs = cli("tco", "rtx-4090", "--vs", "h100-sxm", "--utilization", "0.3", "--json")
    assert vs.code == 0, vs.err
    data = vs.json()
    price = _cheapest_on_demand(cli, "h100-sxm")
    assert data["vs"]["gpu"] == "h100-sxm" and data["vs"]["rent_price"] == price
    spelt = cli("tco", "rtx-4090", "--rent-price", f"{price['amount']}{price['currency']}",
                "--utilization", "0.3", "--json").json()
    assert data["advice"] == spelt["advice"]
    assert "same hours of use" in cli("tco", "rtx-4090", "--vs", "h100-sxm").err


def test_vs_and_a_rent_price_together_are_refused(cli):
    r = cli("tco", "rtx-4090", "--vs", "h100-sxm", "--rent-price", "2USD")
    assert r.code == 2 and "not both" in r.err


def test_rest_tco_vs(web):
    r = web.get("/api/v1/tco", params={"gpu": "rtx-4090", "vs": "h100-sxm"})
    assert r.status_code == 200, r.text
    assert r.json()["vs"]["gpu"] == "h100-sxm"
