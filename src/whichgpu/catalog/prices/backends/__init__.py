"""Where the price store lives, and the small interface both engines implement.

``WHICHGPU_DATABASE_URL`` (or ``whichgpu --database-url``) selects the store:

* unset: the SQLite file ``$WHICHGPU_PRICE_STORE``, else ``prices.sqlite`` in the data
  directory (one user on one machine);
* ``postgresql://…`` (or ``postgres://…``): a PostgreSQL database through psycopg 3 with a
  connection pool (a team's service: many workers and machines, one refresh job);
* ``sqlite:///PATH``: a SQLite file named as a URL (four slashes for an absolute path, as
  SQLAlchemy writes it).

A backend gives :class:`~whichgpu.catalog.prices.store.PriceStore` transactions (``read``:
one consistent view of the store; ``write``: one writer at a time, all or nothing) over a
:class:`Tx` that speaks ``?`` placeholders on both engines, applies the schema's migrations on
first use, and holds the refresh lock. Everything else, the SQL included, is shared.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from whichgpu.catalog.prices.schema import Dialect
from whichgpu.errors import InputError, WhichGPUError

DATABASE_URL_ENV = "WHICHGPU_DATABASE_URL"
STORE_ENV = "WHICHGPU_PRICE_STORE"
STORE_FILE = "prices.sqlite"

Kind = Literal["sqlite", "postgresql"]


class StoreError(WhichGPUError):
    """The price store cannot be used as it stands (a server fault, not bad input: HTTP 503).

    ``reason`` says why without the store's location (safe to show anyone); ``str(exc)``
    names the file or the database (never its password) for the person who runs it, with the
    engine's own words in ``detail`` where they help. Nothing here ever advises deleting the
    store.
    """

    def __init__(self, path: object, reason: str, detail: str | None = None) -> None:
        self.path = str(path)
        self.reason = reason
        self.detail = detail
        super().__init__(f"price store {self.path}: {reason}"
                         + (f" [{detail}]" if detail else ""))


class RefreshBusy(WhichGPUError):
    """Another process holds the refresh lock (and this one was told not to wait longer)."""

    def __init__(self, holder: str | None, waited_s: float) -> None:
        self.holder = holder
        self.waited_s = waited_s
        who = f" ({holder})" if holder else ""
        waited = f" after waiting {waited_s:g} s" if waited_s else ""
        super().__init__(
            f"another refresh is running{who}, so this one was skipped{waited}: its prices "
            "will be the store's when it finishes ('whichgpu prices refresh --wait 10m' waits "
            "for it instead)")


def holder_text() -> str:
    """Who takes a lock, as another process will be told: 'pid 123 on host-a'."""
    import socket  # only when a lock is taken; keeps it off every start

    return f"pid {os.getpid()} on {socket.gethostname()}"


@dataclass(frozen=True)
class StoreTarget:
    """A parsed store location: a SQLite file or a PostgreSQL connection URL."""

    kind: Kind
    path: Path | None = None  # SQLite
    url: str | None = None  # PostgreSQL, as given (password included: never print it)

    @property
    def location(self) -> str:
        """For people and logs: the file, or the URL with its password replaced by ***."""
        return redact(str(self.path) if self.kind == "sqlite" else self.url or "")


# The user name and password of a URL: after the scheme, a name, ':', then anything up to the
# last '@' before the path (a password holding '@', '?' or '#' is hidden whole); failing that,
# up to an '@' before any query (one holding '/', which parse_target refuses, is hidden too).
_CREDENTIALS = (re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*):[^/]*@"),
                re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*):[^@?]*@"))
_PASSWORD_PARAM = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)
# libpq's keyword/value form (``host=db password='s3 cret' dbname=x``): the value is a quoted
# string (with \' and \\ escapes) or runs to the next blank.
_PASSWORD_KEYWORD = re.compile(r"((?:^|[\s/])password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|\S*)",
                               re.IGNORECASE)


def redact(url: str) -> str:
    """``url`` without its password (in the authority, a ``password=`` parameter, or a
    libpq keyword/value ``password=``). Never fails, whatever the text."""
    for pattern in _CREDENTIALS:
        hidden, found = pattern.subn(r"\1:***@", url, count=1)
        if found:
            url = hidden
            break
    url = _PASSWORD_PARAM.sub(r"\1***", url)
    return _PASSWORD_KEYWORD.sub(r"\1***", url)


# ``word=`` at the start or after a blank: libpq's keyword/value connection string, which
# libpq reads but which whichgpu would otherwise take for a file name (and print, password
# and all, and create in the working directory).
_KEYWORD_VALUE = re.compile(r"(?:^|\s)[A-Za-z_][A-Za-z0-9_]*\s*=|password\s*=", re.IGNORECASE)
_KEYWORD_HINT = ("the price store looks like a libpq keyword/value connection string "
                 "(host=... dbname=...): write it as a postgresql:// URL "
                 "(postgresql://USER@HOST:PORT/DBNAME, the password in PGPASSWORD or "
                 "~/.pgpass), or give a SQLite file path")


def _check_file_path(text: str) -> Path:
    """A SQLite file path, if ``text`` plausibly is one (the refusal never repeats the text:
    it may hold a password)."""
    if not text:
        raise InputError("the price store location is empty: give a SQLite file path or a "
                         "postgresql:// URL")
    if _KEYWORD_VALUE.search(text):
        raise InputError(_KEYWORD_HINT)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise InputError("the price store location holds a control character (a newline?): "
                         "give a SQLite file path or a postgresql:// URL")
    return Path(text).expanduser()


_ENCODE_HINT = ("percent-encode any '@', '/', '?', '#' or ':' in the user name or password "
                "(%40, %2F, %3F, %23, %3A), or leave the password out of the URL and set "
                "PGPASSWORD (or a ~/.pgpass file)")


def _check_postgres_url(text: str) -> None:
    """Refuse a URL that libpq would read differently from what it looks like (it would
    take part of the password for the host or port, and echo it in its errors). The
    message never shows the URL: its password may be the part that is misread."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError when the port is not a number
    except ValueError:
        raise InputError("the PostgreSQL database URL cannot be read (its host or port "
                         f"part is malformed): {_ENCODE_HINT}") from None
    if parts.netloc.count("@") > 1 or "@" in parts.path:
        raise InputError("the PostgreSQL database URL has an '@' that libpq would read as "
                         f"the end of the password: {_ENCODE_HINT}")


def default_store_path() -> Path:
    """The SQLite file: ``$WHICHGPU_PRICE_STORE``, else ``prices.sqlite`` in the data
    directory."""
    from whichgpu.paths import data_dir

    env = os.environ.get(STORE_ENV)
    return _check_file_path(env.strip()) if env and env.strip() else data_dir() / STORE_FILE


def parse_target(target: str | Path | None) -> StoreTarget:
    """Where a store is: a ``Path`` or plain string is a SQLite file, a URL is read by its
    scheme; None is the default (``$WHICHGPU_DATABASE_URL``, else the SQLite file)."""
    if target is None:
        env = os.environ.get(DATABASE_URL_ENV, "").strip()
        if not env:
            return StoreTarget("sqlite", path=default_store_path())
        target = env
    if isinstance(target, Path):
        return StoreTarget("sqlite", path=target.expanduser())
    text = str(target).strip()
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if not scheme:
        return StoreTarget("sqlite", path=_check_file_path(text))
    if scheme in ("postgresql", "postgres"):
        _check_postgres_url(text)
        return StoreTarget("postgresql", url=text)
    if scheme == "sqlite":
        rest = text.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise InputError(f"database URL {redact(text)!r}: write a SQLite file as "
                             "sqlite:///relative/path or sqlite:////absolute/path")
        return StoreTarget("sqlite", path=_check_file_path(rest[1:]))
    raise InputError(f"database URL scheme {scheme!r} is not supported: use postgresql://… "
                     "for PostgreSQL, or a SQLite file path (unset WHICHGPU_DATABASE_URL for "
                     "the default file)")


class Tx(ABC):
    """One open transaction. SQL uses ``?`` placeholders on both engines."""

    @abstractmethod
    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """Run one statement; the result iterates over row tuples (``fetchone``,
        ``fetchall`` and ``rowcount`` as in DB-API)."""

    @abstractmethod
    def insert_id(self, sql: str, args: Sequence[Any]) -> int:
        """Run one INSERT into a table with an ``id`` key and return the new row's id."""

    @abstractmethod
    def insert_rows(self, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        """Insert many rows at once (SQLite: executemany; PostgreSQL: COPY)."""


class Backend(ABC):
    """A store engine: transactions, the schema version and the refresh lock."""

    dialect: Dialect
    location: str

    @abstractmethod
    def read(self) -> AbstractContextManager[Tx]:
        """A read-only transaction: every query in it sees the same state of the store, and
        a refresh in progress never blocks it."""

    @abstractmethod
    def write(self) -> AbstractContextManager[Tx]:
        """A write transaction: one writer at a time, committed whole or not at all."""

    @abstractmethod
    def schema_version(self) -> int:
        """The schema version the store is at now."""

    @abstractmethod
    def refresh_lock(self, wait_s: float = 0.0) -> AbstractContextManager[None]:
        """Held for a whole refresh, fetching included: a second refresh (any process, any
        machine sharing the store) waits up to ``wait_s`` and then raises
        :class:`RefreshBusy` naming the holder."""

    def close(self) -> None:  # noqa: B027 - most backends hold nothing between calls
        """Release what this backend holds (connections); the store stays as it is."""


def poll_delays(wait_s: float, step_s: float = 0.25) -> Iterator[float]:
    """Sleeps between tries of a lock, adding up to ``wait_s`` (none when 0)."""
    left = wait_s
    while left > 0:
        step = min(step_s, left)
        left -= step
        yield step
