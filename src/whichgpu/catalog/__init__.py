"""GPU specs (every value sourced), rental offers and where prices come from."""

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
    BillingRule,
    Offer,
    get_offers,
    load_offer_file,
    load_offer_set,
    shipped_offer_sets,
)

__all__ = [
    "GPU", "PRECISIONS", "BillingRule", "Catalog", "Offer", "Resolution", "default_catalog",
    "get_gpu", "get_offers", "load_catalog", "load_offer_file", "load_offer_set",
    "resolve_gpu", "shipped_offer_sets",
]
