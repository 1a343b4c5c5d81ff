"""Load benchmark of whichgpu as a team's service (issue 20; not a unit test).

A server on loopback answers web_load.py's mixed requests (REST API and pages, the articles'
questions), ``--concurrency`` at a time, while a price refresh runs in another process in the
middle of the run: from a URL source on loopback serving ``--refresh-offers`` synthetic offers
(benchmarks/synthetic_store.py's, over the real catalog ids) and the recorded gpuhunt catalog.
Two set-ups, one after the other:

* ``postgresql``: ``whichgpu serve --workers 4`` on a throwaway PostgreSQL cluster
  (tests/pg_cluster.py: initdb in a temporary folder, a Unix socket only);
* ``sqlite``: ``whichgpu serve`` (one process) on a SQLite file, as before issue 20.

It prints, per set-up, throughput and p50/p90/p99 latency for the whole run and for the
requests that started while the refresh ran or within the 10 s the workers take to notice it,
the errors (any status but the expected one, and any failed connection), how long the refresh
took, and whether anything was lost: every feed current before the run is still current
after it (or replaced by a newer snapshot of itself), and the refreshed feeds hold every offer
the source served. Traffic goes to loopback only, and the run stops by itself.

    python benchmarks/service_load.py                  # both set-ups, 3,000 requests each
    python benchmarks/service_load.py --only postgresql --requests 1000
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))  # pg_cluster: the tests' throwaway PostgreSQL

import synthetic_store  # noqa: E402
import web_load  # noqa: E402

GPUHUNT_DIR = ROOT / "tests" / "data" / "prices" / "gpuhunt"
RECHECK_S = 10.0  # web/services.py OFFER_CACHE_S: how soon a worker notices a new snapshot


def _cli(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", "from whichgpu.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, timeout=600)
    if check and done.returncode != 0:
        raise SystemExit(f"whichgpu {' '.join(args)} failed: {done.stderr}")
    return done


def _offer_file(n: int) -> bytes:
    """n synthetic offers in whichgpu's JSON offer schema, observed an hour ago."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    offers = synthetic_store.period_offers(0, n, 0, now)
    return json.dumps({"offers": [
        {"provider": o.provider, "gpu": o.gpu, "gpu_count": o.gpu_count,
         "price_per_hour": o.price_per_hour.amount, "currency": o.price_per_hour.currency,
         "spot": o.spot, "region": o.region, "observed_at": o.observed_at,
         "billing_increment_s": o.billing.increment_s,
         "billing_minimum_s": o.billing.minimum_s} for o in offers]}).encode()


class _OfferServer:
    """The URL source: one JSON file on a loopback port."""

    def __init__(self, body: bytes) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/offers.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _start_server(port: int, env: dict[str, str], workers: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", "from whichgpu.cli import main; main()",
                             "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--workers", str(workers)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"the server did not become ready: {proc.stderr.read()}")
        time.sleep(0.3)


async def _load(port: int, n: int, concurrency: int, seed: int, refresh_args: list[str],
                refresh_env: dict[str, str], varied: bool = False,
                warm_workers: int = 1) -> dict:
    """The mixed requests, with the refresh started once half of them are answered
    (``varied``: each request a different question, as web_load.py --vary)."""
    rng = random.Random(seed)
    chosen = rng.choices(web_load.MIX, weights=[m[5] for m in web_load.MIX], k=n)
    plan = []
    for name, method, path, body, expected, _, default in chosen:
        v = rng.randint(1, 700) if varied and default is not None else default
        plan.append((name, method, *web_load._fill(path, body, v), expected))
    async def warm_up() -> None:  # one of each question, on its own connection
        conn = web_load.Connection("127.0.0.1", port)
        for _, method, path, body, _, _, default in web_load.MIX:
            await conn.request(method, *web_load._fill(path, body, default))

    # Every worker answers each question once before the clock starts (connections land on
    # workers at random: a few rounds of many connections reach them all); the cold start of
    # a worker is not what this measures, the refresh is.
    for _ in range(3):
        await asyncio.gather(*(warm_up() for _ in range(4 * warm_workers)))
    done: list[tuple[float, float, str]] = []  # (started, seconds, name)
    errors: dict[str, int] = defaultdict(int)
    refresh: dict = {}

    def requests():
        """The plan, again and again, until at least n are answered and the workers have had
        the time to notice the refresh (RECHECK_S after it ended) and answer on new prices."""
        i, give_up = 0, time.perf_counter() + 600  # the run stops by itself, whatever happens
        while time.perf_counter() < give_up and (
                len(done) < n or "end" not in refresh
                or time.perf_counter() < refresh["end"] + RECHECK_S + 2):
            yield plan[i % len(plan)]
            i += 1

    queue = requests()

    async def run_refresh() -> None:
        refresh["start"] = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from whichgpu.cli import main; main()", *refresh_args,
            env=refresh_env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(proc.communicate(), 300)
        except TimeoutError:
            proc.kill()
            out, err = b"", b"the refresh took more than 300 s"
        refresh["end"] = time.perf_counter()
        refresh["code"] = proc.returncode
        refresh["report"] = json.loads(out) if out.strip() else {"stderr": err.decode()}

    tasks = []

    async def client() -> None:
        conn = web_load.Connection("127.0.0.1", port)
        for name, method, path, data, expected in queue:
            t0 = time.perf_counter()
            try:
                status = await conn.request(method, path, data)
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                status, conn = type(exc).__name__, web_load.Connection("127.0.0.1", port)
            done.append((t0, time.perf_counter() - t0, name))
            if status != expected:
                errors[f"{name}: {status}"] += 1
            if not tasks and len(done) >= n // 2:
                tasks.append(asyncio.create_task(run_refresh()))

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    wall = time.perf_counter() - t0
    every = [s for _, s, _ in done]
    window = (refresh.get("start", 0), refresh.get("end", 0) + RECHECK_S)
    during = [s for start, s, _ in done if window[0] <= start <= window[1]]

    def stats(values: list[float]) -> dict:
        if not values:
            return {"n": 0}
        return {"n": len(values), "p50_ms": web_load.pct(values, 50) * 1000,
                "p90_ms": web_load.pct(values, 90) * 1000,
                "p99_ms": web_load.pct(values, 99) * 1000, "max_ms": max(values) * 1000}

    by_name: dict[str, list[float]] = defaultdict(list)
    for _, secs, name in done:
        by_name[name].append(secs)
    slowest = sorted(done, key=lambda d: -d[1])[:10]
    return {"requests": len(done), "concurrency": concurrency, "wall_s": wall,
            "per_endpoint": {k: stats(v) for k, v in sorted(by_name.items())},
            "slowest": [{"name": name, "ms": secs * 1000, "started_s": start - t0,
                         "refresh_started_s": refresh.get("start", t0) - t0}
                        for start, secs, name in slowest],
            "throughput_rps": len(done) / wall, **stats(every),
            "during_refresh": stats(during),
            "errors": sum(errors.values()), "error_kinds": dict(errors),
            "refresh_s": refresh.get("end", 0) - refresh.get("start", 0),
            "refresh_exit": refresh.get("code"), "refresh": refresh.get("report")}


def _current(env: dict[str, str]) -> dict[str, tuple[int, int]]:
    """feed -> (snapshot id, offers) of every current snapshot, through the CLI's JSON."""
    data = json.loads(_cli("prices", "sources", "--json", env=env).stdout)
    return {f["feed"]: (f["id"], f["offer_count"]) for s in data["sources"]
            for f in s["feeds"]}


def run(engine: str, workers: int, args: argparse.Namespace, offers: bytes) -> dict:
    home = tempfile.mkdtemp(prefix=f"whichgpu-bench-{engine}-")
    env = {**os.environ, "WHICHGPU_HOME": home, "HF_HUB_OFFLINE": "1", "WHICHGPU_OFFLINE": "1"}
    for name in ("WHICHGPU_PRICE_STORE", "PROMETHEUS_MULTIPROC_DIR", "WHICHGPU_ACCESS_LOG"):
        env.pop(name, None)
    cluster = None
    if engine == "postgresql":
        import pg_cluster

        cluster = pg_cluster.start_cluster()
        env["WHICHGPU_DATABASE_URL"] = cluster.url("postgres")
    else:
        env["WHICHGPU_DATABASE_URL"] = str(Path(home) / "prices.sqlite")
    source = _OfferServer(offers)
    proc = None
    try:
        port = web_load.free_port()
        proc = _start_server(port, env, workers)
        _cli("prices", "sources", "add", "bench", source.url, "--allow-http", env=env)
        before = _current(env)
        refresh_env = {**env, "GPUHUNT_CATALOG_DIR": str(GPUHUNT_DIR)}
        refresh_env.pop("WHICHGPU_OFFLINE")  # the URL source is on loopback
        result = asyncio.run(_load(port, args.requests, args.concurrency, args.seed,
                                   ["prices", "refresh", "--source", "bench", "--source",
                                    "gpuhunt", "--json"], refresh_env, args.vary,
                                   workers))
        after = _current(env)
        served = len(json.loads(offers)["offers"])
        refreshed = {o["feed"]: o for o in (result["refresh"] or {}).get("feeds", [])}
        lost = [f for f, (sid, _) in before.items() if f not in after or after[f][0] < sid]
        result.update({
            "engine": engine, "workers": workers, "cpus": os.cpu_count(), "varied": args.vary,
            "load_average": os.getloadavg()[0],
            "feeds_before": len(before), "feeds_after": len(after),
            "feeds_lost": lost,
            "bench_offers_stored": after.get("bench", (0, 0))[1], "bench_offers_served": served,
            "refreshed_feeds": {k: v["status"] for k, v in refreshed.items()}})
        return result
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        source.close()
        if cluster is not None:
            cluster.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--workers", type=int, default=4, help="PostgreSQL set-up's workers.")
    ap.add_argument("--refresh-offers", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--vary", action="store_true",
                    help="Make (almost) every request a different question: no answer reused.")
    ap.add_argument("--only", choices=("postgresql", "sqlite"))
    ap.add_argument("--out", default="artifacts/bench-service.json")
    args = ap.parse_args()
    offers = _offer_file(args.refresh_offers)
    setups = [("postgresql", args.workers), ("sqlite", 1)]
    results = [run(e, w, args, offers) for e, w in setups if args.only in (None, e)]
    kind = "all different" if args.vary else "repeated questions"
    print(f"At least {args.requests} mixed requests ({kind}), {args.concurrency} concurrent, "
          f"until {RECHECK_S:g} s after a refresh of {args.refresh_offers:,} offers + the "
          f"recorded gpuhunt catalog started once {args.requests // 2} were answered; "
          f"{os.cpu_count()} CPUs")
    head = (f"{'store':<11}{'workers':>8}{'requests':>9}{'req/s':>7}{'p50 ms':>8}"
            f"{'p90 ms':>8}{'p99 ms':>8}{'max ms':>8}{'errors':>7}  "
            f"{'during refresh: n, p50, p99 ms':<32}{'refresh s':>9}")
    print(head)
    for r in results:
        d = r["during_refresh"]
        window = f"{d['n']}, {d.get('p50_ms', 0):.0f}, {d.get('p99_ms', 0):.0f}"
        print(f"{r['engine']:<11}{r['workers']:>8}{r['requests']:>9}"
              f"{r['throughput_rps']:>7.0f}"
              f"{r['p50_ms']:>8.0f}{r['p90_ms']:>8.0f}{r['p99_ms']:>8.0f}{r['max_ms']:>8.0f}"
              f"{r['errors']:>7}  {window:<32}{r['refresh_s']:>9.1f}")
    for r in results:
        ok = (not r["feeds_lost"] and r["bench_offers_stored"] == r["bench_offers_served"]
              and r["refresh_exit"] == 0)
        print(f"{r['engine']}: refresh {r['refreshed_feeds']}; {r['bench_offers_stored']:,} of "
              f"{r['bench_offers_served']:,} offers stored; feeds {r['feeds_before']} -> "
              f"{r['feeds_after']}, lost: {r['feeds_lost'] or 'none'}; load average "
              f"{r['load_average']:.1f}" + ("" if ok else "  << PROBLEM"))
        if r["errors"]:
            print(f"  errors: {r['error_kinds']}")
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    bad = any(r["errors"] or r["feeds_lost"] or r["refresh_exit"] != 0
              or r["bench_offers_stored"] != r["bench_offers_served"] for r in results)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
