"""Per-token API prices in the price store (schema v6), on SQLite and PostgreSQL alike.

Each fetch is one ``api_snapshot`` row: ``ok`` with its price rows, or ``failed`` with the
reason and none. Nothing is overwritten or deleted: the current table is the latest ``ok``
snapshot, so a failed refresh leaves the prices as they were. A snapshot and its rows are
written in one transaction (all or nothing).

Rows are plain mappings with the columns of :data:`COLUMNS` (the per-token table's,
``cost/api_prices.py``): the catalog layer knows no cost types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from whichgpu.catalog.prices.sources import iso, parse_time, utc_now

if TYPE_CHECKING:
    from whichgpu.catalog.prices.store import PriceStore

COLUMNS = ("provider", "model", "provider_model", "input_per_mtok", "cached_input_per_mtok",
           "output_per_mtok", "currency", "date", "url", "source")
_SNAPSHOT = ("id", "source", "status", "fetched_at", "version", "digest", "row_count",
             "message")


@dataclass(frozen=True)
class ApiSnapshot:
    """One recorded fetch of per-token API prices."""

    id: int
    source: str  # where the prices came from (a URL or a file name)
    status: str  # ok | failed
    fetched_at: datetime
    version: str | None  # the upstream's version or commit, when it says one
    digest: str | None  # sha256 of the fetched bytes
    row_count: int
    message: str | None  # why it failed, or what it left out

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "status": self.status,
                "fetched_at": iso(self.fetched_at), "version": self.version,
                "digest": self.digest, "row_count": self.row_count, "message": self.message}


def _snapshot(row: Sequence[Any]) -> ApiSnapshot:
    v = dict(zip(_SNAPSHOT, row, strict=True))
    fetched = parse_time(v["fetched_at"])
    assert fetched is not None
    return ApiSnapshot(int(v["id"]), v["source"], v["status"], fetched, v["version"],
                       v["digest"], int(v["row_count"] or 0), v["message"])


class ApiPriceStore:
    """The per-token API prices of one price store."""

    def __init__(self, store: PriceStore) -> None:
        self.store = store

    @property
    def location(self) -> str:
        return self.store.location

    def record(self, rows: Sequence[Mapping[str, Any]], *, source: str,
               fetched_at: datetime | None = None, version: str | None = None,
               digest: str | None = None, message: str | None = None) -> ApiSnapshot:
        """Store a good fetch (its rows become the current table), in one transaction."""
        when = iso(fetched_at or utc_now())
        with self.store.backend.write() as tx:
            sid = tx.insert_id(
                "INSERT INTO api_snapshot (source, status, fetched_at, version, digest, "
                "row_count, message) VALUES (?, 'ok', ?, ?, ?, ?, ?)",
                (source, when, version, digest, len(rows), message))
            tx.insert_rows("api_price", ("snapshot_id", "seq", *COLUMNS),
                           [(sid, i, *(r.get(c) for c in COLUMNS))
                            for i, r in enumerate(rows)])
        got = self.snapshot(sid)
        assert got is not None
        return got

    def record_failure(self, *, source: str, message: str,
                       fetched_at: datetime | None = None) -> ApiSnapshot:
        """Record a failed fetch: the reason, no rows; the current table stays as it was."""
        with self.store.backend.write() as tx:
            sid = tx.insert_id(
                "INSERT INTO api_snapshot (source, status, fetched_at, row_count, message) "
                "VALUES (?, 'failed', ?, 0, ?)", (source, iso(fetched_at or utc_now()),
                                                  message))
        got = self.snapshot(sid)
        assert got is not None
        return got

    def snapshot(self, sid: int) -> ApiSnapshot | None:
        with self.store.backend.read() as tx:
            row = tx.execute("SELECT " + ", ".join(_SNAPSHOT) + " FROM api_snapshot WHERE "
                             "id = ?", (sid,)).fetchone()
        return _snapshot(row) if row else None

    def snapshots(self, limit: int = 20) -> list[ApiSnapshot]:
        """The latest fetches, newest first (failed ones included)."""
        with self.store.backend.read() as tx:
            rows = tx.execute("SELECT " + ", ".join(_SNAPSHOT) + " FROM api_snapshot ORDER BY "
                              "id DESC LIMIT ?", (limit,)).fetchall()
        return [_snapshot(r) for r in rows]

    def current(self) -> tuple[ApiSnapshot, list[dict[str, Any]]] | None:
        """The latest good snapshot and its rows in stored order (None: none stored)."""
        with self.store.backend.read() as tx:
            row = tx.execute("SELECT " + ", ".join(_SNAPSHOT) + " FROM api_snapshot WHERE "
                             "status = 'ok' ORDER BY id DESC LIMIT 1").fetchone()
            if row is None:
                return None
            snap = _snapshot(row)
            rows = tx.execute("SELECT " + ", ".join(COLUMNS) + " FROM api_price WHERE "
                              "snapshot_id = ? ORDER BY seq", (snap.id,)).fetchall()
        return snap, [dict(zip(COLUMNS, r, strict=True)) for r in rows]
