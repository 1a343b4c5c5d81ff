"""The public Python API: every name whichgpu exports exists, is documented, and runs."""

from __future__ import annotations

import importlib.resources
import subprocess
import sys

import pytest

import whichgpu
import whichgpu.answers as answers


@pytest.mark.parametrize("name", whichgpu.__all__)
def test_each_exported_name_exists_and_is_documented(name):
    value = getattr(whichgpu, name)
    assert (value.__doc__ or "").strip(), f"whichgpu.{name} has no docstring"


@pytest.mark.parametrize("name", answers.__all__)
def test_each_answer_function_exists_and_is_documented(name):
    fn = getattr(answers, name)
    assert callable(fn)
    assert (fn.__doc__ or "").strip(), f"whichgpu.answers.{name} has no docstring"


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError):
        whichgpu.no_such_thing  # noqa: B018


def test_py_typed_ships():
    assert importlib.resources.files("whichgpu").joinpath("py.typed").is_file()


def test_importing_whichgpu_loads_nothing_heavy():
    code = ("import sys, whichgpu; heavy = [m for m in ('pydantic', 'fastapi', 'typer', "
            "'whichgpu.estimate', 'whichgpu.advise') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_the_readme_flow_runs_and_agrees_with_the_answer_layer():
    """The engine step by step (as README's Python section) gives the answer layer's
    first option for the same question."""
    spec = whichgpu.resolve_model("llama-3.1-8b")
    w = whichgpu.build_workload(spec, task="inference", quant="q4_k_m", context=8192)
    mem = whichgpu.estimate_memory(w)
    assert mem.total_bytes > 4e9  # 8B parameters at ~4.8 bits plus a cache and a runtime
    speed = whichgpu.estimate_speed(w, whichgpu.get_gpu("rtx-4090"))
    tps = speed.rate("output_tokens_per_s")
    assert 0 < tps.low <= tps.typical <= tps.high
    offers = list(whichgpu.current_offers(cheapest_only=True).offers)
    rec = whichgpu.recommend(whichgpu.build_job(w, tokens="10M"), offers)
    answer = whichgpu.answers.recommend(whichgpu.requests.Recommend(
        model="llama-3.1-8b", quant="q4_k_m", context="8192", tokens="10M"))
    assert rec.options and answer.rec.options
    assert rec.options[0].label == answer.rec.options[0].label
    assert rec.options[0].cost.typical == answer.rec.options[0].cost.typical
