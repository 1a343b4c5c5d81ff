"""The guard that fails a test writing into the checkout (tests/checkout_guard.py) sees a new
file or folder anywhere in the tree, and lets git-ignored ones (caches) pass."""

from __future__ import annotations

import subprocess

import pytest

from checkout_guard import ROOT, CheckoutGuard


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    (tmp_path / "tests" / "data").mkdir(parents=True)
    return tmp_path


def test_a_new_file_or_folder_is_seen_where_it_lands(repo):
    guard = CheckoutGuard(repo)
    assert guard.new_entries() == []
    (repo / "flux.1-dev").write_text("{}")  # what the CLI fuzzer once left in the root
    (repo / "tests" / "data" / "1M").mkdir()
    assert guard.new_entries() == [repo / "flux.1-dev", repo / "tests" / "data" / "1M"]
    assert guard.new_entries() == []  # said once


def test_git_ignored_entries_pass(repo):
    guard = CheckoutGuard(repo)
    (repo / "__pycache__").mkdir()
    (repo / "tests" / "data" / ".pytest_cache").mkdir()
    (repo / ".mypy_cache").mkdir()  # mypy's own .gitignore inside, which git check-ignore misses
    (repo / ".mypy_cache" / ".gitignore").write_text("*\n")
    assert guard.new_entries() == []


def test_the_guard_watches_this_checkout():
    folders = CheckoutGuard().mtimes
    assert ROOT in folders and ROOT / "tests" / "data" / "prices" in folders
    assert ROOT / "src" not in folders  # where a developer adds files during a run
