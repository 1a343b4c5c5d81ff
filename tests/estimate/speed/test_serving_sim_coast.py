"""The serving simulation's decode-only stretches, run in one go, give the step-by-step
loop's result to the last bit (issue 27: a 30k-prompt p95 question simulated 1.8 M steps)."""

from __future__ import annotations

import pytest

from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.speed import serving_sim
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.speed.serving_sim import Arrival, Traffic, simulate
from whichgpu.estimate.speed.traffic import fixed, sharegpt
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


@pytest.fixture(scope="module")
def sm() -> ServingModel:
    model = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True)
    w = Workload(model=model, engine="vllm", prompt_tokens=512, output_tokens=128, context=640)
    gpu = next(g for g in default_catalog().gpus if g.id == "h100-sxm")
    return ServingModel(w, gpu, lengths="mean")


TRAFFIC = {
    "poisson-low": Traffic(fixed(2048, 256), Arrival.POISSON, 0.5, 120),
    "poisson-busy": Traffic(sharegpt(), Arrival.POISSON, 12.0, 300),
    "client-cap": Traffic(sharegpt(), Arrival.POISSON, 30.0, 200, max_in_flight=4),
    "prefix-hits": Traffic(fixed(1024, 200), Arrival.POISSON, 2.0, 150, prefix_hit=0.5),
    "closed-loop": Traffic(sharegpt(), Arrival.CLOSED, 8, 200),
    "backlog": Traffic(fixed(256, 64), Arrival.BACKLOG, 1, 64),
}


@pytest.mark.parametrize("name", sorted(TRAFFIC))
def test_coasting_gives_the_step_by_step_result(sm, name, monkeypatch):
    traffic = TRAFFIC[name]
    coasted = simulate(sm, traffic)
    monkeypatch.setattr(serving_sim, "COAST", False)
    stepped = simulate(sm, traffic)
    assert repr(coasted) == repr(stepped)


def test_a_quiet_replica_coasts(sm, monkeypatch):
    """At a low rate most steps are decode-only: the loop must not take them one by one."""
    calls = {"n": 0}
    real = serving_sim._emit

    def counting(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(serving_sim, "_emit", counting)
    simulate(sm, TRAFFIC["poisson-low"])
    coasting = calls["n"]
    calls["n"] = 0
    monkeypatch.setattr(serving_sim, "COAST", False)
    simulate(sm, TRAFFIC["poisson-low"])
    assert coasting * 5 < calls["n"]
