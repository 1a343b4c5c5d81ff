"""A test file that uses the shared browser (browser_session.py's module-scoped Chromium) runs
in one xdist worker under ``--dist loadgroup``, whole or in the parts conftest.SPLIT names:
tests handed out one by one, each worker started its own Chromium for the file, again and
again as it went between files, and its own served app rendered the file's pages again (the
layout and axe files ran in both workers of main's profile, 2026-12-07). A part is one group,
so it keeps one Chromium; the parts of a long file can run in both workers at once."""

from __future__ import annotations

import pytest

import conftest
from paths import TESTS

FILES = ("web/test_web_layout.py", "web/test_web_axe.py", "web/test_web_browser.py")


def _node_ids(files: tuple[str, ...]) -> list[str]:
    nodeids: list[str] = []

    class Probe:
        def pytest_collection_finish(self, session):
            nodeids.extend(item.nodeid for item in session.items)

    args = [*(str(TESTS / f) for f in files), "--collect-only", "-q", "-p", "no:cacheprovider",
            "--dist", "loadgroup"]
    assert pytest.main(args, plugins=[Probe()]) == 0
    return nodeids


def test_each_browser_file_is_one_group_or_its_parts_in_the_node_ids_xdist_schedules_by():
    nodeids = _node_ids(FILES)
    for file in FILES:
        ids = [n for n in nodeids if n.split("::")[0].endswith(file)]
        assert len(ids) > 1, file
        groups = [n.rpartition("@")[2] for n in ids]
        parts = conftest.SPLIT.get(file)
        if parts is None:
            assert set(groups) == {file}, ids[:3]
            continue
        # dealt in turn: every part has tests, and no test is in a group of its own
        assert groups == [f"{file}#{i % parts}" for i in range(len(ids))], groups
        assert len(set(groups)) == parts


def test_every_split_file_exists_and_is_split_at_least_in_two():
    for file, parts in conftest.SPLIT.items():
        assert (TESTS / file).is_file(), f"conftest.SPLIT names {file}: not in tests/"
        assert parts >= 2, file
