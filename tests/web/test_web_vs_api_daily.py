"""The advisor page's API comparison for a daily volume (audit 7, defect 1), EN and FR: both
monthly totals, the replicas' utilisation and the verdict, in the page's language."""

from __future__ import annotations

import pytest

from page_text import text_after

URL = "/?model=llama-3.3-70b&quant=fp8&tokens_per_day=1.7M&vs_api=true"


def _text(html: str, anchor: str) -> str:
    return text_after(html, anchor, 6000)


@pytest.mark.parametrize("lang, month, verdict, column", [
    ("en", "A month of this daily volume (730 hours): self-hosted $",
     "At this volume the API costs less: openrouter", "API bill a month"),
    ("fr", "Un mois de ce volume quotidien (730 heures) : auto-hébergé",
     "À ce volume, l’API coûte moins cher", "Facture API par mois"),
])
def test_the_page_says_both_monthly_totals_and_the_verdict(web, lang, month, verdict, column):
    r = web.get(f"{URL}&lang={lang}")
    assert r.status_code == 200
    vs = _text(r.text, 'id="vs-api-h"')
    assert month in vs
    assert verdict in vs and column in vs
    assert "--" not in vs  # no command-line flag on a page
