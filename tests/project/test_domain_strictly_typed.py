"""Issue 35: the domain objects and their vocabulary are checked by mypy in strict mode.
pyproject.toml's strict section names the modules that define them (Workload, Job, Host,
Speculation, MemoryEstimate, MixedPlan, Option, Exclusion, Recommendation, ChecklistResult,
the request values, the vocabularies and the engine traits) and turns on every per-module flag
``--strict`` does (mypy 2.4 applies a per-module ``strict = true`` to every module, so the
section spells the flags out); the two global ones are on for all modules. ``make test`` runs
mypy, so a loose annotation there fails the suite."""

from __future__ import annotations

import tomllib

import pytest

from paths import ROOT

# the per-module flags --strict turns on (mypy --help, 2.4: --strict's list, less the global
# --warn-redundant-casts and --warn-unused-ignores)
STRICT = {"disallow_any_generics": True, "disallow_subclassing_any": True,
          "disallow_untyped_calls": True, "disallow_untyped_defs": True,
          "disallow_incomplete_defs": True, "check_untyped_defs": True,
          "disallow_untyped_decorators": True, "warn_return_any": True,
          "implicit_reexport": False, "strict_equality": True, "extra_checks": True}
GLOBAL = {"warn_redundant_casts": True, "warn_unused_ignores": True}

# each domain type -> the module that defines it
DOMAIN = {
    "Task": "whichgpu.vocabulary", "Engine": "whichgpu.vocabulary",
    "WorkKind": "whichgpu.vocabulary", "EngineTraits": "whichgpu.engines",
    "Workload": "whichgpu.estimate.workload", "Job": "whichgpu.advise.job",
    "Host": "whichgpu.estimate.host", "MemorySpec": "whichgpu.estimate.host",
    "Interconnect": "whichgpu.estimate.interconnect",
    "Speculation": "whichgpu.estimate.speculative",
    "MemoryEstimate": "whichgpu.estimate.memory.terms",
    "MixedPlan": "whichgpu.estimate.mixed_cards",
    "Option": "whichgpu.advise.options", "Exclusion": "whichgpu.advise.options",
    "Recommendation": "whichgpu.advise.options",
    "ChecklistResult": "whichgpu.advise.checklist",
    "TokenCount": "whichgpu.answers.inputs.values",
    "MoneyAmount": "whichgpu.answers.inputs.values",
}


def _mypy() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["mypy"]


def _strict_section() -> dict:
    sections = [o for o in _mypy().get("overrides", [])
                if all(o.get(k) == v for k, v in STRICT.items())]
    assert len(sections) == 1, "one section holds the strict modules"
    return sections[0]


def test_the_strict_section_turns_on_every_strict_flag() -> None:
    section = _strict_section()
    assert {k: section.get(k) for k in STRICT} == STRICT
    assert {k: _mypy().get(k) for k in GLOBAL} == GLOBAL


@pytest.mark.parametrize("name", sorted(DOMAIN))
def test_the_module_defining_a_domain_type_is_strict(name: str) -> None:
    import importlib

    module = DOMAIN[name]
    assert getattr(importlib.import_module(module), name).__module__ == module
    assert module in _strict_section()["module"]
