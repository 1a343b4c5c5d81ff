"""Opening the price store's backend for a target, SQLite's or PostgreSQL's.

Apart from the package's __init__ (the interface both engines implement) so that the engines
import the interface and the interface imports neither engine.
"""

from __future__ import annotations

from whichgpu.catalog.prices.backends import Backend, StoreTarget
from whichgpu.catalog.prices.backends.sqlite import SQLiteBackend


def open_backend(target: StoreTarget, timeout_s: float) -> Backend:
    """The backend for ``target``."""
    if target.kind == "sqlite":
        assert target.path is not None
        return SQLiteBackend(target.path, timeout_s)
    # imported only when asked for: psycopg is an optional dependency (the [postgres] extra)
    from whichgpu.catalog.prices.backends.postgres import PostgresBackend

    assert target.url is not None
    return PostgresBackend(target.url, timeout_s)
