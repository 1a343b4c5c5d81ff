"""Typed vocabularies in the domain (issue 35): a field or parameter named ``task``,
``engine`` or ``kind`` in estimate/, advise/ or cost/ is typed with its vocabulary (``Task``,
``Engine``, ``WorkKind``, a ``Literal``), not ``str``, so mypy finds a misspelt word. The few
left are listed with their reason; the list only shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

import source_trees
from paths import ROOT

SRC = ROOT / "src" / "whichgpu"
ENGINE = ("estimate", "advise", "cost")
NAMES = {"task", "engine", "kind"}

# "module:name" -> why it is still a plain word
KNOWN = {
    "estimate/speed/result.py:engine": "band_key takes a validation row's engine column as "
                                       "well (validation/speed.py)",
    "estimate/speed/llm.py:engine": "the constants' key: llamacpp-vulkan etc. (constants_key)",
    "estimate/energy.py:engine": "a measured power row's engine, as the data file writes it",
    "estimate/measured.py:engine": "a measured run's engine, as the runs store keeps it",
    "estimate/memory/kv.py:engine": "called with the constants' key as well (llm.decode_step)",
    "estimate/speed/kernels.py:engine": "the kernel table's key (data/engine_kernels.toml)",
    "estimate/serving_fit.py:engine": "the validation rows' engine column",
    "estimate/memory/weights.py:engine": "gguf_ftype is called with the kernel table's key",
}


def _plain_str(node: ast.expr | None) -> bool:
    """``str`` or ``str | None``."""
    if isinstance(node, ast.Name):
        return node.id == "str"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace(" ", "") in ("str", "str|None")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _plain_str(node.left) and isinstance(node.right, ast.Constant) and \
            node.right.value is None
    return False


def words_typed_as_str(path: Path) -> set[str]:
    """The names among task/engine/kind that ``path`` annotates as a plain str."""
    found = set()
    for node in source_trees.nodes(path):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                node.target.id in NAMES and _plain_str(node.annotation):
            found.add(node.target.id)
        elif isinstance(node, ast.arg) and node.arg in NAMES and _plain_str(node.annotation):
            found.add(node.arg)
    return found


def _modules() -> list[Path]:
    return sorted(p for pkg in ENGINE for p in (SRC / pkg).rglob("*.py")
                  if "validation" not in p.parts)  # the validation rows are data


def test_the_domain_types_its_words():
    found = {f"{p.relative_to(SRC).as_posix()}:{name}" for p in _modules()
             for name in words_typed_as_str(p)}
    assert sorted(found - set(KNOWN)) == [], "type it as Task / Engine (whichgpu.vocabulary)"


def test_the_known_list_only_shrinks():
    stale = [k for k in KNOWN
             if k.split(":")[1] not in words_typed_as_str(SRC / k.split(":")[0])]
    assert stale == []


def test_the_check_sees_a_word(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("class A:\n    task: str\n\ndef f(engine: str | None, kind: int) -> None:\n"
                 "    pass\n")
    assert words_typed_as_str(f) == {"task", "engine"}
