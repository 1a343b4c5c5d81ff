"""Price-store fixtures on both engines: a SQLite file, and a real throwaway PostgreSQL.

One PostgreSQL cluster is started per test run, the first time a test asks for it
(``pg_cluster.start_cluster``: initdb in a temporary folder, a Unix socket only, run as the
``postgres`` user when we are root), and stopped at exit. Each test gets a fresh, empty schema
of its own (the URL's ``search_path``), as good as a fresh database and much faster to make.

Without PostgreSQL's binaries or psycopg the PostgreSQL cases are skipped, saying why, except
where ``WHICHGPU_REQUIRE_POSTGRES=1`` (set by ``.ci/run``, which installs Debian's
``postgresql``): there they fail.

``conftest.py`` loads this module as a plugin: every test may ask for ``store``, ``store_url``
or ``pg_url``.
"""

from __future__ import annotations

import atexit
import itertools
import os

import pytest

import pg_cluster

_cluster: pg_cluster.Cluster | None = None
_problem: str | None = None
_schemas = itertools.count(1)


def _unavailable(reason: str):
    if os.environ.get(pg_cluster.REQUIRE_ENV, "").strip() in ("1", "true", "yes"):
        pytest.fail(f"PostgreSQL is required here ({pg_cluster.REQUIRE_ENV}=1): {reason}")
    pytest.skip(f"no PostgreSQL to test against: {reason}")


def cluster() -> pg_cluster.Cluster:
    """The run's cluster, started on first use (or the test is skipped, or failed in CI)."""
    global _cluster, _problem
    if _cluster is None and _problem is None:
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError:
            _problem = "psycopg 3 and psycopg_pool are not installed (pip install -e '.[dev]')"
        else:
            if pg_cluster.find_bindir() is None:
                _problem = ("PostgreSQL's initdb and postgres were not found (apt-get install "
                            "postgresql, or set WHICHGPU_PG_BINDIR)")
            else:
                try:
                    _cluster = pg_cluster.start_cluster()
                except (RuntimeError, OSError) as exc:
                    _problem = f"the throwaway cluster did not start: {exc}"
                else:
                    atexit.register(_cluster.stop)
    if _cluster is None:
        _unavailable(_problem or "unknown")
    return _cluster


def fresh_schema_url() -> str:
    """A URL whose search_path is a new, empty schema of the run's cluster."""
    import psycopg

    c = cluster()
    name = f"t{os.getpid()}_{next(_schemas)}"
    with psycopg.connect(c.url(), autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {name}")
    return c.url(options=f"-csearch_path={name}")


@pytest.fixture
def pg_url():
    """A PostgreSQL store URL (an empty schema of its own); its pools are closed after."""
    url = fresh_schema_url()
    yield url
    from whichgpu.catalog.prices.backends.postgres import close_pools

    close_pools()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> str:
    """Where a store lives, once per engine: a SQLite file's path, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "prices.sqlite")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(store_url):
    from whichgpu.catalog.prices import PriceStore

    return PriceStore(store_url)
