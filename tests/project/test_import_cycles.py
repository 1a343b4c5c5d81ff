"""No import cycle between whichgpu's modules (issue 35, part 2).

Two graphs, read from the source (``ast``, nothing imported): the imports a module runs when it
is loaded (the top of the module, its classes, ``try``/``if`` blocks; not ``if TYPE_CHECKING``),
and every import, the lazy ones inside functions included.

- At load time there is no cycle: a cycle there makes the import order matter and fails with a
  half-initialised module.
- With the lazy imports counted there is no cycle either (the last group, the advise knot of
  explain/goodput/recommend/serving, was broken in session 5). A new lazy import that ties two
  modules into a loop fails here: break it by moving code down to the module both sides use
  (or up, above both), never by a shim that re-imports.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import source_trees
from paths import ROOT

SRC = ROOT / "src" / "whichgpu"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        out[".".join(parts).removesuffix(".__init__")] = path
    return out


def _target(name: str, modules: dict[str, Path]) -> str | None:
    """The module an imported name lives in (``whichgpu.a.b.f`` -> ``whichgpu.a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(name: str, path: Path, modules: dict[str, Path], lazy: bool) -> set[str]:
    """The whichgpu modules ``name`` imports (at load time only, or ``lazy`` ones too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and not lazy:
            return
        if _is_type_checking(node):
            for child in node.orelse:  # the else branch runs
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            for alias in node.names:
                target = _target(f"{base}.{alias.name}", modules)
                if target is not None:
                    found.add(target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                target = _target(alias.name, modules)
                if target is not None:
                    found.add(target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(_tree(path))
    found.discard(name)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    group = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.add(w)
                        if w == v:
                            break
                    if len(group) > 1:
                        groups.append(group)
    return groups


@cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for both graphs (0.7 of their 2.3 CPU-s)."""
    return source_trees.tree(path)


@cache
def _graph(lazy: bool) -> dict[str, set[str]]:
    """Module -> the whichgpu modules it imports (read once per process: several tests ask)."""
    modules = _modules()
    return {name: _imports(name, path, modules, lazy) for name, path in modules.items()}


def test_the_finder_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_when_modules_load():
    assert _cycles(_graph(lazy=False)) == []


def test_the_lazy_graph_holds_the_imports_inside_functions():
    """The lazy graph is the one that can catch a lazy cycle: it has the imports made inside a
    function (the rate sizing is imported where a rate job is answered), the load graph not."""
    recommend, serving = "whichgpu.advise.recommend", "whichgpu.advise.serving"
    assert serving in _graph(lazy=True)[recommend]
    assert serving not in _graph(lazy=False)[recommend]


def test_no_import_cycle_through_lazy_imports():
    assert [sorted(g) for g in _cycles(_graph(lazy=True))] == [], \
        "an import cycle through lazy imports (break it: move code down to the module both use)"
