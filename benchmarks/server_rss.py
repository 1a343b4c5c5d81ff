"""Memory of a web server whose prices keep changing (not a test): RSS over price periods.

Builds a price store of ``--offers`` current offers (synthetic offers over the real catalog
ids, see ``synthetic_store.py``), starts ``whichgpu serve`` on it (uvicorn in a subprocess,
loopback, offline), and then, ``--periods`` times: stores a new snapshot of every feed (what
a refresh does), waits until the server has seen it, and sends the same steady traffic in
every period: ``--requests`` requests at up to ``--rate`` per second (priced API answers and
pages, each question varied so that caches fill; the same questions in every period, as
visitors come back). The server's resident memory (VmRSS from /proc) is read after each
period; the growth from the first period to the last is the figure (issue 21: under 30 MB with
20k offers over 10 periods). A server that kept old periods' offers or answers would grow
with every period.

    python benchmarks/server_rss.py                      # 20k offers, 10 periods
    python benchmarks/server_rss.py --offers 20000 --periods 10 --requests 400 --out x.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic_store
from web_load import free_port

from whichgpu.catalog.prices.store import PriceStore

TARGET_MB = 30.0
GPUS = ["h100-sxm", "a100-80gb-sxm", "rtx-4090", "l40s", "rtx-a6000", "h200-sxm", "l4",
        "rtx-5090", "mi300x", "rtx-3090"]
# (path with {v} = a varied value, how the value varies)
TRAFFIC = [
    ("/api/v1/recommend?model=llama-3.1-8b&quant=awq&tokens={v}M", lambda r: r.randint(1, 500)),
    ("/api/v1/recommend?model=llama-3.1-70b&quant=awq&tokens={v}M&only=h100-sxm,a100-80gb-sxm",
     lambda r: r.randint(1, 500)),
    ("/api/v1/cost?gpu={v}&duration=3h", lambda r: r.choice(GPUS)),
    ("/api/v1/tco?gpu={v}", lambda r: r.choice(GPUS)),
    ("/api/v1/gpus?min_memory={v}GB", lambda r: r.randint(8, 192)),
    ("/api/v1/checklist?workload=inference&model=7B&budget_per_hour=2USD&horizon_months=6"
     "&hours_per_month={v}", lambda r: r.randint(10, 700)),
    ("/api/v1/prices?gpu={v}&limit=20", lambda r: r.choice(GPUS)),
    ("/api/v1/prices?limit={v}", lambda r: r.randint(5, 50)),
    ("/api/v1/gpus/{v}", lambda r: r.choice(GPUS)),
    ("/?model=llama-3.1-8b&quant=awq&unit=tokens&amount={v}M", lambda r: r.randint(1, 500)),
    ("/prices?gpu={v}", lambda r: r.choice(GPUS)),
]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    return kb / 1024


def start(port: int, home: Path, store: Path):
    import subprocess

    env = {**os.environ, "WHICHGPU_HOME": str(home), "WHICHGPU_PRICE_STORE": str(store),
           "HF_HUB_OFFLINE": "1", "WHICHGPU_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-c", "from whichgpu.cli import main; main()",
                             "serve", "--host", "127.0.0.1", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(base + "/api/v1/models", timeout=10).read()
            return proc, base
        except (urllib.error.URLError, OSError):  # refused, reset, or slow (a loaded host)
            if proc.poll() is not None:
                raise SystemExit(f"the server did not start: {proc.stderr.read()}") from None
            time.sleep(0.2)
    raise SystemExit("the server did not answer within 60 s")


def traffic(base: str, requests: int, rate: float, seed: int, clients: int = 4) -> dict:
    """``requests`` requests (``requests // clients`` per client thread) at up to ``rate`` per
    second; the statuses they got."""
    counts: dict[str, int] = {}
    lock = threading.Lock()

    def client(k: int) -> None:
        rng = random.Random(seed * 100 + k)
        gap = clients / rate
        nxt = time.monotonic()
        for _ in range(requests // clients):
            path, vary = TRAFFIC[rng.randrange(len(TRAFFIC))]
            url = base + path.replace("{v}", str(vary(rng)))
            try:
                with urllib.request.urlopen(url, timeout=60) as r:
                    r.read()
                    status = str(r.status)
            except urllib.error.HTTPError as exc:
                status = str(exc.code)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                status = type(exc).__name__
            with lock:
                counts[status] = counts.get(status, 0) + 1
            nxt += gap
            time.sleep(max(0.0, nxt - time.monotonic()))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--offers", type=int, default=20000, help="Current offers (20000).")
    ap.add_argument("--periods", type=int, default=10, help="Price periods (10).")
    ap.add_argument("--requests", type=int, default=400, help="Requests per period (400).")
    ap.add_argument("--rate", type=float, default=20.0, help="At most this many a second (20).")
    ap.add_argument("--out", help="Also write the figures to this JSON file.")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="whichgpu-bench-rss-"))
    store_path = folder / "prices.sqlite"
    store = PriceStore(store_path)
    periods = synthetic_store.periods(args.offers, count=args.periods)
    for r in next(periods):
        store.save(r)
    proc, base = start(free_port(), folder / "home", store_path)
    rows = []
    try:
        for p in range(args.periods):
            if p:
                t = time.perf_counter()
                for r in next(periods):  # a refresh: a new snapshot of every feed
                    store.save(r)
                stored = time.perf_counter() - t
                time.sleep(11)  # the server checks the store for new snapshots every 10 s
            else:
                stored = 0.0
            counts = traffic(base, args.requests, args.rate, seed=1)  # the same questions
            gen = json.loads(urllib.request.urlopen(
                base + "/api/v1/prices?limit=1").read())["prices"]["feeds"][0]["version"]
            rows.append({"period": p + 1, "rss_mb": rss_mb(proc.pid), "requests": counts,
                         "store_s": stored, "server_sees": gen})
            print(f"period {p + 1:2d}: RSS {rows[-1]['rss_mb']:7.1f} MB  served "
                  f"{sum(counts.values())} requests {counts}  prices of {gen}", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    first, last = rows[0]["rss_mb"], rows[-1]["rss_mb"]
    peak = max(r["rss_mb"] for r in rows)
    growth = last - first
    print(f"{args.offers:,} offers, {args.periods} price periods, {args.requests} requests "
          f"each: RSS {first:.1f} MB after the first period, {last:.1f} MB "
          f"after the last (peak {peak:.1f}): growth {growth:+.1f} MB "
          f"({'meets' if growth < TARGET_MB else 'MISSES'} the < {TARGET_MB:g} MB target)")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"offers": args.offers, "periods": rows,
                                              "growth_mb": growth}, indent=1) + "\n")


if __name__ == "__main__":
    main()
