"""``whichgpu prices api``: the per-token API prices (cost/api_prices.py) that ``--vs-api``
compares with, where they come from and how old they are; with ``refresh``, fetched first
into the price store from genai-prices' data file (cost/api_prices_refresh.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whichgpu.answers.requests import PricesApi
from whichgpu.cost.api_prices import ApiPrice, PriceTable


@dataclass(frozen=True)
class ApiPricesAnswer:
    """The table in use (the store's snapshot, else the shipped one), its rows for the model
    asked, and the refresh's outcome when one ran."""

    request: PricesApi
    table: PriceTable
    rows: tuple[ApiPrice, ...]
    refreshed: Any = None  # cost/api_prices_refresh.ApiRefresh
    history: tuple[Any, ...] = ()  # the store's latest API snapshots (ok and failed)

    @property
    def notes(self) -> tuple[str, ...]:
        r = self.refreshed
        if r is None or r.ok:
            return ()
        return (f"refresh failed, the stored prices are kept: {r.snapshot.message}",)

    def to_json(self) -> dict[str, Any]:
        return {"prices_from": self.table.to_json(),
                "refresh": self.refreshed.to_json() if self.refreshed is not None else None,
                "snapshots": [s.to_json() for s in self.history],
                "prices": [p.to_json() for p in self.rows]}


def prices_api(q: PricesApi) -> ApiPricesAnswer:
    """The API prices in use (after a refresh when asked)."""
    from whichgpu.catalog.prices.api_store import ApiPriceStore
    from whichgpu.catalog.prices.store import PriceStore
    from whichgpu.cost.api_prices import for_model, table

    st = PriceStore(Path(q.store) if q.store else None)
    done = None
    if q.refresh:
        from whichgpu.cost.api_prices_refresh import refresh

        done = refresh(st, q.source)
    elif q.source is not None:
        from whichgpu.errors import InputError
        from whichgpu.messages import Field, msg

        raise InputError(msg("api_prices.source_needs_refresh", "{source} is read by "
                             "{refresh}", source=Field("source"), refresh=Field("refresh")))
    tab = table(store=st)
    rows = tuple(for_model(tab.rows, {q.model.strip().lower()})) if q.model else tab.rows
    return ApiPricesAnswer(q, tab, rows, done, tuple(ApiPriceStore(st).snapshots(10)))
