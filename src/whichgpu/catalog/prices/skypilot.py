"""Offers from the SkyPilot catalog (``skypilot-org/skypilot-catalog``), one feed per cloud.

SkyPilot publishes its GPU offers as plain CSV files, ``catalogs/<version>/<cloud>/vms.csv``, with
the columns InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price,
SpotPrice, Region (and others whichgpu does not need). Prices are USD per hour for the whole
instance. The same reader serves two paths:

* the **shipped snapshot**: ``scripts/build_market_snapshot.py`` runs it on a recorded copy of
  those files and writes ``data/market/skypilot.csv`` (see :mod:`.market`);
* the **live source**: ``whichgpu prices refresh --source skypilot`` downloads the same files
  over HTTPS (the repository's raw file URLs), bounded in time and size, and stores each cloud
  as a feed (``skypilot/runpod`` ...) through the refresh guards.

Rows are aggregated to one offer per cloud, instance type and on-demand/spot, keeping the
cheapest region (the median over regions goes in the note). An AcceleratorName maps to a
catalog id only through :mod:`.names` (instance rules first); what does not map is reported
with its row count, never dropped silently or matched to the closest card.
"""

from __future__ import annotations

import csv
import io
import statistics
import urllib.error
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from whichgpu.catalog.gpus import Catalog, default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.names import SKYPILOT, NameMatch, map_gpu_name
from whichgpu.catalog.prices.providers import provider
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
from whichgpu.catalog.prices.validate import offer_problem
from whichgpu.errors import DataError, InputError
from whichgpu.units import Money

REPOSITORY = "skypilot-org/skypilot-catalog"
#: The catalog layout current SkyPilot releases read. The repository still holds older ``v7``
#: files, but they are no longer kept up to date: its AWS file prices p5.48xlarge at $98.32/h
#: and has no p6-b200, where ``v8`` has $55.04/h (AWS's June 2025 cut) and p6-b200/p6-b300.
CATALOG_VERSION = "v8"
RAW_BASE = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master"
BASE_ENV = "WHICHGPU_SKYPILOT_CATALOG_URL"
#: The clouds whose ``vms.csv`` the live source fetches (the v8 folders with GPU offers).
#: Azure has no v8 folder in the copy of the repository we could read, so it is not fetched.
CLOUDS = ("aws", "gcp", "lambda", "runpod", "vast", "nebius", "cudo", "hyperbolic",
          "primeintellect", "shadeform", "seeweb", "mithril", "verda", "hyperstack",
          "jarvislabs", "lium", "spheron", "yotta", "daytona", "oci")
#: Clouds whose catalog prices a GPU apart from the VM it is attached to (a row with an
#: AcceleratorName but no InstanceType is the GPU's price alone, not an offer).
GPU_PRICED_APART = frozenset({"gcp"})
NEEDED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
NO_SPOT = 99999999.0  # primeintellect's "no spot price" marker
#: A feed whose implausible rows outnumber this fraction of its priced rows is nonsense.
MAX_BAD_FRACTION = 0.5


@dataclass(frozen=True)
class VmRow:
    """One row of a ``vms.csv`` with a GPU."""

    instance: str
    accelerator: str
    count: int
    price: float | None
    spot: float | None
    region: str
    upstream: str | None = None  # primeintellect's UpstreamCloudId (the reseller's own name)


def _price(text: str | None) -> float | None:
    """A price cell: None when empty, zero, negative or the no-spot marker."""
    if text is None or not str(text).strip():
        return None
    value = float(text)  # ValueError: a malformed row
    return None if value <= 0 or value >= NO_SPOT else value


def read_vms_csv(text: str, *, path: object, cloud: str | None = None
                 ) -> tuple[list[VmRow], dict[str, int]]:
    """The GPU rows of one cloud's ``vms.csv`` and what was skipped (reason -> rows).

    A file without SkyPilot's columns is not a SkyPilot catalog and raises DataError naming
    what is missing. For a cloud that prices GPUs apart from their VM (GCP), a GPU row without
    an instance type is skipped: it is a part of a price, not an offer.
    """
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(path, f"not a SkyPilot vms.csv: missing column(s) {', '.join(missing)}")
    if not text.endswith("\n"):  # SkyPilot's files end with a newline; a cut file does not
        raise DataError(path, "the file ends in the middle of a row: truncated?")
    rows: list[VmRow] = []
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for row in reader:
        name = (row.get("AcceleratorName") or "").strip()
        try:
            count = float(row.get("AcceleratorCount") or 0)
        except ValueError:
            skip("malformed row")
            continue
        if not name or count <= 0:
            skip("no GPU")
            continue
        if cloud in GPU_PRICED_APART and not (row.get("InstanceType") or "").strip():
            skip("GPU priced apart from its VM (not an offer on its own)")
            continue
        if count != int(count):
            skip("fractional GPU")
            continue
        try:
            price, spot = _price(row.get("Price")), _price(row.get("SpotPrice"))
        except ValueError:
            skip("malformed row")
            continue
        if price is None and spot is None:
            skip("no price")
            continue
        rows.append(VmRow(str(row["InstanceType"]).strip(), name, int(count), price, spot,
                          (row.get("Region") or "").strip(),
                          (row.get("UpstreamCloudId") or "").strip() or None))
    return rows, skipped


def _money(x: float) -> str:
    return f"${x:,.4g}"


def feed_from_rows(rows: list[VmRow], *, cloud: str, observed_at: str, source: str,
                   fetched_at: datetime | None = None, version: str | None = None,
                   skipped: dict[str, int] | None = None, catalog: Catalog | None = None,
                   now: datetime | None = None) -> FeedResult:
    """One cloud's feed: an offer per instance type and on-demand/spot, the cheapest region."""
    catalog = catalog or default_catalog()
    now = now or utc_now()
    who = provider(cloud)
    rules_key = who.gpuhunt or cloud  # Lambda's instance rules are keyed 'lambdalabs'
    result = FeedResult(feed=f"skypilot/{cloud}", source="skypilot", kind="skypilot",
                        fetched_at=fetched_at or utc_now(), version=version,
                        skipped=dict(skipped or {}))
    groups: dict[tuple[str, str, int, str | None], list[VmRow]] = {}
    for r in rows:
        groups.setdefault((r.instance, r.accelerator, r.count, r.upstream), []).append(r)
    unmapped: list[Unmapped] = []
    offers: list[Offer] = []
    priced = bad = 0
    for (instance, name, count, upstream), group in sorted(groups.items()):
        where = f"{instance} ({upstream})" if upstream else instance
        m: NameMatch = map_gpu_name(name, provider=rules_key, instance=where, via=SKYPILOT,
                                    catalog=catalog)
        if m.gpu is None:
            unmapped.append(Unmapped(cloud, name, m.how, instance, None, m.candidates,
                                     rows=len(group)))
            continue
        for spot in (False, True):
            points = sorted(((r.spot if spot else r.price), r.region) for r in group
                            if (r.spot if spot else r.price) is not None)
            if not points:
                continue
            if spot:
                cheapest_od = min((r.price for r in group if r.price is not None), default=None)
                if cheapest_od is not None and points[0][0] >= cheapest_od:
                    result.skip("spot price not below on-demand (kept on-demand only)",
                                len(points))
                    continue
            price, region = points[0]
            median = statistics.median(p for p, _ in points)
            regions = len({reg for _, reg in points})
            note = (f"{instance}; cheapest of {regions} region(s)"
                    + (f", median {_money(median)}/h" if regions > 1 else "")
                    + f"; {who.billing_text()}"
                    + ("; spot: can be interrupted" if spot else ""))
            offer = Offer(provider=who.name, gpu=m.gpu, gpu_count=count,
                          price_per_hour=Money(price, "USD"), billing=who.billing, spot=spot,
                          region=region or None, instance_type=instance,
                          observed_at=observed_at, source=source, offer_set=result.feed,
                          note=note)
            priced += 1
            problem = offer_problem(offer, now=now)
            if problem:
                bad += 1
                result.skip(f"implausible {problem[0]}: {problem[1]}", len(points))
                continue
            offers.append(offer)
    if priced and bad > MAX_BAD_FRACTION * priced:
        result.error = (f"{bad} of {priced} offers have implausible values "
                        f"({next(iter(k for k in result.skipped if k.startswith('implausible')))}"
                        "); the file is not used")
        return result
    result.offers = offers
    result.unmapped = merge_unmapped(unmapped)
    return result


# ------------------------------------------------------------------------ the live source

def base_url() -> str:
    import os

    return (os.environ.get(BASE_ENV) or RAW_BASE).rstrip("/")


def file_url(cloud: str, base: str | None = None) -> str:
    return f"{base or base_url()}/catalogs/{CATALOG_VERSION}/{cloud}/vms.csv"


def _loopback(url: str) -> bool:
    return urllib.parse.urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")


class SkyPilotSource(PriceSource):
    """The SkyPilot catalog's ``vms.csv`` files, downloaded over HTTPS, one feed per cloud."""

    kind = "skypilot"
    network = True

    def __init__(self, clouds: list[str] | None = None, *, base: str | None = None,
                 timeout_s: float | None = None, max_bytes: int | None = None) -> None:
        from whichgpu.catalog.prices import url as url_mod

        self.name = "skypilot"
        unknown = [c for c in clouds or () if c not in CLOUDS]
        if unknown:
            raise InputError(f"unknown SkyPilot cloud {unknown[0]!r}; the catalog has "
                             f"{', '.join(CLOUDS)}")
        self.clouds = list(clouds or CLOUDS)
        self.base = base
        self.timeout_s = timeout_s if timeout_s is not None else url_mod.TIMEOUT_S
        self.max_bytes = max_bytes if max_bytes is not None else url_mod.MAX_BYTES

    def describe(self) -> str:
        return (f"the SkyPilot catalog ({REPOSITORY}, {CATALOG_VERSION}) over https: "
                f"{', '.join(self.clouds)} (USD)")

    def available(self) -> str | None:
        from whichgpu.catalog.prices.sources import OFFLINE_ENV, offline

        return f"the network is off ({OFFLINE_ENV} is set)" if offline() else None

    def fetch(self, progress: Progress | None = None) -> Iterator[FeedResult]:
        from whichgpu.catalog.prices.url import download

        check_online("the SkyPilot catalog price source")
        base = (self.base or base_url()).rstrip("/")
        for i, cloud in enumerate(self.clouds):
            if progress:
                progress(cloud, i, len(self.clouds))
            url = file_url(cloud, base)
            feed = f"skypilot/{cloud}"
            fetched_at = utc_now()
            try:
                body = download(url, allow_http=_loopback(url), timeout_s=self.timeout_s,
                                max_bytes=self.max_bytes, accept="text/csv")
                text = body.decode("utf-8")
                rows, skipped = read_vms_csv(text, path=url, cloud=cloud)
            except urllib.error.HTTPError as exc:
                yield self._failed(feed, f"{url}: HTTP {exc.code} {exc.reason}")
                continue
            except UnicodeDecodeError:
                yield self._failed(feed, f"{url}: the file is not UTF-8 text")
                continue
            except DataError as exc:
                yield self._failed(feed, str(exc))
                continue
            except (OSError, ValueError) as exc:
                yield self._failed(feed, f"{url}: {getattr(exc, 'reason', None) or exc}")
                continue
            if not rows:
                result = FeedResult(feed=feed, source=self.name, kind=self.kind,
                                    fetched_at=fetched_at, skipped=skipped)
            else:
                result = feed_from_rows(rows, cloud=cloud, observed_at=iso(fetched_at),
                                        source=f"{url} (fetched {iso(fetched_at)})",
                                        fetched_at=fetched_at, skipped=skipped)
            import hashlib

            result.digest = hashlib.sha256(body).hexdigest()
            yield result
        if progress:
            progress("done", len(self.clouds), len(self.clouds))

    def _failed(self, feed: str, message: str) -> FeedResult:
        return FeedResult(feed=feed, source=self.name, kind=self.kind, error=message)
