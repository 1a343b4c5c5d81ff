"""RL post-training ranked (recommend --task grpo|ppo): every priced GPU x count planned by
estimate/rl.py, the ones that hold the job ranked by cost per step, the rest with why; the
same plan as ``speed``; on the CLI, the REST API, the advisor page (EN and FR) and MCP."""

from __future__ import annotations

import json
import math

import pytest

from whichgpu.answers.advice import recommend
from whichgpu.answers.estimates import speed
from whichgpu.answers.requests import Recommend, Speed
from whichgpu.errors import InputError
from whichgpu.vocabulary import Objective, Task

MODEL = "qwen2.5-1.5b"


@pytest.fixture(scope="module")
def grpo():
    return recommend(Recommend(model=MODEL, task=Task.GRPO, steps="200", top=0))


def test_rl_recommend_ranks_only_configurations_that_hold_the_job(grpo):
    assert grpo.kind == "rl" and len(grpo.options) >= 3
    for o in grpo.options:
        p = o.plan
        assert p.fits and p.peak_training_gpu_bytes <= p.usable_bytes
        assert p.settings.gpus == o.count
    per_step = [o.cost_per_step.amount for o in grpo.options]
    assert per_step == sorted(per_step)


def test_excluded_configurations_need_more_than_the_card_holds(grpo):
    too_big = [e for e in grpo.excluded if e.reason.id == "rl.rank.too_big"]
    assert too_big, "a 24 GB card cannot hold the colocated GRPO job: said, not dropped"
    for e in too_big:
        need = e.reason.params["need"]
        assert need > e.reason.params["have"]


def test_cost_per_step_is_the_price_for_the_step_time_and_steps_multiply_it(grpo):
    for o in grpo.options[:5]:
        assert math.isclose(o.cost_per_step.amount,
                            o.price_per_hour.amount * o.step_s.typical / 3600, rel_tol=1e-9)
        assert math.isclose(o.total_cost.amount, 200 * o.cost_per_step.amount, rel_tol=1e-9)
        # the machine on sale with that many GPUs, never 1-GPU offers priced x count
        assert o.offer.gpu_count == o.count
        assert math.isclose(o.price_per_hour.amount, o.offer.price_per_hour.amount,
                            rel_tol=1e-9)


def test_the_ranked_plan_is_the_speed_answers_plan_for_that_gpu_and_count(grpo):
    best = grpo.options[0]
    alone = speed(Speed(model=MODEL, task=Task.GRPO, gpu=best.gpu.id, count=best.count)).rl
    assert alone.peak_training_gpu_bytes == best.plan.peak_training_gpu_bytes
    assert alone.times["step_s"].typical == pytest.approx(best.step_s.typical)


def test_ppo_needs_more_memory_per_gpu_than_grpo_on_the_same_configuration(grpo):
    ppo = recommend(Recommend(model=MODEL, task=Task.PPO, top=0))
    grpo_need = {(o.gpu.id, o.count): o.plan.peak_training_gpu_bytes for o in grpo.options}
    both = [(o, grpo_need[(o.gpu.id, o.count)]) for o in ppo.options
            if (o.gpu.id, o.count) in grpo_need]
    assert both
    assert all(o.plan.peak_training_gpu_bytes > g for o, g in both)  # critic + reward model
    assert len(ppo.excluded) > len(grpo.excluded)


def test_rank_by_time_and_the_gpu_limits():
    fast = recommend(Recommend(model=MODEL, task=Task.GRPO, objective=Objective.TIME,
                               top=0, max_gpus=2, only="h100-sxm,rtx-4090,a100-80gb-sxm"))
    times = [o.step_s.typical for o in fast.options]
    assert times == sorted(times)
    assert {o.count for o in fast.options} <= {1, 2}
    assert {o.gpu.id for o in fast.options} <= {"h100-sxm", "rtx-4090", "a100-80gb-sxm"}


@pytest.mark.parametrize("extra, said", [
    (dict(requests_per_s="3"), "rl.rank.not_for_rl"), (dict(vs_api=True), "rl.rank.not_for_rl"),
    (dict(tokens="1M"), "rl.rank.not_for_rl"), (dict(gpu="rtx-4090"), "rl.rank.own_card")])
def test_fields_the_rl_ranking_does_not_use_are_refused_not_ignored(extra, said):
    with pytest.raises(InputError) as exc:
        recommend(Recommend(model=MODEL, task=Task.GRPO, **extra))
    assert exc.value.args[0].id == said


def test_nothing_fits_says_so_instead_of_an_empty_table():
    a = recommend(Recommend(model="llama-3.1-70b", task=Task.PPO, tuning="full-ft",
                            only="rtx-3060-12gb", top=0))
    assert not a.options and a.excluded
    assert a.explanation[0].id == "rl.rank.none"


def test_cli_json_and_table(cli):
    r = cli("recommend", MODEL, "--task", "grpo", "--steps", "100", "--top", "3", "--json")
    assert r.code == 0, r
    data = json.loads(r.out)
    assert data["kind"] == "rl" and len(data["options"]) == 3
    assert data["options"][0]["cost"]["amount"] == pytest.approx(
        100 * data["options"][0]["cost_per_step"]["amount"], rel=1e-3)
    assert data["best_plan"]["task"] == "grpo"
    table = cli("recommend", MODEL, "--task", "grpo", "--top", "3")
    assert table.code == 0 and "RL options (grpo)" in table.out, table
    bad = cli("recommend", MODEL, "--task", "grpo", "--requests-per-s", "3")
    assert bad.code == 2 and bad.err.startswith("error: "), bad


def test_rest_recommend_answers_rl(web):
    r = web.get("/api/v1/recommend", params={"model": MODEL, "task": "ppo", "steps": "10",
                                              "top": "2"})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["kind"] == "rl" and data["task"] == "ppo" and len(data["options"]) == 2
    names = {p["name"] for p in data["best_plan"]["memory"]["training_parts"]}
    assert {"critic", "reward_model"} <= names


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_advisor_page_ranks_rl(web, lang):
    r = web.get("/", params={"model": MODEL, "task": "grpo", "amount": "50", "unit": "steps",
                             "lang": lang})
    assert r.status_code == 200
    assert 'data-kind="rl"' in r.text and 'class="options rl-options"' in r.text
    best = recommend(Recommend(model=MODEL, task=Task.GRPO, steps="50")).options[0]
    assert f'data-gpu="{best.gpu.id}" data-count="{best.count}"' in r.text
    assert 'data-part="policy_training"' in r.text  # the first option's plan under it
    if lang == "fr":
        assert "Configurations qui tiennent le travail" in r.text


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_memory_page_draws_the_rl_plan(web, lang):
    r = web.get("/memory", params={"model": MODEL, "task": "ppo", "gpu": "h100-sxm",
                                   "lang": lang})
    assert r.status_code == 200
    for part in ("policy_training", "critic", "reward_model", "rollout_kv_cache"):
        assert f'data-part="{part}"' in r.text
    assert 'data-phase="step_s"' in r.text and 'id="rl-fits"' in r.text
    if lang == "fr":
        assert "Mémoire par GPU et par partie" in r.text


def test_the_cost_page_sends_rl_to_the_pages_that_answer_it(web):
    r = web.get("/cost", params={"model": MODEL, "task": "grpo"})
    assert r.status_code == 422 and 'data-msg="web.rl.elsewhere"' in r.text


def test_mcp_recommend_summarises_the_rl_ranking():
    import asyncio

    from whichgpu.agents import tools
    from whichgpu.agents.local import LocalSurface

    answer, summary = asyncio.run(tools.call(LocalSurface(), "recommend", {
        "model": MODEL, "task": "grpo", "top": 2}))
    assert answer.data["kind"] == "rl" and len(answer.data["options"]) == 2
    assert "ranked by cost" in summary


def test_spot_and_deadlines_are_said_to_be_unused_not_silently_applied():
    a = recommend(Recommend(model=MODEL, task=Task.GRPO, spot=True, deadline="2h", top=3))
    assert all(not o.offer.spot for o in a.options)
    assert [n.id for n in a.notes if hasattr(n, "id")] == ["rl.rank.unused"]
