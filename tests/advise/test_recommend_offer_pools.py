"""A recommendation looks each GPU's offers up by (GPU, spot) instead of filtering the whole
price list once per GPU (issue 27): the same offers, in the list's order, as the filter."""

from __future__ import annotations

from whichgpu.advise import evaluate
from whichgpu.catalog.prices.selection import get_offers


def test_the_grouped_pools_are_the_filtered_ones_in_order() -> None:
    offers = get_offers(None)
    keys = sorted({(o.gpu, o.spot) for o in offers}) + [("no-such-gpu", False)]
    filtered = {k: [o for o in offers if o.gpu == k[0] and o.spot == k[1]] for k in keys}
    token = evaluate._POOLS.set({})
    try:
        grouped = {k: evaluate._offers_of(offers, *k) for k in keys}
        again = evaluate._offers_of(offers, *keys[0])
    finally:
        evaluate._POOLS.reset(token)
    assert grouped == filtered
    assert again == filtered[keys[0]] and again is not grouped[keys[0]]  # a new list each time
    assert any(len(v) > 1 for v in grouped.values())
    assert evaluate._offers_of(offers, *keys[0]) == filtered[keys[0]]  # outside a recommendation
