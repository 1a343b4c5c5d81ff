"""The PostgreSQL backend: psycopg 3 with a connection pool (``pip install 'whichgpu[postgres]'``).

* One pool per database URL per process (``psycopg_pool``; ``$WHICHGPU_DATABASE_POOL_SIZE``
  connections at most, 8 by default), each connection checked when it is lent, so a restarted
  server costs no failed request.
* A server that cannot be reached fails every call at once: a call that gets no connection
  within ``FIRST_WAIT_S`` connects directly to say why; if the server is down, the calls of
  the next ``DOWN_S`` seconds are refused at once with the same words, then one call tries
  again. No request waits the pool's whole ``MAX_WAIT_S`` for a server that is gone, and the
  store serves again by itself when it is back.
* Reads run in ``REPEATABLE READ READ ONLY`` transactions: every query of one read sees the
  same committed state (MVCC), and no writer ever blocks them.
* Writes run in ``READ COMMITTED`` transactions that first take a transaction-level advisory
  lock: one writer at a time, as in SQLite, so "store it unless the same content is already
  current" is decided once when two processes seed a fresh database together.
* Migrations run under another advisory lock, after reading the version again: two processes
  (or machines) starting on an empty database create the tables once. The version is the
  one row of ``whichgpu_schema``.
* The refresh lock is a session-level advisory lock held by its own connection for the whole
  refresh; the server drops it if that process dies. A refresh that finds it taken is told
  which client holds it (``application_name`` and start time from ``pg_stat_activity``).

Advisory-lock keys are derived from the schema the tables live in, so two stores in two
schemas of one database never share a lock.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC
from functools import lru_cache
from typing import Any

from whichgpu.catalog.prices import schema
from whichgpu.catalog.prices.backends import (
    Backend,
    RefreshBusy,
    StoreError,
    Tx,
    holder_text,
    poll_delays,
    redact,
)
from whichgpu.errors import InputError

POOL_SIZE_ENV = "WHICHGPU_DATABASE_POOL_SIZE"
DEFAULT_POOL_SIZE = 8
CONNECT_TIMEOUT_S = 5  # libpq's connect_timeout, unless the URL sets one
MAX_WAIT_S = 10.0  # the longest a request waits for a pooled connection
FIRST_WAIT_S = 0.5  # then a direct connection says whether the server is down or just busy
DOWN_S = 2.0  # a server found down is not asked again for this long (calls fail at once)

try:
    import psycopg
    import psycopg_pool
    from psycopg import IsolationLevel
except ImportError:  # the extra is not installed: said when a store is opened
    psycopg = psycopg_pool = IsolationLevel = None  # type: ignore[assignment,misc]  # extra absent


def _require_driver() -> None:
    if psycopg is None or psycopg_pool is None:
        raise InputError("a postgresql:// price store needs psycopg 3 and psycopg_pool: "
                         "pip install 'whichgpu[postgres]'")


def pool_size() -> int:
    text = os.environ.get(POOL_SIZE_ENV, "").strip()
    if not text:
        return DEFAULT_POOL_SIZE
    if not text.isdigit() or not 1 <= int(text) <= 200:
        raise InputError(f"{POOL_SIZE_ENV}={text!r}: give a whole number of connections, "
                         "1 to 200")
    return int(text)


# ------------------------------------------------------------------ pools (one per process)

_POOLS: dict[tuple[int, str], Any] = {}
_INHERITED: list[Any] = []  # a forked child's copies of its parent's pools: never closed here
_POOLS_LOCK = threading.Lock()


def client_name(role: str = "") -> str:
    """This process's ``application_name``: 'whichgpu, pid 123 on host-a' (what
    pg_stat_activity shows an operator; at most 63 printable ASCII characters)."""
    return re.sub(r"[^ -~]", "?", f"whichgpu{role}, {holder_text()}")[:63]


def _conninfo(url: str) -> str:
    """The URL with whichgpu's defaults for what it leaves unset (connect_timeout,
    application_name)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        given = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise InputError(f"database URL {redact(url)!r} cannot be read: "
                         f"{str(exc).splitlines()[0]}") from None
    extra = {k: v for k, v in (("connect_timeout", str(CONNECT_TIMEOUT_S)),
                               ("application_name", client_name())) if k not in given}
    return make_conninfo(url, **extra)


def _pool(url: str) -> Any:
    """This process's pool for ``url`` (a forked child makes its own). The first connection
    is made directly, so that a server that cannot be reached is said at once, in libpq's
    words, rather than after the pool's wait."""
    key = (os.getpid(), url)
    pool = _POOLS.get(key)
    if pool is not None:
        return pool
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            for other in [k for k in _POOLS if k[0] != os.getpid()]:
                _INHERITED.append(_POOLS.pop(other))
            psycopg.connect(_conninfo(url)).close()  # raises psycopg.Error: unreachable
            pool = psycopg_pool.ConnectionPool(
                _conninfo(url), min_size=1, max_size=pool_size(), open=True,
                check=psycopg_pool.ConnectionPool.check_connection, timeout=MAX_WAIT_S,
                name=f"whichgpu-prices-{len(_POOLS) + 1}")
            _POOLS[key] = pool
    return pool


def close_pools() -> None:
    """Close this process's pools (at exit, and between tests)."""
    with _POOLS_LOCK:
        mine = [k for k in _POOLS if k[0] == os.getpid()]
        pools = [_POOLS.pop(k) for k in mine]
    for pool in pools:
        pool.close()


atexit.register(close_pools)

_VERDICT: dict[str, tuple[float, StoreError | None]] = {}  # url -> (until, why down / None)
_VERDICT_LOCK = threading.Lock()


def _still_down(url: str) -> StoreError | None:
    """The error of a server found down less than DOWN_S ago (None: ask it again)."""
    seen = _VERDICT.get(url)
    return _copy(seen[1]) if seen is not None and time.monotonic() < seen[0] else None


def _copy(error: StoreError | None) -> StoreError | None:
    """A fresh exception to raise (one object raised by several threads would share its
    traceback)."""
    return None if error is None else StoreError(error.path, error.reason, error.detail)


def _mark_down(url: str, error: StoreError) -> StoreError:
    _VERDICT[url] = (time.monotonic() + DOWN_S, error)
    return error


def _server_down(url: str) -> StoreError | None:
    """Whether the server is down (its error) or answers (None: a pool that lends nothing is
    only busy). One direct connection per process per DOWN_S at most: the other callers
    reuse its verdict, so that a busy pool never adds a connection per waiting request."""
    with _VERDICT_LOCK:
        seen = _VERDICT.get(url)
        if seen is None or time.monotonic() >= seen[0]:
            seen = (time.monotonic() + DOWN_S, _diagnose(url))
            _VERDICT[url] = seen
        return _copy(seen[1])


# ------------------------------------------------------------------ errors

_CONNECT_PROBLEMS = (
    ("password authentication failed", "the database refused the user name or password"),
    ("no password supplied", "the database asks for a password and the URL gives none"),
    ("could not translate host name", "the database host name cannot be resolved"),
    ("connection refused", "nothing accepts connections at the database's address (is the "
                           "server running, on that port?)"),
    ("no such file or directory", "no PostgreSQL server listens on that socket (is it "
                                  "running?)"),
    ("timeout expired", "the database server did not answer in time"),
    ("does not exist", "the database or user in the URL does not exist on the server"),
    ("too many", "the database server has no free connection slot (max_connections)"),
)

_BY_SQLSTATE = {
    "53100": "the database server's disk is full; nothing was changed and the stored prices "
             "are intact",
    "25006": "the database server only accepts reads (a standby?), so nothing can be stored",
    "53300": "the database server has no free connection slot (max_connections)",
    "57P01": "the database server is shutting down",
    "57P03": "the database server is starting up or shutting down; try again shortly",
    "55P03": "timed out waiting for a lock held by another session",
    "57014": "a statement took longer than the server allows (statement_timeout)",
    "3F000": "the schema named in the URL's search_path does not exist: create it first",
    "42P07": "the database already has tables named like the price store's (snapshot, offer, "
             "...) that whichgpu did not create: point WHICHGPU_DATABASE_URL at another "
             "database or schema",
}


def pg_store_error(location: str, exc: BaseException, url: str | None = None) -> StoreError:
    """What went wrong with the database, in words that name no host, path or password."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if psycopg_pool is not None and isinstance(exc, psycopg_pool.PoolTimeout):
        cause = _server_down(url) if url else None
        if cause is not None:
            return cause
        return StoreError(location, f"every connection to the database stayed busy for "
                          f"{MAX_WAIT_S:g} s; try again, or raise {POOL_SIZE_ENV}", first)
    state = getattr(exc, "sqlstate", None)
    if state in _BY_SQLSTATE:
        return StoreError(location, _BY_SQLSTATE[state], first)
    if state == "42501":
        return StoreError(location, f"the database user lacks a permission ({first})")
    if state is None and psycopg is not None and isinstance(exc, psycopg.OperationalError):
        low = text.lower()
        for words, reason in _CONNECT_PROBLEMS:
            if words in low:
                return StoreError(location, f"cannot connect to the PostgreSQL server: "
                                  f"{reason}", first)
        return StoreError(location, "cannot reach the PostgreSQL server", first)
    if state is not None and state.startswith("08"):
        return StoreError(location, "the connection to the database server was lost", first)
    return StoreError(location, f"{type(exc).__name__}: {first}")


def _diagnose(url: str) -> StoreError | None:
    """Why the pool lends no connection: one direct attempt says whether the server is
    unreachable (None: it is reachable, so the pool is only busy)."""
    try:
        with psycopg.connect(_conninfo(url), connect_timeout=CONNECT_TIMEOUT_S):
            return None
    except psycopg.Error as exc:
        if getattr(exc, "sqlstate", None) == "53300" or "too many" in str(exc).lower():
            return None  # it answers, with every slot taken: busy, not down
        return pg_store_error(redact(url), exc)


# ------------------------------------------------------------------ transactions

@lru_cache(maxsize=1024)
def _placeholders(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (the shared SQL has no literal ? or %)."""
    if "%" in sql:
        raise ValueError(f"a literal % in shared SQL: {sql[:80]}")
    return sql.replace("?", "%s")


class PostgresTx(Tx):
    def __init__(self, con: Any) -> None:
        self.con = con

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self.con.execute(_placeholders(sql), list(args) if args else None)

    def insert_id(self, sql: str, args: Sequence[Any]) -> int:
        return int(self.execute(sql + " RETURNING id", args).fetchone()[0])

    def insert_rows(self, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        with self.con.cursor() as cur, cur.copy(
                f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


def lock_key(purpose: str, schema_name: str) -> int:
    """A signed 64-bit advisory-lock key for ``purpose`` in one schema."""
    digest = hashlib.sha256(f"whichgpu:{purpose}:{schema_name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


_VERSION_TABLE = "whichgpu_schema"


class PostgresBackend(Backend):
    """A price store in a PostgreSQL database (its tables in the URL's search_path schema)."""

    dialect = "postgresql"

    def __init__(self, url: str, timeout_s: float = 30.0) -> None:
        _require_driver()
        self.url = url
        self.location = redact(url)
        self.wait_s = min(timeout_s, MAX_WAIT_S)
        self._schema: str | None = None

    @contextmanager
    def _connection(self, *, read_only: bool) -> Iterator[Any]:
        """A pooled connection set for a read or a write transaction; errors become
        StoreError. Committed when the block ends, rolled back if it raised."""
        try:
            with self._lend() as con:
                if read_only:
                    con.isolation_level = IsolationLevel.REPEATABLE_READ
                    con.read_only = True
                else:
                    con.isolation_level = IsolationLevel.READ_COMMITTED
                    con.read_only = False
                yield con
        except psycopg.Error as exc:
            raise pg_store_error(self.location, exc, self.url) from exc

    @contextmanager
    def _lend(self) -> Iterator[Any]:
        """A connection from the pool, or StoreError at once when the server is down (see
        the module's doc): wait FIRST_WAIT_S, then ask the server directly, then wait the rest
        only if it answers (the pool is just busy)."""
        down = _still_down(self.url)
        if down is not None:
            raise down
        try:
            pool = _pool(self.url)
        except psycopg.OperationalError as exc:
            raise _mark_down(self.url, pg_store_error(self.location, exc)) from exc
        first = min(FIRST_WAIT_S, self.wait_s)
        with ExitStack() as stack:
            try:
                con = stack.enter_context(pool.connection(timeout=first))
            except psycopg_pool.PoolTimeout:
                cause = _server_down(self.url)
                if cause is not None:
                    raise cause from None
                # It answers: the pool is only busy. (PoolTimeout again: pg_store_error says.)
                con = stack.enter_context(
                    pool.connection(timeout=max(self.wait_s - first, 0.001)))
            yield con

    def _ready(self) -> str:
        """The schema the tables live in, after migrating them to the latest version."""
        if self._schema is None:
            self._schema = self._migrate()
        return self._schema

    def _migrate(self) -> str:
        """Bring the tables to the latest schema. The lock is session-level and the version
        is read again in a transaction begun after taking it: a new transaction sees the
        catalog as the other process left it (inside one, PostgreSQL may keep answering
        'no such table' from its cache)."""
        latest = len(schema.MIGRATIONS)
        with self._connection(read_only=False) as con:
            found = con.execute("SELECT current_schema()").fetchone()[0]
            if found is None:
                raise StoreError(self.location, _BY_SQLSTATE["3F000"])
            version = self._version(con)
            if version < latest:
                con.commit()
                key = lock_key("migrate", found)
                con.execute("SELECT pg_advisory_lock(%s)", (key,))
                con.commit()
                try:
                    version = self._version(con)  # another process may have migrated
                    if version < latest:
                        if version == 0:
                            con.execute(f"CREATE TABLE {_VERSION_TABLE} "
                                        "(version INTEGER NOT NULL)")
                            con.execute(f"INSERT INTO {_VERSION_TABLE} (version) VALUES (0)")
                        for statement in schema.steps("postgresql", version):
                            con.execute(statement)
                        con.execute(f"UPDATE {_VERSION_TABLE} SET version = %s", (latest,))
                        version = latest
                    con.commit()
                except BaseException:
                    con.rollback()
                    raise
                finally:
                    try:
                        con.execute("SELECT pg_advisory_unlock(%s)", (key,))
                        con.commit()
                    except psycopg.Error:
                        pass  # the connection is gone, and its lock with it
            if version > latest:
                raise StoreError(self.location, f"schema version {version} was written by a "
                                 f"newer whichgpu (this one knows up to {latest}); the "
                                 "database is left as it is: upgrade whichgpu, or point "
                                 "WHICHGPU_DATABASE_URL at another database")
        return found

    @staticmethod
    def _version(con: Any) -> int:
        if con.execute("SELECT to_regclass(%s)", (_VERSION_TABLE,)).fetchone()[0] is None:
            return 0
        row = con.execute(f"SELECT version FROM {_VERSION_TABLE}").fetchone()
        return int(row[0]) if row else 0

    @contextmanager
    def read(self) -> Iterator[PostgresTx]:
        self._ready()
        with self._connection(read_only=True) as con:
            yield PostgresTx(con)

    @contextmanager
    def write(self) -> Iterator[PostgresTx]:
        found = self._ready()
        with self._connection(read_only=False) as con:
            con.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("write", found),))
            yield PostgresTx(con)

    def schema_version(self) -> int:
        self._ready()
        with self._connection(read_only=True) as con:
            return self._version(con)

    def close(self) -> None:
        """Close this process's pool for this database (its connections go back to the
        server); a later call makes a new one."""
        with _POOLS_LOCK:
            pool = _POOLS.pop((os.getpid(), self.url), None)
        if pool is not None:
            pool.close()

    # -------------------------------------------------------------- the refresh lock

    @contextmanager
    def refresh_lock(self, wait_s: float = 0.0) -> Iterator[None]:
        key = lock_key("refresh", self._ready())
        name = client_name(" refresh")
        try:
            con = psycopg.connect(_conninfo(self.url), autocommit=True, application_name=name)
        except psycopg.Error as exc:
            raise pg_store_error(self.location, exc) from exc
        try:
            delays = poll_delays(wait_s)
            while not con.execute("SELECT pg_try_advisory_lock(%s)",  # type: ignore[index]
                                  (key,)).fetchone()[0]:  # one SELECT, one row: never None
                delay = next(delays, None)
                if delay is None:
                    raise RefreshBusy(_holder(con, key), wait_s)
                time.sleep(delay)
            try:
                yield
            finally:
                try:
                    con.execute("SELECT pg_advisory_unlock(%s)", (key,))
                except psycopg.Error:
                    pass  # the connection is gone, and the lock with it
        except psycopg.Error as exc:
            raise pg_store_error(self.location, exc) from exc
        finally:
            con.close()


def _holder(con: Any, key: int) -> str | None:
    """Who holds the refresh lock: the client's application_name and since when."""
    try:
        row = con.execute(
            "SELECT a.application_name, a.backend_start FROM pg_locks l JOIN pg_stat_activity a"
            " ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND l.classid::bigint = %s AND l.objid::bigint = %s",
            ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF)).fetchone()
    except psycopg.Error:
        return None
    if row is None:
        return None
    who = (row[0] or "another client").removeprefix("whichgpu refresh, ")
    return f"{who}, since {row[1].astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}" if row[1] else who
