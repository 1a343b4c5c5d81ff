"""Refreshing the per-token API prices from a maintained source: pydantic's genai-prices data
file (the JSON its own ``UpdatePrices`` fetches; ``DEFAULT_URL``), or a local copy of it.

Which upstream rows are which whichgpu model is the shipped table's mapping: each row of
``data/api_prices.csv`` whose source is genai-prices names its provider and the provider's
model id. A refresh reads the current price of every mapped row, keeps the shipped rows of
other sources (DeepInfra, read on Lava's page) as they are, checks each row
(``api_prices.check_row``) and stores the table as one dated snapshot. Anything wrong (no
network, not JSON, not genai-prices' layout, fewer than half of the mapped rows found, a row
that fails its check) records a failed snapshot and leaves the stored prices as they were.

Upstream prices carry no date of their own: a refreshed row is dated the day it was read
(the date it was seen current), and its source names the file and its sha256.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whichgpu.cost.api_prices import ApiPrice, check_row, shipped
from whichgpu.errors import InputError
from whichgpu.messages import msg

#: the file genai-prices' own updater fetches (genai_prices.update_prices.DEFAULT_UPDATE_URL)
DEFAULT_URL = ("https://raw.githubusercontent.com/pydantic/genai-prices/refs/heads/main/prices/"
               "new_data/v2/data.json")
UPSTREAM = "pydantic/genai-prices"
#: a refresh that finds fewer of the mapped rows than this share is refused (a cut or
#: reorganised file), never stored
MIN_FOUND_SHARE = 0.5


@dataclass(frozen=True)
class Converted:
    """The refreshed table, and what the mapping did not find upstream."""

    rows: tuple[ApiPrice, ...]
    found: int
    mapped: int
    missing: tuple[str, ...]  # "provider/provider_model" no longer listed


def _mapping() -> list[ApiPrice]:
    return [p for p in shipped() if p.source.startswith(UPSTREAM)]


def _matches(rule: Any, name: str) -> bool:
    """genai-prices' model ``match`` rule, for the exact ids the mapping names."""
    if not isinstance(rule, dict):
        return False
    if "equals" in rule:
        return str(rule["equals"]) == name
    if "or" in rule:
        return any(_matches(r, name) for r in rule["or"])
    return False


def _amount(value: Any) -> float | None:
    """A price: a number, or a tiered price's base (the price under the first tier)."""
    if isinstance(value, dict):
        value = value.get("base")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _current(prices: Any, day: dt.date) -> dict[str, Any] | None:
    """The prices in force on ``day``: a plain set, or among conditional sets the latest
    whose ``start_date`` has come (time-of-day windows, off-peak discounts, are left out)."""
    if isinstance(prices, dict):
        return prices
    if not isinstance(prices, list):
        return None
    best: tuple[str, dict[str, Any]] | None = None
    for entry in prices:
        if not isinstance(entry, dict) or not isinstance(entry.get("prices"), dict):
            continue
        rule = entry.get("constraint") or {}
        if set(rule) - {"start_date"}:
            continue
        start = str(rule.get("start_date") or "")
        if start and start > day.isoformat():
            continue
        if best is None or start >= best[0]:
            best = (start, entry["prices"])
    return best[1] if best else None


def convert(text: str, *, origin: str, day: dt.date) -> Converted:
    """The table from genai-prices' data file ``text`` read on ``day`` (``origin``: its URL or
    file name, said in each row's source). Raises InputError when the file is not one."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(msg("api_prices.refresh.json", "{origin}: not JSON ({why})",
                             origin=origin, why=str(exc))) from None
    if not isinstance(data, list) or not all(isinstance(p, dict) and "id" in p for p in data):
        raise InputError(msg("api_prices.refresh.layout", "{origin}: not genai-prices' data "
                             "file (a list of providers, each with an id and models)",
                             origin=origin))
    providers = {str(p["id"]): p for p in data}
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    source = f"{UPSTREAM} {origin} sha256:{digest[:12]}"
    mapping = _mapping()
    rows: list[ApiPrice] = []
    missing: list[str] = []
    for i, m in enumerate(mapping, 1):
        prov = providers.get(m.provider)
        model = next((x for x in (prov or {}).get("models") or []
                      if isinstance(x, dict) and (x.get("id") == m.provider_model
                                                  or _matches(x.get("match"),
                                                              m.provider_model))), None)
        prices = _current(model.get("prices"), day) if model else None
        inp = _amount((prices or {}).get("input_mtok"))
        out = _amount((prices or {}).get("output_mtok"))
        if prov is None or prices is None or inp is None or out is None:
            missing.append(f"{m.provider}/{m.provider_model}")
            continue
        urls = [u for u in prov.get("pricing_urls") or [] if isinstance(u, str)]
        rows.append(check_row({
            "provider": m.provider, "model": m.model, "provider_model": m.provider_model,
            "input_per_mtok": inp, "cached_input_per_mtok": _amount(prices.get(
                "cache_read_mtok")), "output_per_mtok": out, "currency": "USD",
            "date": day.isoformat(), "url": urls[0] if urls else m.url, "source": source},
            f"{origin} {m.provider}/{m.provider_model} (mapping row {i})", today=day))
    found = len(rows)
    if not mapping or found < MIN_FOUND_SHARE * len(mapping):
        raise InputError(msg("api_prices.refresh.too_few", "{origin}: only {found} of the "
                             "{mapped} mapped model prices found; the file is cut or laid out "
                             "differently, so nothing is stored", origin=origin, found=found,
                             mapped=len(mapping)))
    kept = [p for p in shipped() if not p.source.startswith(UPSTREAM)]
    return Converted(tuple(rows + kept), found, len(mapping), tuple(missing))


@dataclass(frozen=True)
class ApiRefresh:
    """What one refresh did: the snapshot stored (ok or failed) and what it found."""

    snapshot: Any  # catalog/prices/api_store.ApiSnapshot
    converted: Converted | None

    @property
    def ok(self) -> bool:
        return bool(self.snapshot.status == "ok")

    def to_json(self) -> dict[str, Any]:
        c = self.converted
        return {"ok": self.ok, "snapshot": self.snapshot.to_json(),
                "rows": len(c.rows) if c else 0, "found": c.found if c else 0,
                "mapped": c.mapped if c else len(_mapping()),
                "no_longer_listed": list(c.missing) if c else []}


def read_source(source: str | None, download: Callable[[str], bytes] | None = None
                ) -> tuple[str, str]:
    """(text, origin) of ``source``: an https URL (default: genai-prices' own), or a local
    copy of the file. ``download`` fetches a URL (tests replay a recorded response)."""
    src = source or DEFAULT_URL
    if src.startswith(("https://", "http://")):
        if download is None:
            from whichgpu.catalog.prices.sources import check_online
            from whichgpu.catalog.prices.url import download as fetch

            check_online("refreshing the API prices")

            def download(url: str) -> bytes:
                return fetch(url)

        body = download(src)
        try:
            return body.decode("utf-8"), src
        except UnicodeDecodeError:
            raise InputError(msg("api_prices.refresh.utf8", "{origin}: not UTF-8 text",
                                 origin=src)) from None
    path = Path(src)
    try:
        return path.read_text("utf-8"), path.name
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(msg("api_prices.read", "cannot read {path}: {why}", path=src,
                             why=getattr(exc, "strerror", None) or str(exc))) from None


def refresh(store: Any, source: str | None = None, *,
            download: Callable[[str], bytes] | None = None,
            today: dt.date | None = None) -> ApiRefresh:
    """Fetch, convert and store the API prices in ``store`` (a PriceStore); on any failure a
    failed snapshot is recorded and the current prices stay as they were."""
    from whichgpu.catalog.prices.api_store import ApiPriceStore

    api = ApiPriceStore(store)
    origin = source or DEFAULT_URL
    try:
        text, origin = read_source(source, download)
        day = today or dt.datetime.now(dt.UTC).date()
        converted = convert(text, origin=origin, day=day)
    except (InputError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        return ApiRefresh(api.record_failure(source=origin, message=str(reason)), None)
    note = (f"{len(converted.missing)} mapped row(s) no longer listed upstream: "
            + ", ".join(converted.missing)) if converted.missing else None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    snap = api.record([p.to_json() for p in converted.rows], source=origin, digest=digest,
                      message=note)
    return ApiRefresh(snap, converted)
