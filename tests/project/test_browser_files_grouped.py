"""A test file that uses the shared browser (browser_session.py's module-scoped Chromium) runs
whole in one xdist worker under ``--dist loadgroup``: split, each worker started its own
Chromium for the file and its own served app rendered the file's pages again (the layout and
axe files ran in both workers of main's profile, 2026-12-07)."""

from __future__ import annotations

import pytest

from paths import TESTS

FILES = ("web/test_web_layout.py", "web/test_web_axe.py", "web/test_web_browser.py")


def test_each_browser_file_is_one_group_in_the_node_ids_xdist_schedules_by():
    nodeids: list[str] = []

    class Probe:
        def pytest_collection_finish(self, session):
            nodeids.extend(item.nodeid for item in session.items)

    args = [*(str(TESTS / f) for f in FILES), "--collect-only", "-q", "-p", "no:cacheprovider",
            "--dist", "loadgroup"]
    assert pytest.main(args, plugins=[Probe()]) == 0
    for file in FILES:
        ids = [n for n in nodeids if n.split("::")[0].endswith(file)]
        assert len(ids) > 1, file
        assert {n.rpartition("@")[2] for n in ids} == {file}, ids[:3]
