"""The price store sits in the catalog layer: it imports no layer below it (design.md).

Checked on the source, every import (lazy ones inside functions included), so that a lazy
``from whichgpu.cost ... import`` cannot slip back in.
"""

from __future__ import annotations

import ast
from pathlib import Path

import source_trees
import whichgpu

SRC = Path(next(iter(whichgpu.__path__)))
# the base layer as tests/project/test_layers.py (design.md) names it: structured messages, the
# typed vocabularies and the engine traits are base modules too
BASE = {"whichgpu.units", "whichgpu.errors", "whichgpu.paths", "whichgpu.currency",
        "whichgpu.user_files", "whichgpu.messages", "whichgpu.vocabulary", "whichgpu.engines",
        "whichgpu.listing", "whichgpu.parse_cache", "whichgpu.strict_json"}


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in source_trees.nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m == "whichgpu" or m.startswith("whichgpu.")}


def _top(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def test_catalog_imports_only_itself_and_the_base_modules():
    bad = {}
    for path in sorted((SRC / "catalog").rglob("*.py")):
        wrong = sorted(m for m in _imports(path)
                       if _top(m) != "whichgpu.catalog" and _top(m) not in BASE)
        if wrong:
            bad[str(path.relative_to(SRC))] = wrong
    assert bad == {}


def test_currency_module_imports_only_units_and_errors():
    # parse_cache: the base layer's reader of shipped TOML tables (it imports only
    # whichgpu.paths), through which the shipped exchange rates load (issue 27)
    assert _imports(SRC / "currency.py") <= {"whichgpu.units", "whichgpu.errors",
                                             "whichgpu.messages", "whichgpu.parse_cache"}


def test_cost_currency_reexports_the_base_table():
    from whichgpu import currency
    from whichgpu.cost import currency as cost_currency

    assert cost_currency.default_rates is currency.default_rates
    assert cost_currency.RateTable is currency.RateTable
    table = currency.default_rates()
    assert table.base == "EUR" and "USD" in table.currencies() and table.source
