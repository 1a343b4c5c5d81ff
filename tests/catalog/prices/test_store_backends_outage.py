"""A PostgreSQL store whose server goes away and comes back, as a team's service sees a
database restart or failover: every call fails at once in words (no request hangs on the
pool's wait, so /readyz, /metrics and every priced answer stay quick while it is down), and
the store serves again by itself once the server is back."""

import time

import pytest

import pg_cluster
import store_backends
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.backends.postgres import MAX_WAIT_S, close_pools
from whichgpu.catalog.prices.sources import FeedResult
from whichgpu.catalog.prices.store import StoreError
from whichgpu.units import Money


@pytest.fixture
def own_cluster():
    """A cluster of this test's own (the run's shared one must stay up for the others)."""
    store_backends.cluster()  # skipped (or failed in CI) without PostgreSQL, saying why
    cluster = pg_cluster.start_cluster(max_connections=20)
    yield cluster
    close_pools()
    cluster.stop()


def test_a_server_that_goes_away_fails_fast_and_the_store_recovers_when_it_is_back(
        own_cluster):
    store = PriceStore(own_cluster.url())
    store.save(FeedResult(feed="live", source="test", kind="test", offers=[
        Offer(provider="p", gpu="h100-sxm", price_per_hour=Money(2.0, "USD"),
              observed_at="2026-11-30", source="test")]))
    assert len(store.read()[1]) == 1
    own_cluster.stop_server()

    t0 = time.monotonic()
    with pytest.raises(StoreError) as info:
        store.current()
    first_s = time.monotonic() - t0
    assert "cannot connect to the PostgreSQL server" in info.value.reason
    # The pool would wait MAX_WAIT_S (10 s) for a connection it can never make; a request
    # that waited that long on every store call (a priced page makes several) hangs.
    assert first_s < MAX_WAIT_S / 3, first_s
    t0 = time.monotonic()
    for _ in range(5):
        with pytest.raises(StoreError, match="cannot connect"):
            PriceStore(own_cluster.url()).current()
    assert time.monotonic() - t0 < MAX_WAIT_S / 3

    own_cluster.start_server()
    until = time.monotonic() + 30
    while True:
        try:
            snaps, offers = store.read()
            break
        except StoreError:
            assert time.monotonic() < until, "the store never came back"
            time.sleep(0.25)
    assert [s.feed for s in snaps] == ["live"] and len(offers) == 1


def test_a_busy_pool_is_waited_for_not_mistaken_for_an_outage(pg_url, monkeypatch):
    """Every pooled connection lent (pool of 1): a second call waits past FIRST_WAIT_S, finds
    the server answering, and gets the connection when it is given back."""
    import threading

    from whichgpu.catalog.prices.backends.postgres import FIRST_WAIT_S

    monkeypatch.setenv("WHICHGPU_DATABASE_POOL_SIZE", "1")
    store = PriceStore(pg_url)
    store.current()  # tables made, the one connection pooled
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.backend.read():
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        threading.Timer(FIRST_WAIT_S * 3, release.set).start()
        t0 = time.monotonic()
        assert PriceStore(pg_url).current() == []
        assert time.monotonic() - t0 >= FIRST_WAIT_S * 2  # it did wait for the connection
    finally:
        release.set()
        holder.join(10)


def test_closing_a_backend_gives_its_connections_back(pg_url):
    """What 'serve' does once it has seeded the store: its supervisor holds no connection
    for the life of the server (the workers have their own pools)."""
    import os

    import psycopg

    def mine() -> int:
        with psycopg.connect(pg_url) as con:
            return con.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE %s",
                (f"whichgpu, pid {os.getpid()} %",)).fetchone()[0]

    import time

    before = mine()  # other stores of this test process may hold theirs
    store = PriceStore(pg_url)
    store.current()
    assert mine() > before
    store.backend.close()
    deadline = time.monotonic() + 5  # the server forgets a closed session within moments
    while mine() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mine() == before
    assert store.current() == []  # usable again: a new pool is made on demand
