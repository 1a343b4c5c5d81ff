"""Issue 36, item 6: the Hub breaker trips on connection failures only.

Before, one repository that trickled its config.json past the look-up's deadline turned Hub
look-ups off for every visitor for 30 s ("the Hugging Face Hub could not be reached a moment
ago"), so one client asking for a slow id every 30 s kept the Hub off for everyone. Now a slow
repository costs only its own request (and its own id, for a few seconds); a Hub that cannot
be connected to at all still answers every uncached id at once for ``DOWN_S``.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from importlib import resources

import pytest

from whichgpu.models import hub
from whichgpu.web import resolve

CONFIG = resources.files("whichgpu.models").joinpath(
    "presets", "qwen2.5-0.5b", "config.json").read_bytes()


class _Repos(http.server.BaseHTTPRequestHandler):
    """A loopback 'Hub': repositories named slow-* trickle config.json (one byte per 0.1 s),
    the others answer at once."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _head(self) -> None:
        self.send_response(200)
        self.send_header("X-Repo-Commit", "b" * 40)
        self.send_header("ETag", f'"{abs(hash(self.path.split("/resolve/")[0]))}"')
        self.send_header("Content-Length", str(len(CONFIG)))
        self.end_headers()

    def do_HEAD(self) -> None:
        if "config.json" not in self.path:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._head()

    def do_GET(self) -> None:
        if "config.json" not in self.path:
            return self.do_HEAD()
        self._head()
        if "/slow-" not in self.path:
            self.wfile.write(CONFIG)
            return
        for b in CONFIG:
            try:
                self.wfile.write(bytes([b]))
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.1)


def _point_hub_at(monkeypatch, url: str) -> None:
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    hub._reachable.clear()
    resolve.clear_hub_cache()


@pytest.fixture
def repos(monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Repos)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _point_hub_at(monkeypatch, f"http://127.0.0.1:{server.server_address[1]}")
    yield
    server.shutdown()
    server.server_close()
    hub._reachable.clear()
    resolve.clear_hub_cache()


@pytest.fixture
def closed_port(monkeypatch):
    """A Hub address where nothing listens: every connection is refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    _point_hub_at(monkeypatch, f"http://127.0.0.1:{port}")
    yield
    hub._reachable.clear()
    resolve.clear_hub_cache()


def test_one_slow_repository_costs_only_its_own_request(repos, monkeypatch, web):
    monkeypatch.setattr(resolve, "HUB_TIMEOUT_S", 1.0)
    slow = web.get("/api/v1/models/some-org/slow-model")
    assert slow.status_code == 503, slow.text
    assert "did not answer" in slow.json()["detail"]
    time.sleep(0.3)  # the look-up's outcome is recorded when its worker ends
    start = time.monotonic()
    other = web.get("/api/v1/models/other-org/quick-model")
    assert other.status_code == 200, other.text  # before: 503 "could not be reached"
    assert time.monotonic() - start < 5.0
    assert web.get("/api/v1/health").json()["hub"]["reachable"] is True
    again = web.get("/api/v1/models/some-org/slow-model")  # the slow id itself is kept a while
    assert again.status_code == 503


def test_a_hub_that_refuses_connections_is_not_asked_again_for_a_while(closed_port, web):
    first = web.get("/api/v1/models/some-org/first-model")
    assert first.status_code == 503, first.text
    time.sleep(0.2)
    start = time.monotonic()
    other = web.get("/api/v1/models/other-org/other-model")
    assert time.monotonic() - start < 0.5
    assert other.status_code == 503
    assert "could not be reached" in other.json()["detail"]
    assert web.get("/api/v1/health").json()["hub"]["reachable"] is False


def test_a_connection_failure_is_told_from_a_slow_answer():
    import httpx

    refused = hub.HubUnreachable("no connection to 127.0.0.1:9 (Connection refused)")
    assert isinstance(hub._hub_error(refused, "a/b", "config.json", False), hub.HubNotReached)
    try:
        try:
            raise httpx.ConnectError("[Errno 111] Connection refused")
        except httpx.ConnectError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert hub.connection_failed(outer)
    slow = hub.HubDeadlineExceeded("still arriving at the time limit")
    assert not hub.connection_failed(slow)
    assert not isinstance(hub._hub_error(slow, "a/b", "config.json", False), hub.HubNotReached)
    assert not hub.connection_failed(httpx.ReadTimeout("slow"))
