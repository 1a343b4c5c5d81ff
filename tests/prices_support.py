"""Helpers for the price tests: recorded data, a loopback HTTP server, offer files."""

from __future__ import annotations

import http.server
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parent / "data" / "prices"
GPUHUNT_DIR = DATA / "gpuhunt"
HEADER = "provider,gpu,gpu_count,price_per_hour,currency,spot,region,observed_at\n"


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


@contextmanager
def serve(routes: dict[str, Route]) -> Iterator[str]:
    """A loopback HTTP server answering ``routes`` (path -> Route); yields its base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            route = routes.get(self.path)
            if route is None:
                self.send_error(404)
                return
            time.sleep(route.delay_s)
            self.send_response(route.status)
            for k, v in route.headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(route.body)))
            self.end_headers()
            try:
                self.wfile.write(route.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def write_offers(path: Path, *rows: str, header: str = HEADER) -> Path:
    path.write_text(header + "".join(r + "\n" for r in rows))
    return path


# The price commands' JSON compared across stores and processes, without what differs by nature.
VOLATILE = {"store", "fetched_at", "age_s", "age_text", "stale"}
STORED_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")  # when a snapshot was stored


def normal(data):
    """The JSON without what depends on the clock or the store's location."""
    if isinstance(data, dict):
        return {k: normal(v) for k, v in data.items() if k not in VOLATILE}
    if isinstance(data, list):
        return [normal(v) for v in data]
    if isinstance(data, str):
        return STORED_AT.sub("<stored at>", data)
    return data
