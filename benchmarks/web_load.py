"""Load benchmark for the web app (not a unit test): mixed requests against a local server.

Starts ``whichgpu serve`` on 127.0.0.1 (a free port, its own price store, no network), sends
``--requests`` requests, ``--concurrency`` at a time, across the REST API and the pages, and
prints p50/p90/p99 latency, throughput and errors. Traffic goes to loopback only.

    python benchmarks/web_load.py --requests 2000 --concurrency 50

``--heavy-rate R`` adds, for the whole run, R requests a second that paste config.json files
built to make the server work (issue 21, item 3): 100,000 layers (refused at once), and
configs at the plausibility bounds (1,024 layers, 8,192 experts, a 4M vocabulary: answered,
each under the per-request CPU limit). Their latencies are reported apart, and the normal
traffic's p99 is the figure to watch (target: under 1.5 s).

``--cpu N`` starts no server: it asks N all-different questions of each kind, one at a time,
through the ASGI app in this process, and prints each kind's CPU ms split into the engine (the
answer layer), the memos, JSON, the pages' building and Jinja rendering, and the rest of the
web layer (routing, validation, middleware, thread hand-off): where a closed-loop load's time
goes (issue 27: 50 clients at p99 <= 1 s need about 6 ms of CPU per request on one core).

    python benchmarks/web_load.py --cpu 5
    python benchmarks/web_load.py --cpu 5 --calls   # and the engine's Python calls per kind
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

FLUX = "model=flux.1-dev&task=image&quant=fp8&prices=vramfarm-2026-11"
# (name, method, path, JSON body or None, expected status, weight, default of {v})
# {v} in a path (or the "v" key of a body) is one real input. By default it keeps its default,
# so the same questions come back again and again, as the articles' examples would; --vary
# gives it a random value per request, so almost no answer can be reused.
MIX = [
    ("gpus", "GET", "/api/v1/gpus?prices=vramfarm-2026-11&min_memory={v}GB", None, 200, 8, 8),
    ("gpu", "GET", "/api/v1/gpus/rtx-4090", None, 200, 6, None),
    ("models", "GET", "/api/v1/models", None, 200, 4, None),
    ("model", "GET", "/api/v1/models/{v}B", None, 200, 4, 70),
    ("memory", "GET", "/api/v1/memory?model=llama-3.1-70b&quant=q4_k_m&context=8k&batch={v}",
     None, 200, 12, 1),
    ("memory-post", "POST", "/api/v1/memory", {"model": "llama-3.1-8b", "task": "lora",
                                               "context": "2k", "batch": "{v}"}, 200, 6, 1),
    ("speed", "GET", "/api/v1/speed?model=llama-3.1-70b&quant=awq&gpu=h100-sxm&batch={v}", None,
     200, 6, 1),
    ("recommend-flux", "GET", "/api/v1/recommend?" + FLUX + "&images={v}", None, 200, 8, 1000),
    ("recommend-70b", "GET", "/api/v1/recommend?model=llama-3.1-70b&quant=awq&tokens={v}M"
     "&prices=vramfarm-2026-11", None, 200, 4, 1),
    ("tco", "GET", "/api/v1/tco?gpu=h100-sxm&purchase_price=25000USD&rent_price=3.15USD"
     "&hours_per_month={v}", None, 200, 6, 438),
    ("cost", "GET", "/api/v1/cost?gpu=rtx-4090&duration=3h20m&prices=vramfarm-2026-11"
     "&work={v}", None, 200, 4, 1000),
    ("checklist", "GET", "/api/v1/checklist?workload=inference&model=7B&budget_per_hour=1USD"
     "&horizon_months=6&hours_per_month={v}", None, 200, 4, 50),
    ("prices", "GET", "/api/v1/prices?gpu=h100&limit={v}", None, 200, 6, 25),
    ("history", "GET", "/api/v1/prices/history?gpu=rtx-4090", None, 200, 3, None),
    ("bad-input", "GET", "/api/v1/memory?model=no-such-model-{v}", None, 422, 4, 1),
    ("page-advisor", "GET", "/?task=image&" + FLUX + "&unit=images&amount={v}", None, 200, 5,
     1000),
    ("page-memory", "GET", "/memory?model=llama-3.1-70b&quant=q4_k_m&context=8k&batch={v}",
     None, 200, 5, 1),
    ("page-rent", "GET", "/rent-or-buy?gpu=h100-sxm&hours_per_month={v}", None, 200, 3, 438),
    ("page-gpus", "GET", "/gpus?min_memory={v}GB", None, 200, 2, 8),
]

#: the kinds whose answer weighs every GPU of the catalog: the server's heavy lane
#: (web/work.py HEAVY, PAGES_HEAVY); the others are the quick questions
HEAVY_KINDS = {"memory", "memory-post", "recommend-flux", "recommend-70b", "checklist",
               "bad-input", "page-advisor", "page-memory"}


LLAMA_8B = json.loads((Path(__file__).resolve().parents[1] / "src" / "whichgpu" / "models" /
                       "presets" / "llama-3.1-8b" / "config.json").read_text("utf-8"))


def heavy_mix(n: int = 0) -> list[tuple[str, str, bytes, tuple[int, ...]]]:
    """(name, path, body, accepted statuses) of the pasted configs that make the server work.
    The first is the review's 769-byte config (100,000 layers); the others sit at the bounds
    of models/bounds.py, so they are answered, at the most work a config can ask for. ``n``
    goes into a field no estimate reads (bos_token_id), so no answer can be reused."""
    def body(context: str | None = "8k", **changes) -> bytes:
        cfg = {**LLAMA_8B, **changes, "bos_token_id": n}
        return json.dumps({"config": cfg, **({"context": context} if context else {})}).encode()

    deep = {"num_hidden_layers": 1024}
    moe = {"model_type": "qwen3_moe", "num_hidden_layers": 1024, "num_experts": 8192,
           "num_experts_per_tok": 8, "moe_intermediate_size": 768, "head_dim": 128}
    wide = {"vocab_size": 4_194_304, "num_hidden_layers": 1024}
    return [
        ("heavy-100k-memory", "/api/v1/memory", body(num_hidden_layers=100_000), (422,)),
        ("heavy-100k-recommend", "/api/v1/recommend", body(num_hidden_layers=100_000), (422,)),
        ("heavy-1024-memory", "/api/v1/memory", body(**deep), (200, 422)),
        ("heavy-1024-recommend", "/api/v1/recommend", body(**deep), (200, 422)),
        ("heavy-moe-recommend", "/api/v1/recommend", body(**moe), (200, 422)),
        ("heavy-vocab-recommend", "/api/v1/recommend", body(**wide), (200, 422)),
    ]


def _fill(path: str, body: dict | None, v: object) -> tuple[str, bytes | None]:
    data = None
    if body is not None:
        data = json.dumps({k: (int(v) if x == "{v}" else x) for k, x in body.items()}).encode()
    return path.replace("{v}", str(v)), data


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, home: str, workers: int = 1) -> subprocess.Popen:
    env = {**os.environ, "WHICHGPU_HOME": home, "HF_HUB_OFFLINE": "1", "WHICHGPU_OFFLINE": "1"}
    env.pop("WHICHGPU_PRICE_STORE", None)
    proc = subprocess.Popen([sys.executable, "-c", "from whichgpu.cli import main; main()",
                             "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--workers", str(workers)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # a shared machine at load 10+ took over 30 s to start it
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=1)
            return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"the server did not start: {proc.stderr.read()}") from None
            time.sleep(0.2)


FIRST_PAGES = ("/?model=llama-3.1-8b&tokens=10M", "/?model=qwen2.5-7b&tokens=3M")


def first_page(base: str) -> dict[str, float]:
    """Seconds of the first advisor page (a whole-catalog recommendation) a server answers
    after start, and of a second, different one (issue 27: the first <= 1 s)."""
    out = {}
    for key, path in zip(("first_s", "second_s"), FIRST_PAGES, strict=True):
        t0 = time.perf_counter()
        req = urllib.request.Request(base + path, headers={"Accept": "text/html"})
        with urllib.request.urlopen(req, timeout=60) as response:
            response.read()
        out[key] = time.perf_counter() - t0
    return out


def _cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) a process has used so far (Linux /proc), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


class Connection:
    """One keep-alive HTTP/1.1 connection, with just enough parsing for this server.

    A general client (httpx) spends more CPU per request than the server does here; on a
    2-core machine that would measure the client. This one costs a few tens of microseconds.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body: bytes | None) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nAccept: */*\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write((head + "\r\n").encode() + (body or b""))
        await self.writer.drain()
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)}
        if "content-length" in headers:
            await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        if headers.get("connection") == "close":
            self.writer.close()
            self.writer = None
        return status


async def run(base: str, n: int, concurrency: int, seed: int, varied: bool = False,
              heavy_rate: float = 0.0) -> dict:
    rng = random.Random(seed)
    chosen = rng.choices(MIX, weights=[m[5] for m in MIX], k=n)
    plan = []
    for name, method, path, body, expected, _, default in chosen:
        v = rng.randint(1, 700) if varied and default is not None else default
        plan.append((name, method, *_fill(path, body, v), expected))
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    host, port = base.removeprefix("http://").rsplit(":", 1)
    host = host.strip("[]")
    warm = Connection(host, int(port))
    for _, method, path, body, _, _, default in MIX:  # warm-up: one of each
        await warm.request(method, *_fill(path, body, default))
    queue = iter(plan)

    async def worker() -> None:
        conn = Connection(host, int(port))
        for name, method, path, data, expected in queue:
            t0 = time.perf_counter()
            try:
                status = await conn.request(method, path, data)
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                status, conn = type(exc).__name__, Connection(host, int(port))
            latencies[name].append(time.perf_counter() - t0)
            if status != expected:
                errors[f"{name}: {status}"] += 1

    heavy_latencies: dict[str, list[float]] = defaultdict(list)
    heavy_status: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    done = asyncio.Event()

    async def one_heavy(name: str, path: str, data: bytes, accepted: tuple[int, ...]) -> None:
        conn = Connection(host, int(port))
        t_start = time.perf_counter()
        try:
            status = await conn.request("POST", path, data)
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            status = type(exc).__name__
        heavy_latencies[name].append(time.perf_counter() - t_start)
        heavy_status[name][str(status)] += 1
        if status not in accepted:
            errors[f"{name}: {status}"] += 1
        if conn.writer is not None:
            conn.writer.close()

    async def heavy_sender() -> None:
        """Heavy pasted configs at heavy_rate per second, each on its own connection, not
        waiting for the previous answer (an attacker does not wait)."""
        if heavy_rate <= 0:
            return
        pending = set()
        i = 0
        while not done.is_set():
            mix = heavy_mix(i)
            pending.add(asyncio.create_task(one_heavy(*mix[i % len(mix)])))
            i += 1
            try:
                await asyncio.wait_for(done.wait(), 1 / heavy_rate)
            except TimeoutError:
                pass
        if pending:
            await asyncio.gather(*pending)

    async def normal() -> None:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        done.set()

    t0 = time.perf_counter()
    await asyncio.gather(normal(), heavy_sender())
    wall = time.perf_counter() - t0
    every = [v for vs in latencies.values() for v in vs]
    heavy = [v for vs in heavy_latencies.values() for v in vs]
    return {"requests": n, "concurrency": concurrency, "varied": varied, "wall_s": wall,
            "heavy_rate_per_s": heavy_rate, "heavy_requests": len(heavy),
            "heavy_p99_ms": pct(heavy, 99) * 1000 if heavy else None,
            "heavy": {k: {"n": len(v), "p50_ms": pct(v, 50) * 1000,
                          "p99_ms": pct(v, 99) * 1000, "status": dict(heavy_status[k])}
                      for k, v in sorted(heavy_latencies.items())},
            "throughput_rps": n / wall, "p50_ms": pct(every, 50) * 1000,
            "p90_ms": pct(every, 90) * 1000, "p99_ms": pct(every, 99) * 1000,
            "max_ms": max(every) * 1000, "mean_ms": statistics.fmean(every) * 1000,
            "errors": sum(errors.values()), "error_kinds": dict(errors),
            "per_lane": {lane: {"n": len(v), "p50_ms": pct(v, 50) * 1000,
                                "p90_ms": pct(v, 90) * 1000, "p99_ms": pct(v, 99) * 1000}
                         for lane, v in _lanes(latencies).items() if v},
            "per_endpoint": {k: {"n": len(v), "p50_ms": pct(v, 50) * 1000,
                                 "p99_ms": pct(v, 99) * 1000} for k, v in sorted(
                                     latencies.items())}}


def _lanes(latencies: dict[str, list[float]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"whole catalog": [], "quick": []}
    for name, values in latencies.items():
        out["whole catalog" if name in HEAVY_KINDS else "quick"].extend(values)
    return out


# ------------------------------------------------------------------ --cpu: where the CPU goes

#: the answer layer (the engine) that web/services.py calls, module by module
ENGINE = {"whichgpu.answers.advice": ("recommend", "checklist"),
          "whichgpu.answers.estimates": ("memory", "speed", "workload"),
          "whichgpu.answers.money": ("tco", "cost"),
          "whichgpu.answers.catalog": ("gpus", "gpu", "models", "model"),
          "whichgpu.answers.prices": ("prices_list", "prices_history")}
PARTS = ("engine", "memo", "to_json", "json_bytes", "page_build", "jinja", "web_rest",
         "client")


class _Clock:
    """CPU seconds by part, each charged only for its own time (a part's time inside another
    part is the inner one's), per thread (a request's work runs in a worker thread)."""

    def __init__(self) -> None:
        import threading

        self.local = threading.local()
        self.spent: dict[str, float] = defaultdict(float)
        self.calls = 0  # the engine's Python calls (--calls)

    def wrap(self, part: str, fn):
        import functools

        clock = self

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            stack = clock.local.__dict__.setdefault("stack", [])
            now = time.thread_time()
            if stack:
                clock.spent[stack[-1][0]] += now - stack[-1][1]
            stack.append([part, now])
            try:
                return fn(*args, **kwargs)
            finally:
                now = time.thread_time()
                done, since = stack.pop()
                clock.spent[done] += now - since
                if stack:
                    stack[-1][1] = now

        return timed

    def counted(self, fn):
        """``fn`` with the Python calls it makes added to ``self.calls`` (cProfile, in the
        thread that runs it; only the outermost of nested counted calls profiles, as a thread
        has one profiler): a figure the machine's load does not move."""
        import cProfile
        import functools
        import pstats

        clock = self

        @functools.wraps(fn)
        def count(*args, **kwargs):
            if getattr(clock.local, "counting", False):
                return fn(*args, **kwargs)
            clock.local.counting = True
            profile = cProfile.Profile()
            profile.enable()
            try:
                return fn(*args, **kwargs)
            finally:
                profile.disable()
                clock.local.counting = False
                clock.calls += pstats.Stats(profile).total_calls  # type: ignore[attr-defined]

        return count


def _instrument(clock: _Clock, calls: bool = False) -> None:
    """Charge the engine, the memos, the JSON and the pages' rendering to their parts (with
    ``calls``, also count the engine's Python calls)."""
    import importlib

    from whichgpu.web import api, pages, services

    for module, names in ENGINE.items():
        mod = importlib.import_module(module)
        for name in names:
            fn = getattr(mod, name)
            setattr(mod, name, clock.wrap("engine", clock.counted(fn) if calls else fn))
    remember = services.remember

    def part_of(name: str, args: tuple, compute):
        part = ("to_json" if name.startswith("json:") else "page_build"
                if name.startswith("page:") else "memo")
        return clock.wrap(part, remember)(name, args, compute)

    services.remember = part_of
    if hasattr(api, "json_bytes"):  # (an older tree wrote JSON in JSON.render only)
        api.json_bytes = clock.wrap("json_bytes", api.json_bytes)
    else:
        api.JSON.render = clock.wrap("json_bytes", api.JSON.render)
    pages.render = clock.wrap("jinja", pages.render)


def cpu_breakdown(n: int, seed: int, calls: bool = False) -> dict:
    """Per request kind, the median CPU ms of ``n`` all-different requests asked one at a time
    through the ASGI app in this process (no sockets), split into PARTS, after the server's
    own start-up (its warm-up, the collector paced as a server paces it). ``web_rest`` is the
    app's own remainder (routing, validation, middleware,
    the thread hand-off); ``client`` is httpx's side, which a real server does not pay (it
    pays uvicorn's parsing and writing instead, which this does not see)."""
    os.environ.update(WHICHGPU_HOME=tempfile.mkdtemp(prefix="whichgpu-bench-"),
                      HF_HUB_OFFLINE="1", WHICHGPU_OFFLINE="1")
    os.environ.pop("WHICHGPU_PRICE_STORE", None)
    import warnings

    import httpx

    from whichgpu.web import warm
    from whichgpu.web.app import create_app

    warnings.simplefilter("ignore")
    os.environ[warm.WARM_ENV] = "1"  # the app 'serve' builds, and its start-up: the warm-up,
    app = create_app()  # the interpreter's switch interval, the collector's pacing
    for start in app.router.on_startup:
        start()
    clock = _Clock()
    _instrument(clock, calls)
    rng = random.Random(seed)
    served = [0.0]  # the CPU of the app's calls (all threads): the rest is httpx's

    async def timed_app(scope, receive, send) -> None:
        t0 = time.process_time()
        try:
            await app(scope, receive, send)
        finally:
            served[0] += time.process_time() - t0

    async def ask(client, method: str, path: str, data: bytes | None):
        headers = {"accept": "*/*" if path.startswith("/api/") else "text/html"}
        if data is not None:
            headers["content-type"] = "application/json"
        return await client.request(method, path, content=data, headers=headers)

    async def measure() -> dict:
        out = {}
        transport = httpx.ASGITransport(app=timed_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for _, method, path, body, _, _, default in MIX:  # one of each first
                await ask(client, method, *_fill(path, body, default))
            for name, method, path, body, expected, weight, default in MIX:
                runs, counts = [], []
                for _ in range(n):
                    v = rng.randint(1, 700) if default is not None else default
                    clock.spent.clear()
                    clock.calls = 0
                    served[0] = 0.0
                    t0 = time.process_time()
                    response = await ask(client, method, *_fill(path, body, v))
                    total = time.process_time() - t0
                    if response.status_code != expected:
                        raise SystemExit(f"{name}: {response.status_code} "
                                         f"{response.text[:200]}")
                    parts = {p: clock.spent.get(p, 0.0) for p in PARTS[:-2]}
                    parts["web_rest"] = max(0.0, served[0] - sum(parts.values()))
                    parts["client"] = max(0.0, total - served[0])
                    runs.append((total, parts, len(response.content)))
                    counts.append(clock.calls)
                runs.sort(key=lambda x: x[0])
                total, parts, size = runs[len(runs) // 2]
                out[name] = {"weight": weight, "cpu_ms": total * 1000, "bytes": size,
                             **{p + "_ms": v * 1000 for p, v in parts.items()}}
                if calls:
                    out[name]["engine_calls"] = statistics.median(counts)
        return out

    collector = _CollectorClock()
    kinds = asyncio.run(measure())
    collector.stop()
    weights = sum(k["weight"] for k in kinds.values())
    mean = {key: sum(k[key] * k["weight"] for k in kinds.values()) / weights
            for key in ["cpu_ms", *(p + "_ms" for p in PARTS)]}
    asked = len(MIX) * (n + 1)
    return {"requests_per_kind": n, "kinds": kinds, "weighted_mean": mean,
            "collector": {"requests": asked, "ms_per_request": collector.spent * 1e3 / asked,
                          "full_collections": collector.full}}


class _CollectorClock:
    """CPU seconds of the cyclic garbage collector (gc.callbacks) and its full collections:
    what the medians above leave out (a full collection lands on one request in ~100)."""

    def __init__(self) -> None:
        import gc

        self.spent, self.full, self._start = 0.0, 0, 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.process_time()
            return
        self.spent += time.process_time() - self._start
        self.full += info["generation"] == 2

    def stop(self) -> None:
        import gc

        gc.callbacks.remove(self._tick)


def print_breakdown(result: dict) -> None:
    heads = ["cpu", "engine", "memo", "to_json", "json", "page", "jinja", "rest", "client"]
    counted = any("engine_calls" in k for k in result["kinds"].values())
    print(f"{'kind':<15}{'w':>3}" + "".join(f"{h:>8}" for h in heads) +
          (f"{'calls':>10}" if counted else "") + "   (CPU ms, median" +
          ("; the engine's Python calls, median: the profiler inflates the CPU ms" if counted
           else "") + ")")
    rows = sorted(result["kinds"].items(), key=lambda kv: -kv[1]["cpu_ms"] * kv[1]["weight"])
    for name, k in [*rows, ("weighted mean", {"weight": 0, **result["weighted_mean"]})]:
        values = [k["cpu_ms"], *(k[p + "_ms"] for p in PARTS)]
        said = f"{k['engine_calls']:>10,.0f}" if "engine_calls" in k else ""
        print(f"{name:<15}{k['weight'] or '':>3}" + "".join(f"{v:8.1f}" for v in values) + said)
    mean = result["weighted_mean"]["cpu_ms"] - result["weighted_mean"]["client_ms"]
    print(f"without the client, one core answers at most {1000 / mean:.0f} requests/s of this "
          f"mix; 50 closed-loop clients then wait {50 * mean:.0f} ms on average (Little's law)")
    gc_said = result.get("collector")
    if gc_said:
        print(f"garbage collector: {gc_said['ms_per_request']:.1f} ms of CPU per request over "
              f"all {gc_said['requests']} requests (not in the medians), "
              f"{gc_said['full_collections']} full collection(s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--vary", action="store_true",
                    help="Make (almost) every request different: no answer is reused.")
    ap.add_argument("--workers", type=int, default=1, help="Server processes to start.")
    ap.add_argument("--url", help="An already running server on loopback (default: start one).")
    ap.add_argument("--heavy-rate", type=float, default=0.0,
                    help="Heavy pasted configs per second sent alongside (issue 21, item 3).")
    ap.add_argument("--max-p99-ms", type=float,
                    help="Exit 1 when the normal traffic's p99 is above this (a target).")
    ap.add_argument("--cpu", type=int, metavar="N",
                    help="Instead: in this process, N all-different requests of each kind one "
                         "at a time; print each kind's CPU ms split by part (engine, memos, "
                         "JSON, pages, the rest of the web layer).")
    ap.add_argument("--calls", action="store_true",
                    help="With --cpu: also each kind's engine Python calls (median), a figure "
                         "load does not move (the profiler inflates that run's CPU ms).")
    ap.add_argument("--out", default="artifacts/bench-web.json")
    args = ap.parse_args()
    if args.cpu:
        result = cpu_breakdown(args.cpu, args.seed, args.calls)
        print_breakdown(result)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2))
        return
    proc = None
    if args.url:
        if not args.url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
            raise SystemExit("--url must be a loopback address")
        base = args.url.rstrip("/")
    else:
        port = free_port()
        proc = start_server(port, tempfile.mkdtemp(prefix="whichgpu-bench-"), args.workers)
        base = f"http://127.0.0.1:{port}"
    first = first_page(base)
    cpu0 = _cpu_s(proc.pid) if proc is not None else None
    print(f"first advisor page after start: {first['first_s']:.2f} s; a second, different "
          f"question: {first['second_s']:.2f} s (target: first <= 1 s)")
    try:
        result = asyncio.run(run(base, args.requests, args.concurrency, args.seed, args.vary,
                                 args.heavy_rate))
    finally:
        cpu = _cpu_s(proc.pid) if proc is not None else None
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    result["cpus"] = os.cpu_count()
    result["first_page"] = first
    if cpu is not None and cpu0 is not None:  # the server's own CPU, which load inflates less
        result["server_cpu_ms_per_request"] = (cpu - cpu0) * 1000 / (
            args.requests + len(MIX) + result["heavy_requests"])
        result["load_average"] = os.getloadavg()[0]
    kind = "all different" if args.vary else "repeated questions"
    print(f"{result['requests']} requests ({kind}), {result['concurrency']} concurrent, "
          f"{os.cpu_count()} CPUs: {result['throughput_rps']:.0f} req/s over "
          f"{result['wall_s']:.1f} s")
    print(f"latency p50 {result['p50_ms']:.0f} ms, p90 {result['p90_ms']:.0f} ms, "
          f"p99 {result['p99_ms']:.0f} ms, max {result['max_ms']:.0f} ms")
    print(f"errors: {result['errors']}" + (f" {result['error_kinds']}" if result['errors']
                                          else ""))
    if "server_cpu_ms_per_request" in result:
        mean = result["server_cpu_ms_per_request"]
        print(f"server CPU {mean:.1f} ms per request (one core: at most {1000 / mean:.0f} "
              f"req/s); load average {result['load_average']:.1f}")
    for lane, e in result["per_lane"].items():
        print(f"{lane} questions: {e['n']}, p50 {e['p50_ms']:.0f} ms, p90 {e['p90_ms']:.0f} ms, "
              f"p99 {e['p99_ms']:.0f} ms")
    print(f"{'endpoint':<16}{'n':>6}{'p50 ms':>9}{'p99 ms':>9}")
    for name, e in result["per_endpoint"].items():
        print(f"{name:<16}{e['n']:>6}{e['p50_ms']:>9.0f}{e['p99_ms']:>9.0f}")
    if result["heavy_requests"]:
        print(f"heavy pasted configs: {result['heavy_requests']} at {args.heavy_rate:g}/s, "
              f"p99 {result['heavy_p99_ms']:.0f} ms")
        for name, e in result["heavy"].items():
            print(f"  {name:<22}{e['n']:>5}{e['p50_ms']:>9.0f}{e['p99_ms']:>9.0f}  "
                  f"{e['status']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    missed = args.max_p99_ms is not None and result["p99_ms"] > args.max_p99_ms
    if missed:
        print(f"p99 {result['p99_ms']:.0f} ms is above the target of {args.max_p99_ms:.0f} ms")
    sys.exit(1 if result["errors"] or missed else 0)


if __name__ == "__main__":
    main()
