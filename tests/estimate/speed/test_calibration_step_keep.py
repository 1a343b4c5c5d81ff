"""scripts/calibrate.py keeps what llm's step functions gave while its memo tracks reads
(_kept_steps): a row estimated again under other constant values does not work out its
prefill step again when only a decode constant moved, unless a speed constant the step read
has changed; the reads of a kept step still count as the row's own, and the estimates are the
same numbers as without it."""

from __future__ import annotations

import pytest

from calibrate_script import calibrate, counting, memo_rows
from whichgpu.estimate.constants import overridden, speed_value
from whichgpu.estimate.speed import llm

DECODE = "decode_per_layer_us"  # a decode step reads it (its engine key), a prefill step not
NAME = "prefill_compute_efficiency"
UNREAD = "no-such-engine"  # a key no estimate reads: only the prefill step below reads it


@pytest.fixture(scope="module")
def cal():
    return calibrate("calibrate_step_keep")


@pytest.fixture(scope="module")
def rows(cal):
    return memo_rows()


@pytest.fixture
def prefills(monkeypatch) -> list[int]:
    """The prompt lengths of the prefill steps worked out from now on; each reads
    ``NAME[UNREAD]`` (as a step that reads a speed constant would)."""
    worked: list[int] = []
    step = llm.prefill_time

    def reading(w, hw, batch, prompt):
        worked.append(prompt)
        speed_value(NAME).get(UNREAD)
        return step(w, hw, batch, prompt)

    monkeypatch.setattr(llm, "prefill_time", reading)
    return worked


def _names(cal, row) -> list[tuple]:
    memo = cal._MEMO[0]
    number = memo.row_ids[tuple(sorted(row.items()))]
    return [names for names, _ in memo.results[number]]


def test_a_kept_step_is_used_until_a_value_it_read_changes(cal, rows, prefills, monkeypatch):
    estimated = counting(cal, monkeypatch)
    ex = rows[:2]
    decode = dict(speed_value(DECODE))
    prefill = dict(speed_value(NAME))
    with cal.memo_scope():
        first = cal._row_results(rows)
        assert prefills  # every decode row's estimate works out its prefill too
        prefills.clear()
        estimated.clear()
        # a value the exllamav2 decode steps read, not their prefill steps: estimated again,
        # the prefill steps kept
        moved = {**decode, "exllamav2": decode["default"] * 4}
        with overridden("speed_constants", DECODE, moved):
            changed = cal._row_results(rows)
        assert sorted(estimated) == sorted(r["id"] for r in ex)
        assert prefills == []
        # the kept step's read is still the row's: in the names of its new estimate
        for r in ex:
            assert all((NAME, UNREAD) in names for names in _names(cal, r))
        estimated.clear()
        # a value every prefill step read: every row estimated, every prefill worked out again
        with overridden("speed_constants", NAME, {**prefill, UNREAD: 1.0}):
            cal._row_results(rows)
        assert sorted(estimated) == sorted(r["id"] for r in rows)
        assert len(prefills) >= len(rows)
    assert llm.prefill_time.__name__ == "reading"  # put back as it was found
    assert changed[:2] != first[:2]
    with overridden("speed_constants", DECODE, moved):
        assert changed == cal._row_results(rows)  # without the memo: the same numbers


def test_a_kept_step_is_the_same_result_as_a_new_one(cal, rows, monkeypatch):
    """Under the keep, a second call with equal arguments (another Workload object) gives
    what the first gave without running; outside it, a new call gives a step of the same
    seconds and terms."""
    from whichgpu.estimate.speed.hardware import hardware
    from whichgpu.estimate.validation.rows import gpu_of, workload_of
    from whichgpu.estimate.validation.speed import speed_settings

    ran: list[int] = []
    step = llm.decode_step

    def counted(w, hw, batch, context):
        ran.append(context)
        return step(w, hw, batch, context)

    monkeypatch.setattr(llm, "decode_step", counted)
    clean, _ = speed_settings(rows[0])
    hw = hardware(gpu_of(rows[0]), 1)
    memo = cal._Memo()
    memo.seen = {}
    with cal._kept_steps(memo, cal._snapshot()):
        made = llm.decode_step(workload_of(clean, global_batch=True), hw, 1, 512)
        again = llm.decode_step(workload_of(clean, global_batch=True), hw, 1, 512)
        other = llm.decode_step(workload_of(clean, global_batch=True), hw, 1, 1024)
    assert ran == [512, 1024]
    assert again is made and other is not made
    new = step(workload_of(clean, global_batch=True), hw, 1, 512)
    assert (new.seconds, new.parts) == (made.seconds, made.parts)
