"""No test may write into the checkout: a test that leaves a new file or folder in it fails
(at its teardown), naming what it left.

A fuzzer once wrote files named after its values into the repository root (``runs export
1M`` wrote ``1M``); one named ``flux.1-dev`` was then read as that model by every later test
(93 failures). Tests write under ``tmp_path`` (or ``monkeypatch.chdir(tmp_path)``).

How: the watched folders are listed once; after each test, a folder whose modification time
moved is listed again, and an entry it did not hold before is the test's, unless git ignores
it (``__pycache__``, ``.pytest_cache`` ...). Watched: the repository root (where a relative
path lands: the tests run from it) and everything under ``tests/data/`` (the recorded inputs
tests read). Not the source, tests or docs folders, where a developer adds files while a run
goes on. Under pytest-xdist a test of another worker running at the same moment may be the
writer: the message says so. A change to an existing file is not seen (no folder changes).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: folders never watched (their contents are the tools' own, all git-ignored)
SKIP = {".git", ".venv", ".venv-launchers", "__pycache__", ".pytest_cache", ".hypothesis",
        ".ruff_cache", ".mypy_cache", "node_modules", "build", "dist", "artifacts"}


def _folders(root: Path) -> dict[Path, float]:
    """The root and every folder under tests/data, with their modification times."""
    found: dict[Path, float] = {root: os.stat(root).st_mtime}
    for here, dirs, _files in os.walk(root / "tests" / "data"):
        dirs[:] = [d for d in dirs if d not in SKIP]
        found[Path(here)] = os.stat(here).st_mtime
    return found


class CheckoutGuard:
    """The folders of the checkout at ``root`` and what each held."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root
        self.mtimes = _folders(root)
        self.listing = {folder: set(os.listdir(folder)) for folder in self.mtimes}
        self.ignored: dict[Path, bool] = {}

    def _is_ignored(self, path: Path) -> bool:
        if path not in self.ignored and path.name in SKIP:  # a tool's cache (mypy's ignores
            self.ignored[path] = True  # itself with its own .gitignore, which git does not say)
        if path not in self.ignored:
            try:
                done = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=self.root,
                                      capture_output=True, timeout=30)
                self.ignored[path] = done.returncode == 0
            except (OSError, subprocess.TimeoutExpired):  # no git: a source tree
                self.ignored[path] = path.name in SKIP
        return self.ignored[path]

    def new_entries(self) -> list[Path]:
        """What appeared in the checkout since the last call (git-ignored entries aside)."""
        new: list[Path] = []
        for folder, mtime in list(self.mtimes.items()):
            try:
                now = os.stat(folder).st_mtime
            except FileNotFoundError:
                continue
            if now == mtime:
                continue
            self.mtimes[folder] = now
            entries = set(os.listdir(folder))
            added = entries - self.listing[folder]
            self.listing[folder] = entries
            new += [folder / name for name in sorted(added)
                    if not self._is_ignored(folder / name)]
        return new


_guard: CheckoutGuard | None = None


def pytest_sessionstart(session: pytest.Session) -> None:
    global _guard
    _guard = CheckoutGuard()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    result = yield
    if _guard is not None:
        new = _guard.new_entries()
        if new:
            names = ", ".join(str(p.relative_to(ROOT)) for p in new)
            beside = (" (or a test running beside it in another pytest-xdist worker)"
                      if os.environ.get("PYTEST_XDIST_WORKER") else "")
            pytest.fail(f"this test{beside} wrote into the checkout: {names}; write under "
                        "tmp_path (or monkeypatch.chdir(tmp_path)) and delete these",
                        pytrace=False)
    return result
