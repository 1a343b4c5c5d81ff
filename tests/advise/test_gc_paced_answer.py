"""A recommendation runs with the young-generation threshold raised (advise/collector.py), and
the process's own setting comes back afterwards, whatever happens inside."""

from __future__ import annotations

import gc
import threading

import pytest

from whichgpu.advise import collector


@pytest.fixture(autouse=True)
def _default_threshold():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_threshold_raised_inside_and_restored_after():
    with collector.paced():
        assert gc.get_threshold() == (collector.ANSWER_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_after_an_error():
    with pytest.raises(ValueError), collector.paced():
        raise ValueError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_nested_and_overlapping_answers_restore_once_the_last_ends():
    outer = collector.paced()
    outer.__enter__()
    with collector.paced():
        assert gc.get_threshold()[0] == collector.ANSWER_THRESHOLD
    assert gc.get_threshold()[0] == collector.ANSWER_THRESHOLD  # the outer one still runs
    outer.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)


def test_threads_answering_at_once_leave_the_setting_as_found():
    start = threading.Barrier(4)

    def answer() -> None:
        start.wait()
        for _ in range(200):
            with collector.paced():
                assert gc.get_threshold()[0] == collector.ANSWER_THRESHOLD

    threads = [threading.Thread(target=answer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_or_a_switched_off_one_is_kept():
    gc.set_threshold(100_000, 10, 10)
    with collector.paced():
        assert gc.get_threshold()[0] == 100_000
    gc.set_threshold(0, 10, 10)  # threshold 0: the process switched collection off
    with collector.paced():
        assert gc.get_threshold()[0] == 0


def test_recommend_answers_under_the_raised_threshold(monkeypatch):
    from whichgpu.advise import recommend as rec

    seen = []

    def body(*args):
        seen.append(gc.get_threshold()[0])
        return "answer"

    monkeypatch.setattr(rec, "_recommend_paced", body)
    assert rec.recommend(object(), []) == "answer"  # type: ignore[arg-type]
    assert seen == [collector.ANSWER_THRESHOLD]
    assert gc.get_threshold() == (700, 10, 10)


def test_the_answers_json_is_made_under_the_raised_threshold_too(monkeypatch):
    """The JSON of a recommendation (thousands of small dicts) is made while the answer's
    objects are still alive: at the default threshold its young collections promoted them."""
    from whichgpu.advise.options import Recommendation

    seen = []

    def body(self):
        seen.append(gc.get_threshold()[0])
        return {}

    monkeypatch.setattr(Recommendation, "_json", body)
    rec = Recommendation(job=None, currency="USD", options=[], excluded=[])  # type: ignore[arg-type]
    assert rec.to_json() == {}
    assert seen == [collector.ANSWER_THRESHOLD]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_server_keeps_the_raised_threshold_between_answers():
    collector.pace_for_serving()
    assert gc.get_threshold() == (collector.ANSWER_THRESHOLD, 10, 10)
    with collector.paced():
        assert gc.get_threshold()[0] == collector.ANSWER_THRESHOLD
    assert gc.get_threshold() == (collector.ANSWER_THRESHOLD, 10, 10)  # not put back to 700


def test_a_server_paced_while_an_answer_runs_is_not_undone_by_its_end():
    with collector.paced():
        collector.pace_for_serving()
    assert gc.get_threshold()[0] == collector.ANSWER_THRESHOLD


def test_pacing_a_server_never_lowers_nor_switches_collection_on():
    gc.set_threshold(100_000, 10, 10)
    collector.pace_for_serving()
    assert gc.get_threshold()[0] == 100_000
    gc.set_threshold(0, 10, 10)
    collector.pace_for_serving()
    assert gc.get_threshold()[0] == 0
