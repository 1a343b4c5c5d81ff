"""Offers from a CSV or JSON file in whichgpu's schema: private quotes, on-premise prices.

The schema is the shipped sets' one (docs/prices.md). Provider GPU names go through
:mod:`whichgpu.catalog.prices.names`, so "H100 PCIE" or "NVIDIA H100 80GB HBM3" work and
"H100" alone is refused as ambiguous. A file is the user's own data: any bad row is an
error naming the file, the row and the field, and nothing is stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from whichgpu.catalog.gpus import Catalog, default_catalog
from whichgpu.catalog.offers import Offer, offer_from_row, read_offer_rows
from whichgpu.catalog.prices.names import map_gpu_name
from whichgpu.catalog.prices.sources import (
    FeedResult,
    PriceSource,
    Progress,
    Unmapped,
    iso,
    parse_time,
    utc_now,
)
from whichgpu.catalog.prices.validate import offer_problem
from whichgpu.errors import DataError, InputError
from whichgpu.user_files import read_text


def name_resolver(catalog: Catalog):
    """A resolver for :func:`offer_from_row` that maps provider names or says why not."""

    def resolve(text: str, provider: str) -> str:
        m = map_gpu_name(text, provider=provider, catalog=catalog)
        if m.gpu is None:
            listed = all(c in m.how for c in m.candidates)  # "ambiguous: it could be ..."
            hint = (f" (did you mean {', '.join(m.candidates)}?)"
                    if m.candidates and not listed else "")
            raise InputError(f"GPU {text!r}: {m.how}{hint}")
        return m.gpu

    return resolve


def parse_feed(text: str, *, path: Path | str, fmt: str, feed: str, source: str, kind: str,
               fetched_at: datetime, lenient_gpu: bool = False,
               observed_at: str | None = None, catalog: Catalog | None = None) -> FeedResult:
    """A feed from offer-file text. Rows without ``observed_at`` take the file's top-level
    ``observed_at``, else ``observed_at`` given here, else the fetch time.

    ``lenient_gpu=True`` (third-party data) reports rows whose GPU cannot be mapped in
    ``unmapped`` instead of failing; every other bad field still fails the whole feed.
    """
    catalog = catalog or default_catalog()
    rows, meta = read_offer_rows(text, path=path, fmt=fmt)
    default_time = meta.get("observed_at") or observed_at
    if default_time is not None and parse_time(str(default_time)) is None:
        raise DataError(path, f"{default_time!r} is not an ISO date or datetime",
                        field="observed_at")
    default_time = str(default_time) if default_time else iso(fetched_at)
    resolver = name_resolver(catalog)
    result = FeedResult(feed=feed, source=source, kind=kind, fetched_at=fetched_at,
                        digest=hashlib.sha256(text.encode()).hexdigest(),
                        version=str(meta["version"]) if meta.get("version") else None)
    offers: list[Offer] = []
    for i, raw in rows:
        row: dict[str, Any] = dict(raw)
        if row.get("observed_at") and parse_time(str(row["observed_at"])) is None:
            raise DataError(path, f"{row['observed_at']!r} is not an ISO date or datetime",
                            row=i, field="observed_at")
        if not row.get("observed_at"):
            row["observed_at"] = default_time
        try:
            offer = offer_from_row(row, path=path, index=i, offer_set=feed, catalog=catalog,
                                   gpu_resolver=resolver)
            problem = offer_problem(offer, now=fetched_at)
            if problem:  # refreshes and imports alike: implausible data stops the feed
                raise DataError(path, problem[1], row=i, field=problem[0])
            offers.append(offer)
        except DataError as exc:
            if not (lenient_gpu and exc.field == "gpu" and row.get("gpu")):
                raise
            m = map_gpu_name(str(row["gpu"]), provider=str(row.get("provider") or ""),
                             catalog=catalog)
            result.unmapped.append(Unmapped(str(row.get("provider") or "?"), str(row["gpu"]),
                                            m.how, candidates=m.candidates))
    result.offers = offers
    return result


def file_format(path: Path) -> str:
    return "json" if path.suffix.lower() == ".json" else "csv"


class FileSource(PriceSource):
    """A local CSV/JSON offer file; the feed is named after the file unless told otherwise."""

    kind = "file"
    network = False

    def __init__(self, path: str | Path, *, name: str | None = None,
                 observed_at: str | None = None) -> None:
        self.path = Path(path)
        self.name = name or self.path.stem
        self.observed_at = observed_at

    def describe(self) -> str:
        return f"file {self.path}"

    def fetch(self, progress: Progress | None = None) -> Iterator[FeedResult]:
        if progress:
            progress(f"reading {self.path.name}", 0, 1)
        try:
            text = read_text(self.path)  # a regular file only: never a FIFO or /dev/zero
        except OSError as exc:
            raise DataError(self.path, f"cannot read the file ({exc.strerror})") from exc
        except UnicodeDecodeError as exc:
            raise DataError(self.path, "is not UTF-8 text") from exc
        yield parse_feed(text, path=self.path, fmt=file_format(self.path), feed=self.name,
                         source=self.name, kind=self.kind, fetched_at=utc_now(),
                         observed_at=self.observed_at)
        if progress:
            progress("done", 1, 1)
