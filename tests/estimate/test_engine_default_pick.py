"""Which engine a job runs on when it names none is data (``data/engines.toml``:
``default_for``, ``picked_for_quant``, ``picked_for_file``), not a chain of engine names in
``Workload.engine_name`` (issue 35, part 2: adding an engine is one module plus data)."""

from __future__ import annotations

from importlib import resources

import pytest

from specs import LLAMA_31_8B
from whichgpu import engines
from whichgpu.engines import default_engine, parse_table, picked_engine
from whichgpu.errors import DataError
from whichgpu.estimate.workload import Workload
from whichgpu.vocabulary import Engine, Task

TEXT = resources.files("whichgpu").joinpath("data/engines.toml").read_text("utf-8")


@pytest.mark.parametrize(("quant", "source", "engine"), [
    ("q4_k_m", "", Engine.LLAMACPP),          # a GGUF type
    ("IQ2_XXS", "", Engine.LLAMACPP),         # case does not matter
    ("ud-q4_k_xl", "", Engine.LLAMACPP),      # Unsloth's dynamic GGUF
    ("exl2-4.0bpw", "", Engine.EXLLAMAV2),
    ("bf16", "gguf:some/model.gguf", Engine.LLAMACPP),  # a GGUF file decides first
    ("bf16", "", None), ("fp8", "hf:meta-llama/x", None), ("awq", "", None),
])
def test_the_format_or_the_file_picks(quant: str, source: str, engine: Engine | None) -> None:
    assert picked_engine(quant, source) == engine


def test_each_kind_of_job_has_its_default() -> None:
    assert [default_engine(k) for k in engines.KINDS] == [
        Engine.VLLM, Engine.TRANSFORMERS, Engine.DIFFUSERS]


def test_a_workload_names_the_engine_the_data_gives() -> None:
    assert Workload(LLAMA_31_8B).engine_name == Engine.VLLM
    assert Workload(LLAMA_31_8B, quant="q4_k_m").engine_name == Engine.LLAMACPP
    assert Workload(LLAMA_31_8B, task=Task.LORA).engine_name == Engine.TRANSFORMERS
    assert Workload(LLAMA_31_8B, quant="q4_k_m",
                    engine=Engine.VLLM).engine_name == Engine.VLLM  # a named engine wins


def test_an_edit_of_the_data_moves_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """SGLang as the inference default is a data edit, no code."""
    text = TEXT.replace('default_for = ["inference"]\n', "").replace(
        '[sglang]\n', '[sglang]\ndefault_for = ["inference"]\n')
    table = parse_table(text)
    monkeypatch.setattr(engines, "engine_table", lambda: table)
    assert Workload(LLAMA_31_8B).engine_name == Engine.SGLANG
    assert Workload(LLAMA_31_8B, quant="q4_k_m").engine_name == Engine.LLAMACPP


@pytest.mark.parametrize(("edit", "says"), [
    (('default_for = ["training"]', 'default_for = ["inference"]'), "exactly one engine"),
    (('default_for = ["training"]', 'default_for = ["serving"]'), "default_for must be"),
])
def test_the_table_is_checked(edit: tuple[str, str], says: str) -> None:
    with pytest.raises(DataError, match=says):
        parse_table(TEXT.replace(*edit))
