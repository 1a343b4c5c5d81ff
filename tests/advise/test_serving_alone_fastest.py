"""The serving search for users x tokens/s each asks the speed at one user per replica first
(advise/evaluate.py ``_alone_fastest``): sound because a sequence alone decodes at least as
fast as each sequence of a batch. Checked here on every configuration the recommendation
asks for (the whole catalog), and the answers are the same with the shortcut off."""

from __future__ import annotations

import pytest

from answer_set import answer, environment
from whichgpu.advise import evaluate

# serving questions (users x tokens/s each): a dense 70B on vLLM, the same 4-bit on llama.cpp,
# a MoE model (the experts touched grow with the batch), llama.cpp with experts in host RAM
CATALOG = {
    "70b-50-users": {"model": "llama-3.3-70b", "users": 50, "tokens_per_s_each": 20, "top": 0},
    "70b-q4-llamacpp": {"model": "llama-3.1-70b", "quant": "q4_k_m", "context": "8k",
                        "users": 12, "tokens_per_s_each": 15, "top": 0},
    "moe-30b-sglang": {"model": "qwen3-30b-a3b", "engine": "sglang", "users": 64,
                       "tokens_per_s_each": 60, "top": 0},
}
NARROW = {"model": "llama-3.3-70b", "users": 50, "tokens_per_s_each": 20, "top": 0,
          "only": "h100-pcie,l40s,rtx-4090"}
BATCHES = (1, 2, 4, 7, 13, 25, 50, 64)
_REAL = evaluate.estimate_speed


@pytest.fixture(autouse=True)
def _answer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


def _asked(monkeypatch, fields) -> tuple[dict, list]:
    """The answer, and every (workload, gpu, count, profile) the search asked a speed for."""
    asked = []

    def spy(wl, gpu, count, **kw):
        asked.append((wl, gpu, count, kw.get("profile")))
        return _REAL(wl, gpu, count, **kw)

    monkeypatch.setattr(evaluate, "estimate_speed", spy)
    return answer("recommend", fields), asked


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_a_sequence_never_decodes_faster_in_a_batch(name: str, monkeypatch) -> None:
    from whichgpu.estimate.speed import estimate_speed

    _, asked = _asked(monkeypatch, CATALOG[name])
    seen = {}
    for wl, gpu, count, profile in asked:
        if evaluate._alone_fastest(wl, profile):
            seen[(gpu.id, count)] = (wl, gpu, count, profile)
    assert len(seen) > 20  # the configurations of the catalog, not a handful
    for wl, gpu, count, profile in seen.values():
        rates = [estimate_speed(wl.with_(batch=b), gpu, count, profile=profile,
                                check_fit=False, saturation=False)
                 .rates["decode_tokens_per_s_per_sequence"].typical for b in BATCHES]
        assert rates == sorted(rates, reverse=True), (gpu.id, count, rates)


def test_the_shortcut_changes_no_answer_and_asks_fewer_speeds(monkeypatch) -> None:
    fast, asked = _asked(monkeypatch, NARROW)
    monkeypatch.setattr(evaluate, "_alone_fastest", lambda wl, profile: False)
    every, asked_all = _asked(monkeypatch, NARROW)
    assert fast == every
    assert any(e["kind"] == "speed" for e in fast["excluded"])  # too slow even alone
    assert len(asked) < len(asked_all)


def test_what_the_property_does_not_cover_is_not_assumed() -> None:
    from dataclasses import dataclass

    @dataclass
    class W:
        speculative: object = None
        lora_adapters: int = 0
        expert_parallel: bool = False

    @dataclass
    class Runs:
        measured_runs: object = None

    assert evaluate._alone_fastest(W(), None)
    assert evaluate._alone_fastest(W(), Runs())
    assert not evaluate._alone_fastest(W(speculative=object()), None)
    assert not evaluate._alone_fastest(W(lora_adapters=2), None)
    assert not evaluate._alone_fastest(W(expert_parallel=True), None)
    assert not evaluate._alone_fastest(W(), Runs(measured_runs=lambda gpu: []))
