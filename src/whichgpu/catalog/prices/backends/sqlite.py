"""The SQLite backend (standard library): one file, WAL, any number of reader processes.

* WAL mode: readers never wait for a writer, and see the last commit before their read
  transaction began, whole.
* A write transaction starts with ``BEGIN IMMEDIATE``: one writer at a time, the others wait
  up to ``timeout_s`` (SQLite's busy timeout).
* ``PRAGMA user_version`` is the schema version. Migrations run inside ``BEGIN IMMEDIATE``
  after reading the version again, so two processes opening an old file migrate it once.
* The refresh lock is an OS lock (``flock``) on ``<store>.refresh-lock`` beside the file; the
  OS drops it when its process ends, however it ends. The file holds who took it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from whichgpu.catalog.prices import schema
from whichgpu.catalog.prices.backends import (
    Backend,
    RefreshBusy,
    StoreError,
    Tx,
    holder_text,
    poll_delays,
)


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder``: tried, not judged from its mode bits
    (root passes ``os.access`` on a read-only mount or a folder like /sys that refuses
    files)."""
    import errno
    import tempfile

    if not os.access(folder, os.W_OK):
        return False
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError as exc:
        return exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS)


def store_error(path: Path, exc: BaseException) -> StoreError:
    """What went wrong with the store file, said accurately (read-only, full, locked ...)."""
    text = str(exc).lower()
    folder = path.parent
    if isinstance(exc, PermissionError) or "readonly" in text or "read-only" in text or (
            "unable to open" in text and folder.exists() and not _can_create_in(folder)):
        return StoreError(path, "the store's folder or file is read-only, so it cannot be "
                          "opened for writing; the prices in it are intact. Make it writable, "
                          "or point --store / WHICHGPU_PRICE_STORE at a writable file")
    if "disk is full" in text or "no space" in text or getattr(exc, "errno", None) == 28:
        return StoreError(path, "the disk is full; nothing was changed and the stored prices "
                          "are intact. Free some space and run the command again")
    if "locked" in text or "busy" in text:
        return StoreError(path, "another process holds the store's write lock (a refresh or "
                          "import still running?); try again when it has finished")
    if "not a database" in text or "malformed" in text or "encrypted" in text:
        return StoreError(path, "this file is not a readable price store (not SQLite, or "
                          "damaged). whichgpu leaves it untouched: keep it for inspection and "
                          "point --store / WHICHGPU_PRICE_STORE at another file")
    if "unable to open" in text:
        return StoreError(path, f"the file cannot be opened ({exc}); check that its folder "
                          "exists and is accessible")
    return StoreError(path, f"{type(exc).__name__}: {exc}")


def _rollback(con: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open (never mask the first error)."""
    if con.in_transaction:
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass


class SQLiteTx(Tx):
    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.con.execute(sql, args)

    def insert_id(self, sql: str, args: Sequence[Any]) -> int:
        rowid = self.con.execute(sql, args).lastrowid
        assert rowid is not None  # an INSERT always sets it
        return rowid

    def insert_rows(self, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        marks = ", ".join("?" * len(columns))
        self.con.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
                             rows)


class SQLiteBackend(Backend):
    """A price store file. Each transaction opens its own connection, so one object may be
    used from several threads, and several processes may share the file."""

    dialect = "sqlite"

    def __init__(self, path: Path, timeout_s: float = 30.0) -> None:
        self.path = path
        self.location = str(path)
        self.timeout_s = timeout_s
        self._migrated = False

    # -------------------------------------------------------------- connections

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise store_error(self.path, exc) from exc
        try:
            con.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
            mode = con.execute("PRAGMA journal_mode").fetchone()[0]
            if mode != "wal":
                con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA synchronous = NORMAL")
            con.execute("PRAGMA foreign_keys = ON")
            if not self._migrated:
                self._migrate(con)
                self._migrated = True
        except StoreError:
            con.close()
            raise
        except (OSError, sqlite3.Error) as exc:
            con.close()
            raise store_error(self.path, exc) from exc
        return con

    def _migrate(self, con: sqlite3.Connection) -> None:
        latest = len(schema.MIGRATIONS)
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version > latest:
            raise StoreError(self.path, f"schema version {version} was written by a newer "
                             f"whichgpu (this one knows up to {latest}); the file is left as "
                             "it is: upgrade whichgpu, or point --store / WHICHGPU_PRICE_STORE "
                             "at another file")
        if version == latest:
            return
        con.execute("BEGIN IMMEDIATE")
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]  # another process?
            for statement in schema.steps("sqlite", version):
                con.execute(statement)
            con.execute(f"PRAGMA user_version = {latest}")
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise

    @contextmanager
    def read(self) -> Iterator[SQLiteTx]:
        con = self._open()
        try:
            con.execute("BEGIN")
            yield SQLiteTx(con)
            con.execute("COMMIT")
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from exc
        finally:
            con.close()

    @contextmanager
    def write(self) -> Iterator[SQLiteTx]:
        con = self._open()
        try:
            try:
                con.execute("BEGIN IMMEDIATE")
                yield SQLiteTx(con)
                con.execute("COMMIT")
            except BaseException as exc:
                _rollback(con)  # a failed COMMIT (disk full) may have ended the transaction
                if isinstance(exc, sqlite3.Error):
                    raise store_error(self.path, exc) from exc
                raise
        finally:
            con.close()

    def schema_version(self) -> int:
        with self.read() as tx:
            return tx.execute("PRAGMA user_version").fetchone()[0]

    # -------------------------------------------------------------- the refresh lock

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".refresh-lock")

    @contextmanager
    def refresh_lock(self, wait_s: float = 0.0) -> Iterator[None]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise store_error(self.lock_path, exc) from exc
        try:
            delays = poll_delays(wait_s)
            while not _try_lock(fd):
                delay = next(delays, None)
                if delay is None:
                    raise RefreshBusy(_holder(fd), wait_s)
                time.sleep(delay)
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, json.dumps({"holder": holder_text(), "since": time.strftime(
                "%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode())
            try:
                yield
            finally:
                os.ftruncate(fd, 0)
                _unlock(fd)
        finally:
            os.close(fd)


def _holder(fd: int) -> str | None:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        info = json.loads(os.read(fd, 4096) or b"{}")
    except (OSError, ValueError):
        return None
    if not info.get("holder"):
        return None
    return f"{info['holder']}, since {info['since']}" if info.get("since") else info["holder"]


try:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
except ImportError:  # Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 1 << 20, os.SEEK_SET)  # lock a byte past the holder's text
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]  # Windows-only API
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 1 << 20, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]  # Windows-only API
