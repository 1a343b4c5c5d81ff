"""A test file runs alone: it imports helpers from tests/*.py modules, never from another test
file (such an import is found only when the other file's folder was collected in the same run,
so `pytest tests/advise/test_x.py` failed with ModuleNotFoundError while the whole suite passed)."""

from __future__ import annotations

import ast

import source_trees
from paths import ROOT

TESTS = ROOT / "tests"
# test file -> the test module it still imports from, and why it stays (shrink-only)
KNOWN = {
    "tests/web/test_web_alive.py": "the browser tests' page helpers (test_web_layout)",
    "tests/agents/test_fuzz_mcp.py": "the MCP test server (test_mcp_server)",
}


def imported_test_modules(path) -> set[str]:
    found = set()
    for node in source_trees.nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[0].startswith("test_"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0].startswith("test_")}
    return found


def _importing() -> dict[str, set[str]]:
    return {str(p.relative_to(ROOT)): names for p in sorted(TESTS.rglob("test_*.py"))
            if (names := imported_test_modules(p))}


def test_no_test_file_imports_another():
    assert {k: v for k, v in _importing().items() if k not in KNOWN} == {}


def test_the_known_list_only_shrinks():
    assert sorted(set(KNOWN) - set(_importing())) == []


def test_the_check_sees_an_import(tmp_path):
    f = tmp_path / "test_a.py"
    f.write_text("def t():\n    from test_web_api import stable\n")
    assert imported_test_modules(f) == {"test_web_api"}
