"""GPU specs (every value sourced), rental offers and where prices come from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.gpus import (
    GPU,
    PRECISIONS,
    Catalog,
    Resolution,
    default_catalog,
    get_gpu,
    load_catalog,
    resolve_gpu,
)
from whichgpu.catalog.offers import (
    Offer,
    load_offer_file,
    load_offer_set,
    shipped_offer_sets,
)

if TYPE_CHECKING:
    from whichgpu.catalog.prices.selection import get_offers

__all__ = [
    "GPU", "PRECISIONS", "BillingRule", "Catalog", "Offer", "Resolution", "default_catalog",
    "get_gpu", "get_offers", "load_catalog", "load_offer_file", "load_offer_set",
    "resolve_gpu", "shipped_offer_sets",
]


def __getattr__(name: str) -> Any:
    """``get_offers`` on first use (PEP 562): it reads the price store, which a question that
    needs only GPU specs (``whichgpu memory``) never loads."""
    if name == "get_offers":
        from whichgpu.catalog.prices.selection import get_offers

        return get_offers
    raise AttributeError(f"module 'whichgpu.catalog' has no attribute {name!r}")
