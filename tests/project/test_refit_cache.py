"""The refits' disk cache (tests/refit_cache.py) gives a kept result only for the same inputs,
never keeps a failure, and computes a result once when two processes ask for it at once (the
second waits for the first's lock and reads what it kept)."""

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


def test_a_result_is_reused_only_while_the_inputs_are_the_same(tmp_path, monkeypatch):
    config, calls = _Config(tmp_path), []

    def compute():
        calls.append(1)
        return {"status": 0, "n": len(calls)}

    monkeypatch.setattr(refit_cache, "inputs_digest", lambda: "a" * 64)
    assert refit_cache.cached(config, "x", compute) == {"status": 0, "n": 1}
    assert refit_cache.cached(config, "x", compute) == {"status": 0, "n": 1}
    monkeypatch.setattr(refit_cache, "inputs_digest", lambda: "b" * 64)  # an input changed
    assert refit_cache.cached(config, "x", compute) == {"status": 0, "n": 2}
    assert len(list((tmp_path / "whichgpu-refits").glob("x-*.json"))) == 1


def test_a_failure_is_computed_again_every_time(tmp_path, monkeypatch):
    config, calls = _Config(tmp_path), []
    monkeypatch.setattr(refit_cache, "inputs_digest", lambda: "a" * 64)

    def failing():
        calls.append(1)
        return {"status": 1}

    for _ in range(2):
        assert refit_cache.cached(config, "y", failing, keep=lambda r: r["status"] == 0) == \
            {"status": 1}
    assert len(calls) == 2


def test_without_pytests_cache_it_always_computes():
    class NoCache:
        pass

    assert refit_cache.cached(NoCache(), "z", lambda: 7) == 7


def test_the_digest_covers_code_data_scripts_and_validation_rows():
    root = refit_cache.ROOT
    for path in ("src/whichgpu/estimate/data/speed_constants.toml",
                 "src/whichgpu/estimate/speed/llm.py", "scripts/calibrate.py",
                 "validation/speed.csv"):
        assert (root / path).is_file()
        assert any((root / path).is_relative_to(root / top) for top in refit_cache.INPUTS)
    assert len(refit_cache.inputs_digest()) == 64


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
