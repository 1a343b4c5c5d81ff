"""Rent or buy of a family name ('rtx-pro-6000'): the card people buy is one with a catalog
purchase price; the server edition, sold only inside servers, has none but is the cheapest to
rent. The answer is for a buyable variant, instead of ending in "no purchase price" (audit of
whole answers, 2026-12-07: CLI, REST and the page all refused)."""

from __future__ import annotations

from whichgpu.answers.inputs.ownership import tco
from whichgpu.catalog.gpus import default_catalog, resolve_gpu


def _priced(name: str) -> set[str]:
    res = resolve_gpu(name)
    return {c for c in res.candidates if default_catalog().get(c).purchase_price is not None}


def test_a_family_is_answered_for_a_variant_with_a_purchase_price():
    priced = _priced("rtx-pro-6000")
    assert priced and len(priced) < len(resolve_gpu("rtx-pro-6000").candidates)  # the case
    answer = tco("rtx-pro-6000", hours_per_month=240)
    assert answer.gpu.id in priced
    assert answer.ownership.inputs.purchase_price is not None
    assert answer.gpu.id in str(answer.resolution_note)  # says which variant it is for


def test_every_familys_default_variant_has_a_purchase_price_when_a_sibling_has_one():
    """What _buyable_variants relies on to keep the family's default and its note."""
    catalog = default_catalog()
    families = {g.family for g in catalog.gpus if getattr(g, "family", None)}
    for family in families:
        try:
            res = resolve_gpu(family)
        except Exception:  # a family name that is also one card's id, or none
            continue
        if _priced(family):
            assert res.gpu.purchase_price is not None, family


def test_the_page_answers_the_family_too(web):
    priced = _priced("rtx-pro-6000")
    r = web.get("/rent-or-buy?gpu=rtx-pro-6000&hours_per_month=240&lang=fr")
    assert r.status_code == 200
    assert any(f"catalogue {gpu_id}" in r.text for gpu_id in priced)  # its purchase price's source
