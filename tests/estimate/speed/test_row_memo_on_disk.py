"""scripts/calibrate.py's memo of row estimates kept on disk (WHICHGPU_SPEED_ROW_MEMO): a second
process (here a second load of the script) starts from the rows the first estimated and
estimates none of them again under the same constants, gives the same numbers as an estimate
without any memo, still estimates a row again when a value it reads changed, adds its own to the
file, and reads or writes nothing without the variable."""

from __future__ import annotations

from itertools import count

import pytest

from calibrate_script import calibrate, counting, memo_rows
from whichgpu.estimate.constants import overridden, speed_value

_loads = count()


def _script():
    """scripts/calibrate.py loaded afresh: its own module, its own (empty) memo, as in another
    process."""
    return calibrate(f"calibrate_disk_memo_{next(_loads)}")


@pytest.fixture(scope="module")
def rows():
    return memo_rows()


def test_a_second_process_estimates_nothing_again_and_gets_the_same_numbers(
        rows, tmp_path, monkeypatch):
    path = tmp_path / "memo" / "rows.pickle"
    monkeypatch.setenv("WHICHGPU_SPEED_ROW_MEMO", str(path))
    first = _script()
    with first.memo_scope():
        kept = first._row_results(rows)
    assert path.is_file()

    second = _script()
    estimated = counting(second, monkeypatch)
    with second.memo_scope():
        again = second._row_results(rows)
    assert estimated == []
    monkeypatch.delenv("WHICHGPU_SPEED_ROW_MEMO")
    assert kept == again == _script()._row_results(rows)  # the last: no memo at all


def test_a_changed_value_is_estimated_again_and_the_file_keeps_both(rows, tmp_path,
                                                                     monkeypatch):
    path = tmp_path / "rows.pickle"
    monkeypatch.setenv("WHICHGPU_SPEED_ROW_MEMO", str(path))
    with (first := _script()).memo_scope():
        first._row_results(rows)
    table = dict(speed_value("decode_bandwidth_efficiency"))
    moved = {**table, "exllamav2": table["exllamav2"] * 0.8}  # read by the exllamav2 rows only
    second = _script()
    estimated = counting(second, monkeypatch)
    with overridden("speed_constants", "decode_bandwidth_efficiency", moved):
        with second.memo_scope():
            changed = second._row_results(rows)
        assert sorted(estimated) == sorted(r["id"] for r in rows[:2])
        monkeypatch.delenv("WHICHGPU_SPEED_ROW_MEMO")
        assert changed == _script()._row_results(rows)  # without any memo: the same numbers

    monkeypatch.setenv("WHICHGPU_SPEED_ROW_MEMO", str(path))
    third = _script()
    estimated = counting(third, monkeypatch)
    with third.memo_scope():
        third._row_results(rows)
        with overridden("speed_constants", "decode_bandwidth_efficiency", moved):
            third._row_results(rows)
    assert estimated == []  # both sets of values came from the file


def test_a_damaged_file_is_estimated_afresh_and_replaced(rows, tmp_path, monkeypatch):
    path = tmp_path / "rows.pickle"
    path.write_bytes(b"not a pickle")
    monkeypatch.setenv("WHICHGPU_SPEED_ROW_MEMO", str(path))
    cal = _script()
    estimated = counting(cal, monkeypatch)
    with cal.memo_scope():
        got = cal._row_results(rows)
    assert sorted(estimated) == sorted(r["id"] for r in rows)
    assert cal._read_memo(path).rows  # replaced by what this run estimated
    monkeypatch.delenv("WHICHGPU_SPEED_ROW_MEMO")
    assert got == _script()._row_results(rows)


def test_without_the_variable_nothing_is_read_or_written(rows, tmp_path, monkeypatch):
    monkeypatch.delenv("WHICHGPU_SPEED_ROW_MEMO", raising=False)
    monkeypatch.chdir(tmp_path)
    cal = _script()
    with cal.memo_scope():
        cal._row_results(rows)
    assert list(tmp_path.iterdir()) == []
    estimated = counting(cal, monkeypatch)
    with cal.memo_scope():  # a new outermost scope starts empty
        cal._row_results(rows)
    assert sorted(estimated) == sorted(r["id"] for r in rows)
