"""The ``run`` table of the price store (schema v5), on SQLite and PostgreSQL alike.

A file's runs are stored in one write transaction: all of them or, when any is refused or
the store fails half-way, none. Reads take one consistent view.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from whichgpu.catalog.prices.sources import iso, utc_now
from whichgpu.catalog.runs.record import MeasuredRun

if TYPE_CHECKING:
    from whichgpu.catalog.prices.store import PriceStore

_COLUMNS = tuple(f.name for f in fields(MeasuredRun) if f.name != "id")
_SELECT = "SELECT id, " + ", ".join(_COLUMNS) + " FROM run"


def _run(row: Sequence[Any]) -> MeasuredRun:
    values = dict(zip(("id", *_COLUMNS), row, strict=True))
    return MeasuredRun(**values)


class RunStore:
    """The measured runs of one price store."""

    def __init__(self, store: PriceStore) -> None:
        self.store = store

    @property
    def location(self) -> str:
        return self.store.location

    def add(self, runs: Iterable[MeasuredRun]) -> list[MeasuredRun]:
        """Store ``runs`` in one transaction; each comes back with its id and time."""
        now = iso(utc_now())
        sql = ("INSERT INTO run (" + ", ".join(_COLUMNS) + ") VALUES ("
               + ", ".join("?" for _ in _COLUMNS) + ")")
        out = []
        with self.store.backend.write() as tx:
            for r in runs:
                stamped = replace(r, added_at=r.added_at or now, id=None)
                new_id = tx.insert_id(sql, [getattr(stamped, c) for c in _COLUMNS])
                out.append(replace(stamped, id=new_id))
        return out

    def list(self, *, gpu: str | None = None, engine: str | None = None) -> list[MeasuredRun]:
        """The stored runs (of one card and engine when given), oldest first."""
        where, args = [], []
        if gpu:
            where.append("gpu = ?")
            args.append(gpu)
        if engine:
            where.append("engine = ?")
            args.append(engine)
        sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        with self.store.backend.read() as tx:
            return [_run(row) for row in tx.execute(sql, args).fetchall()]

    def remove(self, run_id: int) -> bool:
        with self.store.backend.write() as tx:
            return tx.execute("DELETE FROM run WHERE id = ?", (run_id,)).rowcount > 0

    def stamp(self) -> tuple[int, int]:
        """(how many runs, the highest id): changes whenever a run is added or removed."""
        with self.store.backend.read() as tx:
            n, top = tx.execute("SELECT COUNT(*), MAX(id) FROM run").fetchone()
        return int(n or 0), int(top or 0)
