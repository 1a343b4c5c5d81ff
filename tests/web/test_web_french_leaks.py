"""Words the engine hands the page as values are said in French on a French page: the billing
rule of a provider that does not publish one ('per second (assumed: ...)' was English inside
French prose) and a choice named beside its field ('Classer par : time')."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.providers import stated_by_name
from whichgpu.messages import Field, msg
from whichgpu.units import Money
from whichgpu.vocabulary import Objective
from whichgpu.web.i18n import locale
from whichgpu.web.words import say_text


def _unstated_provider() -> str:
    for name in ("Hyperbolic", "Nebius", "Cudo", "Seeweb", "Mithril"):
        if stated_by_name(name) is False:
            return name
    raise AssertionError("no provider without a stated billing rule to test with")


def test_an_assumed_billing_rule_is_said_in_french():
    who = _unstated_provider()
    offer = Offer(provider=who, gpu="h100-sxm", price_per_hour=Money(2.0, "USD"))
    text = offer.billing_text()
    assert "assumed" in text and who in text  # the CLI's English
    fr = say_text(locale("fr"), text)
    assert fr.complete
    assert "assumed" not in fr.text and who in fr.text and "suppos" in fr.text


def test_a_choice_beside_its_field_is_said_in_french():
    said = say_text(locale("fr"), msg("t", "{objective}",
                                      objective=Field("objective", Objective.TIME)))
    assert not re.search(r"\btime\b", said.text), said.text
    assert "temps" in said.text


def test_the_french_advisor_page_has_no_english_billing_words():
    from whichgpu.web.app import create_app

    page = TestClient(create_app()).get(
        "/?task=inference&model=llama-3.1-8b&amount=1M&unit=tokens&lang=fr").text
    # the engine's own English notes are kept, marked lang="en", in their own block
    page = re.sub(r'<details class="engine">.*?</details>', "", page, flags=re.S)
    assert "does not state its billing rule" not in page
    assert "ne publie pas sa règle de facturation" in page
