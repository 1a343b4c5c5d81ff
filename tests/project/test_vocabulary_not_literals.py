"""Typed vocabularies (issue 35): a task or an engine is compared with a Task/Engine member,
never with its string (``w.task == Task.QLORA``, not ``== "qlora"``), so a misspelt word fails at
import. The modules still comparing strings are listed with how many; the list only shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

import source_trees
from paths import ROOT
from whichgpu.vocabulary import Engine, Task

SRC = ROOT / "src" / "whichgpu"
WORDS = {str(t) for t in Task} | {str(e) for e in Engine}
NAMES = {"task", "engine", "engine_name"}

# module -> comparisons left, each for its reason
KNOWN = {
    # validation data: the rows' own words (validation/*.csv), compared as read
    "estimate/validation/memory.py": 2,
    "estimate/validation/rows.py": 6,
    "estimate/validation/serving.py": 3,
    "estimate/validation/fits.py": 1,
}


def _is_word(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in WORDS
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_word(e) for e in node.elts)
    return False


def _named(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in NAMES) or (
        isinstance(node, ast.Name) and node.id in NAMES)


def literal_comparisons(path: Path) -> int:
    n = 0
    for node in source_trees.nodes(path):
        if isinstance(node, ast.Compare) and _named(node.left) and any(
                _is_word(c) for c in node.comparators):
            n += 1
    return n


def test_tasks_and_engines_compare_with_members():
    found = {str(p.relative_to(SRC)): n for p in sorted(SRC.rglob("*.py"))
             if (n := literal_comparisons(p))}
    grown = {k: v for k, v in found.items() if v > KNOWN.get(k, 0)}
    assert grown == {}, "compare with Task/Engine members (whichgpu.vocabulary)"


def test_the_known_list_only_shrinks():
    stale = {k: v for k, v in KNOWN.items() if literal_comparisons(SRC / k) < v}
    assert stale == {}, "fewer literal comparisons now: lower KNOWN"


def test_the_check_sees_a_literal(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f(w, engine):\n    return w.task == 'qlora' or engine in ('vllm', 'x')\n")
    assert literal_comparisons(f) == 2
