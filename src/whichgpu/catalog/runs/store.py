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


def same_key(r: MeasuredRun) -> tuple[Any, ...]:
    """What makes two runs the same measurement (where they came from aside)."""
    return (r.gpu, r.gpu_count, r.engine, r.engine_version, r.model_key or r.model,
            r.precision, r.metric, float(r.value), r.batch, r.prompt_tokens, r.output_tokens,
            r.date)


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

    def add(self, runs: Iterable[MeasuredRun]) -> tuple[list[MeasuredRun],
                                                        list[tuple[MeasuredRun, int]]]:
        """Store ``runs`` in one transaction; each comes back with its id and time. A run the
        store already holds (the same measurement: :func:`same_key`) is not stored twice,
        since it would count twice as evidence: it comes back in the second list with the
        id it has."""
        now = iso(utc_now())
        sql = ("INSERT INTO run (" + ", ".join(_COLUMNS) + ") VALUES ("
               + ", ".join("?" for _ in _COLUMNS) + ")")
        out, again = [], []
        with self.store.backend.write() as tx:
            held = {same_key(_run(row)): int(row[0])
                    for row in tx.execute(_SELECT + " ORDER BY id").fetchall()}
            for r in runs:
                key = same_key(r)
                if key in held:
                    again.append((r, held[key]))
                    continue
                stamped = replace(r, added_at=r.added_at or now, id=None)
                new_id = tx.insert_id(sql, [getattr(stamped, c) for c in _COLUMNS])
                held[key] = new_id
                out.append(replace(stamped, id=new_id))
        return out, again

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
