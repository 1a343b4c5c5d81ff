"""The memos that outlive one answer (advise/evaluate.py sizes and ranking speeds,
advise/serving.py rate layouts, estimate/memory/changes.py suggestions) hold only models that
a preset or the Hub cache keeps anyway (estimate/memo.py ``shared``): a pasted config's model
belongs to its answer (the web counts and frees it with that answer, issue 36)."""

import json
from importlib import resources

import pytest

from answer_set import environment
from whichgpu.advise import evaluate, serving
from whichgpu.estimate import memo
from whichgpu.estimate.memory import changes

LLAMA = json.loads(resources.files("whichgpu.models").joinpath(
    "presets", "llama-3.1-8b", "config.json").read_text("utf-8"))
TABLES = {"sizes": evaluate._SIZES, "speeds": evaluate._SPEED_TABLE,
          "layouts": serving._LAYOUTS, "changes": changes._SUGGESTED}


@pytest.fixture(autouse=True)
def _answer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


def _held(table) -> list:
    """The models a table's entries hold (the first held object of each)."""
    out = []
    for value in table._data.values():
        first = value[0]
        out.append(first.model.workload.model if isinstance(first, serving.Layout) else first)
    return out


@pytest.mark.parametrize("rate", [False, True])
def test_a_pasted_models_answer_leaves_it_in_no_memo(rate: bool, tmp_path) -> None:
    from whichgpu.answers import recommend
    from whichgpu.answers.requests import Recommend

    work = ({"requests_per_s": "5", "engine": "vllm", "prompt_tokens": 500,
             "output_tokens": 100, "ttft": "2s"} if rate else {"tokens": "1M"})
    only = "h100-sxm,l4,rtx-4090"
    memo.clear()
    pasted = tmp_path / "config.json"  # a config of its own (the web's pasted ones alike)
    pasted.write_text(json.dumps({**LLAMA, "bos_token_id": 7}), "utf-8")
    answer = recommend(Recommend(model=str(pasted), only=only, **work))
    own = answer.rec.job.workload.model
    assert not memo.shared(own)
    assert not any(m is own for t in TABLES.values() for m in _held(t))
    recommend(Recommend(model="llama-3.1-8b", only=only, **work))  # a preset: kept
    kept = TABLES["layouts"] if rate else TABLES["speeds"]
    assert _held(kept) and all(memo.shared(m) for m in _held(kept))
