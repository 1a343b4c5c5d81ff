"""The public API's names stay what they are (issue 35): no exported name is also the name of
a whichgpu module, which Python would put in its place once that module loads."""

from __future__ import annotations

import importlib
import pkgutil

import whichgpu


def test_no_export_shares_its_name_with_a_module():
    modules = {m.name for m in pkgutil.iter_modules(whichgpu.__path__)}
    objects = {name for name, (_, attr) in whichgpu._EXPORTS.items() if attr is not None}
    assert objects & modules == set()


def test_run_cost_stays_a_function_after_the_cost_package_loads():
    importlib.import_module("whichgpu.cost.currency")
    importlib.import_module("whichgpu.answers.money")
    assert callable(whichgpu.run_cost) and whichgpu.run_cost.__name__ == "cost"
    assert whichgpu.cost.__name__ == "whichgpu.cost"  # the package, as Python's import says
