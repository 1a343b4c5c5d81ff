"""Offers from gpuhunt's published catalogs, one feed per provider (``gpuhunt/aws`` ...).

Two ways in:

* live: the ``gpuhunt`` package (``pip install 'whichgpu[prices]'``) downloads each
  provider's latest catalog; a provider that fails keeps its previous snapshot;
* a folder of gpuhunt catalog files (``{provider}.csv``, gpuhunt's own v2 format, the
  layout of ``GPUHUNT_CATALOG_DIR``): offline, air-gapped, and how the tests run. This reader
  needs no gpuhunt install.

gpuhunt prices are USD per hour for the whole instance, with no billing rule; its
``gpu_name`` collapses H100 SXM and PCIe into "H100", so names are mapped with the instance
type, the provider and the memory (:mod:`whichgpu.catalog.prices.names`), and what cannot be
told apart is reported.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import logging
import os
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from whichgpu.catalog.gpus import default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.names import NameMatch, map_gpu_name
from whichgpu.catalog.prices.sources import (
    FeedResult,
    PriceSource,
    Progress,
    Unmapped,
    check_online,
    iso,
    merge_unmapped,
    utc_now,
)
from whichgpu.errors import DataError, InputError
from whichgpu.units import Money

#: gpuhunt's providers published as catalog files (gpuhunt ``OFFLINE_PROVIDERS``). The
#: "online" ones (vastai, ...) need the user's credentials and are not collected here.
PROVIDERS = ("aws", "azure", "verda", "gcp", "lambdalabs", "nebius", "oci", "runpod",
             "cloudrift")
#: The columns of a gpuhunt v2 catalog file (gpuhunt ``storage.CATALOG_V2_FIELDS``).
CATALOG_FIELDS = ("instance_name", "location", "price", "cpu", "memory", "gpu_count",
                  "gpu_name", "gpu_memory", "spot", "disk_size", "gpu_vendor", "flags",
                  "cpu_arch", "provider_data")
_NEEDED = ("instance_name", "location", "price", "gpu_count", "gpu_name", "gpu_memory", "spot")
_GPU_VENDORS = ("nvidia", "amd")
CATALOG_DIR_ENV = "GPUHUNT_CATALOG_DIR"
INSTALL_HINT = "pip install 'whichgpu[prices]'"


@dataclass(frozen=True)
class GpuhuntItem:
    """The fields of gpuhunt's ``CatalogItem`` that pricing uses (same names and meaning)."""

    provider: str
    instance_name: str
    location: str
    price: float  # USD per hour, whole instance
    gpu_count: int
    gpu_name: str | None
    gpu_memory: float | None  # per GPU, GiB as gpuhunt rounds it
    spot: bool
    cpu: int | None = None
    memory: float | None = None
    gpu_vendor: str | None = None
    flags: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_catalog_item(cls, item: Any) -> GpuhuntItem:
        """From a ``gpuhunt.CatalogItem`` (duck-typed, so gpuhunt need not be imported)."""
        vendor = getattr(item, "gpu_vendor", None)
        return cls(item.provider, item.instance_name, item.location, float(item.price),
                   int(item.gpu_count), item.gpu_name, item.gpu_memory, bool(item.spot),
                   item.cpu, item.memory, getattr(vendor, "value", vendor),
                   tuple(getattr(item, "flags", ()) or ()))


# ------------------------------------------------------------------------ reading catalog files

def read_catalog_csv(text: str, *, provider: str, path: object) -> tuple[list[GpuhuntItem], int]:
    """Items of one provider's gpuhunt catalog file, and how many rows were malformed.

    A file without gpuhunt's columns is nonsense and raises DataError naming what is missing.
    """
    reader = csv.DictReader(io.StringIO(text))
    missing = [f for f in _NEEDED if f not in (reader.fieldnames or [])]
    if missing:
        raise DataError(path, f"not a gpuhunt catalog: missing column(s) {', '.join(missing)}")
    items, bad = [], 0
    for row in reader:
        try:
            items.append(_item_from_row(row, provider))
        except (ValueError, TypeError, KeyError):
            bad += 1
    return items, bad


def _item_from_row(row: dict[str, str], provider: str) -> GpuhuntItem:
    """One row, read as gpuhunt's ``storage.item_from_row`` reads it."""
    spot = row["spot"].strip().lower()
    if spot not in ("true", "false"):
        raise ValueError(f"spot {row['spot']!r}")
    gpu_name = row.get("gpu_name") or None
    vendor = row.get("gpu_vendor") or None
    if gpu_name and gpu_name.startswith("tpu-"):  # catalogs from before the gpu_vendor column
        gpu_name, vendor = gpu_name[4:], vendor or "google"
    count = int(row["gpu_count"])
    return GpuhuntItem(
        provider=provider, instance_name=row["instance_name"], location=row["location"],
        price=float(row["price"]), gpu_count=count, gpu_name=gpu_name,
        gpu_memory=float(row["gpu_memory"]) if row.get("gpu_memory") else None,
        spot=spot == "true", cpu=int(row["cpu"]) if row.get("cpu") else None,
        memory=float(row["memory"]) if row.get("memory") else None,
        gpu_vendor=vendor or ("nvidia" if count else None),
        flags=tuple((row.get("flags") or "").split()))


# ------------------------------------------------------------------------ items -> feed

def items_to_feed(items: Iterable[GpuhuntItem], *, provider: str, fetched_at: datetime,
                  observed_at: datetime | None = None, version: str | None = None,
                  origin: str = "gpuhunt") -> FeedResult:
    """Our offers from one provider's gpuhunt items; unmappable names are reported."""
    catalog = default_catalog()
    feed = f"gpuhunt/{provider}"
    result = FeedResult(feed=feed, source="gpuhunt", kind="gpuhunt", fetched_at=fetched_at,
                        version=version)
    observed = iso(observed_at or fetched_at)
    source = f"{origin} {provider} catalog" + (f" {version}" if version else "")
    cache: dict[tuple, NameMatch] = {}
    offers: list[Offer] = []
    unmapped: list[Unmapped] = []
    for it in items:
        if not it.gpu_count or not it.gpu_name:
            result.skip("no GPU")
            continue
        if (it.gpu_vendor or "nvidia") not in _GPU_VENDORS:
            result.skip(f"{it.gpu_vendor} accelerator (outside the catalog)")
            continue
        if not it.price or it.price <= 0:
            result.skip("no price")
            continue
        key = (it.gpu_name, it.instance_name, it.gpu_memory)
        if key not in cache:
            cache[key] = map_gpu_name(it.gpu_name, provider=provider, instance=it.instance_name,
                                      memory_gb=it.gpu_memory, gpuhunt=True, catalog=catalog)
        m = cache[key]
        if m.gpu is None:
            unmapped.append(Unmapped(provider, it.gpu_name, m.how, it.instance_name,
                                     it.gpu_memory, m.candidates))
            continue
        offers.append(Offer(
            provider=provider, gpu=m.gpu, gpu_count=it.gpu_count,
            price_per_hour=Money(it.price, "USD"), spot=it.spot, region=it.location or None,
            observed_at=observed, source=source, offer_set=feed, note=_note(it)))
    result.offers = offers
    result.unmapped = merge_unmapped(unmapped)
    return result


def _note(it: GpuhuntItem) -> str:
    parts = [it.instance_name, f"gpuhunt {it.gpu_name} {it.gpu_memory or 0:g} GB"]
    if it.cpu:
        parts.append(f"{it.cpu} vCPU")
    if it.memory:
        parts.append(f"{it.memory:g} GB RAM")
    if it.flags:
        parts.append("flags " + " ".join(it.flags))
    return "; ".join(parts) + "; billing rule not published (per second assumed)"


# ------------------------------------------------------------------------ the source

class _LogCapture(logging.Handler):
    """gpuhunt logs (and swallows) a provider that fails to load; keep the reason."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.failures: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if "Failed to load" in str(record.msg) and args:
            exc = record.exc_info[1] if record.exc_info else None
            self.failures[str(args[0])] = f"{type(exc).__name__}: {exc}" if exc else \
                record.getMessage()


class GpuhuntSource(PriceSource):
    """gpuhunt's catalogs, one feed per provider; live with the extra, or from a folder."""

    kind = "gpuhunt"
    network = True

    def __init__(self, providers: list[str] | None = None, *,
                 catalog_dir: str | Path | None = None, timeout_s: float = 60.0,
                 catalog_factory: Any = None) -> None:
        self.name = "gpuhunt"
        unknown = [p for p in providers or () if p not in PROVIDERS]
        if unknown:
            raise InputError(f"unknown gpuhunt provider {unknown[0]!r}; gpuhunt publishes "
                             f"catalogs for {', '.join(PROVIDERS)}")
        self.providers = list(providers or PROVIDERS)
        self.explicit = providers is not None
        self.catalog_dir = Path(catalog_dir) if catalog_dir else None
        self.timeout_s = timeout_s
        self.catalog_factory = catalog_factory

    def _dir(self) -> Path | None:
        if self.catalog_dir:
            return self.catalog_dir
        env = os.environ.get(CATALOG_DIR_ENV)
        return Path(env) if env else None

    def describe(self) -> str:
        where = self._dir()
        origin = f"gpuhunt catalog files in {where}" if where else "gpuhunt's published catalogs"
        return f"{origin}: {', '.join(self.providers)} (USD)"

    def available(self) -> str | None:
        if self._dir() or self.catalog_factory or importlib.util.find_spec("gpuhunt"):
            return None
        return f"gpuhunt is not installed ({INSTALL_HINT})"

    def fetch(self, progress: Progress | None = None) -> Iterator[FeedResult]:
        folder = self._dir()
        if folder is not None:
            yield from self._from_dir(folder, progress)
        else:
            yield from self._live(progress)

    def _from_dir(self, folder: Path, progress: Progress | None) -> Iterator[FeedResult]:
        wanted = self.providers if self.explicit else [
            p for p in PROVIDERS if (folder / f"{p}.csv").exists()]
        if not wanted:
            yield FeedResult(feed="gpuhunt", source=self.name, kind=self.kind,
                             error=f"no gpuhunt catalog files ({{provider}}.csv) in {folder}")
        for i, provider in enumerate(wanted):
            if progress:
                progress(provider, i, len(wanted))
            path = folder / f"{provider}.csv"
            fetched_at = utc_now()
            try:
                text = path.read_text("utf-8")
                observed = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
                items, bad = read_catalog_csv(text, provider=provider, path=path)
            except OSError as exc:
                yield FeedResult(feed=f"gpuhunt/{provider}", source=self.name, kind=self.kind,
                                 error=f"{path}: {exc.strerror or exc}")
                continue
            except DataError as exc:
                yield FeedResult(feed=f"gpuhunt/{provider}", source=self.name, kind=self.kind,
                                 error=str(exc))
                continue
            result = items_to_feed(items, provider=provider, fetched_at=fetched_at,
                                   observed_at=observed, origin=f"gpuhunt file {path.name}")
            if bad:
                result.skip("malformed row", bad)
            yield result
        if progress:
            progress("done", len(wanted), len(wanted))

    def _live(self, progress: Progress | None) -> Iterator[FeedResult]:
        check_online("the gpuhunt price source")
        factory = self.catalog_factory
        if factory is None:
            try:
                import gpuhunt
            except ImportError:
                raise InputError(f"gpuhunt is not installed ({INSTALL_HINT})") from None
            factory = lambda: gpuhunt.Catalog(balance_resources=False, auto_reload=False)  # noqa: E731
        if progress:
            progress("downloading catalogs", 0, None)
        catalog = factory()
        capture = _LogCapture()
        gpuhunt_log = logging.getLogger("gpuhunt")
        gpuhunt_log.addHandler(capture)
        old_timeout = socket.getdefaulttimeout()
        socket.setdefaulttimeout(self.timeout_s)  # gpuhunt's urlopen has no timeout of its own
        fetched_at = utc_now()
        whole_error = None
        try:
            catalog.load()
        except Exception as exc:  # GPUHuntError when every provider failed
            whole_error = f"{type(exc).__name__}: {exc}"
            if exc.__cause__:
                whole_error += f" ({exc.__cause__})"
        finally:
            socket.setdefaulttimeout(old_timeout)
            gpuhunt_log.removeHandler(capture)
        loaded = getattr(catalog, "catalog", {}) or {}
        for i, provider in enumerate(self.providers):
            if progress:
                progress(provider, i, len(self.providers))
            pc = loaded.get(provider)
            if pc is None:
                reason = capture.failures.get(provider) or whole_error or "not downloaded"
                yield FeedResult(feed=f"gpuhunt/{provider}", source=self.name, kind=self.kind,
                                 fetched_at=fetched_at, error=f"gpuhunt {provider}: {reason}")
                continue
            items = [GpuhuntItem.from_catalog_item(it) for it in pc.items]
            yield items_to_feed(items, provider=provider, fetched_at=fetched_at,
                                version=str(getattr(pc, "version", "") or "") or None)
        if progress:
            progress("done", len(self.providers), len(self.providers))

