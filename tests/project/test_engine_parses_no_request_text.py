"""Parse once (issue 35): no module under estimate/, advise/ or cost/ reads what people type.

People's text (``2s@p95``, ``96GB``, ``draft:MODEL``, ``100GbE``, ``Unsloth``) is read in
answers/inputs/; the engine packages take typed values. The check: those packages define no
``parse_*`` function and import no ``parse_*`` reader from whichgpu.units or whichgpu.currency,
and only the modules named in REGEX match text with the ``re`` module (an engine build such as
``b4458`` used to be read with a regex in estimate/speed/kernels.py; it is now a
units.EngineVersion, read as the request validates). The exceptions left are named below with
their reason; an entry that is no longer needed fails, so the lists only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

import source_trees
from paths import ROOT

SRC = ROOT / "src" / "whichgpu"
ENGINE = ("estimate", "advise", "cost")
READERS = {"whichgpu.units", "whichgpu.currency"}

# module -> why it still parses text
KNOWN = {
    # the validation sets are data (validation/*.csv), read where they are scored
    "whichgpu.estimate.validation.rl": "reads the RL validation rows' counts",
    "whichgpu.estimate.validation.rows": "reads the validation rows' sizes",
    "whichgpu.estimate.validation.fits": "reads fits.csv's free-text host RAM",
    # the public Python API takes OwnershipInputs(purchase_price="30000 USD") and
    # whichgpu.cost.parse_rate; moving them changes that API
    "whichgpu.cost.ownership": "OwnershipInputs' money fields accept text",
    "whichgpu.cost.currency": "re-exports whichgpu.currency.parse_rate (public API)",
}


# module -> why it still matches text with a regular expression
REGEX = {
    "whichgpu.estimate.memory.placement": "compiles llama.cpp's -ot patterns, as llama.cpp does",
    "whichgpu.estimate.speed.kernel_db": "trims install paths from a package's error message",
    "whichgpu.estimate.speed.serving_engine": "reads a measured run's serving engine version "
                                              "(vLLM 0.6.3) from the serving validation rows",
    "whichgpu.estimate.validation.fits": "reads fits.csv's free-text host RAM",
    "whichgpu.estimate.validation.serving": "reads the serving rows' metric names, conditions",
    "whichgpu.estimate.validation.tables": "finds the generated blocks in docs/validation.md",
    "whichgpu.estimate.validation.traffic": "reads the traffic validation rows",
}


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(
        ".__init__")


def _aliases(tree: ast.AST) -> set[str]:
    """The names bound to the readers' modules (``from whichgpu import units as u``,
    ``import whichgpu.currency``)."""
    out = {"units", "currency"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.asname or a.name for a in node.names if a.name in READERS}
        elif isinstance(node, ast.ImportFrom) and node.module == "whichgpu":
            out |= {a.asname or a.name for a in node.names if a.name in ("units", "currency")}
    return out


def parsing(path: Path) -> list[str]:
    """What in ``path`` reads people's text: parse_* definitions and parse_* readers imported
    or reached through their module, by any spelling."""
    found = []
    tree = source_trees.tree(path)
    modules = _aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                node.name.startswith("parse_"):
            found.append(f"defines {node.name}")
        elif isinstance(node, ast.ImportFrom) and node.module in READERS:
            found += [f"imports {a.name}" for a in node.names if a.name.startswith("parse_")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("parse_") and \
                ast.unparse(node.value) in modules:
            found.append(f"uses {ast.unparse(node.value)}.{node.attr}")
    return found


def engine_modules() -> list[Path]:
    return sorted(p for pkg in ENGINE for p in (SRC / pkg).rglob("*.py"))


def matching(path: Path) -> list[str]:
    """Where ``path`` uses the ``re`` module (``import re``, ``from re import ...``, by any
    alias): what a module reading text with patterns needs."""
    found = []
    for node in source_trees.nodes(path):
        if isinstance(node, ast.Import):
            found += [f"imports {a.name}" for a in node.names if a.name in ("re", "regex")]
        elif isinstance(node, ast.ImportFrom) and node.module in ("re", "regex"):
            found.append(f"imports from {node.module}")
    return found


def test_the_engine_packages_parse_no_request_text():
    wrong = {module_name(p): what for p in engine_modules()
             if (what := parsing(p)) and module_name(p) not in KNOWN}
    assert wrong == {}, "move these readers to answers/inputs/"


def test_every_known_exception_is_still_needed():
    stale = sorted(name for name in KNOWN
                   if not parsing(SRC.joinpath(*name.split(".")[1:]).with_suffix(".py")))
    assert stale == []


def test_the_engine_packages_match_no_text_with_patterns():
    """An engine build, a size or a duration read with a regex inside estimate/, advise/ or
    cost/ is text parsed below the answer layer: only the modules in REGEX may do so."""
    wrong = {module_name(p): what for p in engine_modules()
             if (what := matching(p)) and module_name(p) not in REGEX}
    assert wrong == {}, "read the text in answers/inputs/ (or units.parse_*)"


def test_every_regex_exception_is_still_needed():
    stale = sorted(name for name in REGEX
                   if not matching(SRC.joinpath(*name.split(".")[1:]).with_suffix(".py")))
    assert stale == []


def test_the_check_sees_a_pattern(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("import re as r\n\ndef f(t):\n    from re import search\n"
                   "    return search('b(\\\\d+)', t)\n")
    assert sorted(matching(bad)) == ["imports from re", "imports re"]


def test_an_engine_build_is_read_as_the_request_validates():
    """``engine_version`` reaches the kernels as a units.EngineVersion read once (its build
    number and month), said back as written; the speed answer is the one a program gets by
    passing the typed value."""
    from whichgpu.answers.estimates import speed
    from whichgpu.answers.requests import Speed
    from whichgpu.units import EngineVersion, parse_engine_version

    q = Speed(model="qwen3-30b-a3b", gpu="rtx-4090", engine="llamacpp", quant="q4_k_m",
              engine_version="llama.cpp build 4458")
    v = q.engine_version
    assert isinstance(v, EngineVersion) and (v.build, v.month) == (4458, None)
    assert q.model_dump()["engine_version"] == "llama.cpp build 4458"
    assert parse_engine_version(" 2024-05 ") == EngineVersion(" 2024-05 ", "2024-05", None,
                                                                "2024-05")
    typed = speed(Speed(model="qwen3-30b-a3b", gpu="rtx-4090", engine="llamacpp",
                        quant="q4_k_m", engine_version="b4458")).to_json()
    today = speed(Speed(model="qwen3-30b-a3b", gpu="rtx-4090", engine="llamacpp",
                        quant="q4_k_m")).to_json()
    key = "decode_tokens_per_s"
    assert speed(q).to_json()[key] == typed[key] != today[key]


def test_the_check_sees_a_parser(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("from whichgpu.units import parse_size\n\n"
                   "def f():\n    def parse_x(t):\n        return t\n")
    assert sorted(parsing(bad)) == ["defines parse_x", "imports parse_size"]


def test_the_check_sees_a_reader_by_any_spelling(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("from whichgpu import units as u\nimport whichgpu.currency\n\n"
                   "def f(t):\n    return u.parse_size(t), whichgpu.currency.parse_rate(t)\n")
    assert sorted(parsing(bad)) == ["uses u.parse_size", "uses whichgpu.currency.parse_rate"]


def test_the_readers_live_in_the_answer_layer():
    from whichgpu.answers.inputs.framework import parse_framework
    from whichgpu.answers.inputs.host import parse_host
    from whichgpu.answers.inputs.interconnect import parse_interconnect
    from whichgpu.answers.inputs.serving import parse_latency_target, parse_rate
    from whichgpu.answers.inputs.speculative import parse_speculative
    from whichgpu.estimate.speculative import SpecMethod
    from whichgpu.models import resolve_model

    assert parse_framework(" PEFT ") == "transformers"  # an alias, case and spaces aside
    assert str(parse_interconnect("Thunderbolt 5")) == "tb5"
    assert parse_latency_target("60ms@p99", "tpot") == (0.06, 99)
    assert parse_rate("1200/min") == 20
    assert parse_host("96GB").ram_bytes == 96e9
    spec = parse_speculative("eagle", None, resolve_model("llama-3.1-8b"))
    assert spec is not None and spec.method is SpecMethod.EAGLE


def test_the_speed_answer_hands_the_engine_the_parsed_framework():
    """``--framework ' PEFT'`` is read once (to transformers); the speed estimate gets that
    name, not the text (it used to re-read the text itself)."""
    from whichgpu.answers.estimates import speed
    from whichgpu.answers.requests import Speed

    typed = speed(Speed(model="llama-3.1-8b", task="lora", framework="transformers",
                        gpu="h100-sxm"))
    text = speed(Speed(model="llama-3.1-8b", task="lora", framework=" PEFT", gpu="h100-sxm"))
    assert text.to_json() == typed.to_json()
