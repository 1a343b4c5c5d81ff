"""The shipped prices, seeded once per test process and copied into each test's price store.

Every priced command seeds an empty store with the shipped article sets and the shipped market
snapshot (``selection.ensure_shipped``): twelve feeds, each its own write transaction, about
55 ms of CPU. Each test has its own ``WHICHGPU_HOME``, so its own empty store, and about a
thousand tests price something: a minute of the suite's CPU for the same rows every time.

Here ``ensure_shipped`` is wrapped for the whole run: when it meets an empty SQLite store (no
row in any table), the wrapper first copies in a template, a store the real ``ensure_shipped``
seeded once in this process (SQLite's backup API, page for page), then runs the real
``ensure_shipped`` on it, which finds every shipped feed already there with the shipped digest
and writes nothing. A store that holds anything (a failed refresh, a URL source, an import)
and every PostgreSQL store are seeded by the real code as before; so is the template itself,
whose seeding runs the real code from empty in every test process. The rows are the ones the
real seeding writes (tests/project/test_seeded_store.py compares them); only the snapshots' fetch
times are the template's, earlier in the same run.

A test that must see the real seeding of an empty store asks for the ``real_seeding`` fixture.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from whichgpu.catalog.prices import selection

_real_ensure_shipped = selection.ensure_shipped
_template: sqlite3.Connection | None = None  # the seeded store, in memory
_lock = threading.RLock()  # a web test's app may price from another thread
_active = True


def real_ensure_shipped(store, current=None) -> None:
    """The unwrapped ``ensure_shipped``."""
    _real_ensure_shipped(store, current)


def _template_db() -> sqlite3.Connection:
    """A store seeded by the real ``ensure_shipped`` (once per process), held in memory."""
    global _template
    if _template is None:
        from whichgpu.catalog.prices.store import PriceStore

        with tempfile.TemporaryDirectory(prefix="whichgpu-template-") as tmp:
            path = Path(tmp) / "prices.sqlite"
            _real_ensure_shipped(PriceStore(path))
            disk = sqlite3.connect(path)
            memory = sqlite3.connect(":memory:", check_same_thread=False)
            disk.backup(memory)
            disk.close()
        _template = memory
    return _template


def _is_empty(path: Path) -> bool:
    """Whether the SQLite store at ``path`` has no row in any table (or no file yet)."""
    if not path.exists():
        return True
    con = sqlite3.connect(path, timeout=30)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%'")]
        return not any(con.execute(f'SELECT 1 FROM "{t}" LIMIT 1').fetchone() for t in tables)
    finally:
        con.close()


def ensure_shipped_from_template(store, current=None) -> None:
    """``ensure_shipped``, starting an empty SQLite store from the run's seeded template."""
    if _active and store.dialect == "sqlite":
        if current is None:
            current = store.current()
        if not current:
            with _lock:
                if _is_empty(Path(store.path)):
                    target = sqlite3.connect(store.path, timeout=30)
                    try:
                        _template_db().backup(target)
                    finally:
                        target.close()
            current = None  # read again: the template's snapshots, or what is there
    _real_ensure_shipped(store, current)


def install() -> None:
    """Wrap ``ensure_shipped`` in ``selection`` (where modules imported later take it from)
    and in every module already loaded that imported the name."""
    for module in list(sys.modules.values()):
        if getattr(module, "ensure_shipped", None) is _real_ensure_shipped:
            module.ensure_shipped = ensure_shipped_from_template


@pytest.fixture
def real_seeding():
    """This test's empty stores are seeded by the real ``ensure_shipped``, not the template."""
    global _active
    _active = False
    try:
        yield
    finally:
        _active = True


def pytest_configure(config: pytest.Config) -> None:
    install()
