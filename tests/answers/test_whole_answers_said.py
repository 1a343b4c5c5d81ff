"""Whole answers a person acts on (brief flaws10): what an answer rests on is said, not left
out silently. Amounts converted to another currency name the rate and how old its table is;
many LoRA adapters on one server are said back, are not refused because of an engine the user
never named, and the rate's sizing says what it leaves out of them; a dense model's decode is
not said to run MoE kernels (tests/estimate/speed/test_dense_decode_kernel_said.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.selection import OfferSelection
from whichgpu.currency import RateTable, default_rates
from whichgpu.units import Money


def _offer(price: float, currency: str) -> Offer:
    return Offer(gpu="rtx-4090", provider="Example", price_per_hour=Money(price, currency))


def test_a_conversion_names_the_rate_and_the_tables_date_against_the_prices():
    table = RateTable("EUR", "2024-06-28", "a table", {"USD": 1.25})
    said = str(table.conversion_said(["USD"], "EUR", prices_of=date(2024, 7, 8)))
    assert "1 USD = 0.8 EUR" in said  # 1 / 1.25
    assert "2024-06-28" in said and "10 day(s) older than the prices it converts" in said
    undated = str(table.conversion_said(["USD"], "EUR"))  # no price date: no age to say
    assert "2024-06-28" in undated and "older" not in undated
    given = table.with_rate("USD", "EUR", 0.9).conversion_said(["USD"], "EUR")
    assert "1 USD = 0.9 EUR" in str(given) and "2024-06-28" not in str(given)


def test_offers_converted_for_an_answer_say_the_rate_they_were_converted_at():
    from whichgpu.answers.inputs.job import apply_currency

    usd = _offer(2.0, "USD").model_copy(update={"observed_at": "2026-12-01"})
    sel = OfferSelection(offers=(usd, _offer(1.5, "EUR")), feeds=(),
                         warnings=(), requested=None, max_age_s=30 * 86400.0,
                         now=datetime(2026, 12, 7, tzinfo=UTC))
    got = apply_currency(sel, "EUR")
    table = default_rates()
    assert {o.price_per_hour.currency for o in got.offers} == {"EUR"}
    (warning,) = [str(w) for w in got.warnings if "converted" in str(w)]
    assert f"1 USD = {table.rate('USD', 'EUR'):.4g} EUR" in warning
    days = (date(2026, 12, 1) - date.fromisoformat(table.date)).days
    assert table.date in warning and f"{days:,} day(s) older than the prices" in warning


def test_many_adapters_are_said_back_in_what_the_answer_understood():
    from whichgpu.advise.job import Job
    from whichgpu.advise.understood import assumed, understood
    from whichgpu.answers.inputs.workload import build_workload

    job = Job(build_workload("llama-3.1-8b", engine="vllm", lora_adapters=50, lora_rank=16),
              users=20, tokens_per_s_each=10)
    assert "50 LoRA adapter(s) of rank 16" in str(understood(job))
    assert {a.name: a.value for a in assumed(job)}["lora_adapters"] == 50


def test_a_card_whose_fallback_engine_serves_no_adapters_is_excluded_not_fatal():
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.estimate.platform import EngineUnavailable, engine_for

    apple = default_catalog().get("apple-m3-max")
    plain = build_workload("llama-3.1-8b")
    swapped, note = engine_for(plain, apple)
    assert note is not None and str(swapped.engine_name) != "vllm"  # vLLM does not run there
    try:
        engine_for(plain.with_(lora_adapters=50), apple)
    except EngineUnavailable as exc:
        assert "LoRA adapters" in str(exc.message)
    else:
        raise AssertionError("a fallback without adapter slots was taken for 50 adapters")


def test_recommend_for_users_with_many_adapters_answers(cli):
    out = cli("recommend", "llama-3.1-8b", "--lora-adapters", "50", "--users", "20",
              "--tokens-per-s-each", "10", "--top", "1", "--json")
    assert out.code == 0, out.err
    data = out.json()
    assert data["options"] and "50 LoRA adapter(s)" in data["understood"]


def test_a_rate_sized_with_adapters_says_their_slots_and_the_compute_left_out(cli):
    out = cli("recommend", "llama-3.1-8b", "--lora-adapters", "50", "--requests-per-s", "5",
              "--top", "1", "--json")
    assert out.code == 0, out.err
    text = " ".join(str(m) for m in out.json()["explanation"])
    assert "50 LoRA adapter(s) of rank 16" in text
    assert "adapter slot(s) per GPU" in text and "not in the sized rate" in text



def test_an_rl_ranking_says_what_stops_its_best_plan_and_where_its_prices_come_from(cli):
    # Unsloth's default share (50 % of a 32 GB card) is below Qwen3 32B's 4-bit weights: the
    # plan's warning was said by `speed` but not by the ranking that recommended the card
    args = ("recommend", "qwen3-32b", "--task", "grpo", "--framework", "unsloth", "--only",
            "rtx-5090")
    data = cli(*args, "--json").json()
    assert data["options"][0]["gpu"] == "rtx-5090"
    assert any("vLLM would not start" in line for line in data["explanation"])
    out = cli(*args)
    assert out.code == 0, out.err
    said = " ".join((out.out + out.err).split())
    assert "vLLM would not start" in said
    assert "Prices from" in said and "$/h" not in said  # dated, in the answer's currency


def test_a_simulated_request_rate_with_adapters_says_their_cost_is_not_in_its_times(cli):
    args = ("speed", "llama-3.1-8b", "--gpu", "l40s", "--requests-per-s", "5", "--json")
    plain = cli(*args).json()
    many = cli(*args, "--lora-adapters", "50").json()
    assert not any("LoRA" in a for a in plain["assumptions"])
    assert any("LoRA adapters: their compute is not in these times" in a
               for a in many["assumptions"])
