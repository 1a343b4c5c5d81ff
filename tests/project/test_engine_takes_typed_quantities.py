"""Parse once (issue 35, item 1): a request's quantities reach estimate/, advise/ and cost/
already read. Three checks, each failing if text parsing comes back:

- every field ``memory``, ``speed`` and ``recommend`` hand the engine (their workload and job
  fields) is read as it validates (answers/inputs/values.py) unless it is a word the engine
  looks up by name (a format, an optimizer, a currency code); the words are listed with their
  reason and the list only shrinks;
- (tests/project/test_engine_parses_no_request_text.py: the engine packages reach no
  ``parse_*`` reader by any spelling, beyond the exceptions named there;)
- the engine's own names for those quantities (``resolution``, ``lora_targets``, ``deadline_s``,
  ``budget``, a host's ``memory_type`` ...) are never annotated as text.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from paths import ROOT
from whichgpu.answers.inputs.values import read_as_text
from whichgpu.answers.request import _is_text
from whichgpu.answers.requests import Memory, Recommend, Speed

SRC = ROOT / "src" / "whichgpu"


def engine_modules() -> list[Path]:
    return sorted(p for pkg in ("estimate", "advise", "cost") for p in (SRC / pkg).rglob("*.py")
                  if "validation" not in p.parts)  # the validation rows are data

# request fields handed to the engine as words, each looked up by name where it is used
WORDS = {
    "quant": "a weight format's name (models/quant.py get_quant)",
    "kv_dtype": "a KV-cache format's name (estimate/workload.py KV_DTYPES)",
    "optimizer": "an optimizer's name (estimate/memory/training.py's table)",
    "loss": "a loss kernel's name (estimate/frameworks.py)",
    "framework": "a training framework's name (read by answers/inputs/framework.py into an "
                 "estimate.frameworks.Framework) or an image-LoRA trainer's (kohya ...)",
    "currency": "an ISO code, checked by units.check_currency",
}

# the engine's names for quantities people type: never text in estimate/, advise/, cost/
QUANTITIES = {"params", "resolution", "lora_targets", "tensor_overrides", "override_tensor",
              "host_memory", "memory_type", "host_bandwidth", "speculative", "deadline",
              "deadline_s", "budget", "max_price_per_hour", "checkpoint_every",
              "checkpoint_every_s"}


def _handed_to_engine(cls: type) -> set[str]:
    return (set(getattr(cls, "WORKLOAD_FIELDS", ())) | set(getattr(cls, "EXTRA_WORKLOAD", ()))
            | set(getattr(cls, "JOB_FIELDS", ())))


@pytest.mark.parametrize("cls", [Memory, Speed, Recommend], ids=lambda c: c.__name__)
def test_every_quantity_a_request_hands_the_engine_is_read(cls: type) -> None:
    text = sorted(n for n in _handed_to_engine(cls)
                  if _is_text(cls.model_fields[n].annotation)
                  and not read_as_text(cls.model_fields[n]) and n not in WORDS)
    assert text == [], "read it as it validates (answers/inputs/values.py)"


def test_the_words_list_only_shrinks() -> None:
    used = {n for cls in (Memory, Speed, Recommend) for n in _handed_to_engine(cls)
            if _is_text(cls.model_fields[n].annotation)}
    assert sorted(set(WORDS) - used) == []


def _has_str(node: ast.expr | None) -> bool:
    """``str``, or ``str`` in a union (``str | None``, ``X | str``), written or quoted."""
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _has_str(ast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.Name):
        return node.id == "str"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _has_str(node.left) or _has_str(node.right)
    return False


def quantities_as_text(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                node.target.id in QUANTITIES and _has_str(node.annotation):
            found.add(f"{node.target.id}")
        elif isinstance(node, ast.arg) and node.arg in QUANTITIES and \
                _has_str(node.annotation):
            found.add(node.arg)
    return found


def test_the_engine_never_types_a_quantity_as_text() -> None:
    found = {f"{p.relative_to(SRC).as_posix()}:{name}" for p in engine_modules()
             for name in quantities_as_text(p)}
    # the host's memory type is a MemorySpec (estimate/host.py), not 'ddr5-6000x2'
    assert sorted(found) == []


def test_the_text_check_sees_text(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("class A:\n    resolution: 'str | None'\n    budget: Money\n\n"
                 "def f(deadline_s: float | str, lora_targets: tuple[str, ...]) -> None:\n"
                 "    pass\n")
    assert quantities_as_text(f) == {"resolution", "deadline_s"}


def test_the_tco_answer_hands_cost_money_not_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """cost/ sits below the answer layer, so OwnershipInputs keeps its text reader for a
    Python caller (``whichgpu.cost.make_inputs(purchase_price="25000USD")``, the public API's
    edge); a request's money is read in answers/inputs/ownership.py and reaches cost as Money:
    with cost's reader gone, the tco answer is unchanged."""
    import importlib

    import whichgpu.answers as answers
    from whichgpu.answers.requests import Tco

    ownership = importlib.import_module("whichgpu.cost.ownership")

    q = Tco(gpu="h100-sxm", purchase_price="25000USD", rent_price="3.15USD",
            utilization="1", cooling_per_hour="0.02USD")
    before = answers.tco(q).to_json()

    def no_text(value: object) -> None:
        raise AssertionError(f"cost read the text {value!r}")

    monkeypatch.setattr(ownership, "parse_money", no_text)
    assert answers.tco(q).to_json() == before
