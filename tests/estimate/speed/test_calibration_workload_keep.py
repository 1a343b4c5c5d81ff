"""scripts/calibrate.py keeps each row's Workload while its memo tracks reads
(_rows_workloads): a row estimated again under other constant values is not parsed and
validated again, unless a speed constant its build read has changed; the reads of a kept
build still count as the row's own, and the estimates are the same numbers as without it."""

from __future__ import annotations

import pytest

from calibrate_script import calibrate, counting, memo_rows
from whichgpu.estimate.constants import overridden, speed_value

NAME = "decode_bandwidth_efficiency"
UNREAD = "no-such-engine"  # a key no estimate reads: only the build below reads it


@pytest.fixture(scope="module")
def cal():
    return calibrate("calibrate_workload_keep")


@pytest.fixture(scope="module")
def rows(cal):
    return memo_rows()


@pytest.fixture
def builds(cal, monkeypatch) -> list[str]:
    """The ids of the rows whose Workload is built from now on; each build reads
    ``NAME[UNREAD]`` (as a build that reads a speed constant would)."""
    built: list[str] = []
    build = cal.validation_speed.workload_of

    def reading(row, *, global_batch=False):
        built.append(row["id"])
        speed_value(NAME).get(UNREAD)
        return build(row, global_batch=global_batch)

    monkeypatch.setattr(cal.validation_speed, "workload_of", reading)
    return built


def _names(cal, row) -> list[tuple]:
    memo = cal._MEMO[0]
    number = memo.row_ids[tuple(sorted(row.items()))]
    return [names for names, _ in memo.results[number]]


def test_a_kept_build_is_used_until_a_value_it_read_changes(cal, rows, builds, monkeypatch):
    estimated = counting(cal, monkeypatch)
    ex = rows[:2]
    table = dict(speed_value(NAME))
    with cal.memo_scope():
        first = cal._row_results(rows)
        assert sorted(builds) == sorted(r["id"] for r in rows)
        builds.clear()
        estimated.clear()
        # a value the exllamav2 estimates read, not their builds: estimated again, not built
        moved = {**table, "exllamav2": table["exllamav2"] * 0.8}
        with overridden("speed_constants", NAME, moved):
            changed = cal._row_results(rows)
        assert sorted(estimated) == sorted(r["id"] for r in ex)
        assert builds == []
        # the kept build's read is still the row's: in the names of its new estimate
        for r in ex:
            assert all((NAME, UNREAD) in names for names in _names(cal, r))
        estimated.clear()
        # a value every build read: every row built and estimated again
        with overridden("speed_constants", NAME, {**table, UNREAD: 1.0}):
            cal._row_results(rows)
        assert sorted(builds) == sorted(estimated) == sorted(r["id"] for r in rows)
    assert changed[:2] != first[:2]
    with overridden("speed_constants", NAME, moved):
        assert changed == cal._row_results(rows)  # without the memo: the same numbers


def test_a_kept_workload_is_a_fresh_copy_equal_to_a_new_build(cal, rows):
    from whichgpu.estimate.validation.rows import workload_of
    from whichgpu.estimate.validation.speed import speed_settings
    from whichgpu.estimate.workload import Workload

    memo = cal._Memo()
    lazy = cal._lazy_names(Workload)
    assert {"engine_name", "quant_format", "tp_degree", "pp_degree"} <= lazy
    clean, _ = speed_settings(rows[0])
    with cal._rows_workloads(memo, cal._snapshot()):
        made = cal.validation_speed.workload_of(clean, global_batch=True)
        made.engine_name  # worked out and cached on the first object only  # noqa: B018
        again = cal.validation_speed.workload_of(clean, global_batch=True)
    assert cal.validation_speed.workload_of is workload_of  # put back
    fresh = workload_of(clean, global_batch=True)
    assert again is not made and again == fresh == made
    assert {k: v for k, v in again.__dict__.items()} == \
        {k: v for k, v in fresh.__dict__.items() if k not in lazy}
    assert again.engine_name == fresh.engine_name
