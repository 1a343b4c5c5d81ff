"""Per-token API prices of open-weight models: a dated, sourced table (data/api_prices.csv),
or a feed file in the same format (CSV with that header, or JSON: a list of such rows), each
row checked for plausibility before it is used.

Feed format (one row per provider and model; prices per million tokens)::

    provider,model,provider_model,input_per_mtok,cached_input_per_mtok,output_per_mtok,
    currency,date,url,source

``model`` is whichgpu's preset id (``llama-3.3-70b``); a blank cached price means the provider
lists no prompt-cache discount.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from whichgpu.errors import InputError
from whichgpu.messages import msg

#: Above this many USD per million tokens a price is a typo or a unit slip (per 1K read as
#: per 1M): the dearest open-weight row shipped is $8 (DeepSeek-R1-0528 output on Fireworks).
MAX_USD_PER_MTOK = 200.0
COLUMNS = ("provider", "model", "provider_model", "input_per_mtok", "cached_input_per_mtok",
           "output_per_mtok", "currency", "date", "url", "source")
MAX_ROWS = 10_000


@dataclass(frozen=True)
class ApiPrice:
    """One provider's price for one model, per million tokens."""

    provider: str
    model: str
    provider_model: str
    input_per_mtok: float
    cached_input_per_mtok: float | None
    output_per_mtok: float
    currency: str
    date: str
    url: str
    source: str

    @property
    def cached_or_input(self) -> float:
        return self.input_per_mtok if self.cached_input_per_mtok is None else \
            self.cached_input_per_mtok

    def per_request(self, prompt: float, cached: float, output: float) -> float:
        """What one request costs, in ``currency``."""
        return (prompt * self.input_per_mtok + cached * self.cached_or_input
                + output * self.output_per_mtok) / 1e6

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model,
                "provider_model": self.provider_model,
                "input_per_mtok": self.input_per_mtok,
                "cached_input_per_mtok": self.cached_input_per_mtok,
                "output_per_mtok": self.output_per_mtok, "currency": self.currency,
                "date": self.date, "url": self.url, "source": self.source}


def _price(raw: Any, what: str, where: str, *, blank_ok: bool = False) -> float | None:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if blank_ok:
            return None
        raise InputError(msg("api_prices.missing", "{where}: no {what}", where=where,
                             what=what))
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise InputError(msg("api_prices.unreadable", "{where}: {what} {v!r} is not a number",
                             where=where, what=what, v=str(raw))) from None
    if not math.isfinite(value) or value <= 0 or value > MAX_USD_PER_MTOK:
        raise InputError(msg("api_prices.implausible", "{where}: {what} {v:g} per million "
                             "tokens is not plausible (more than 0, at most {cap:g})",
                             where=where, what=what, v=value, cap=MAX_USD_PER_MTOK))
    return value


def check_row(row: dict[str, Any], where: str, today: dt.date | None = None) -> ApiPrice:
    """One feed row as an :class:`ApiPrice`, or a one-line reason it is refused."""
    from whichgpu.cost.currency import known_currency

    missing = [c for c in ("provider", "model", "date", "url", "currency")
               if not str(row.get(c) or "").strip()]
    if missing:
        raise InputError(msg("api_prices.columns", "{where}: missing {cols}", where=where,
                             cols=", ".join(missing)))
    inp = _price(row.get("input_per_mtok"), "input price", where)
    out = _price(row.get("output_per_mtok"), "output price", where)
    cached = _price(row.get("cached_input_per_mtok"), "cached input price", where,
                    blank_ok=True)
    assert inp is not None and out is not None
    if cached is not None and cached > inp:
        raise InputError(msg("api_prices.cached", "{where}: cached input {c:g} costs more "
                             "than input {i:g}", where=where, c=cached, i=inp))
    date = str(row["date"]).strip()
    try:
        day = dt.date.fromisoformat(date if len(date) == 10 else f"{date[:7]}-01"
                                    if len(date) == 7 else f"{date[:4]}-01-01")
    except ValueError:
        raise InputError(msg("api_prices.date", "{where}: date {d!r} is not YYYY, YYYY-MM or "
                             "YYYY-MM-DD", where=where, d=date)) from None
    if day > (today or dt.date.today()):
        raise InputError(msg("api_prices.future", "{where}: date {d} is in the future",
                             where=where, d=date))
    url = str(row["url"]).strip()
    if not url.startswith(("https://", "http://")):
        raise InputError(msg("api_prices.url", "{where}: url {u!r} is not a web address",
                             where=where, u=url))
    return ApiPrice(str(row["provider"]).strip(), str(row["model"]).strip().lower(),
                    str(row.get("provider_model") or "").strip(), inp, cached, out,
                    known_currency(str(row["currency"]).strip().upper()), date, url,
                    str(row.get("source") or "").strip())


def read_feed(text: str, name: str) -> tuple[ApiPrice, ...]:
    """Rows of a feed (CSV with the header of :data:`COLUMNS`, or a JSON list of objects)."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise InputError(msg("api_prices.json", "{name}: not JSON ({why})", name=name,
                                 why=str(exc))) from None
        if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
            raise InputError(msg("api_prices.json_rows", "{name}: a JSON feed is a list of "
                                 "objects", name=name))
        rows = raw
    else:
        lines = [line for line in text.splitlines() if line and not line.startswith("#")]
        reader = csv.DictReader(io.StringIO("\n".join(lines)))
        absent = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if absent:
            raise InputError(msg("api_prices.header", "{name}: the header lacks {cols}",
                                 name=name, cols=", ".join(absent)))
        rows = list(reader)
    if not rows:
        raise InputError(msg("api_prices.empty", "{name}: no prices", name=name))
    if len(rows) > MAX_ROWS:
        raise InputError(msg("api_prices.too_many", "{name}: more than {n:,} rows", name=name,
                             n=MAX_ROWS))
    return tuple(check_row(r, f"{name} row {i}") for i, r in enumerate(rows, 1))


@cache
def shipped() -> tuple[ApiPrice, ...]:
    """The table shipped with whichgpu (data/api_prices.csv)."""
    text = resources.files("whichgpu.cost").joinpath("data/api_prices.csv").read_text("utf-8")
    return read_feed(text, "api_prices.csv")


def load(path: str | None = None) -> tuple[ApiPrice, ...]:
    """The shipped table, or a feed file (CSV or JSON) checked row by row."""
    if path is None:
        return shipped()
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(msg("api_prices.read", "cannot read {path}: {why}", path=str(path),
                             why=getattr(exc, "strerror", None) or str(exc))) from None
    return read_feed(text, p.name)


@dataclass(frozen=True)
class PriceTable:
    """The per-token prices an answer uses, and where and when they come from."""

    rows: tuple[ApiPrice, ...]
    origin: str  # shipped | store | file
    source: str  # the table's file, the store snapshot's upstream, or the feed file's name
    fetched_at: str | None = None  # when the store's snapshot was fetched
    snapshot: int | None = None  # the store's snapshot id

    def to_json(self) -> dict[str, Any]:
        dates = sorted(p.date for p in self.rows)
        return {"origin": self.origin, "source": self.source, "fetched_at": self.fetched_at,
                "snapshot": self.snapshot, "rows": len(self.rows),
                "oldest_date": dates[0] if dates else None,
                "newest_date": dates[-1] if dates else None}


#: what the shipped table says of itself (data/api_prices.csv's header)
SHIPPED_SOURCE = ("whichgpu's table data/api_prices.csv: pydantic/genai-prices at commit "
                  "47df840a (2026-08-21), DeepInfra read on Lava's page (2026-12-06)")


def table(path: str | None = None, store: Any = None) -> PriceTable:
    """The prices to use: a feed file when given; else the price store's current snapshot
    (``whichgpu prices api --refresh`` stored it); else the shipped table. A store that
    cannot be read falls back to the shipped table."""
    if path is not None:
        return PriceTable(load(path), "file", Path(path).name)
    stored = _stored(store)
    if stored is not None:
        return stored
    return PriceTable(shipped(), "shipped", SHIPPED_SOURCE)


def _stored(store: Any = None) -> PriceTable | None:
    from whichgpu.catalog.prices.api_store import ApiPriceStore
    from whichgpu.catalog.prices.sources import iso
    from whichgpu.catalog.prices.store import PriceStore, StoreError
    from whichgpu.errors import DataError

    try:
        got = ApiPriceStore(store if isinstance(store, PriceStore)
                            else PriceStore(store)).current()
    except (StoreError, DataError, OSError):
        return None
    if got is None:
        return None
    snap, raw = got
    try:
        rows = tuple(check_row(r, f"stored API prices row {i}")
                     for i, r in enumerate(raw, 1))
    except InputError:  # a row damaged in the store: the shipped table instead
        return None
    return PriceTable(rows, "store", snap.source, iso(snap.fetched_at), snap.id)


def model_keys(model: Any, asked: str | None) -> set[str]:
    """The names a model's API rows may be filed under: the preset id asked for and the
    model's display name as an id ('Llama 3.3 70B' -> 'llama-3.3-70b')."""
    keys = {str(getattr(model, "name", "")).lower().replace(" ", "-")}
    if asked:
        keys.add(asked.strip().lower())
    return {k for k in keys if k}


def preset_of(model: Any) -> str | None:
    """The shipped preset a model is answered with (``preset:deepseek-v3`` for DeepSeek-R1
    or a Hub id such as deepseek-ai/DeepSeek-V3-0324), if it came from one."""
    source = str(getattr(model, "source", "") or "")
    return source.removeprefix("preset:").lower() if source.startswith("preset:") else None


@dataclass(frozen=True)
class ModelPrices:
    """A model's API rows; ``stand_in`` names the preset whose rows are used instead when no
    provider lists the model itself (another model on the same architecture: the answer
    says so rather than pricing one model with another's rows silently)."""

    rows: list[ApiPrice]
    stand_in: str | None = None


def for_model_or_preset(prices: tuple[ApiPrice, ...], model: Any,
                        asked: str | None) -> ModelPrices:
    """The rows of the model asked for; else, said as such, those of the preset it is
    answered with (a Hub id or alias of another model on that preset's architecture)."""
    keys = model_keys(model, asked)
    own = for_model(prices, keys)
    preset = preset_of(model)
    if own or preset is None or preset in keys:
        return ModelPrices(own)
    rows = for_model(prices, {preset})
    return ModelPrices(rows, preset if rows else None)


def for_model(prices: tuple[ApiPrice, ...], keys: set[str]) -> list[ApiPrice]:
    """The rows of a model, cheapest output first."""
    return sorted((p for p in prices if p.model in keys),
                  key=lambda p: (p.output_per_mtok, p.input_per_mtok, p.provider))
