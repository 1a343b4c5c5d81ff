"""Speed work never changes an answer: the full JSON of a fixed question set (every task
family, every kind of amount of work, the whole catalog, market and shipped prices) equals
the answers recorded before it (``tests/data/answers/``; ``make answers-fixture`` records
them again when an answer changes on purpose).

A second check needs no record: the answers with the engine's memos switched off (the
reference path) equal the answers with them on.
"""

from __future__ import annotations

import pytest

from answer_set import QUESTIONS, answer, differences, environment, recorded


@pytest.fixture(autouse=True)
def _answer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


@pytest.fixture(scope="module")
def record() -> dict:
    return recorded()


def test_the_record_covers_the_question_set(record: dict) -> None:
    assert sorted(record) == sorted(QUESTIONS)
    # the record holds whole answers: every recommendation ranks options over the catalog
    assert all(record[n]["options"] for n, (c, _) in QUESTIONS.items() if c == "recommend")


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_answer_is_identical_to_the_record(name: str, record: dict) -> None:
    command, fields = QUESTIONS[name]
    new = answer(command, fields)
    assert new == record[name], "\n".join(
        ["changed (make answers-fixture records it again, if on purpose):"]
        + differences(record[name], new, name))


@pytest.mark.parametrize("name", ["8b-10M-tokens", "70b-50-users", "8b-rate-20",
                                  "7b-lora-2000-steps"])
def test_memoized_answer_equals_the_reference_path(name: str) -> None:
    """Needs no record: survives answers that change on purpose."""
    from whichgpu.estimate import memo

    command, fields = QUESTIONS[name]
    fast = answer(command, fields)
    again = answer(command, fields)  # from warm memos
    with memo.reference():
        slow = answer(command, fields)
    assert fast == again == slow, "\n".join(differences(slow, fast, name))
