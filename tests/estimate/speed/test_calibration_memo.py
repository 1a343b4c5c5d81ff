"""scripts/calibrate.py's memo of row estimates (memo_scope): a row is estimated again exactly
when a constant value its estimate read has changed, and what the fits take from it (modelled,
log error) is the same number as without the memo."""

from __future__ import annotations

import pytest

from calibrate_script import calibrate, counting, memo_rows
from whichgpu.estimate.constants import overridden, speed_value


@pytest.fixture(scope="module")
def cal():
    return calibrate("calibrate_memo")


@pytest.fixture(scope="module")
def rows(cal):
    return memo_rows()


def test_the_memo_gives_the_estimates_own_numbers(cal, rows):
    plain = cal._row_results(rows)
    with cal.memo_scope():
        first = cal._row_results(rows)
        again = cal._row_results(rows)
    assert plain == first == again
    assert all(modelled for modelled, _ in plain)


def test_a_row_is_estimated_again_only_when_a_value_it_read_changed(cal, rows, monkeypatch):
    estimated = counting(cal, monkeypatch)
    ex, other = rows[:2], rows[2:]
    table = dict(speed_value("decode_bandwidth_efficiency"))
    with cal.memo_scope():
        cal._row_results(rows)
        assert len(estimated) == len(rows)
        estimated.clear()
        # exllamav2's key: read by the exllamav2 rows, not by the vLLM rows
        moved = {**table, "exllamav2": table["exllamav2"] * 0.8}
        with overridden("speed_constants", "decode_bandwidth_efficiency", moved):
            changed = cal._row_results(rows)
            assert sorted(estimated) == sorted(r["id"] for r in ex)
            assert changed[2:] == cal._row_results(other)
        estimated.clear()
        back = cal._row_results(rows)  # the values read before: kept
        assert estimated == []
    assert changed[:2] != back[:2]  # the exllamav2 rows did move with their key
    with overridden("speed_constants", "decode_bandwidth_efficiency", moved):
        assert changed == cal._row_results(rows)  # without the memo: the same numbers


def test_a_table_says_which_keys_are_read(cal):
    from whichgpu.estimate.constants import Constant

    cal._READS.clear()
    c = cal._reading(Constant("t", {"a": 1.0, "b": 2.0}, "s"))
    assert c.value["a"] == 1.0 and c.value.get("z") is None and "b" in c.value
    assert cal._READS == {("t", "a"), ("t", "z"), ("t", "b")}
    cal._READS.clear()
    assert sorted(c.value.items())  # any other use reads the whole table
    assert ("t", cal._WHOLE) in cal._READS
    cal._READS.clear()
    assert dict(c.value) == {"a": 1.0, "b": 2.0}
    assert ("t", cal._WHOLE) in cal._READS
    cal._READS.clear()
    assert cal._reading(Constant("x", 0.5, "s")).value == 0.5
    assert cal._READS == {("x", cal._WHOLE)}


def test_a_fitted_value_kept_or_restored_is_what_the_next_estimate_uses(cal, rows):
    """calibrate.py changes the constants in place (_apply, _restore, which now empty the
    estimate memos as constants.overridden does): the next estimate uses the values kept."""
    ex = rows[:2]
    before = [o.predicted for o in cal._outcomes(ex)]
    snap = cal._snapshot()
    value = speed_value("decode_bandwidth_efficiency")["exllamav2"]
    try:
        cal._apply("decode_bandwidth_efficiency", ("exllamav2",), value * 0.8)
        moved = [o.predicted for o in cal._outcomes(ex)]
    finally:
        cal._restore(snap)
    assert all(m < b for m, b in zip(moved, before, strict=True))
    assert [o.predicted for o in cal._outcomes(ex)] == before


def test_a_set_of_reads_is_put_in_name_order_once_and_the_same_way_every_time(cal):
    memo = cal._Memo()
    reads = {("b", "x"), ("a", cal._WHOLE), ("a", "k"), ("a", 2)}
    first = memo.ordered(reads)
    assert first == tuple(sorted(reads, key=cal._name_order))
    assert first[0] == ("a", cal._WHOLE)  # a whole read before the keys of the same constant
    # the same names read in another order: the same tuple, not sorted again
    assert memo.ordered(set(reversed(list(reads)))) is first
    assert memo.ordered(reads - {("b", "x")}) == first[:-1]
