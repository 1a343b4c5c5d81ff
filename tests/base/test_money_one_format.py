"""Issue 31: one money format. Every command says an amount with units.format_money (cents
below 1,000, whole units from 1,000, more digits for small amounts): the rent-or-buy reasons
no longer force whole dollars ('$96' beside '$0.40'), the MCP summaries no longer write
'96.00 USD', and the export's machine note says the price the same way."""

from __future__ import annotations

import re

from whichgpu.units import Money, format_money


def _said(amount: dict) -> str:
    return format_money(Money(amount["amount"], amount["currency"]))


def test_rent_or_buy_reasons_say_amounts_with_the_one_rule(cli):
    d = cli("tco", "rtx-4090", "--years", "1", "--hours-per-month", "20", "--json").json()
    advice = d["advice"]
    first = advice["reasons"][0]
    rent, own = _said(advice["rent_cost"]), _said(advice["own_cost"])
    assert f"renting costs {rent}, owning {own}" in first
    assert advice["rent_cost"]["amount"] < 1000 and re.search(r"\$\d+\.\d\d,", first)
    assert f"ties up {_said(d['capital_cost'])}" in advice["reasons"][-1]


def test_the_mcp_summaries_say_money_as_the_command_line_does(cli):
    from whichgpu.agents.tools import Answer, ToolName, summary

    d = cli("cost", "--gpu", "h100-sxm", "--duration", "2h", "--json").json()
    text = summary(ToolName.COST, Answer(d))
    assert text.startswith(_said(d["cost"]["typical"]))
    assert f"{_said(d['offer']['price_per_hour'])}/h" in text
    assert " USD" not in text  # '$2.58', not '2.58 USD'
    eur = cli("cost", "--gpu", "h100-sxm", "--duration", "2h", "--currency", "EUR",
              "--rate", "EURUSD=1.08", "--json").json()
    assert summary(ToolName.COST, Answer(eur)).startswith("€")
