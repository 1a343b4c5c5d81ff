"""Python files parsed once per test process, for the tests that read the source's syntax
(layers, import cycles, vocabulary, the engine packages' rules, the suite's own markers).

Eleven test files each parsed every module of src/whichgpu again (about 1.1 CPU-s a pass over
its 306 files, 2026-12-07, shared machine), several of them more than once per test. Here a
file's tree and its nodes in ``ast.walk`` order are kept by the file's text: a file that
changes (a test writing one under tmp_path, twice) is parsed again, so a test reads exactly
what is on disk, as before. The trees are shared: a test must not change them.
"""

from __future__ import annotations

import ast
import gc
from functools import cache
from pathlib import Path


def tree(path: Path) -> ast.Module:
    """``ast.parse`` of the file (UTF-8)."""
    return _tree(path.read_text("utf-8"))


def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file's tree, in ``ast.walk``'s order."""
    return _nodes(path.read_text("utf-8"))


@cache
def _tree(text: str) -> ast.Module:
    """The parsed tree, kept out of the cyclic collector: its nodes (470,000 for all of
    src/whichgpu) live for the rest of the process, so a collection while they are made finds
    nothing, and every full collection after would walk them all again (tests/project: 2.2 of
    its 14 CPU-s in the collector before, 0.2 after; -n 0, shared machine, 2026-12-07)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(text)
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


@cache
def _nodes(text: str) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(_tree(text)))
