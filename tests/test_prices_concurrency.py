"""Readers are never blocked by a refresh in progress, and never see half a snapshot.

Real processes: one writer runs ``refresh()`` (what ``whichgpu prices refresh`` runs) and holds
each write transaction open for HOLD_S seconds with its pages already spilled to disk (a slow
refresh caught mid-write; with a rollback journal instead of WAL this blocks readers); two
readers read the store in a loop. Every read must be a whole snapshot (its offer count and
its price name the same version) and must finish well within HOLD_S.
"""

import json
import subprocess
import sys
import textwrap

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.sources import FeedResult
from whichgpu.units import Money

HOLD_S = 1.5
ROUNDS = 3
BASE = 2000  # version k has BASE + k offers, all priced k + 1

COMMON = """
import json, sys, time
from pathlib import Path
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.store import PriceStore
from whichgpu.catalog.prices.sources import FeedResult
from whichgpu.units import Money
store = PriceStore(sys.argv[1])
done = Path(sys.argv[1] + ".done")
"""

WRITER = COMMON + f"""
open_ = PriceStore._open
def small_cache_open(self):
    con = open_(self)
    con.execute("PRAGMA cache_size = 16")  # spill the snapshot to disk mid-transaction
    return con
PriceStore._open = small_cache_open
swap = PriceStore._swap
def slow_swap(con, feed, snap_id):
    time.sleep({HOLD_S})  # the write transaction is open: a refresh in progress
    swap(con, feed, snap_id)
PriceStore._swap = staticmethod(slow_swap)
from whichgpu.catalog.prices.refresh import refresh
from whichgpu.catalog.prices.sources import PriceSource

class Live(PriceSource):
    kind, name = "test", "test"
    def __init__(self, k):
        self.k = k
    def fetch(self, progress=None):
        offers = [Offer(provider="p", gpu="h100-sxm", price_per_hour=Money(self.k + 1.0, "USD"),
                        observed_at="2026-11-30", source="test") for _ in range({BASE} + self.k)]
        yield FeedResult(feed="live", source="test", kind="test", offers=offers)

for k in range(1, {ROUNDS} + 1):
    assert refresh([Live(k)], store).ok
done.touch()
print(json.dumps({{"rounds": {ROUNDS}}}))
"""

READER = COMMON + f"""
seen, reads, slowest, errors = set(), 0, 0.0, []
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    finished = done.exists()
    t0 = time.monotonic()
    try:
        _, offers = store.read()
    except Exception as exc:
        errors.append(repr(exc))
        break
    slowest = max(slowest, time.monotonic() - t0)
    reads += 1
    live = [o for o in offers if o.offer_set == "live"]
    prices = {{o.price_per_hour.amount for o in live}}
    if len(prices) != 1 or len(live) != {BASE} + int(prices.pop()) - 1:
        errors.append(f"half a snapshot: {{len(live)}} offers, prices {{sorted(prices)}}")
    else:
        seen.add(len(live) - {BASE})
    if finished:
        break
print(json.dumps({{"reads": reads, "slowest_s": slowest, "versions": sorted(seen),
                  "errors": errors}}))
"""


def test_two_readers_are_never_blocked_while_one_process_refreshes(tmp_path):
    path = tmp_path / "prices.sqlite"
    store = PriceStore(path)
    store.save(FeedResult(feed="live", source="test", kind="test", offers=[
        Offer(provider="p", gpu="h100-sxm", price_per_hour=Money(1.0, "USD"),
              observed_at="2026-11-30", source="test") for _ in range(BASE)]))

    def start(code: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    readers = [start(READER), start(READER)]
    writer = start(WRITER)
    results = []
    try:
        for proc in (writer, *readers):
            out, err = proc.communicate(timeout=90)
            assert proc.returncode == 0, err
            results.append(json.loads(out))
    finally:
        for proc in (writer, *readers):
            if proc.poll() is None:
                proc.kill()
    for r in results[1:]:
        assert r["errors"] == []
        assert r["reads"] >= 10
        assert r["slowest_s"] < HOLD_S * 0.6, r  # never waited for the writer's lock
        assert r["versions"][-1] == ROUNDS  # the last snapshot, whole
    assert len(store.snapshots("live")) == ROUNDS + 1
