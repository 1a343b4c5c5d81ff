"""``whichgpu tco`` and ``whichgpu cost`` as a user runs them: output, JSON, exit codes."""

import re

import pytest

S11_FLAGS = ("--purchase-price", "25000USD", "--rent-price", "3.15USD", "--utilization", "1",
             "--kwh-price", "0.10USD", "--cooling-per-hour", "0.02USD", "--years", "3")


def test_tco_h100_json_has_the_stable_keys(cli):
    r = cli("tco", "h100", "--prices", "article-000", "--load-factor", "1", "--json")
    assert r.code == 0, r.err
    data = r.json()
    for key in ("break_even_hours", "break_even_months_24x7", "effective_cost_per_hour",
                "electricity_per_year", "advice", "curve", "sources", "assumptions"):
        assert key in data
    assert set(data["effective_cost_per_hour"]) == {"amount", "currency"}
    assert data["effective_cost_per_hour"]["currency"] == "USD"
    assert data["inputs"]["rent_price"] == {"amount": 3.15, "currency": "USD"}  # article-000
    assert round(data["electricity_per_year"]["amount"]) == 368  # S9: 700 W in full
    assert "names several variants" in r.err  # h100 -> the cheapest variant, on stderr only


def test_tco_reaches_the_article_s11_case_with_flags(cli):
    data = cli("tco", "h100-sxm", *S11_FLAGS, "--json").json()
    assert round(data["break_even_hours_capital_only"]) == 7937
    assert round(data["break_even_months_24x7"]) == 11
    assert round(data["effective_cost_per_hour"]["amount"] * 20) / 20 == 1.05


def test_tco_table_prints_breakdown_break_even_and_advice(cli):
    r = cli("tco", "h100-sxm", *S11_FLAGS)
    assert r.code == 0
    for text in ("Electricity per year", "Effective cost per hour owned", "Break-even",
                 "7,937 h", "Advice:", "$3.15"):
        assert text in r.out


def test_tco_converts_to_the_display_currency_and_shows_the_rate(cli):
    data = cli("tco", "h100-sxm", "--currency", "EUR", "--rate", "EURUSD=1.25",
               "--prices", "article-000", "--json").json()
    assert data["currency"] == "EUR"
    assert data["effective_cost_per_hour"]["currency"] == "EUR"
    assert data["rent_price"]["amount"] == pytest.approx(3.15 / 1.25)
    assert any("1 USD = 0.8 EUR (given with --rate)" in a for a in data["assumptions"])


def test_tco_european_electricity_changes_the_break_even(cli):
    base = cli("tco", "rtx-4090", "--json").json()
    europe = cli("tco", "rtx-4090", "--kwh-price", "0.25EUR", "--json").json()
    assert europe["break_even_hours"] > base["break_even_hours"]
    assert europe["electricity_per_year"]["currency"] == "USD"


def test_tco_hours_per_month_and_curve(cli):
    r = cli("tco", "h100-sxm", "--hours-per-month", "500", "--years", "2", "--curve")
    assert r.code == 0 and "Cumulative cost" in r.out and "500 h/month" in r.out


def test_tco_without_an_offer_needs_a_rent_price_for_the_advice(cli):
    r = cli("tco", "rtx-3090", "--prices", "article-000", "--json")
    assert r.code == 0 and r.json()["advice"] is None and "--rent-price" in r.err
    assert cli("tco", "rtx-3090", "--prices", "article-000", "--rent-price", "0.30USD",
               "--json").json()["advice"]


@pytest.mark.parametrize("args", [
    ("--utilization", "1.5"),
    ("--utilization", "150%"),
    ("--utilization", "0"),
    ("--purchase-price", "-25000USD"),
    ("--purchase-price", "25000"),
    ("--rent-price", "0USD"),
    ("--kwh-price", "-0.1USD"),
    ("--years", "0"),
    ("--years", "-1"),
    ("--tdp", "0"),
    ("--hours-per-month", "900"),
    ("--utilization", "0.5", "--hours-per-month", "300"),
    ("--rate", "EURUSD=0"),
    ("--currency", "XYZ"),
    ("--purchase-price", "25000XYZ"),  # any three letters are not a currency
    ("--purchase-price", "1e30USD"),  # absurd amounts: bounds documented in docs/ownership.md
    ("--purchase-price", "300000000JPY"),  # about $1.9 M for one GPU
    ("--kwh-price", "50USD"),
    ("--rent-price", "5000USD"),
    ("--cooling-per-hour", "500USD"),
    ("--max-age", "0"),
])
def test_tco_bad_input_exits_2_with_a_reason(cli, args):
    r = cli("tco", "h100-sxm", *args)
    assert r.code == 2, (args, r.out, r.err)
    assert "error:" in r.err and "Traceback" not in r.err


def test_tco_gpu_without_a_purchase_price_exits_2(cli):
    r = cli("tco", "h100-nvl")  # the catalog records that there is no public price
    assert r.code == 2 and "--purchase-price" in r.err and "no public price" in r.err
    assert cli("tco", "h100-nvl", "--purchase-price", "30000USD").code == 0


def test_cost_5_minutes_on_vramfarm_is_billed_15_minutes(cli):
    data = cli("cost", "--gpu", "rtx-4090", "--duration", "5m", "--prices",
               "vramfarm-2026-11", "--json").json()
    assert data["billed_s"]["typical"] == 900
    assert data["cost"]["typical"] == {"amount": round(0.59 / 4, 6), "currency": "EUR"}


def test_cost_s25_flux_images_per_image(cli):
    r = cli("cost", "--gpu", "rtx-4090", "--duration", "2h46m40s..3h20m..4h10m", "--prices",
            "vramfarm-2026-11", "--work", "1000", "--unit", "image")
    assert r.code == 0
    assert "€1.97" in r.out and "per image" in r.out and "3 h 20 min" in r.out


def test_cost_s6_thousand_h100_for_30_days(cli):
    data = cli("cost", "--gpu", "h100-sxm", "--duration", "30d", "--count", "1000",
               "--prices", "article-000", "--json").json()
    # 1,000 GPUs as 125 servers of 8 (the article gives a price per GPU, no machine)
    assert data["instances"] == data["machines"] == 125 and data["gpus_paid"] == 1000
    assert round(data["cost"]["typical"]["amount"]) == 2268000
    assert data["pricing"] == "on-demand"


def test_cost_in_another_currency(cli):
    data = cli("cost", "--gpu", "rtx-4090", "--duration", "10h", "--currency", "EUR",
               "--rate", "EURUSD=1.2", "--prices", "article-000", "--json").json()
    assert data["cost"]["typical"] == {"amount": 5.0, "currency": "EUR"}  # $6.00 / 1.2


@pytest.mark.parametrize("args", [
    ("--gpu", "rtx-4090", "--duration", "-5m"),
    ("--gpu", "rtx-4090", "--duration", "5"),
    ("--gpu", "rtx-4090", "--duration", "4h..2h"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--count", "0"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--prices", "nope"),
    ("--gpu", "rtx-a6000", "--duration", "1h", "--prices", "article-000"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--spot", "--prices", "article-000"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--work", "0"),
    ("--gpu", "h10", "--duration", "1h"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--count", "100000000"),
    ("--gpu", "rtx-4090", "--duration", "600w"),  # more than ten years
    ("--gpu", "rtx-4090", "--duration", "1h", "--per", "0"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--per", "1M"),  # a unit needs --work
    ("--gpu", "rtx-4090", "--duration", "1h", "--work", "1000", "--per", "-5"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--currency", "XYZ"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--max-age", "-1"),
    ("--gpu", "rtx-4090"),  # neither a duration nor a rate of work
    ("--gpu", "rtx-4090", "--duration", "1h", "--work", "1000", "--rate-of-work", "4/min"),
    ("--gpu", "rtx-4090", "--rate-of-work", "4/min"),  # a rate needs the amount of work
    ("--gpu", "rtx-4090", "--work", "1000", "--rate-of-work", "6..4/min"),
    ("--gpu", "rtx-4090", "--work", "1000", "--rate-of-work", "4/fortnight"),
])
def test_cost_bad_input_exits_2(cli, args):
    r = cli("cost", *args)
    assert r.code == 2, (args, r.out, r.err)
    assert "error:" in r.err and "Traceback" not in r.err and r.out == ""


def test_cost_names_the_offer_set_that_has_the_gpu(cli):
    r = cli("cost", "--gpu", "rtx-a6000", "--duration", "1h", "--prices", "article-000")
    assert r.code == 2 and "offer sets with it: vramfarm-2026-11" in r.err


def test_cost_unknown_gpu_typo_gets_suggestions(cli):
    r = cli("cost", "--gpu", "h1OO", "--duration", "1h")
    assert r.code == 2 and "did you mean h100-sxm" in r.err


def test_cost_s25_from_the_rate_of_work(cli):
    # S25: 1,000 images at 4-6 a minute on a 4090 at €0.59/h: 3 h 20 min typical, about €1.97.
    data = cli("cost", "--gpu", "rtx-4090", "--work", "1000", "--unit", "image",
               "--rate-of-work", "4..6/min", "--prices", "vramfarm-2026-11", "--json").json()
    assert data["duration_s"] == {"low": 1000 / 6 * 60, "typical": 1000 / 5 * 60,
                                  "high": 1000 / 4 * 60}
    assert data["cost"]["typical"]["amount"] == pytest.approx(200 / 60 * 0.59, abs=1e-6)
    assert data["cost_per_unit"]["unit"] == "image"
    assert any("4..6/min" in a for a in data["assumptions"])


def test_cost_large_but_real_jobs_pass_the_bounds(cli):
    # S6-sized jobs and 100k-GPU clusters are real; only absurd inputs are refused.
    r = cli("cost", "--gpu", "h100-sxm", "--duration", "30d", "--count", "100000", "--prices",
            "article-000", "--json")
    assert r.code == 0 and r.json()["gpus_paid"] == 100000 and r.json()["machines"] == 12500


# ---------------------------------------------------------------- prices from the store

def _cheap_h100_feed(cli, tmp_path):
    from prices_support import write_offers

    path = write_offers(tmp_path / "myquotes.csv", "Acme,h100-sxm,1,0.90,USD,false,,2026-11-20")
    assert cli("prices", "import", str(path)).code == 0
    return path


def test_tco_and_cost_price_with_the_newest_imported_feed_by_default(cli, tmp_path):
    before = cli("tco", "h100-sxm", "--json").json()
    assert before["inputs"]["rent_price"]["amount"] > 0.90  # the market snapshot's cheapest
    _cheap_h100_feed(cli, tmp_path)
    after = cli("tco", "h100-sxm", "--json")
    data = after.json()
    assert data["inputs"]["rent_price"] == {"amount": 0.90, "currency": "USD"}
    assert "myquotes" in data["sources"]["rent_price"]
    assert data["prices"] is None  # nothing pinned: the store's current prices
    assert "myquotes" in {f["feed"] for f in data["price_selection"]["feeds"]}
    assert "myquotes" in after.err  # where the prices came from, and their age
    run = cli("cost", "--gpu", "h100-sxm", "--duration", "10h", "--json").json()
    assert run["cost"]["typical"] == {"amount": 9.0, "currency": "USD"}
    assert run["offer"]["provider"] == "Acme"


def test_pinning_article_000_still_reproduces_the_articles(cli, tmp_path):
    _cheap_h100_feed(cli, tmp_path)
    data = cli("tco", "h100-sxm", "--prices", "article-000", "--json").json()
    assert data["inputs"]["rent_price"] == {"amount": 3.15, "currency": "USD"}  # S11
    assert data["prices"] == "article-000"
    s6 = cli("cost", "--gpu", "h100-sxm", "--duration", "30d", "--count", "1000", "--prices",
             "article-000", "--json").json()
    assert round(s6["cost"]["typical"]["amount"]) == 2268000


def test_max_age_flags_old_prices_as_stale(cli):
    # vramfarm-2026-11 was observed on 2026-11-12; with a 1-day threshold it is stale.
    r = cli("cost", "--gpu", "rtx-4090", "--duration", "1h", "--prices", "vramfarm-2026-11",
            "--max-age", "1", "--json")
    assert r.code == 0 and "older than 1 days" in r.err
    assert r.json()["price_selection"]["max_age_s"] == 86400
    fresh = cli("cost", "--gpu", "rtx-4090", "--duration", "1h", "--prices",
                "vramfarm-2026-11", "--max-age", "100000", "--json")
    assert "older than" not in fresh.err
    t = cli("tco", "rtx-4090", "--prices", "vramfarm-2026-11", "--max-age", "1", "--json")
    assert t.code == 0 and "older than 1 days" in t.err


def test_tco_and_cost_help_name_the_store_default(cli):
    for cmd in ("tco", "cost"):
        r = cli(cmd, "--help")
        words = " ".join(re.sub(r"[│╭╮╰╯─]", " ", r.out).split())  # without rich's boxes
        assert "Default: the latest prices of every source in the store" in words
        assert "--max-age" in words and "Offer set or offer file" not in words


def test_checklist_takes_max_age_too(cli):
    args = ("checklist", "--workload", "inference", "--model", "7B", "--budget-per-hour",
            "1USD", "--hours-per-month", "100", "--horizon-months", "6",
            "--prices", "vramfarm-2026-11", "--json")
    stale = cli(*args, "--max-age", "1")
    assert stale.code == 0, stale.err
    assert stale.json()["prices"]["max_age_s"] == 86400
    assert any("older than 1 days" in w for w in stale.json()["prices"]["warnings"])
    assert cli(*args, "--max-age", "100000").json()["prices"]["max_age_s"] == 100000 * 86400


@pytest.mark.parametrize(("url", "args"), [
    ("/api/v1/cost?gpu=rtx-4090&duration=1h&per=0",
     ("cost", "--gpu", "rtx-4090", "--duration", "1h", "--per", "0")),
    ("/api/v1/cost?gpu=rtx-4090&duration=1h&currency=XYZ",
     ("cost", "--gpu", "rtx-4090", "--duration", "1h", "--currency", "XYZ")),
    ("/api/v1/tco?gpu=h100-sxm&purchase_price=1e30USD",
     ("tco", "h100-sxm", "--purchase-price", "1e30USD")),
    ("/api/v1/tco?gpu=h100-sxm&kwh_price=50USD", ("tco", "h100-sxm", "--kwh-price", "50USD")),
])
def test_web_api_refuses_the_same_absurd_inputs_with_the_cli_reason(web, cli, url, args):
    r = web.get(url)
    assert r.status_code == 422
    c = cli(*args)
    assert c.code == 2 and r.json()["detail"] == c.err.strip().removeprefix("error: ")


def test_web_api_cost_is_computed_by_the_cli_builder(web, cli):
    url = ("/api/v1/cost?gpu=h100-sxm&duration=30d&count=1000&prices=article-000")
    api = web.get(url).json()
    c = cli("cost", "--gpu", "h100-sxm", "--duration", "30d", "--count", "1000", "--prices",
            "article-000", "--json").json()
    assert api["cost"] == c["cost"] and api["assumptions"] == c["assumptions"]
    assert round(api["cost"]["typical"]["amount"]) == 2268000  # S6
