"""What a price source is and what it yields (the registry of sources: ``registry.py``).

A source (shipped sets, a file, a URL, gpuhunt) yields one :class:`FeedResult` per *feed*: a
set of offers that is stored, versioned and judged on its own ("article-000",
"gpuhunt/aws", "quotes"). A feed that fails never holds back the others.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

from whichgpu.catalog.offers import Offer
from whichgpu.errors import InputError

#: ``progress(message, done, total)``: how far a source has got (total None = unknown).
Progress = Callable[[str, int, int | None], None]

OFFLINE_ENV = "WHICHGPU_OFFLINE"


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(dt: datetime) -> str:
    """UTC ISO 8601 with a Z: ``2026-11-30T04:41:57Z``."""
    return dt.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def parse_time(text: str | None) -> datetime | None:
    """A UTC datetime from an ISO date or datetime (a date means its midnight UTC)."""
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def offline() -> bool:
    """True when ``WHICHGPU_OFFLINE`` is set: network sources refuse to run."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def check_online(what: str) -> None:
    if offline():
        raise InputError(f"{what} needs the network, and {OFFLINE_ENV} is set")


@dataclass(frozen=True)
class Unmapped:
    """A provider GPU name we could not map to one catalog GPU, and why (reported, not guessed)."""

    provider: str
    name: str
    reason: str
    instance: str | None = None
    memory_gb: float | None = None
    candidates: tuple[str, ...] = ()
    rows: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "name": self.name, "instance": self.instance,
                "memory_gb": self.memory_gb, "reason": self.reason,
                "candidates": list(self.candidates), "rows": self.rows}


@dataclass
class FeedResult:
    """What one fetch of one feed gave: offers, or an error, plus what it could not map."""

    feed: str
    source: str
    kind: str
    offers: list[Offer] = field(default_factory=list)
    fetched_at: datetime = field(default_factory=utc_now)
    version: str | None = None  # the upstream's own version (gpuhunt catalog version, ...)
    digest: str | None = None  # sha256 of the content, where the source has one
    unmapped: list[Unmapped] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> rows (e.g. "no GPU")
    error: str | None = None
    rows: int | None = None  # GPU rows of the upstream file, where the source counts them

    def skip(self, reason: str, rows: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + rows


def merge_unmapped(items: list[Unmapped]) -> list[Unmapped]:
    """One entry per (provider, name, memory, reason), counting rows, most frequent first."""
    merged: dict[tuple, Unmapped] = {}
    for u in items:
        key = (u.provider, u.name, u.memory_gb, u.reason)
        if key in merged:
            m = merged[key]
            merged[key] = Unmapped(m.provider, m.name, m.reason, m.instance, m.memory_gb,
                                   m.candidates, m.rows + u.rows)
        else:
            merged[key] = u
    return sorted(merged.values(), key=lambda u: (-u.rows, u.provider, u.name))


class PriceSource(ABC):
    """A place offers come from. ``fetch`` yields one :class:`FeedResult` per feed.

    A source raises :class:`~whichgpu.errors.InputError` for what the user can fix (a bad
    URL, a missing extra) and puts any other failure of a feed in ``FeedResult.error``.
    """

    kind: ClassVar[str]
    network: ClassVar[bool] = False
    name: str

    @abstractmethod
    def fetch(self, progress: Progress | None = None) -> Iterator[FeedResult]:
        """Fetch every feed of this source."""

    def describe(self) -> str:
        return self.kind

    def available(self) -> str | None:
        """None when the source can run here, else why not (a missing extra)."""
        return None
