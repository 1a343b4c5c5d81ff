"""Parse once (issue 35): the answer layer reads what people type (answers/inputs/), the engine
builds from typed values (estimate/configure.py), and numbers pass as numbers."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.errors import InputError
from whichgpu.estimate.configure import configure_workload
from whichgpu.models import resolve_model
from whichgpu.vocabulary import Task


@pytest.fixture(scope="module")
def spec():
    return resolve_model("llama-3.1-8b")


def test_a_count_is_a_number_or_its_text(spec):
    typed = build_workload(spec, context=8192, prompt_tokens=1000, output_tokens=512)
    typed_text = build_workload(spec, context="8k", prompt_tokens="1000", output_tokens="512")
    assert typed == typed_text
    assert (typed.context, typed.prompt_tokens, typed.output_tokens) == (8192, 1000, 512)


def test_text_keeps_its_sentence(spec):
    with pytest.raises(InputError) as err:
        build_workload(spec, context="eight")
    assert str(err.value) == "cannot read 'eight' as a context; write it like 70B, 8k or 131072"


def test_a_number_is_checked_as_the_text_was(spec):
    with pytest.raises(InputError) as err:
        build_workload(spec, context=0)
    assert str(err.value) == "context must be at least 1 token, got 0"


def test_unset_settings_take_the_workloads_defaults(spec):
    w = build_workload(spec)
    bare = configure_workload(spec)
    assert w == bare
    assert (w.kv_dtype, w.batch, w.optimizer, w.lora_rank, w.lora_targets, w.gpus) == (
        "f16", 1, "adamw", 16, ("all-linear",), 1)


def test_a_framework_fills_the_same_settings_either_way(spec):
    typed = configure_workload(spec, task=Task.QLORA, framework="unsloth", context=2048)
    text = build_workload(spec, task="qlora", framework="Unsloth", context="2k")
    assert typed == text
    # Unsloth's profile sets its own loss and checkpointing (estimate/data/
    # training_frameworks.toml): the defaults changed something
    assert typed != configure_workload(spec, task=Task.QLORA, context=2048)


def test_lora_targets_are_read_in_the_answer_layer(spec):
    w = build_workload(spec, task="lora", lora_targets="q_proj, v_proj")
    assert w.lora_targets == ("q_proj", "v_proj")
    assert configure_workload(spec, task=Task.LORA, lora_targets=("q_proj", "v_proj")) == w
