"""An answer given the user's own card heads with that card when it runs the job for no more
than the best rental, and otherwise says why renting beats it (the French advisor page once
headed with a rental at $0.27/h while the owned RTX 4090 cost $0.14/h to own, and told the
reader to run 'whichgpu tco', a command, on a web page)."""

from __future__ import annotations

import re

from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.user_gpu import user_gpu
from whichgpu.units import Money

# a card described by the user, with its price and power (so owning it has a cost per hour)
CARD = "memory=24GB,bandwidth=1008GB/s,fp16=165,tdp=450W,price=1600USD"


def _rec(rent_per_hour: float, **job):
    """Llama 3.1 8B at 4 bits, one rental (an RTX A5000 at ``rent_per_hour``), the card owned."""
    w = build_workload("llama-3.1-8b", quant="q4_k_m", context="4k")
    offer = Offer(provider="p", gpu="rtx-a5000", price_per_hour=Money(rent_per_hour, "USD"))
    return recommend(build_job(w, **job), [offer], gpus=[default_catalog().get("rtx-a5000")],
                     owned=user_gpu(CARD))


def test_an_owned_card_cheaper_to_own_than_any_rental_heads_the_answer():
    rec = _rec(5.0)
    own = rec.owned[0]
    assert own.fits and own.cost_per_hour is not None
    assert own.cost_per_hour.amount < 5.0  # the premise: owning costs less per hour
    assert rec.owned_head is own and rec.to_json()["owned_heads"] is True
    assert rec.explanation[0].id == "owned.verdict.heads"
    # the rentals' own winner line still follows, said as the best of the rentals
    assert rec.explanation[1].id == "owned.verdict.rentals"


def test_a_rental_that_beats_the_owned_card_says_why_and_does_not_hand_it_the_head():
    rec = _rec(0.001)
    assert rec.owned[0].fits and rec.owned_head is None
    assert rec.to_json()["owned_heads"] is False
    first = rec.explanation[0]
    assert first.id == "owned.verdict.beaten" and "rtx-a5000" in first


def test_by_time_the_faster_of_the_two_heads():
    rec = _rec(5.0, tokens="1M", objective="time")
    own, best = rec.owned[0].option, rec.best
    assert own is not None and best is not None
    owned_first = own.time_s.typical <= best.time_s.typical
    assert (rec.owned_head is not None) is owned_first
    assert rec.explanation[0].id == ("owned.verdict.heads_time" if owned_first
                                     else "owned.verdict.beaten_time")


def test_an_owned_card_that_does_not_fit_says_so_first():
    w = build_workload("llama-3.1-70b", quant="bf16", context="4k")
    offer = Offer(provider="p", gpu="h100-sxm", gpu_count=8, price_per_hour=Money(20.0, "USD"))
    rec = recommend(build_job(w), [offer], gpus=[default_catalog().get("h100-sxm")],
                    owned=user_gpu(CARD))
    assert not rec.owned[0].fits and rec.owned_head is None
    assert rec.explanation[0].id == "owned.verdict.no_fit_rent"


def _answer_text(html: str) -> str:
    i = html.index('id="results-h"')
    j = html.index('class="engine"', i)  # up to the English notes
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html[i:j]))


def test_advisor_page_heads_with_the_owned_card_in_french_and_names_no_command(web):
    for lang, head, cheaper in (("fr", "Votre propre rtx-4090", "pour moins cher que toute"),
                                ("en", "Your own rtx-4090", "for less than any rental")):
        html = web.get("/", params={"model": "llama-3.1-8b", "gpu": "rtx-4090",
                                    "lang": lang}).text
        text = _answer_text(html)
        assert 'id="verdict-owned"' in html
        # the owned card's verdict comes before the rentals' (the first verdict box)
        assert html.index('id="verdict-owned"') < html.index('class="verdict"', html.index(
            'id="verdict-owned"') + 1)
        assert head in text and cheaper in text, text[:600]
        assert "whichgpu tco" not in text  # a page never tells the reader to run a command


def test_cli_still_points_at_tco_for_owning_inputs(cli):
    r = cli("recommend", "llama-3.1-8b", "--gpu", "rtx-4090", "--top", "1")
    assert r.code == 0 and "'whichgpu tco' takes every input" in r.out
    assert r.out.index("Your own card (rtx-4090)") < r.out.index("Of the rentals")


def test_an_owned_card_without_speed_figures_heads_and_says_what_is_missing():
    w = build_workload("llama-3.1-8b", quant="q4_k_m", context="4k")
    offer = Offer(provider="p", gpu="rtx-a5000", price_per_hour=Money(1.0, "USD"))
    rec = recommend(build_job(w), [offer], gpus=[default_catalog().get("rtx-a5000")],
                    owned=user_gpu("memory=24GB"))
    assert rec.owned[0].fits and rec.owned[0].option is None
    assert rec.owned_head is rec.owned[0]
    assert rec.explanation[0].id == "owned.verdict.no_speed"
