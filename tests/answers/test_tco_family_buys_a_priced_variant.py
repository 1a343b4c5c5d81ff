"""Rent or buy of a family name ('rtx-pro-6000'): the card people buy is the one with a catalog
purchase price; the server edition, sold only inside servers, has none. The answer is for a
buyable variant and says why, instead of ending in "no purchase price" (audit of whole
answers, 2026-12-07: CLI, REST and the page all refused)."""

from __future__ import annotations

from whichgpu.answers.inputs.ownership import tco
from whichgpu.catalog.gpus import default_catalog, resolve_gpu


def _family_with_unpriced_variant() -> tuple[str, set[str]]:
    res = resolve_gpu("rtx-pro-6000")
    priced = {c for c in res.candidates if default_catalog().get(c).purchase_price is not None}
    assert priced and len(priced) < len(res.candidates)  # the case this file is about
    return "rtx-pro-6000", priced


def test_a_family_is_answered_for_a_variant_with_a_purchase_price():
    name, priced = _family_with_unpriced_variant()
    answer = tco(name, hours_per_month=240)
    assert answer.gpu.id in priced
    assert answer.ownership.inputs.purchase_price is not None
    assert "no catalog purchase price" in str(answer.resolution_note)


def test_a_given_purchase_price_keeps_the_familys_own_choice():
    name, _priced = _family_with_unpriced_variant()
    answer = tco(name, hours_per_month=240, purchase_price="20000USD")
    assert "no catalog purchase price" not in str(answer.resolution_note or "")


def test_the_page_answers_the_family_too(web):
    _name, priced = _family_with_unpriced_variant()
    r = web.get("/rent-or-buy?gpu=rtx-pro-6000&hours_per_month=240&lang=fr")
    assert r.status_code == 200
    assert any(f"catalogue {gpu_id}" in r.text for gpu_id in priced)  # its purchase price's source
