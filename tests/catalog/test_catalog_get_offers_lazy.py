"""``whichgpu.catalog.get_offers`` is the price store's list of offers, loaded on first use:
the function lives beside ``current_offers`` (catalog/prices/selection.py), so catalog/offers.py
imports no price module that imports it back (issue 35: no import cycle), and
``import whichgpu.catalog`` loads no price store (tests/cli/test_cli_start_imports.py: a memory
answer loads none)."""

from __future__ import annotations

import pytest

import whichgpu.catalog as catalog
from whichgpu.catalog.prices import selection


def test_the_catalog_names_the_selection_function() -> None:
    assert catalog.get_offers is selection.get_offers
    assert "get_offers" in catalog.__all__
    with pytest.raises(AttributeError, match="no attribute 'get_price'"):
        catalog.get_price  # noqa: B018

