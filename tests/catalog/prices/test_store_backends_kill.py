"""A refresh killed half-way (SIGKILL: the OOM killer, a node drained without grace), on both
engines: the previous prices stay current and are served meanwhile, nothing of the killed
refresh is left in the store, and its locks are free at once for the next refresh (SQLite:
the OS drops the flock and the write transaction with the process; PostgreSQL: the server
ends the session and its advisory locks when the connection drops)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.refresh import refresh
from whichgpu.catalog.prices.sources import FeedResult, PriceSource
from whichgpu.units import Money

N = 2000  # offers per snapshot; the killed refresh stops after writing half of them

CHILD = f"""
import sys, time
from pathlib import Path
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import store as store_mod
from whichgpu.catalog.prices.refresh import refresh
from whichgpu.catalog.prices.sources import FeedResult, PriceSource
from whichgpu.units import Money

url, marker, where = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
row = store_mod._offer_row

def stalled_row(snap_id, seq, offer):  # the write transaction is open, half the rows sent
    if seq == {N // 2}:
        marker.write_text(str(snap_id))
        time.sleep(600)
    return row(snap_id, seq, offer)

if where == "writing":
    store_mod._offer_row = stalled_row

class Live(PriceSource):
    kind, name = "test", "live"
    def fetch(self, progress=None):
        if where == "downloading":  # holding the refresh lock, nothing written yet
            marker.write_text("downloading")
            time.sleep(600)
        yield FeedResult(feed="live", source="test", kind="test", offers=[
            Offer(provider=f"p{{i}}", gpu="h100-sxm", price_per_hour=Money(9.0, "USD"),
                  observed_at="2026-11-30", source="test") for i in range({N})])

refresh([Live()], store_mod.PriceStore(url), force=True)
"""


def _feed(price: float) -> FeedResult:
    return FeedResult(feed="live", source="test", kind="test", offers=[
        Offer(provider=f"p{i}", gpu="h100-sxm", price_per_hour=Money(price, "USD"),
              observed_at="2026-11-30", source="test") for i in range(N)])


class Again(PriceSource):
    kind, name = "test", "live"

    def fetch(self, progress=None):
        yield _feed(3.0)


@pytest.mark.parametrize("where", ["downloading", "writing"])
def test_a_refresh_killed_half_way_keeps_the_prices_and_frees_its_locks(store, store_url,
                                                                        tmp_path, where):
    store.save(_feed(1.0))
    before = store.generation()
    snapshots = len(store.snapshots())
    marker = tmp_path / "reached"
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD), store_url,
                              str(marker), where], stderr=subprocess.PIPE, text=True)
    try:
        until = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, child.stderr.read()
            assert time.monotonic() < until, "the refresh never got there"
            time.sleep(0.05)
        if where == "writing" and store.dialect == "postgresql":
            import psycopg

            with psycopg.connect(store_url) as con:  # its transaction is open, rows in it
                states = {r[0] for r in con.execute(
                    "SELECT state FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND "
                    "backend_type = 'client backend' AND xact_start IS NOT NULL")}
                assert states & {"active", "idle in transaction"}, states
        t0 = time.monotonic()
        _, offers = PriceStore(store_url).read()  # served meanwhile, not blocked
        assert time.monotonic() - t0 < 5
        assert len(offers) == N and {o.price_per_hour.amount for o in offers} == {1.0}
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
    assert child.returncode == -signal.SIGKILL

    after = PriceStore(store_url)
    assert after.generation() == before  # the previous prices are still the current ones
    assert len(after.snapshots()) == snapshots  # nothing of the killed refresh was kept
    _, offers = after.read()
    assert len(offers) == N and {o.price_per_hour.amount for o in offers} == {1.0}
    t0 = time.monotonic()
    report = refresh([Again()], after, force=True, wait_s=10)  # both locks are free
    assert report.ok and time.monotonic() - t0 < 5
    _, offers = after.read()
    assert len(offers) == N and {o.price_per_hour.amount for o in offers} == {3.0}
