"""``whichgpu serve`` in a subprocess on loopback, for the browser tests and the screenshot
script: its own home (an empty price store), the Hub and the price sources offline."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


class ServerDidNotStart(RuntimeError):
    """The server exited or did not answer its health check in time (its output attached)."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(home: Path, timeout_s: float = 60.0) -> Iterator[str]:
    """Start ``whichgpu serve`` with ``home`` as its home and yield its base URL once
    ``/api/v1/health`` answers; stop it on exit (terminate, then kill after 10 s)."""
    port = free_port()
    env = {**os.environ, "WHICHGPU_HOME": str(home), "HF_HOME": str(home / "hf"),
           "HF_HUB_OFFLINE": "1", "WHICHGPU_OFFLINE": "1"}
    env.pop("WHICHGPU_PRICE_STORE", None)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from whichgpu.cli import main; main()", "serve", "--host",
             "127.0.0.1", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
            text=True)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    urllib.request.urlopen(base + "/api/v1/health", timeout=1)
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        raise ServerDidNotStart(
                            f"whichgpu serve did not start: {log.read()[-2000:]}") from None
                    time.sleep(0.2)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
