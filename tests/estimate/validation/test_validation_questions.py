"""`whichgpu validate questions`: whole questions people asked, each with its published
outcome and source, judged by one stated rule (issue 30)."""

from __future__ import annotations

import re

import pytest

from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation import questions as vq


def _row(**kw: str) -> dict[str, str]:
    base = {"id": "q", "kind": "fits", "question": "?", "model": "llama-3.1-8b",
            "task": "inference", "quant": "q4_k_m", "engine": "llamacpp", "gpu": "h100-sxm",
            "gpu_count": "1", "context": "4096", "batch": "1", "output_tokens": "256",
            "value": "", "outcome": "it ran", "source_url": "https://example.org"}
    return {**base, **kw}


def test_every_question_is_sourced_dated_and_states_its_outcome():
    rows = read_rows(default_path("questions"))
    assert len(rows) >= 12
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        assert r["source_url"].startswith("https://"), r["id"]
        assert re.fullmatch(r"202[56]-\d\d", r["asked"]), r["id"]
        assert vq.Kind(r["kind"]) and r["outcome"].strip() and r["question"].strip(), r["id"]
        if r["kind"] not in ("fits", "no_fit"):
            assert float(r["value"]) > 0, r["id"]


def test_the_rule_judges_a_fit_by_the_memory_verdict():
    assert vq.judge(_row()).judgement == vq.Judgement.RIGHT  # 8B in 4 bits on 80 GB
    assert vq.judge(_row(kind="no_fit")).judgement == vq.Judgement.WRONG
    big = _row(model="llama-3.1-70b", quant="bf16", gpu="rtx-4090")
    assert vq.judge(big).judgement == vq.Judgement.WRONG  # 140 GB of weights on 24 GB
    assert vq.judge({**big, "kind": "no_fit"}).judgement == vq.Judgement.RIGHT


def test_the_rule_judges_a_speed_by_the_stated_range_then_by_1_5x():
    row = _row(kind="decode_speed", gpu="rtx-4090")
    answer = vq.judge({**row, "value": "1"})
    typical = float(answer.answer.split(" tokens/s")[0].replace(",", ""))
    assert answer.judgement == vq.Judgement.WRONG
    assert vq.judge({**row, "value": str(typical)}).judgement == vq.Judgement.RIGHT
    lo = float(re.search(r"range ([\d,]+)-", answer.answer)[1].replace(",", ""))
    just_below = min(lo * 0.97, typical / 1.45)
    if just_below < lo and typical / just_below <= 1.5:
        assert vq.judge({**row, "value": str(just_below)}).judgement == vq.Judgement.ROUGHLY


def test_a_wide_range_alone_does_not_make_a_speed_right():
    j = vq.speed_judgement
    assert j(100, 100, 80, 120) == vq.Judgement.RIGHT
    assert j(50, 100, 30, 300) == vq.Judgement.ROUGHLY  # inside a 10x range, but 2x off
    assert j(75, 100, 80, 120) == vq.Judgement.ROUGHLY  # outside the range, within 1.5x
    assert j(40, 100, 80, 120) == vq.Judgement.WRONG


def test_the_fewest_cards_counts_one_step_off_as_roughly():
    row = _row(kind="gpus_needed", model="llama-3.1-70b", quant="bf16", gpu="h100-sxm",
               engine="vllm")
    right = vq.judge({**row, "value": "2"})
    assert right.answer.endswith(": 2") and right.judgement == vq.Judgement.RIGHT
    assert vq.judge({**row, "value": "4"}).judgement == vq.Judgement.ROUGHLY
    assert vq.judge({**row, "value": "8"}).judgement == vq.Judgement.WRONG


def test_a_question_it_cannot_model_is_cannot_answer_not_an_error():
    judged = vq.judge(_row(gpu="no-such-card-9000"))
    assert judged.judgement == vq.Judgement.CANNOT


def test_every_question_the_tool_gets_wrong_keeps_its_explanation():
    for j in vq.run():
        if j.judgement in (vq.Judgement.WRONG, vq.Judgement.CANNOT):
            assert len(j.note) > 40, j.id


def test_validate_questions_prints_the_share_right(cli):
    res = cli("validate", "questions")
    assert res.code == 0, res.err
    assert re.search(r"\d+ of \d+ right \(\d+%\)", res.out)
    data = cli("validate", "questions", "--json").json()
    assert data["n"] == len(data["rows"]) and 0 <= data["shares"]["right"] <= 1
    assert data["shares"]["right"] == pytest.approx(
        sum(r["judgement"] == "right" for r in data["rows"]) / data["n"])


def test_a_file_without_the_columns_or_with_an_unknown_kind_is_refused_in_one_line(cli, tmp_path):
    bad = tmp_path / "q.csv"
    bad.write_text("id,model\nq1,llama-3.1-8b\n", encoding="utf-8")
    res = cli("validate", "questions", "--file", str(bad))
    assert res.code == 2 and "missing kind" in res.err and "Traceback" not in res.err
    bad.write_text("id,kind,question,model,gpu,outcome,source_url\n"
                   "q1,maybe,?,llama-3.1-8b,h100-sxm,ran,https://x\n", encoding="utf-8")
    res = cli("validate", "questions", "--file", str(bad))
    assert res.code == 2 and "kind must be one of" in res.err


def test_an_rl_question_is_judged_on_the_rl_plan_not_refused():
    """A GRPO question is answered as ``memory --task grpo`` answers it: the RL plan's peak on
    the card (it was 'cannot answer', a GRPO task being no Workload)."""
    from whichgpu.catalog.gpus import get_gpu
    from whichgpu.estimate.configure import configure_workload
    from whichgpu.estimate.rl import plan, settings
    from whichgpu.models import resolve_model
    from whichgpu.vocabulary import RLTuning, Task

    row = _row(model="qwen3-0.6b", task="grpo", quant="", engine="unsloth", gpu="h100-sxm",
               context="", prompt_tokens="256", output_tokens="256",
               settings="framework=unsloth; tuning=lora; generations=4")
    small = vq.judge(row)
    assert small.judgement == vq.Judgement.RIGHT, small.answer  # 0.6B on 80 GB
    assert "Unsloth grpo plan" in small.answer
    spec = resolve_model("qwen3-0.6b", offline=True)
    s = settings(Task.GRPO, tuning=RLTuning.LORA, framework="unsloth", generations=4,
                 prompt_tokens=256, completion_tokens=256)
    on = plan(spec, s, lambda **c: configure_workload(spec, **c), get_gpu("h100-sxm"))
    # the plan's own peak on the card (the colocated engine's share with it), not a Workload's
    assert f"{on.peak_training_gpu_bytes / 1e9:.1f} GB per GPU" in small.answer
    big = vq.judge({**row, "model": "llama-3.1-70b", "gpu": "rtx-4090",
                    "settings": "framework=trl; tuning=full-ft"})
    assert big.judgement == vq.Judgement.WRONG, big.answer  # a full 70B GRPO on 24 GB
    assert vq.judge({**row, "settings": "framework=trl; rollout=none"}).judgement == (
        vq.Judgement.CANNOT)  # a setting the RL plan does not take is named, not ignored
