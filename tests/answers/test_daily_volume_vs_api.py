"""A daily volume is served by a machine kept up all day (audit 7, defect 1): its cost is 24 h
of the hourly price, the API comparison says the replica's utilisation and both monthly
totals, and the verdict follows from them: the API at a small volume, self-hosting at a volume
that fills the replica."""

from __future__ import annotations

import json

import pytest

from whichgpu.cost.api_prices import shipped
from whichgpu.cost.vs_api import HOURS_PER_MONTH

ASK = ("recommend", "llama-3.3-70b", "--quant", "fp8", "--vs-api", "--top", "3", "--json")


def _ask(cli, volume: str, *more: str) -> dict:
    r = cli(*ASK, "--tokens-per-day", volume, *more)
    assert r.code == 0, r.err
    return r.json()


def test_the_daily_cost_is_the_machine_kept_up_and_the_api_wins_at_1_7m(cli):
    data = _ask(cli, "1.7M")
    for o in data["options"]:  # each option: a whole day of its machines, busy or not
        day = o["price_per_hour"]["amount"] * 24
        assert o["cost"]["typical"]["amount"] >= day - 0.01
        busy = o["time_s"]["typical"] / 86400
        assert busy < 1
        assert f"({busy:.1%})" in " ".join(o["notes"])  # the busy share, a secondary line
    best = data["options"][0]
    assert any("kept up and billed 24 h a day" in a for a in best["assumptions"])
    v = data["vs_api"]
    mo = v["monthly"]
    replica = v["replica_price_per_hour"]["amount"]
    assert mo["replicas"] == best["replicas"]
    self_month = mo["self_hosted_per_month"]["amount"]
    assert self_month >= 24 * replica * mo["replicas"] * 30
    assert self_month == pytest.approx(replica * mo["replicas"] * HOURS_PER_MONTH, abs=0.01)
    # the utilisation is the volume's share of the replicas' maximum throughput, said
    requests = 1.7e6 / v["output_tokens"]
    assert mo["requests_per_day"] == pytest.approx(requests, rel=1e-4)
    u = requests / (86400 * v["max_requests_per_s_per_replica"] * mo["replicas"])
    assert v["utilisation"] == pytest.approx(u, rel=1e-3) and u < 0.2
    assert f"{u:.2%}" in mo["verdict_said"]
    # each API's month is the month's requests at its price; the cheapest one wins here
    months = {a["provider"]: a["per_month"]["amount"] for a in v["api"]}
    for a in v["api"]:  # the bill of a request from the row's own prices (none cached)
        bill = (v["prompt_tokens"] * a["input_per_mtok"]
                + v["output_tokens"] * a["output_per_mtok"]) / 1e6
        assert a["per_month"]["amount"] == pytest.approx(bill * requests * 365 / 12, abs=0.01)
    cheapest = min(months, key=lambda p: months[p])
    assert mo["cheapest_api"] == cheapest and months[cheapest] < self_month
    assert mo["verdict"] == "api" and cheapest in mo["verdict_said"]


def test_a_volume_that_fills_the_replica_is_cheaper_self_hosted(cli, tmp_path):
    # one provider's real row, so that the verdict moves with the volume only
    row = next(p for p in shipped() if p.model == "llama-3.3-70b" and p.provider == "together")
    feed = tmp_path / "api.json"
    feed.write_text(json.dumps([{k: ("" if v is None else str(v))
                                 for k, v in row.to_json().items()}]))
    small = _ask(cli, "1.7M", "--api-prices", str(feed))
    assert small["vs_api"]["monthly"]["verdict"] == "api"
    best = small["options"][0]
    # 95 % of what the best option's replicas produce in a day, by the answer's own rate
    full = int(best["rate"]["typical"] * 86400 * best["replicas"] * 0.95)
    big = _ask(cli, str(full), "--api-prices", str(feed))
    b = big["options"][0]
    assert b["time_s"]["typical"] / 86400 > 0.5  # the day mostly busy
    mo = big["vs_api"]["monthly"]
    assert mo["verdict"] == "self_host"
    assert mo["self_hosted_per_month"]["amount"] < mo["cheapest_api_per_month"]["amount"]
    assert big["vs_api"]["utilisation"] > small["vs_api"]["utilisation"] * 5
    assert "self-hosting costs less" in mo["verdict_said"]


def test_the_cli_says_both_monthly_totals_and_the_verdict(cli):
    r = cli("recommend", "llama-3.3-70b", "--quant", "fp8", "--vs-api", "--top", "1",
            "--tokens-per-day", "1.7M")
    assert r.code == 0, r.err
    text = " ".join(r.out.split())
    assert "self-hosted $" in text and "cheapest API $" in text
    assert "At this volume the API costs less" in text
    assert "secondary figure, not how a rental bills" in text
