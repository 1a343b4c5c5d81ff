"""Issue 26, part 3: one price truth. compare, tco, rent-or-buy and the checklist price from
the market snapshot by default, as every other command; the articles' offer sets only when
named; a family name ('a100') prices its cheapest variant and says which."""

from __future__ import annotations

import re

ARTICLE = "marketplace (article 000)"


def test_compare_defaults_to_the_market_and_takes_an_article_set_only_when_named(cli):
    d = cli("compare", "--measured", "h100-sxm=12m", "--json").json()
    assert d["prices"] is None
    h100 = next(c for c in d["cards"] if c["gpu"] == "h100-sxm")
    assert h100["offer"]["provider"] != ARTICLE and h100["offer"]["observed_at"]
    assert any("the market prices" in a for a in d["assumptions"])
    named = cli("compare", "--measured", "h100-sxm=12m", "--prices", "article-000",
                "--json").json()
    h100 = next(c for c in named["cards"] if c["gpu"] == "h100-sxm")
    assert h100["offer"]["provider"] == ARTICLE and named["prices"] == "article-000"


def test_tco_and_cost_use_the_same_market_price(cli):
    tco = cli("tco", "h100-sxm", "--json").json()
    cost = cli("cost", "--gpu", "h100-sxm", "--duration", "1h", "--json").json()
    assert tco["prices"] is None
    assert tco["rent_price"] == cost["offer"]["price_per_hour"]


def _selected_prices(page: str) -> str:
    select = re.search(r'<select id="f-prices" name="prices".*?</select>', page, re.S).group(0)
    chosen = re.search(r'<option value="([^"]*)" selected>', select)
    return chosen.group(1) if chosen else ""


def test_rent_or_buy_opens_on_the_market_prices_and_keeps_them(web, cli):
    tco = cli("tco", "h100-sxm", "--json").json()
    market = f"{tco['rent_price']['amount']:.2f}"
    for url in ("/rent-or-buy", "/rent-or-buy?gpu=h100-sxm&prices=",
                "/rent-or-buy?gpu=h100-sxm&hours_per_month=400"):
        page = web.get(url).text
        assert _selected_prices(page) == "", url  # "Latest of every source"
        assert market in page and "3.15" not in page, url
    named = web.get("/rent-or-buy?gpu=h100-sxm&prices=article-000").text
    assert _selected_prices(named) == "article-000" and "3.15" in named


def test_the_advisor_examples_name_no_article_price_set(web):
    page = web.get("/").text
    assert "prices=article-000" not in page


def test_a_family_name_prices_its_cheapest_variant_and_says_which(cli):
    family = cli("cost", "--gpu", "a100", "--duration", "2h", "--json").json()
    note = family["resolution_note"]
    variants = re.findall(r"a100-[a-z0-9-]+", "a100-80gb-sxm a100-80gb-pcie a100-40gb "
                                              "a100-40gb-pcie")
    costs = {}
    for v in variants:
        out = cli("cost", "--gpu", v, "--duration", "2h", "--json")
        if out.code == 0:
            costs[v] = out.json()["cost"]["typical"]["amount"]
    cheapest = min(costs, key=costs.get)
    assert family["gpu"] == cheapest
    assert family["cost"]["typical"]["amount"] == costs[cheapest]
    assert f"priced the cheapest in these prices, {cheapest}" in note
    assert all(v in note for v in costs)  # the others, with their prices
