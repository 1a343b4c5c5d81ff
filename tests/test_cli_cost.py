"""``whichgpu tco`` and ``whichgpu cost`` as a user runs them: output, JSON, exit codes."""

import pytest

S11_FLAGS = ("--purchase-price", "25000USD", "--rent-price", "3.15USD", "--utilization", "1",
             "--kwh-price", "0.10USD", "--cooling-per-hour", "0.02USD", "--years", "3")


def test_tco_h100_json_has_the_stable_keys(cli):
    r = cli("tco", "h100", "--json")
    assert r.code == 0, r.err
    data = r.json()
    for key in ("break_even_hours", "break_even_months_24x7", "effective_cost_per_hour",
                "electricity_per_year", "advice", "curve", "sources", "assumptions"):
        assert key in data
    assert set(data["effective_cost_per_hour"]) == {"amount", "currency"}
    assert data["effective_cost_per_hour"]["currency"] == "USD"
    assert data["inputs"]["rent_price"] == {"amount": 3.15, "currency": "USD"}  # article-000
    assert round(data["electricity_per_year"]["amount"]) == 368  # S9 defaults, 700 W
    assert "ambiguous" in r.err  # h100 -> h100-sxm, said on stderr only


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
               "--json").json()
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
    r = cli("tco", "rtx-3090", "--json")
    assert r.code == 0 and r.json()["advice"] is None and "--rent-price" in r.err
    assert cli("tco", "rtx-3090", "--rent-price", "0.30USD", "--json").json()["advice"]


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
               "--json").json()
    assert data["instances"] == 1000
    assert round(data["cost"]["typical"]["amount"]) == 2268000
    assert data["pricing"] == "on-demand"


def test_cost_in_another_currency(cli):
    data = cli("cost", "--gpu", "rtx-4090", "--duration", "10h", "--currency", "EUR",
               "--rate", "EURUSD=1.2", "--json").json()
    assert data["cost"]["typical"] == {"amount": 5.0, "currency": "EUR"}  # $6.00 / 1.2


@pytest.mark.parametrize("args", [
    ("--gpu", "rtx-4090", "--duration", "-5m"),
    ("--gpu", "rtx-4090", "--duration", "5"),
    ("--gpu", "rtx-4090", "--duration", "4h..2h"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--count", "0"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--prices", "nope"),
    ("--gpu", "rtx-a6000", "--duration", "1h"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--spot"),
    ("--gpu", "rtx-4090", "--duration", "1h", "--work", "0"),
    ("--gpu", "h10", "--duration", "1h"),
])
def test_cost_bad_input_exits_2(cli, args):
    r = cli("cost", *args)
    assert r.code == 2, (args, r.out, r.err)
    assert "Traceback" not in r.err


def test_cost_names_the_offer_set_that_has_the_gpu(cli):
    r = cli("cost", "--gpu", "rtx-a6000", "--duration", "1h")
    assert "vramfarm-2026-11" in r.err
