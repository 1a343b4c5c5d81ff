"""The note of a multi-GPU diffusion answer describes the plan it chose (its memory per GPU)
and names the engine in use, not diffusers (estimate/diffusion_parallel.py adapted_note)."""

from __future__ import annotations

from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.diffusion_fit import fit_on
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model
from whichgpu.vocabulary import Engine


def _video(**kw) -> Workload:
    return Workload(model=resolve_model("hunyuanvideo"), task="video", **kw)


def test_the_tp_note_gives_the_chosen_plans_memory_and_the_rejected_one_as_such():
    h100 = default_catalog().get("h100-sxm")
    asked = _video(gpus=2)
    plan, chosen, note = fit_on(asked, asked, h100)
    assert note is not None and plan.tp == 2
    assert chosen == estimate_memory(plan).total_bytes
    need = estimate_memory(asked).total_bytes  # a whole pipeline on each GPU (Ulysses)
    assert need > h100.usable_memory_bytes >= chosen  # 93.5 GB rejected, 73 GB chosen
    assert note.params["have"] == chosen / 1e9  # the chosen plan's GB, said as its own
    assert note.params["need"] == need / 1e9
    text = str(note)
    assert text.index(f"{chosen / 1e9:.1f} GB per GPU") < text.index("would need")
    assert f"{need / 1e9:.1f} GB per GPU" in text.split("would need")[1]


def test_the_speed_answer_says_the_same_plan():
    h100 = default_catalog().get("h100-sxm")
    est = estimate_speed(_video(gpus=2), h100, 2)
    said = [str(a) for a in est.assumptions if "tensor parallelism" in str(a)]
    assert said and "would need" in said[0], said


def test_an_offload_note_names_the_engine_in_use():
    # SGLang with Ulysses only (tp 1) over 2 H100: the pipeline does not fit whole
    h100 = default_catalog().get("h100-sxm")
    asked = _video(gpus=2, engine=Engine.SGLANG, tp=1)
    _, _, note = fit_on(asked, asked, h100)
    assert note is not None
    assert "sglang" in str(note) and "diffusers" not in str(note)
    assert note.id == "diffusion.fit.model.engine"
