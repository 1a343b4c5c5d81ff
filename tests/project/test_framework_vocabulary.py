"""Training frameworks are a typed vocabulary (issue 35): ``estimate.frameworks.Framework``
names exactly the profiles of ``data/training_frameworks.toml`` (every entry is a member and
every member an entry), the speed model has a factor for each, and what people type (an
alias, another case) is read once in the answer layer into a member, which the engine's
signatures take (no plain ``str`` framework left in estimate/)."""

from __future__ import annotations

import ast
import tomllib

import pytest

import source_trees
from paths import ROOT
from whichgpu.answers.inputs.framework import parse_framework
from whichgpu.errors import InputError
from whichgpu.estimate.frameworks import Framework, framework_id, profiles

SRC = ROOT / "src" / "whichgpu"


def _table() -> dict:
    with open(SRC / "estimate" / "data" / "training_frameworks.toml", "rb") as f:
        return tomllib.load(f)["framework"]


def test_every_table_entry_is_a_member_and_back() -> None:
    assert sorted(_table()) == sorted(m.value for m in Framework)
    assert set(profiles()) == set(Framework)
    assert all(type(name) is Framework for name in profiles())


def test_the_speed_model_knows_every_member() -> None:
    from whichgpu.estimate.constants import speed_value
    from whichgpu.estimate.speed.training import DEFAULT_FRAMEWORK, FRAMEWORKS

    assert set(FRAMEWORKS) == set(Framework)
    assert DEFAULT_FRAMEWORK in Framework
    assert set(Framework) <= set(speed_value("training_framework_factor"))


@pytest.mark.parametrize(("typed", "member"), [
    ("unsloth", Framework.UNSLOTH), (" Unsloth ", Framework.UNSLOTH),
    ("peft", Framework.TRANSFORMERS), ("TRL", Framework.TRANSFORMERS),
    ("llm-foundry", Framework.LLM_FOUNDRY)])
def test_what_people_type_is_read_into_a_member(typed: str, member: Framework) -> None:
    got = parse_framework(typed)
    assert got is member


def test_an_unknown_name_is_said_as_typed() -> None:
    with pytest.raises(InputError, match=r"unknown training framework 'unsloht'; did you "
                                         r"mean unsloth\?"):
        framework_id("unsloht")


def test_a_workload_and_an_estimate_hold_the_member() -> None:
    import whichgpu.answers as answers
    from whichgpu.answers.requests import Speed

    result = answers.speed(Speed(model="llama-3.1-8b", task="lora", framework="peft",
                                 gpu="h100-sxm"))
    assert result.workload.framework is Framework.TRANSFORMERS
    assert result.answer.estimate.engine is Framework.TRANSFORMERS


FRAMEWORK_SIGNATURES = {  # module -> the functions whose ``framework`` takes a Framework
    "estimate/speed/__init__.py": {"estimate_speed", "_training", "_image_lora"},
    "estimate/speed/training.py": {"framework_factor", "base_mfu", "training_step"},
    "estimate/configure.py": {"configure_workload"},
    "estimate/frameworks.py": {"framework_defaults", "apply_framework"},
}


def _framework_annotations(path) -> dict[str, str]:
    found = {}
    for node in source_trees.nodes(path):
        if isinstance(node, ast.FunctionDef):
            for a in node.args.args + node.args.kwonlyargs:
                if a.arg in ("framework", "name") and a.annotation is not None:
                    found.setdefault(node.name, ast.unparse(a.annotation))
    return found


@pytest.mark.parametrize("module", sorted(FRAMEWORK_SIGNATURES))
def test_the_engine_takes_a_member_not_text(module: str) -> None:
    found = _framework_annotations(SRC / module)
    for fn in FRAMEWORK_SIGNATURES[module]:
        assert found[fn] == "Framework | None", f"{module}:{fn}"


FRAMEWORK_WORDS = {m.value for m in Framework}


def _framework_literals(path) -> int:
    """Comparisons of a ``framework`` / ``fw`` with a framework's name as a string."""
    def named(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "framework") or (
            isinstance(node, ast.Name) and node.id in ("framework", "fw"))

    def word(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in FRAMEWORK_WORDS
        return isinstance(node, ast.Tuple | ast.List | ast.Set) and any(word(e)
                                                                         for e in node.elts)
    n = 0
    for node in source_trees.nodes(path):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            n += any(named(s) for s in sides) and any(word(s) for s in sides)
    return n


def test_the_engine_compares_members_not_framework_words() -> None:
    found = {p.relative_to(SRC).as_posix(): _framework_literals(p)
             for pkg in ("estimate", "advise", "cost") for p in (SRC / pkg).rglob("*.py")
             if "validation" not in p.parts}  # the validation rows' own words
    assert {m: n for m, n in found.items() if n} == {}, "compare with a Framework member"


def test_the_literal_check_sees_a_word(tmp_path) -> None:
    f = tmp_path / "m.py"
    f.write_text("if w.framework == 'unsloth' or fw in ('megatron', 'x'):\n    pass\n"
                 "if w.framework == Framework.UNSLOTH:\n    pass\n")
    assert _framework_literals(f) == 2
