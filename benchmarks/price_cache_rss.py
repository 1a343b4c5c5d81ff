"""Memory of the web's price caches across price periods, in one process (not a test).

What ``server_rss.py`` measures through a server, without the server: a store of ``--offers``
synthetic offers (``synthetic_store.py``) gets a new snapshot of every feed per period, and the
web's price selections are read as a server's visitors read them (every offer, the cheapest
offers, each of 8 GPUs' offers). Each period drops the previous period's selections (a new
snapshot generation); the process's RSS after each period is printed. ``--no-trim`` turns off
the trim a new generation does (``services.release_memory``), to see what it saves.

    python benchmarks/price_cache_rss.py                 # 20k offers, 8 periods
    python benchmarks/price_cache_rss.py --no-trim
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

GPUS = ["h100-sxm", "a100-80gb-sxm", "rtx-4090", "l40s", "rtx-a6000", "h200-sxm", "l4",
        "rtx-5090"]


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--offers", type=int, default=20000, help="Current offers (20000).")
    ap.add_argument("--periods", type=int, default=8, help="Price periods (8).")
    ap.add_argument("--no-trim", action="store_true", help="Do not trim at a new generation.")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="whichgpu-bench-cache-"))
    os.environ.update({"WHICHGPU_HOME": str(folder / "home"), "WHICHGPU_OFFLINE": "1",
                       "WHICHGPU_PRICE_STORE": str(folder / "prices.sqlite"),
                       "HF_HUB_OFFLINE": "1"})
    import synthetic_store

    from whichgpu.catalog.prices.store import PriceStore
    from whichgpu.web import services

    services.OFFER_CACHE_S = 0.0  # see every new snapshot at once
    if args.no_trim:
        services.release_memory = lambda: None
    store = PriceStore(folder / "prices.sqlite")
    periods = synthetic_store.periods(args.offers, count=args.periods)
    figures = []
    for p in range(args.periods):
        for r in next(periods):
            store.save(r)
        t = time.perf_counter()
        services.offers(None)
        services.offers(None, cheapest_only=True)
        for g in GPUS:
            services.offers(None, gpus=(g,))
            services.offers(None, gpus=(g,), cheapest_only=True)
        figures.append(rss_mb())
        print(f"period {p + 1}: RSS {figures[-1]:.1f} MB ({time.perf_counter() - t:.1f} s)",
              flush=True)
    print(f"{args.offers:,} offers, {args.periods} periods, "
          f"{'no trim' if args.no_trim else 'trim at each new snapshot'}: RSS "
          f"{figures[0]:.1f} MB after the first period, {figures[-1]:.1f} MB after the last "
          f"(peak {max(figures):.1f}): growth {figures[-1] - figures[0]:+.1f} MB")


if __name__ == "__main__":
    main()
