"""``whichgpu serve --workers 2`` on a fresh PostgreSQL, as a team runs it: a real server on
loopback. It creates the tables and seeds the prices before its workers start, both workers
answer from the one store, /metrics sums both workers' requests whichever answers the
scrape, each worker writes JSON access lines, and the prices it serves are the ones the CLI
gives from a SQLite file on the same inputs."""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from prometheus_client.parser import text_string_to_metric_families

from prices_support import normal
from whichgpu.catalog.prices.schema import MIGRATIONS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port: int, path: str) -> tuple[int, bytes]:
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        con.request("GET", path)
        r = con.getresponse()
        return r.status, r.read()
    finally:
        con.close()


def test_two_workers_share_one_postgresql_store(pg_url, tmp_path, cli, monkeypatch):
    import psycopg

    port = _free_port()
    env = {**os.environ, "WHICHGPU_HOME": str(tmp_path / "server-home"), "HF_HUB_OFFLINE": "1",
           "WHICHGPU_OFFLINE": "1"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    server = subprocess.Popen(
        [sys.executable, "-c", "from whichgpu.cli import main; main()", "--database-url",
         pg_url, "serve", "--workers", "2", "--port", str(port), "--access-log"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err_lines: list[str] = []
    reader = threading.Thread(target=lambda: err_lines.extend(server.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if _get(port, "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None, "".join(err_lines)
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        with psycopg.connect(pg_url) as con:  # serve created the tables and seeded them
            assert con.execute("SELECT version FROM whichgpu_schema").fetchone()[0] == len(
                    MIGRATIONS)
            assert con.execute("SELECT count(*) FROM offer").fetchone()[0] > 0
        status, body = _get(port, "/readyz")
        assert status == 200 and json.loads(body)["store"]["engine"] == "postgresql"
        with psycopg.connect(pg_url) as con:  # each connection says whose it is
            names = [r[0] for r in con.execute(
                "SELECT application_name FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                " AND application_name LIKE 'whichgpu%'")]
        assert names and all(n.startswith("whichgpu, pid ") for n in names), names
        # the supervisor seeded the store and let go: only the workers hold connections
        assert not any(f"pid {server.pid} " in n for n in names), names

        # Both workers answer: concurrent requests, each on its own connection.
        pids: set[int] = set()
        sent = [1]  # the /healthz that saw the server up
        lock = threading.Lock()

        def probe() -> None:
            for _ in range(25):
                _, data = _get(port, "/healthz")
                with lock:
                    sent[0] += 1
                    pids.add(json.loads(data)["pid"])
                if len(pids) >= 2:
                    return

        for _ in range(8):
            threads = [threading.Thread(target=probe) for _ in range(12)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if len(pids) >= 2:
                break
        assert len(pids) == 2, pids

        # /metrics, from whichever worker, counts every worker's /healthz answers. (A
        # worker counts a request just after sending its answer: the last ones may take a
        # moment to appear, so it is read again until they have, never more.)
        def healthz_counted() -> float:
            status, text = _get(port, "/metrics")
            assert status == 200
            return sum(s.value for family in text_string_to_metric_families(text.decode())
                       for s in family.samples if s.name == "whichgpu_http_requests_total"
                       and s.labels.get("route") == "/healthz")

        until = time.monotonic() + 10
        while (counted := healthz_counted()) < sent[0] and time.monotonic() < until:
            time.sleep(0.2)
        assert counted == sent[0]

        # The prices served are the CLI's on SQLite, from the same shipped inputs.
        status, body = _get(port, "/api/v1/prices?gpu=h100&limit=0")
        assert status == 200
        served = normal(json.loads(body))
        monkeypatch.setenv("WHICHGPU_DATABASE_URL", str(tmp_path / "reference.sqlite"))
        local = normal(cli("prices", "list", "h100", "--limit", "0", "--json").json())
        assert served == local
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        reader.join(5)
    access = [json.loads(x) for x in err_lines if x.startswith("{")]
    assert {a["pid"] for a in access} == pids  # each worker logs its own requests
    assert all(a["route"] in ("/healthz", "/readyz", "/metrics", "/api/v1/prices")
               for a in access)
    started = "".join(err_lines) + (server.stdout.read() if server.stdout else "")
    assert "Price store: postgresql://" in started
    assert f"(postgresql, schema {len(MIGRATIONS)})" in started


def _worker_pids(port: int, expected: int) -> set[int]:
    """The pids of the workers behind ``port`` (concurrent /healthz until each answered)."""
    pids: set[int] = set()
    lock = threading.Lock()

    def probe() -> None:
        for _ in range(25):
            pid = json.loads(_get(port, "/healthz")[1])["pid"]
            with lock:
                pids.add(pid)
                if len(pids) >= expected:
                    return

    for _ in range(8):
        threads = [threading.Thread(target=probe) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if len(pids) >= expected:
            break
    return pids


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _serve(port: int, env: dict) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "-c", "from whichgpu.cli import main; main()", "serve", "--workers",
         "2", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while True:
        try:
            if _get(port, "/healthz")[0] == 200:
                return server
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise AssertionError(f"the server did not start: {server.stderr.read()}")
        time.sleep(0.2)


def _metric_files(tmp: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), tmp)
                  for d, _, files in os.walk(tmp) for f in files if f.endswith(".db"))


def test_workers_end_with_their_supervisor_however_it_ends_and_leave_no_metric_files(
        tmp_path):
    """SIGKILL of ``serve`` (the OOM killer, kill -9, a crashed supervisor) must not leave its
    workers serving on the port as orphans; a restart clears the metric files a killed run
    left; SIGTERM stops every worker and removes the run's metric files."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "WHICHGPU_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1",
           "WHICHGPU_OFFLINE": "1", "TMPDIR": str(tmp)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    env.pop("WHICHGPU_DATABASE_URL", None)
    port = _free_port()
    first = _serve(port, env)
    try:
        workers = _worker_pids(port, 2)
        assert len(workers) == 2 and first.pid not in workers
        _get(port, "/api/v1/gpus/h100-sxm")
        assert _metric_files(str(tmp))  # the workers write their metrics under TMPDIR
        first.kill()
        first.wait()
        until = time.monotonic() + 20
        while any(_alive(p) for p in workers) and time.monotonic() < until:
            time.sleep(0.2)
        assert not any(_alive(p) for p in workers), "orphan workers outlived serve"
    finally:
        for pid in workers if "workers" in locals() else ():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    second = _serve(port, env)  # the port is free again
    try:
        again = _worker_pids(port, 2)
        left = _metric_files(str(tmp))
        assert not any(str(p) in f for f in left for p in workers), left  # the killed run's
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0
        until = time.monotonic() + 10
        while any(_alive(p) for p in again) and time.monotonic() < until:
            time.sleep(0.2)
        assert not any(_alive(p) for p in again)
        assert _metric_files(str(tmp)) == []
    finally:
        if second.poll() is None:
            second.kill()
