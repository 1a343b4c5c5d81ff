"""The tests' seeded-store template (tests/seeded_store.py) holds exactly what the real seeding
writes into an empty store, so a test priced from it sees the prices a fresh install sees."""

from __future__ import annotations

import sqlite3

import seeded_store
from whichgpu.catalog.prices import selection
from whichgpu.catalog.prices.store import PriceStore

# fetch times and the store's own bookkeeping differ from run to run: not compared
_VOLATILE = ("fetched_at", "started_at", "finished_at", "at", "updated_at", "created_at")


def _rows(path) -> dict[str, list[tuple]]:
    con = sqlite3.connect(path)
    try:
        out = {}
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                    "AND name NOT LIKE 'sqlite_%' ORDER BY name"):
            cols = [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]
            keep = [c for c in cols if c not in _VOLATILE]
            out[table] = sorted(con.execute(
                f'SELECT {", ".join(keep)} FROM "{table}"').fetchall(), key=repr)
        out["user_version"] = [con.execute("PRAGMA user_version").fetchone()]
        return out
    finally:
        con.close()


def test_an_empty_store_gets_the_rows_the_real_seeding_writes(tmp_path):
    real = PriceStore(tmp_path / "real.sqlite")
    seeded_store.real_ensure_shipped(real)
    copied = PriceStore(tmp_path / "copied.sqlite")
    assert selection.ensure_shipped is seeded_store.ensure_shipped_from_template
    selection.ensure_shipped(copied)
    want, got = _rows(real.path), _rows(copied.path)
    assert want["offer"] and want["snapshot"] and want["current"]
    assert got == want


def _no_template():
    raise AssertionError("the template was copied")


def test_a_store_holding_any_row_is_seeded_by_the_real_code(tmp_path, monkeypatch):
    """A URL source (no snapshot yet): the template never replaces it."""
    st = PriceStore(tmp_path / "p.sqlite")
    assert st.current() == [] and seeded_store._is_empty(st.path)  # the schema, no rows
    con = sqlite3.connect(st.path)
    con.execute("INSERT INTO url_source (name, url, allow_http, added_at) "
                "VALUES ('mine', 'https://example.com/p.csv', 0, '2026-12-01')")
    con.commit()
    con.close()
    assert not seeded_store._is_empty(st.path)
    monkeypatch.setattr(seeded_store, "_template_db", _no_template)
    selection.ensure_shipped(st)
    assert st.current()
    con = sqlite3.connect(st.path)
    assert con.execute("SELECT name FROM url_source").fetchall() == [("mine",)]
    con.close()


def test_real_seeding_turns_the_template_off(tmp_path, real_seeding, monkeypatch):
    monkeypatch.setattr(seeded_store, "_template_db", _no_template)
    st = PriceStore(tmp_path / "p.sqlite")
    selection.ensure_shipped(st)
    assert st.current()
