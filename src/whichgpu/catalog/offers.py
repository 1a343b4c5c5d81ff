"""Rental offers as data: who rents which GPU, how many, at what price, billed how.

Shipped offer sets live in ``data/offers/<name>.csv``; users can pass their own CSV or JSON
file in the same schema (documented in docs/prices.md):

    provider, gpu, gpu_count, price_per_hour, currency, billing_increment_s,
    billing_minimum_s, spot, region, observed_at, source, note

``price_per_hour`` is for the whole offer (all its GPUs), as providers bill it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from datetime import date, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.gpus import Catalog, default_catalog, resolve_gpu
from whichgpu.errors import DataError, InputError, NotFoundError
from whichgpu.messages import Message, msg
from whichgpu.units import Money, check_currency
from whichgpu.user_files import read_text

OFFER_FIELDS = ("provider", "gpu", "gpu_count", "price_per_hour", "currency",
                "billing_increment_s", "billing_minimum_s", "spot", "region", "observed_at",
                "source", "note")
_REQUIRED = ("provider", "gpu", "price_per_hour", "currency")


class Offer(BaseModel):
    """One rental offer: a provider's price for ``gpu_count`` GPUs of one catalog variant."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use (gpus._Frozen)

    provider: str
    gpu: str  # catalog id
    gpu_count: int = Field(default=1, ge=1)
    price_per_hour: Money  # for the whole offer
    billing: BillingRule = BillingRule()
    spot: bool = False
    region: str | None = None
    instance_type: str | None = None  # the provider's instance / machine type, where it has one
    observed_at: str | None = None  # ISO date or datetime
    source: str | None = None  # URL or article id
    offer_set: str | None = None
    note: str | None = None

    @property
    def price_per_gpu_hour(self) -> Money:
        return self.price_per_hour / self.gpu_count

    @property
    def billing_stated(self) -> bool:
        """False when the provider's table row says its billing rule is not stated anywhere we
        could read (the rule is then an assumption, and every answer says so)."""
        # lazily: catalog.prices, which a memory answer never loads (test_cli_start_imports)
        from whichgpu.catalog.prices.providers import stated_by_name

        return stated_by_name(self.provider) is not False

    def billing_text(self) -> Message:
        """'per second', or 'per second (assumed: Nebius does not state its billing rule)'."""
        rule = self.billing.describe()
        if self.billing_stated:
            return rule
        return msg("billing.assumed", "{rule} (assumed: {provider} does not state its billing "
                   "rule)", rule=rule, provider=self.provider)

    def observed_date(self) -> date | None:
        if not self.observed_at:
            return None
        try:
            return datetime.fromisoformat(self.observed_at.replace("Z", "+00:00")).date()
        except ValueError:
            return None

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider, "gpu": self.gpu, "gpu_count": self.gpu_count,
            "price_per_hour": self.price_per_hour.to_json(),
            "price_per_gpu_hour": self.price_per_gpu_hour.to_json(),
            "billing": {"increment_s": self.billing.increment_s,
                        "minimum_s": self.billing.minimum_s,
                        "description": self.billing_text(), "stated": self.billing_stated},
            "spot": self.spot, "region": self.region, "instance_type": self.instance_type,
            "observed_at": self.observed_at,
            "source": self.source, "offer_set": self.offer_set, "note": self.note,
        }


# ------------------------------------------------------------------------ parsing

def _text(value: object) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text or None


def _bool(text: str, path: Path | str, row: int, field: str) -> bool:
    t = str(text).strip().lower()
    if t in ("", "0", "false", "no", "on-demand", "ondemand"):
        return False
    if t in ("1", "true", "yes", "spot"):
        return True
    raise DataError(path, f"{text!r} is not true/false", row=row, field=field)


def _float(text: Any, path: Path | str, row: int, field: str, *, default: float | None = None,
           positive: bool = False) -> float:
    if text is None or str(text).strip() == "":
        if default is None:
            raise DataError(path, "is required", row=row, field=field)
        return default
    try:
        value = float(str(text).strip())
    except ValueError:
        raise DataError(path, f"{text!r} is not a number", row=row, field=field) from None
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise DataError(path, f"{text!r} must be a {'positive' if positive else 'non-negative'} "
                        "number", row=row, field=field)
    return value


#: ``resolver(gpu_text, provider) -> catalog id``; raises InputError saying why not.
GpuResolver = Callable[[str, str], str]


def offer_from_row(row: dict[str, Any], *, path: Path | str, index: int,
                   offer_set: str | None, catalog: Catalog, strict_gpu: bool = True,
                   gpu_resolver: GpuResolver | None = None) -> Offer:
    """One offer from a CSV/JSON row; errors name the file, the row and the field."""
    for name in _REQUIRED:
        if row.get(name) is None or str(row.get(name)).strip() == "":
            raise DataError(path, "is required", row=index, field=name)
    try:
        if gpu_resolver is not None:
            gpu = gpu_resolver(str(row["gpu"]), str(row["provider"]))
        else:
            gpu = resolve_gpu(str(row["gpu"]), catalog, strict=strict_gpu).gpu.id
    except InputError as exc:
        raise DataError(path, str(exc), row=index, field="gpu") from None
    try:
        currency = check_currency(str(row["currency"]))
    except InputError as exc:
        raise DataError(path, str(exc), row=index, field="currency") from None
    count = _float(row.get("gpu_count"), path, index, "gpu_count", default=1, positive=True)
    if count != int(count):
        raise DataError(path, f"{count} is not a whole number of GPUs", row=index,
                        field="gpu_count")
    price = _float(row["price_per_hour"], path, index, "price_per_hour", positive=True)
    spot = row.get("spot", False)
    spot = spot if isinstance(spot, bool) else _bool(spot or "", path, index, "spot")
    return Offer(
        provider=str(row["provider"]).strip(),
        gpu=gpu,
        gpu_count=int(count),
        price_per_hour=Money(price, currency),
        billing=BillingRule(
            increment_s=_float(row.get("billing_increment_s"), path, index,
                               "billing_increment_s", default=1, positive=True),
            minimum_s=_float(row.get("billing_minimum_s"), path, index, "billing_minimum_s",
                             default=0)),
        spot=spot,
        region=(str(row.get("region")).strip() or None) if row.get("region") else None,
        instance_type=_text(row.get("instance_type") or row.get("instance")),
        observed_at=str(row["observed_at"]).strip() if row.get("observed_at") else None,
        source=str(row["source"]).strip() if row.get("source") else None,
        offer_set=offer_set,
        note=str(row["note"]).strip() if row.get("note") else None,
    )


def read_offer_rows(text: str, *, path: Path | str, fmt: str
                    ) -> tuple[list[tuple[int, Any]], dict[str, Any]]:
    """The rows of a CSV or JSON offer file, numbered as a person counts them, and the JSON
    file's top-level fields (``{"observed_at": ..., "offers": [...]}``); checks the columns."""
    meta: dict[str, Any] = {}
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(path, f"not valid JSON: {exc.msg} (line {exc.lineno})") from exc
        rows = data.get("offers") if isinstance(data, dict) else data
        if isinstance(data, dict):
            meta = {k: v for k, v in data.items() if k != "offers"}
        if not isinstance(rows, list):
            raise DataError(path, "expected a list of offers or {\"offers\": [...]}")
        first_row = 1
    else:
        reader = csv.DictReader(io.StringIO(text))
        missing = [f for f in _REQUIRED if f not in (reader.fieldnames or [])]
        if missing:
            raise DataError(path, f"missing column(s) {', '.join(missing)}; expected "
                            f"{', '.join(OFFER_FIELDS)}")
        rows = list(reader)
        first_row = 2  # row 1 is the header
    numbered = list(enumerate(rows, start=first_row))
    for i, row in numbered:
        if not isinstance(row, dict):
            raise DataError(path, "each offer must be an object", row=i)
    return numbered, meta


def parse_offers(text: str, *, path: Path, fmt: str, offer_set: str | None = None,
                 catalog: Catalog | None = None, strict_gpu: bool = True,
                 gpu_resolver: GpuResolver | None = None) -> list[Offer]:
    """Offers from CSV or JSON text (a list of objects, or ``{"offers": [...]}``)."""
    catalog = catalog or default_catalog()
    rows, _meta = read_offer_rows(text, path=path, fmt=fmt)
    offers = [offer_from_row(row, path=path, index=i, offer_set=offer_set, catalog=catalog,
                             strict_gpu=strict_gpu, gpu_resolver=gpu_resolver)
              for i, row in rows]
    if not offers:
        raise DataError(path, "contains no offers")
    return offers


def load_offer_file(path: str | Path, catalog: Catalog | None = None) -> list[Offer]:
    """Offers from a user's CSV or JSON file."""
    path = Path(path)
    try:
        text = read_text(path)  # a regular file only: never a FIFO or /dev/zero
    except OSError as exc:
        raise DataError(path, f"cannot read the file ({exc.strerror})") from exc
    fmt = "json" if path.suffix.lower() == ".json" else "csv"
    return parse_offers(text, path=path, fmt=fmt, offer_set=path.stem, catalog=catalog)


# ------------------------------------------------------------------------ shipped sets

def shipped_offer_sets() -> list[str]:
    """Names of the offer sets shipped with the package."""
    folder = resources.files("whichgpu.catalog").joinpath("data/offers")
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".csv"))


@cache
def load_offer_set(name: str) -> tuple[Offer, ...]:
    """A shipped offer set by name ('article-000', 'vramfarm-2026-11')."""
    if name not in shipped_offer_sets():
        raise NotFoundError("offer set", name, shipped_offer_sets())
    res = resources.files("whichgpu.catalog").joinpath(f"data/offers/{name}.csv")
    text = res.read_text("utf-8")
    return tuple(parse_offers(text, path=Path(f"whichgpu/catalog/data/offers/{name}.csv"),
                              fmt="csv", offer_set=name))

