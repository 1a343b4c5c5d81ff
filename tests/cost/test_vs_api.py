"""Self-host or pay per token (issue 33, item 5): the dated, sourced API price table, its
plausibility checks, the self-hosted cost per million tokens and the break-even utilisation."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from whichgpu.cost.api_prices import check_row, read_feed, shipped
from whichgpu.cost.vs_api import compare
from whichgpu.errors import InputError
from whichgpu.units import Money

ROW = dict(provider="p", model="llama-3.1-8b", provider_model="x", input_per_mtok="1",
           cached_input_per_mtok="", output_per_mtok="2", currency="USD", date="2026-08-01",
           url="https://example.com/pricing", source="s")


def test_every_shipped_price_is_dated_sourced_and_names_a_preset(cli):
    models = cli("models", "--json").json()["models"]
    # a preset, one of its aliases (deepseek-r1) or a Hub model on it (DeepSeek-R1-0528)
    presets = {n.lower() for m in models for n in (
        m["alias"], *m["aliases"], *(h.rsplit("/", 1)[-1] for h in m["hub_ids"]))}
    rows = shipped()
    assert len(rows) >= 50
    for p in rows:
        assert p.model in presets, p
        assert p.url.startswith("https://") and p.date[:4] in ("2025", "2026") and p.source
    assert {"together", "fireworks", "deepinfra", "groq", "openrouter"} <= {
        p.provider for p in rows}


@pytest.mark.parametrize("change, said", [
    (dict(input_per_mtok="500"), "not plausible"),  # a price per 1K read per 1M
    (dict(cached_input_per_mtok="1.5"), "costs more"),
    (dict(date="2999-01-01"), "future"),
    (dict(url="ftp://x"), "web address"),
    (dict(output_per_mtok="nan"), "not plausible"),
    (dict(currency=""), "missing"),
])
def test_an_implausible_row_is_refused_in_one_line(change, said):
    with pytest.raises(InputError) as exc:
        check_row({**ROW, **change}, "feed row 1", today=dt.date(2026, 12, 6))
    assert said in str(exc.value) and "\n" not in str(exc.value)


def test_a_json_feed_reads_like_the_csv():
    assert read_feed(f"[{__import__('json').dumps(ROW)}]", "f.json")[0].output_per_mtok == 2


class _Steps:
    def prefill_batch(self, prompts, tokens_each=None):
        return 1.0  # GPU seconds to prefill one prompt

    def decode(self, batch):
        return 0.006  # seconds per decode step at the batch


def test_break_even_is_the_replica_price_over_the_api_bill_at_full_throughput():
    sm = SimpleNamespace(limit=2, prompt=1000, output=500, steps=_Steps(),
                         max_requests_per_s=1.0, gpu=SimpleNamespace(id="h100-sxm"), gpus=1)
    row = check_row(ROW, "row")
    v = compare(sm, Money(3.6, "USD"), 0.5, 0, [row], lambda m, cur: m)
    # a request costs 3.6 / (3,600 x 0.5 x 1) = $0.002; prefill 1 s of 1 + 500 x 0.006 / 2
    assert v.self_per_request.amount == pytest.approx(0.002)
    assert v.input_share == pytest.approx(1 / (1 + 1.5))
    assert v.self_per_million["input"].amount == pytest.approx(0.002 * 0.4 / 1000 * 1e6)
    assert v.self_per_million["output"].amount == pytest.approx(0.002 * 0.6 / 500 * 1e6)
    # the API bills (1,000 x $1 + 500 x $2) / 1M = $0.002: equal at 50 % utilisation
    assert v.rows[0].per_request.amount == pytest.approx(0.002)
    assert v.rows[0].break_even_utilisation == pytest.approx(0.5)


def test_cached_tokens_cost_the_cached_price_on_the_api_and_nothing_self_hosted():
    sm = SimpleNamespace(limit=2, prompt=1000, output=500, steps=_Steps(),
                         max_requests_per_s=1.0, gpu=SimpleNamespace(id="x"), gpus=1)
    row = check_row({**ROW, "cached_input_per_mtok": "0.5"}, "row")
    v = compare(sm, Money(3.6, "USD"), 0.5, 2000, [row], lambda m, cur: m)
    assert v.rows[0].per_request.amount == pytest.approx(0.002 + 2000 * 0.5 / 1e6)
    assert v.self_per_request.amount == pytest.approx(0.002)


def test_recommend_vs_api_prices_the_best_option_against_the_providers(cli):
    r = cli("recommend", "llama-3.1-8b", "--requests-per-s", "2", "--vs-api", "--top", "1",
            "--json")
    assert r.code == 0, r.err
    data = r.json()
    v = data["vs_api"]
    best = data["options"][0]
    assert v["gpu"] == best["gpu"]
    assert {a["provider"] for a in v["api"]} >= {"groq", "together"}
    price = v["replica_price_per_hour"]["amount"]
    for a in v["api"]:  # the API bill of one request, from the row's own prices
        bill = (v["prompt_tokens"] * a["input_per_mtok"]
                + v["output_tokens"] * a["output_per_mtok"]) / 1e6
        assert a["break_even_utilisation"] == pytest.approx(
            price / (3600 * v["max_requests_per_s_per_replica"] * bill), rel=1e-3)
    assert 0 < v["utilisation"] <= 1
    assert v["self_hosted_per_million_tokens"]["cached_input"]["amount"] == 0


def test_vs_api_is_refused_for_training(cli):
    r = cli("recommend", "llama-3.1-8b", "--task", "lora", "--steps", "100", "--vs-api")
    assert r.code == 2 and "inference" in r.err


def test_a_feed_file_replaces_the_table_and_a_bad_one_is_one_line(cli, tmp_path):
    feed = tmp_path / "api.csv"
    header = ",".join(ROW)
    feed.write_text(header + "\n" + ",".join(ROW.values()) + "\n")
    r = cli("recommend", "llama-3.1-8b", "--requests-per-s", "2", "--vs-api", "--top", "1",
            "--api-prices", str(feed), "--json")
    assert r.code == 0, r.err
    assert [a["provider"] for a in r.json()["vs_api"]["api"]] == ["p"]
    feed.write_text(header + "\n" + ",".join({**ROW, "output_per_mtok": "900"}.values()))
    bad = cli("recommend", "llama-3.1-8b", "--requests-per-s", "2", "--vs-api",
              "--api-prices", str(feed))
    assert bad.code == 2 and "not plausible" in bad.err


def test_rest_recommend_takes_vs_api(web):
    r = web.get("/api/v1/recommend?model=llama-3.1-8b&requests_per_s=2&vs_api=true&top=1")
    assert r.status_code == 200, r.text
    assert r.json()["vs_api"]["api"]


def test_the_web_never_reads_an_api_price_file(web):
    r = web.get("/api/v1/recommend?model=llama-3.1-8b&requests_per_s=2&vs_api=true"
                "&api_prices=/etc/passwd")
    assert r.status_code == 422


def test_cost_vs_api_breaks_even_where_the_run_costs_the_api_output_price(cli):
    r = cli("cost", "--gpu", "h100-sxm", "--work", "10M", "--unit", "token", "--rate-of-work",
            "2000/s", "--vs-api", "llama-3.3-70b", "--json")
    assert r.code == 0, r.err
    data = r.json()
    v = data["vs_api"]
    own = v["self_hosted_per_million_tokens"]["typical"]["amount"]
    # the run's own cost, scaled to a million of its tokens
    assert own == pytest.approx(data["cost"]["typical"]["amount"] / 10, rel=1e-3)
    assert {a["provider"] for a in v["api"]} >= {"groq", "together", "deepinfra"}
    for a in v["api"]:
        assert a["break_even_utilisation"] == pytest.approx(own / a["output_per_mtok"],
                                                            rel=1e-3)


def test_cost_vs_api_needs_tokens_and_a_known_model(cli):
    r = cli("cost", "--gpu", "h100-sxm", "--duration", "2h", "--vs-api", "llama-3.3-70b")
    assert r.code == 2 and "tokens" in r.err
    r = cli("cost", "--gpu", "h100-sxm", "--work", "10M", "--unit", "token", "--rate-of-work",
            "2000/s", "--vs-api", "nonesuch")
    assert r.code == 2 and "no per-token API price" in r.err


@pytest.mark.parametrize("cached", ["-5", "1e12"])  # counts round as everywhere (2.5 -> 2)
def test_cached_tokens_must_be_a_plausible_whole_number(web, cached):
    r = web.get("/api/v1/recommend", params={"model": "llama-3.1-8b", "requests_per_s": "2",
                                             "vs_api": "true", "cached_tokens": cached})
    assert r.status_code == 422
