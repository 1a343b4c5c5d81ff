"""The calibration refits' results, kept on disk between test runs for exactly their inputs.

A refit (``scripts/calibrate.py --check``, the leave-one-out tables of ``validate speed``,
``calibrate_serving.py --check``, the leave-one-source-out of ``validate serving``) takes tens
of seconds of CPU, and gives the same result for the same inputs: it reads nothing but the
package (code and data), the scripts and the validation rows. Its result is kept under
pytest's cache folder (``.pytest_cache/d/whichgpu-refits/``) keyed by a SHA-256 of every file
under ``src/whichgpu/``, ``scripts/`` and ``validation/`` and of the Python version: change
any of them and the refit runs again. The tests assert on the result either way, so a test
fails whenever the refit's real output would make it fail.

One process computes a name at a time (a file lock beside the result): a second xdist worker
or a second run in the same checkout that asks for it meanwhile waits, then reads it.

Only a result worth keeping is kept (``keep``: a passing check, a command that exited 0); a
failure is computed again on every run, so it always shows its own diff. Without pytest's
cache (``-p no:cacheprovider``, or a fresh clone such as CI's) every refit runs (sharing its
row estimates and grid searches with the other refits of the same process all the same).

Inside a run, the speed refits share their row estimates (``shared_row_estimates``): on a fresh
clone ``calibrate.py --check``, ``validate speed``'s leave-one-out and the band-residual tests
would otherwise estimate the same rows under the same constants each in its own process. The
serving refits share their leave-one-source-out residuals (``shared_serving_loso``): about
9 CPU-s that ``calibrate_serving.py --check`` and ``validate serving`` each spent.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
INPUTS = ("src/whichgpu", "scripts", "validation")


@cache
def inputs_digest() -> str:
    """SHA-256 of the refits' inputs: every file under INPUTS (bytecode caches left out), its
    path and content, and the Python version."""
    h = hashlib.sha256(sys.version.encode())
    for top in INPUTS:
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            h.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def cached(config: pytest.Config, name: str, compute: Callable[[], Any],
           keep: Callable[[Any], bool] = lambda value: True) -> Any:
    """``compute()``'s JSON-able result, from the cache when the same inputs already gave one
    that ``keep`` accepted; else computed (and kept if ``keep`` accepts it)."""
    store = getattr(config, "cache", None)
    if store is None:  # -p no:cacheprovider
        return compute()
    folder = Path(store.mkdir("whichgpu-refits"))
    path = folder / f"{name}-{inputs_digest()[:32]}.json"
    # one process computes a name at a time (xdist workers, two runs in one checkout): the
    # others wait for it and read what it kept
    with open(folder / f"{name}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return json.loads(path.read_text("utf-8"))["value"]
        except (OSError, ValueError, KeyError):
            pass
        value = compute()
        if keep(value):
            for old in folder.glob(f"{name}-*.json"):  # the results of other inputs
                old.unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"value": value}, f)
            os.replace(tmp, path)  # whole or not at all, for a reader without the lock
        return value


ROW_MEMO = "speed-rows"
LOSO_MEMO = "serving-loso"


@contextmanager
def shared_row_estimates(config: pytest.Config) -> Iterator[None]:
    """Inside: scripts/calibrate.py's memo of row estimates starts from, and adds to, one file
    under the cache folder keyed by the same inputs digest (``WHICHGPU_SPEED_ROW_MEMO``; the
    script locks it while adding), so the speed refits of this run (and of later runs on the
    same inputs) estimate each row under the same constant values once between them, and
    search each group's grid on the same rows from the same values once (validate speed's
    leave-one-GPU-out refits take calibrate.py --check's choices). The
    refits' outputs are the same with it as without it (proved on calibrate.py --check and
    validate speed --json, byte for byte; tests/estimate/speed/test_row_memo_on_disk.py)."""
    with _shared_file(config, "WHICHGPU_SPEED_ROW_MEMO", ROW_MEMO, "pickle"):
        yield


@contextmanager
def shared_serving_loso(config: pytest.Config) -> Iterator[None]:
    """Inside: estimate/serving_fit.py's leave-one-source-out residuals are read from, and
    added to, one file under the cache folder keyed by the same inputs digest
    (``WHICHGPU_SERVING_LOSO_MEMO``), so calibrate_serving.py --check and validate serving
    --json refit once between them (the same residuals: the memo's key is the rows and the
    constant tables loso reads; their outputs are the same byte for byte with it as without
    it, tests/estimate/speed/test_serving_loso_memo.py)."""
    with _shared_file(config, "WHICHGPU_SERVING_LOSO_MEMO", LOSO_MEMO, "json"):
        yield


@cache
def _process_folder() -> Path:
    """Without pytest's cache: a folder of this process's own (one xdist worker's, one run's),
    removed when the process ends, so that its refits still share within the run."""
    import atexit
    import shutil

    folder = Path(tempfile.mkdtemp(prefix="whichgpu-refits-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


@contextmanager
def _shared_file(config: pytest.Config, env: str, stem: str, suffix: str) -> Iterator[None]:
    """``env`` names the file ``stem``-<inputs digest>.``suffix`` under the cache folder
    (the files of other inputs removed) inside the block; without pytest's cache
    (-p no:cacheprovider), under a folder of this process's own: the refits of this run
    share, nothing is kept for the next (the refits' results are not kept either)."""
    store = getattr(config, "cache", None)
    folder = (Path(store.mkdir("whichgpu-refits")) if store is not None
              else _process_folder())
    path = folder / f"{stem}-{inputs_digest()[:32]}.{suffix}"
    for old in folder.glob(f"{stem}-*.{suffix}"):  # the results of other inputs
        if old != path:
            old.unlink(missing_ok=True)
    saved = os.environ.get(env)
    os.environ[env] = str(path)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(env, None)
        else:
            os.environ[env] = saved
