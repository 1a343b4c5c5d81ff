"""The layers of ../ARCHITECTURE.md (design.md's table), enforced on every module's imports.

Each package imports only from its own layer and the layers before it; lazy imports inside
functions count as much as those at the top of a module. One exception is named: ``whichgpu
serve`` (cli/web_cmds.py) starts the web app (web/server.py). Nothing outside cli/ imports
cli, and the web never does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import source_trees
from paths import ROOT

SRC = ROOT / "src" / "whichgpu"

# the base: small modules everyone uses (units, errors, messages, the typed vocabularies)
BASE = {"units", "errors", "paths", "currency", "user_files", "messages", "vocabulary",
        "engines", "listing", "parse_cache", "strict_json"}
# layer -> rank: a module imports only from layers of a lower rank (and its own package)
RANK = {"base": 0, "catalog": 1, "models": 2, "estimate": 3, "cost": 4, "advise": 5,
        "export": 6, "bench": 6, "engine_code": 6.5, "answers": 7, "agents": 8, "cli": 9,
        "web": 9}
ALLOWED = {("whichgpu.cli.web_cmds", "whichgpu.web.server")}  # `whichgpu serve`


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[1] == "engines" and len(parts) > 2:
        # an engine's own module (engines/<engine>.py) writes memory terms and command lines:
        # it imports estimate and export, and is found by name (whichgpu.engines.module), never
        # imported
        return "engine_code"
    return "base" if parts[1] in BASE else parts[1]


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts).removesuffix(".__init__")
        if name != "whichgpu":  # the package's facade re-exports the public API lazily
            out.append((name, path))
    return out


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in source_trees.nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.startswith("whichgpu.")}


def test_every_package_has_a_layer():
    assert {layer(name) for name, _ in modules()} <= set(RANK)


@pytest.mark.parametrize(("name", "path"), modules(), ids=lambda v: str(v))
def test_a_module_imports_no_layer_above_its_own(name, path):
    mine = layer(name)
    wrong = sorted(m for m in imports(path)
                   if layer(m) != mine and RANK[layer(m)] >= RANK[mine]
                   and (name, m) not in ALLOWED)
    assert wrong == [], f"{name} ({mine}) imports {wrong}"


def test_nothing_outside_cli_imports_cli():
    users = sorted(name for name, path in modules() if layer(name) != "cli"
                   and any(layer(m) == "cli" for m in imports(path)))
    assert users == []


def test_the_check_sees_lazy_imports(tmp_path):
    lazy = tmp_path / "m.py"
    lazy.write_text("def f():\n    from whichgpu.cli.app import app\n    return app\n")
    assert imports(lazy) == {"whichgpu.cli.app"}
