"""conftest.SAME_WORKER keeps the speed refits that share their row estimates in one xdist
worker, calibrate.py --check first (and the serving refits that share their leave-one-source-out
residuals in another, calibrate_serving.py --check first): every key names a test file or test
that exists (a renamed one would silently run apart again), and collection puts exactly those
tests in their group, in that order."""

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
    for name in set(conftest.SAME_WORKER.values()):
        keys = [k for k, g in conftest.SAME_WORKER.items() if g == name]
        grouped = [node for node, group in groups if group == name]
        for key in keys:
            assert any(node == key or node.startswith(key + "::") or node.startswith(key + "[")
                       for node in grouped), key
        for node in grouped:
            file, _, test = node.partition("::")
            assert file in keys or f"{file}::{test}" in keys, node
    # the check's fixture estimates every row first; the others find them
    grouped = [node for node, group in groups if group == "speed-refits"]
    assert grouped[0].startswith("estimate/speed/test_speed_calibration.py::")
    assert [n for n in grouped if "test_speed_calibration" in n] == grouped[:len(
        [n for n in grouped if "test_speed_calibration" in n])]
    # the serving check computes the leave-one-source-out residuals validate serving reads
    serving = [node for node, group in groups if group == "serving-refits"]
    assert serving[0].endswith("::test_the_toml_is_exactly_what_make_calibrate_serving_produces")


def test_under_loadgroup_each_group_is_in_the_node_id_xdist_schedules_by():
    """``--dist loadgroup`` puts the tests whose node ids end in the same "@group" in one
    worker; pytest-xdist 3.8's own suffix is lost on pytest 9 (conftest._name_group), so the
    groups (SAME_WORKER's, and each file with a module fixture) must reach the node id."""
    nodeids: list[str] = []

    class Probe:
        def pytest_collection_finish(self, session):
            nodeids.extend(item.nodeid for item in session.items)

    files = ("estimate/speed/test_band_residuals.py",  # SAME_WORKER, with a module fixture
             "estimate/validation/test_validation_reporting.py")  # two of its tests named
    args = [*(str(TESTS / f) for f in files), "--collect-only", "-q", "-p", "no:cacheprovider",
            "--dist", "loadgroup"]
    assert pytest.main(args, plugins=[Probe()]) == 0
    band = [n for n in nodeids if "test_band_residuals" in n]
    assert band and all(n.endswith("@speed-refits") for n in band)
    reporting = {n.split("::")[1].split("@")[0]: n for n in nodeids
                 if "test_validation_reporting" in n}
    named = [k.split("::")[1] for k in conftest.SAME_WORKER if "test_validation_reporting" in k]
    for name, node in reporting.items():
        assert node.endswith("@speed-refits") == (name in named), node
