"""The ``slow`` marker keeps its meaning: every entry of conftest.SLOW names a test file and
test that exist (a renamed file or test would silently fall back into ``make test-fast``),
and the marker reaches the tests it names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import conftest
import source_trees
from paths import TESTS


def _defined_tests(path: Path) -> set[str]:
    """``name`` and ``Class::name`` of the test functions the file defines."""
    tree = source_trees.tree(path)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(f"{node.name}::{f.name}" for f in node.body
                         if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


@pytest.mark.parametrize("key", sorted(conftest.SLOW))
def test_every_slow_entry_names_a_test_that_exists(key):
    file, _, test = key.partition("::")
    path = TESTS / file
    assert path.is_file(), f"conftest.SLOW names {file}, which is not in tests/"
    if test:
        assert test in _defined_tests(path), f"conftest.SLOW names {key}: no such test"


def test_every_slow_entry_says_why():
    assert all(reason.strip() for reason in conftest.SLOW.values())


def test_the_marker_reaches_listed_files_single_tests_and_postgresql_cases():
    """Collect a listed file, a file with listed tests and a file of store tests: the marks
    land where SLOW and the PostgreSQL rule say, and nowhere else."""
    files = ("estimate/speed/test_speed_calibration.py",
             "estimate/validation/test_validation_reporting.py",
             "catalog/prices/test_prices_store.py")
    marked: dict[str, bool] = {}

    class Probe:
        def pytest_collection_finish(self, session):
            for item in session.items:
                marked[item.nodeid.split("/")[-1]] = item.get_closest_marker("slow") is not None

    args = [*(str(TESTS / f) for f in files), "--collect-only", "-q", "-p", "no:cacheprovider"]
    assert pytest.main(args, plugins=[Probe()]) == 0

    def of(file: str) -> dict[str, bool]:
        return {k.split("::", 1)[1]: v for k, v in marked.items() if k.startswith(file + "::")}

    speed = of("test_speed_calibration.py")
    assert len(speed) >= 5 and all(speed.values())  # the whole file
    report = of("test_validation_reporting.py")
    assert {k for k, v in report.items() if v} == {
        "test_validate_speed_prints_engine_architecture_and_leave_one_out_tables",
        "test_leaving_a_gpu_out_refits_without_it_and_restores_the_constants"}
    assert len(report) > 2
    store = of("test_prices_store.py")
    on_sqlite = [v for k, v in store.items() if "[sqlite" in k]
    on_postgresql = [v for k, v in store.items() if "[postgresql" in k]
    assert on_sqlite and not any(on_sqlite)
    assert on_postgresql and all(on_postgresql)
