"""The ranking flags each option (near-tie, Pareto) on a plain copy of its fields
(advise/ranking.py ``_flagged``) instead of ``dataclasses.replace``: the same option, as long
as Option keeps no __post_init__ and only init fields (which this test also checks)."""

from dataclasses import fields, replace

import pytest

from answer_set import environment
from whichgpu.advise.options import Option
from whichgpu.advise.ranking import _flagged


@pytest.fixture(autouse=True)
def _answer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


def test_a_flagged_copy_is_what_replace_makes() -> None:
    from whichgpu.answers import recommend
    from whichgpu.answers.requests import Recommend

    assert "__post_init__" not in vars(Option) and all(f.init for f in fields(Option))
    rec = recommend(Recommend(model="llama-3.1-8b", tokens="1M", only="l40s,rtx-4090",
                              top=0)).rec
    assert rec.options
    for o in rec.options:
        for near in (False, True):
            for pareto in (False, True):
                copy = _flagged(o, near, pareto)
                want = replace(o, near_tie=near, pareto=pareto)
                assert copy == want and copy.workload is want.workload
                assert (copy.near_tie, copy.pareto) == (near, pareto)
                assert vars(copy) == vars(want)
