"""Module families live in a subpackage, not as flat prefixed siblings (issue 35, part 2).

The flat families of session 3 (estimate's ``validation*`` modules, 15; models' ``arch_*``, 8,
and ``diffusion*``, 4; catalog/prices' ``backend*``, 3) became ``estimate/validation/``,
``models/arch/``, ``models/diffusion/`` and ``catalog/prices/backends/``. Two rules keep them
from coming back, read from the file tree (nothing imported):

- no three sibling modules (files or subpackages) share a name prefix (the part before the
  first ``_``): such a family is a subpackage;
- no module ``X_y.py`` sits beside a subpackage ``X/``: it belongs inside it.
"""

from __future__ import annotations

from collections import defaultdict

from paths import ROOT

SRC = ROOT / "src" / "whichgpu"
LIMIT = 3  # siblings sharing a prefix that make a family

# Families not yet moved, each with its reason. The list may shrink, never grow.
PENDING: dict[tuple[str, str], str] = {
    ("estimate/speed", "serving"): "serving, serving_{answers,bands,engine,queue,sim,steps}: "
    "edited by other branches this session (issue 35 leaves it for a later stop)",
}


def _siblings() -> dict[str, list[str]]:
    """Package folder (relative to src/whichgpu) -> its module and subpackage names."""
    out: dict[str, list[str]] = {}
    for init in sorted(SRC.rglob("__init__.py")):
        folder = init.parent
        names = [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"]
        names += [d.name for d in folder.iterdir() if (d / "__init__.py").is_file()]
        out[folder.relative_to(SRC).as_posix() or "."] = sorted(names)
    return out


def _families(names: list[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[name.split("_", 1)[0]].append(name)
    return {prefix: members for prefix, members in groups.items() if len(members) >= LIMIT}


def test_the_tree_is_read() -> None:
    tree = _siblings()
    assert {"validation", "speed", "memory"} <= set(tree["estimate"])
    assert {"arch", "diffusion"} <= set(tree["models"])
    assert "backends" in tree["catalog/prices"]


def test_the_rule_finds_a_flat_family() -> None:
    """The old layout would fail: the rule is not vacuous."""
    old = ["validation", "validation_cv", "validation_speed", "workload", "rl"]
    assert _families(old) == {"validation": ["validation", "validation_cv", "validation_speed"]}
    assert _families(["backend", "backend_sqlite", "memo"]) == {}


def test_no_flat_prefix_family() -> None:
    found = {(folder, prefix): members for folder, names in _siblings().items()
             for prefix, members in _families(names).items()}
    new = {key: members for key, members in found.items() if key not in PENDING}
    assert not new, ("flat module families (move each into a subpackage named for the prefix): "
                     f"{new}")
    gone = set(PENDING) - set(found)
    assert not gone, f"no longer flat, drop from PENDING: {sorted(gone)}"


def test_no_module_beside_its_own_subpackage() -> None:
    stray = []
    for folder, names in _siblings().items():
        packages = {n for n in names if (SRC / folder / n / "__init__.py").is_file()}
        stray += [f"{folder}/{n}.py" for n in names
                  if n not in packages and n.split("_", 1)[0] in packages]
    assert not stray, f"modules that belong in the subpackage of their prefix: {stray}"
