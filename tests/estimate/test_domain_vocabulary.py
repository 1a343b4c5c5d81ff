"""The domain objects hold typed vocabularies (issue 35): a Workload's task is a ``Task``, its
engine an ``Engine`` (or None), a Job's kind a ``WorkKind``, whatever word the caller gave."""

from __future__ import annotations

import pytest

from whichgpu.advise.job import Job
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model
from whichgpu.vocabulary import Engine, Task, WorkKind


@pytest.fixture(scope="module")
def spec():
    return resolve_model("llama-3.1-8b")


def test_a_word_becomes_its_member(spec):
    w = Workload(spec, task="lora", engine="vllm")  # type: ignore[arg-type]
    assert type(w.task) is Task and w.task is Task.LORA
    assert type(w.engine) is Engine and w.engine is Engine.VLLM
    # a copy with a word changed reads it too (the memory searches copy with with_)
    copy = w.with_(task="qlora")
    assert copy.task is Task.QLORA


@pytest.mark.parametrize(("quant", "engine"), [(None, Engine.VLLM),
                                                ("q4_k_m", Engine.LLAMACPP),
                                                ("exl2-4.0", Engine.EXLLAMAV2)])
def test_the_default_engine_is_a_member(spec, quant, engine):
    w = Workload(spec, quant=quant)
    assert type(w.engine_name) is Engine and w.engine_name is engine


def test_training_defaults_to_transformers(spec):
    assert Workload(spec, task=Task.LORA).engine_name is Engine.TRANSFORMERS


@pytest.mark.parametrize(("field", "value", "sentence"), [
    ("task", "lroa", "unknown task 'lroa'; use one of inference, lora, qlora, full-ft, "
                     "pretrain, image, video, image-lora"),
    ("engine", "vllmm", "unknown engine 'vllmm'; use one of llamacpp, vllm, sglang, trtllm, "
                        "transformers, exllamav2, mlc, mlx, diffusers, comfyui"),
])
def test_an_unknown_word_keeps_its_sentence(spec, field, value, sentence):
    with pytest.raises(InputError) as err:
        Workload(spec, **{field: value})
    assert str(err.value) == sentence


def test_a_jobs_kind_is_a_work_kind(spec):
    job = Job(Workload(spec), tokens=1000)
    assert type(job.kind) is WorkKind and job.kind is WorkKind.TOKENS
    assert Job(Workload(spec)).kind is WorkKind.NONE
