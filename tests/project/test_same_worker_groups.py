"""conftest.SAME_WORKER keeps the speed refits that share their row estimates in one xdist
worker, calibrate.py --check first: every key names a test file or test that exists (a
renamed one would silently run apart again), and collection puts exactly those tests in the
group, in that order."""

from __future__ import annotations

import ast

import pytest

import conftest
from paths import TESTS


def _defined(file: str) -> set[str]:
    tree = ast.parse((TESTS / file).read_text("utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("key", sorted(conftest.SAME_WORKER))
def test_every_entry_names_a_test_that_exists(key):
    file, _, test = key.partition("::")
    assert (TESTS / file).is_file(), f"conftest.SAME_WORKER names {file}: not in tests/"
    if test:
        assert test in _defined(file), f"conftest.SAME_WORKER names {key}: no such test"


def test_collection_groups_them_with_the_calibration_check_first():
    files = sorted({key.split("::")[0] for key in conftest.SAME_WORKER})
    groups: list[tuple[str, str | None]] = []

    class Probe:
        def pytest_collection_finish(self, session):
            for item in session.items:
                mark = item.get_closest_marker("xdist_group")
                groups.append((item.nodeid.split("tests/", 1)[-1],
                               mark.args[0] if mark is not None else None))

    args = [*(str(TESTS / f) for f in files), "--collect-only", "-q", "-p", "no:cacheprovider"]
    assert pytest.main(args, plugins=[Probe()]) == 0
    grouped = [node for node, group in groups if group == "speed refits"]
    for key in conftest.SAME_WORKER:
        assert any(node == key or node.startswith(key + "::") or node.startswith(key + "[")
                   for node in grouped), key
    for node in grouped:
        file, _, test = node.partition("::")
        assert file in conftest.SAME_WORKER or f"{file}::{test}" in conftest.SAME_WORKER, node
    # the check's fixture estimates every row first; the others find them
    assert grouped[0].startswith("estimate/speed/test_speed_calibration.py::")
    assert [n for n in grouped if "test_speed_calibration" in n] == grouped[:len(
        [n for n in grouped if "test_speed_calibration" in n])]
