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
with its row count, never dropped silently or matched to the closest card. GCP's file prices
each GPU apart from its host VM: :mod:`.gcp_pairing` adds the two rows of one zone as SkyPilot
does before any of this.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import os
import re
import statistics
import urllib.error
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from whichgpu.catalog.gpus import Catalog, default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import url as url_mod
from whichgpu.catalog.prices.gcp_pairing import GpuRow, HostRow, Paired, pair
from whichgpu.catalog.prices.names import SKYPILOT, NameMatch, map_gpu_name
from whichgpu.catalog.prices.providers import provider
from whichgpu.catalog.prices.sources import (
    OFFLINE_ENV,
    FeedResult,
    PriceSource,
    Progress,
    Unmapped,
    check_online,
    iso,
    merge_unmapped,
    offline,
    utc_now,
)
from whichgpu.catalog.prices.url import download
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
#: AcceleratorName but no InstanceType is the GPU's price alone): an offer is that row plus the
#: host VM row of the same zone, paired as SkyPilot pairs them (:mod:`.gcp_pairing`).
GPU_PRICED_APART = frozenset({"gcp"})
#: Clouds a plain ``--source skypilot`` fetches: every one but GCP, whose GPU rows are not all
#: GCP's list price (H100 $4.20/h in us-central1 against $9.80/h in us-east4: docs/prices.md),
#: so the cheapest region would under-price it; ``--source skypilot/gcp`` reads it when named.
DEFAULT_CLOUDS = tuple(c for c in CLOUDS if c not in GPU_PRICED_APART)
#: The column the pairing needs on top of :data:`EXPECTED` (host and GPU meet in one zone).
ZONE_COLUMN = "AvailabilityZone"
NEEDED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
#: Columns a cloud's file had when it was recorded (every v8 file we read has them): a live file
#: without one of them has changed layout, and its rows are not read as if it had not.
EXPECTED = (*NEEDED, "SpotPrice")
NO_SPOT = 99999999.0  # primeintellect's "no spot price" marker
#: Clouds whose catalog puts the spot price in ``Price`` too: every offer of theirs is spot
#: (interruptible), whatever column it is read from. Mithril: SkyPilot's
#: ``sky/catalog/data_fetchers/fetch_mithril.py``
#: (skypilot-org/skypilot@161a59fc9bac7b093f6b632ac68b1cab9bbee843) lists an instance type
#: only where ``/v2/spot/availability`` has it and writes the spot market's minimum price
#: (``/v2/pricing/current``, ``minimum_price_cents``) into both Price and SpotPrice.
SPOT_ONLY = {"mithril": "Mithril rents spot capacity only: SkyPilot's fetch_mithril.py writes "
                        "the spot market's minimum price into both Price and SpotPrice"}
#: How each cloud's ``GpuInfo`` gives GPU memory: MiB per card (``per_card``), MiB for the whole
#: instance (``instance_total``, divided by the GPU count) or GB per card (``gb_per_card``), as
#: read in the recorded v8 files (RunPod's 1x A100-80GB says 80; Vast's 2x RTX 5090 says 65214;
#: Prime Intellect's 8x A100-80GB says 655360). A cloud not listed gives no memory to check.
GPU_MEMORY_FIELD = {
    "aws": "per_card", "lambda": "per_card", "nebius": "per_card", "cudo": "per_card",
    "mithril": "per_card", "hyperbolic": "per_card", "seeweb": "per_card",
    "runpod": "gb_per_card", "vast": "instance_total", "primeintellect": "instance_total",
    "gcp": "per_card",  # fetch_gcp.py's _gpu_info_from_name: MiB per card (A100 40960)
}
_SIZE = re.compile(r"""["']SizeInMiB["']\s*:\s*([0-9.]+)""")
#: Vast's instance type names the card it rents (``2x-RTX_3060_Ti-32-65536``), where SkyPilot's
#: AcceleratorName collapses variants (RTX3060): the card's name sits between the count and the
#: vCPU/memory suffix.
_VAST_CARD = re.compile(r"\d+x-(?P<card>.+)-\d+-\d+")
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
    memory_gb: float | None = None  # GPU memory per card (GiB) from GpuInfo, where it says
    parts: Paired | None = None  # GCP: the host VM and GPU rows this row's price adds up


def gpu_memory_gb(info: str | None, count: int, cloud: str | None) -> float | None:
    """GPU memory per card in GiB from a GpuInfo cell, read the way ``cloud`` writes it
    (:data:`GPU_MEMORY_FIELD`); None when the cloud or the cell does not say (0 is "not said")."""
    kind = GPU_MEMORY_FIELD.get(cloud or "")
    m = _SIZE.search(info or "")
    if kind is None or m is None:
        return None
    value = float(m.group(1))
    if value <= 0:
        return None
    if kind == "gb_per_card":
        return value
    if kind == "instance_total":
        value /= max(count, 1)
    return value / 1024


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
    what is missing. For a cloud that prices GPUs apart from their VM (GCP), each GPU row is
    paired with its host VM row (:func:`.gcp_pairing.pair`); a GPU row without one is reported
    in the skipped reasons, never priced alone.
    """
    reader = csv.DictReader(io.StringIO(text))
    apart = cloud in GPU_PRICED_APART
    needed = (*EXPECTED, ZONE_COLUMN) if apart else EXPECTED
    missing = [c for c in needed if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(path, f"not a SkyPilot vms.csv: missing column(s) {', '.join(missing)}")
    if not text.endswith("\n"):  # SkyPilot's files end with a newline; a cut file does not
        raise DataError(path, "the file ends in the middle of a row: truncated?")
    rows: list[VmRow] = []
    skipped: dict[str, int] = {}
    hosts: list[HostRow] = []
    gpus: list[GpuRow] = []

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for row in reader:
        name = (row.get("AcceleratorName") or "").strip()
        instance = (row.get("InstanceType") or "").strip()
        try:
            count = float(row.get("AcceleratorCount") or 0)
        except ValueError:
            skip("malformed row")
            continue
        if not name or count <= 0:
            skip("no GPU")
            if apart and instance:
                try:
                    hosts.append(_host_row(row, instance))
                except ValueError:
                    skip("malformed host VM row")
            continue
        if apart and name.lower().startswith("tpu-"):
            skip("TPU (not a GPU)")
            continue
        if apart and not instance:
            try:
                gpu = _gpu_row(row, name, count)
            except ValueError:
                skip("malformed row")
                continue
            if gpu.price is None:  # SkyPilot drops such a row before pairing it
                skip("GCP GPU row without an on-demand price")
                continue
            if gpu.spot is not None and gpu.price < gpu.spot:
                # GCP's spot price is a discount off the on-demand rate
                # (https://cloud.google.com/spot-vms/pricing): an on-demand price below the
                # zone's spot price is another SKU's, so only the spot price is kept
                skip(f"GCP GPU row priced below its own spot price, on-demand dropped: "
                     f"{int(count)} x {name}")
                gpu = dataclasses.replace(gpu, price=None)
            gpus.append(gpu)
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
        if cloud in SPOT_ONLY:  # its Price is the spot price too: an interruptible offer
            price, spot = None, spot if spot is not None else price
        rows.append(VmRow(str(row["InstanceType"]).strip(), name, int(count), price, spot,
                          (row.get("Region") or "").strip(),
                          (row.get("UpstreamCloudId") or "").strip() or None,
                          gpu_memory_gb(row.get("GpuInfo"), int(count), cloud)))
    if apart:
        paired, unpaired = pair(gpus, hosts)
        for reason, n in unpaired.items():
            skipped[reason] = skipped.get(reason, 0) + n
        for p in paired:
            rows.append(VmRow(p.host.instance, p.gpu.accelerator, p.gpu.count, p.price, p.spot,
                              p.gpu.region, None,
                              gpu_memory_gb(p.gpu.info, p.gpu.count, cloud), p))
    return rows, skipped


def _host_row(row: dict[str, str], instance: str) -> HostRow:
    """A GCP machine-type row (ValueError: a malformed number)."""
    return HostRow(instance, float(row.get("vCPUs") or 0), float(row.get("MemoryGiB") or 0),
                   (row.get("Region") or "").strip(), (row.get(ZONE_COLUMN) or "").strip(),
                   _price(row.get("Price")), _price(row.get("SpotPrice")))


def _gpu_row(row: dict[str, str], name: str, count: float) -> GpuRow:
    """A GCP accelerator row without a machine type (ValueError: a malformed number)."""
    if count != int(count):
        raise ValueError("fractional GPU")
    return GpuRow(name, int(count), (row.get("Region") or "").strip(),
                  (row.get(ZONE_COLUMN) or "").strip(), _price(row.get("Price")),
                  _price(row.get("SpotPrice")), row.get("GpuInfo"))


def pairing_text(parts: Paired, *, spot: bool) -> str:
    """``host VM $x + n x GPU $y (SkyPilot's pairing)`` for one price of a paired GCP row."""
    host = parts.host.spot if spot else parts.host.price
    gpu = parts.gpu.spot if spot else parts.gpu.price
    if host is None or gpu is None:
        return ""
    return (f"host VM {parts.host.instance} {_money(host)}/h + {parts.gpu.count} × GPU "
            f"{_money(gpu / parts.gpu.count)}/h ({parts.gpu.zone}; SkyPilot's pairing)")


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _vast_card_differs(instance: str, accelerator: str) -> str | None:
    """Why a Vast row's instance type names another card than its AcceleratorName (None: the
    same card). ``2x-RTX_3060_Ti-...`` with RTX3060 is a 3060 Ti, not a 3060."""
    m = _VAST_CARD.fullmatch(instance)
    if m is None or _norm(m["card"]) == _norm(accelerator):
        return None
    return (f"Vast's instance type names {m['card'].replace('_', ' ')}, which SkyPilot's "
            f"AcceleratorName {accelerator} does not say; no rule names that card")


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
                        skipped=dict(skipped or {}), rows=len(rows))
    groups: dict[tuple[str, str, int, str | None, float | None], list[VmRow]] = {}
    for r in rows:
        memory = round(r.memory_gb, 1) if r.memory_gb else None
        groups.setdefault((r.instance, r.accelerator, r.count, r.upstream, memory), []).append(r)
    unmapped: list[Unmapped] = []
    offers: list[Offer] = []
    priced = bad = 0
    for (instance, name, count, upstream, memory), group in sorted(
            groups.items(), key=lambda kv: tuple("" if v is None else str(v) for v in kv[0])):
        where = f"{instance} ({upstream})" if upstream else instance
        m: NameMatch = map_gpu_name(name, provider=rules_key, instance=where, via=SKYPILOT,
                                    memory_gb=memory, catalog=catalog)
        if m.gpu is not None and cloud == "vast" and "instance rule" not in m.how:
            differs = _vast_card_differs(instance, name)
            if differs:
                m = NameMatch(name, None, differs, (m.gpu,))
        if m.gpu is None:
            unmapped.append(Unmapped(cloud, name, m.how, instance, memory, m.candidates,
                                     rows=len(group)))
            continue
        for spot in (False, True):
            priced_rows = sorted(((p, r.region, i, r) for i, r in enumerate(group)
                                  if (p := (r.spot if spot else r.price)) is not None),
                                 key=lambda t: (t[0], t[1], t[2]))
            points = [(p, reg) for p, reg, _, _ in priced_rows]
            if not points:
                continue
            if spot:
                cheapest_od = min((r.price for r in group if r.price is not None), default=None)
                if cheapest_od is not None and points[0][0] >= cheapest_od:
                    # a spot price at or above on-demand is a catalog artefact (a swapped
                    # column, or a file that copies one price into both): the on-demand
                    # price is kept and the spot one dropped, and the build report says so
                    if points[0][0] > cheapest_od:  # looks swapped: name it in the report
                        result.skip(f"spot above on-demand, spot dropped: {instance} spot "
                                    f"{_money(points[0][0])}/h, on-demand "
                                    f"{_money(cheapest_od)}/h", len(points))
                    else:
                        result.skip("spot price equal to on-demand (kept on-demand only)",
                                    len(points))
                    continue
            price, region = points[0]
            cheapest_row = priced_rows[0][3]
            median = statistics.median(p for p, _ in points)
            regions = len({reg for _, reg in points})
            parts = (pairing_text(cheapest_row.parts, spot=spot)
                     if cheapest_row.parts is not None else "")
            note = (f"{instance}; cheapest of {regions} region(s)"
                    + (f", median {_money(median)}/h" if regions > 1 else "")
                    + (f"; {parts}" if parts else "")
                    + f"; {who.billing_text()}"
                    + ("; spot: can be interrupted" if spot else "")
                    + (f" ({SPOT_ONLY[cloud]})" if spot and cloud in SPOT_ONLY else ""))
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
        self.name = "skypilot"
        unknown = [c for c in clouds or () if c not in CLOUDS]
        if unknown:
            raise InputError(f"unknown SkyPilot cloud {unknown[0]!r}; the catalog has "
                             f"{', '.join(CLOUDS)}")
        self.clouds = list(clouds or DEFAULT_CLOUDS)
        self.base = base
        self.timeout_s = timeout_s if timeout_s is not None else url_mod.TIMEOUT_S
        self.max_bytes = max_bytes if max_bytes is not None else url_mod.MAX_BYTES

    def describe(self) -> str:
        return (f"the SkyPilot catalog ({REPOSITORY}, {CATALOG_VERSION}) over https: "
                f"{', '.join(self.clouds)} (USD)")

    def available(self) -> str | None:
        return f"the network is off ({OFFLINE_ENV} is set)" if offline() else None

    def fetch(self, progress: Progress | None = None) -> Iterator[FeedResult]:
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
                                    fetched_at=fetched_at, skipped=skipped, rows=0)
            else:
                result = feed_from_rows(rows, cloud=cloud, observed_at=iso(fetched_at),
                                        source=f"{url} (fetched {iso(fetched_at)})",
                                        fetched_at=fetched_at, skipped=skipped)
            result.digest = hashlib.sha256(body).hexdigest()
            yield result
        if progress:
            progress("done", len(self.clouds), len(self.clouds))

    def _failed(self, feed: str, message: str) -> FeedResult:
        return FeedResult(feed=feed, source=self.name, kind=self.kind, error=message)
