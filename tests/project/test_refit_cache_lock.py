"""Two processes (here threads, each with its own lock file handle) asking the refits' disk
cache (tests/refit_cache.py) for the same result at once compute it once: the second waits
for the first and reads what it kept."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import refit_cache


class _Cache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def mkdir(self, name: str) -> Path:
        (self.root / name).mkdir(parents=True, exist_ok=True)
        return self.root / name


class _Config:
    def __init__(self, root: Path) -> None:
        self.cache = _Cache(root)


def test_two_askers_at_once_compute_once(tmp_path, monkeypatch):
    monkeypatch.setattr(refit_cache, "inputs_digest", lambda: "c" * 64)
    config, calls, results = _Config(tmp_path), [], []
    started = threading.Event()

    def compute():
        calls.append(1)
        started.set()
        time.sleep(0.2)  # long enough for the other asker to arrive meanwhile
        return {"status": 0, "n": len(calls)}

    def ask():
        results.append(refit_cache.cached(config, "w", compute))

    first = threading.Thread(target=ask)
    first.start()
    assert started.wait(5)
    second = threading.Thread(target=ask)
    second.start()
    first.join(5)
    second.join(5)
    assert len(calls) == 1
    assert results == [{"status": 0, "n": 1}] * 2
