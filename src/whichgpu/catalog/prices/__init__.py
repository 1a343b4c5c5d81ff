"""Live prices: price sources, a local SQLite price store with history, and the offers the
rest of whichgpu prices jobs with (:func:`current_offers`). See docs/prices.md."""

from whichgpu.catalog.prices.selection import (
    DEFAULT_MAX_AGE_DAYS,
    FeedInfo,
    OfferSelection,
    current_offers,
    default_max_age_days,
    format_age,
    get_offers,
)
from whichgpu.catalog.prices.store import PriceStore, default_store_path

__all__ = [
    "DEFAULT_MAX_AGE_DAYS", "FeedInfo", "OfferSelection", "PriceStore", "current_offers",
    "default_max_age_days", "default_store_path", "format_age", "get_offers",
]
