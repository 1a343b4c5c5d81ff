"""Issue 26, part 5: suggestions that hold. A change that switches the engine says so; "a
bigger GPU" has more memory and every precision the job uses on the card asked about, on the
same platform, in the same class or the next; "borderline" only within the estimate's own
uncertainty."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.memory.changes import is_bigger_of_its_kind, suggestions
from whichgpu.estimate.memory.fit import memory_band


def test_a_gguf_suggestion_on_a_vllm_job_names_the_engine_it_switches_to(cli):
    data = cli("memory", "llama-3.1-70b", "--gpu", "h100-sxm", "--json").json()
    engine = data["engine"]
    switching = [s for s in data["suggestions"]
                 if s["settings"].get("engine") not in (None, engine)]
    assert switching  # q4_k_m runs under llama.cpp, not vLLM
    for s in switching:
        assert "instead of" in s["change"] and engine in s["change"], s
        assert "llama.cpp" in s["change"]
    same = [s for s in data["suggestions"] if s["kind"] == "quant" and s not in switching]
    assert all("instead of" not in s["change"] for s in same)


@pytest.mark.parametrize(("model", "quant", "target"), [
    ("llama-3.1-70b", "bf16", "h100-sxm"), ("llama-3.1-8b", "bf16", "t4"),
    ("llama-3.1-70b", "fp8", "h100-pcie"), ("qwen2.5-32b", "bf16", "rtx-4090"),
    ("llama-3.1-70b", "bf16", "mi300x"), ("llama-3.1-8b", "bf16", "rtx-3060-12gb"),
])
def test_a_bigger_gpu_is_bigger_of_its_kind(model, quant, target):
    cat = default_catalog()
    t = cat.get(target)
    w = build_workload(model, quant=quant)
    bigger = [c for c in suggestions(w, t) if c.kind == "bigger-gpu"]
    for c in bigger:
        g = cat.get(c.fits_on[0].gpu)
        assert g.usable_memory_bytes > t.usable_memory_bytes
        assert g.platform.value == t.platform.value
        assert is_bigger_of_its_kind(g, t, w)
        if t.supports("bf16"):
            assert g.supports("bf16"), (g.id, "lacks bf16")
        if quant == "fp8" and t.supports("fp8"):
            assert g.supports("fp8"), (g.id, "lacks fp8")
        assert g.form_factor != "unified" or t.form_factor == "unified"


def test_the_cards_the_trial_was_offered_are_not_bigger_gpus():
    cat = default_catalog()
    w = build_workload("llama-3.1-70b", quant="bf16")
    h100 = cat.get("h100-sxm")
    for other in ("t4", "mi210", "dgx-spark"):
        if other in {g.id for g in cat.gpus}:
            assert not is_bigger_of_its_kind(cat.get(other), h100, w), other


def test_borderline_is_only_said_within_the_estimates_uncertainty(cli):
    data = cli("recommend", "flux.1-dev", "--task", "image", "--images", "1000", "--json",
               "--top", "0").json()
    band = memory_band(build_workload("flux.1-dev", task="image"))
    said = [e for e in data["excluded"] if e["kind"] == "memory"]
    assert said
    for e in said:
        if "borderline" in e["reason"]:
            assert e["gap"] <= band + 1e-9, e
        else:
            assert e["reason"].startswith("does not fit") and "GB short" in e["reason"], e


def test_the_engine_switch_is_said_on_the_page_in_french(web):
    fr = web.get("/memory?model=llama-3.1-70b&gpu=h100-sxm",
                 headers={"Accept-Language": "fr"}).text
    # the engine by its name in French (vLLM), as when the engine is asked, now that the
    # default engine is an Engine too (issue 35)
    assert "au lieu de vLLM" in fr and "un autre moteur" in fr
