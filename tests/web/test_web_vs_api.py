"""The advisor page's API comparison and power budget (issue 33, items 5 and 6), EN and FR."""

from __future__ import annotations

import pytest

from page_text import text_after

URL = "/?model=llama-3.1-8b&requests_per_s=2&vs_api=true&power_budget=1000"


def _text(html: str, anchor: str) -> str:
    return text_after(html, anchor, 4000)


@pytest.mark.parametrize("lang, heading, budget", [
    ("en", "Self-host or pay per token", "Within a power budget of 1,000 W"),
    ("fr", "Auto-héberger ou payer au jeton", "Dans un budget de puissance de 1"),
])
def test_the_advisor_compares_with_the_apis_and_keeps_the_power_budget(web, lang, heading,
                                                                       budget):
    r = web.get(f"{URL}&lang={lang}")
    assert r.status_code == 200
    vs = _text(r.text, 'id="vs-api-h"')
    assert heading in vs
    assert "groq" in vs and "together" in vs  # the providers of the table, linked
    assert 'href="https://groq.com/pricing/"' in r.text
    assert budget in _text(r.text, 'id="power-budget-h"')
    assert "--" not in vs  # no command-line flag on a page


def test_without_the_control_the_page_has_no_api_section(web):
    r = web.get("/?model=llama-3.1-8b&requests_per_s=2")
    assert r.status_code == 200 and 'id="vs-api-h"' not in r.text
