"""estimate/serving_fit.py's leave-one-source-out residuals kept on disk
(WHICHGPU_SERVING_LOSO_MEMO): a second call reads what the first computed, the very same
numbers as a refit without the file; a changed row or constant refits; a full fit that agrees
with the TOML leaves the table exactly as the TOML loads it (so calibrate_serving.py --check and
validate serving --json meet on one key); nothing is read or written without the variable."""

from __future__ import annotations

import pytest

from whichgpu.estimate import serving_fit as sf
from whichgpu.estimate.constants import _load, overridden, speed_value
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation import serving as vs

# four calibration sources whose leave-one-source-out refits move trtllm/dense's per-sequence
# step cost and the moe-mla prefill (most residuals differ from the in-sample ones)
SOURCES = ("trtdev", "ix870", "nim", "wmx")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    every = read_rows(default_path("serving"))
    return [r for r in every if vs.source_of(r) in SOURCES]


@pytest.fixture
def refits(monkeypatch) -> list[int]:
    """Counts the refits loso really runs."""
    done: list[int] = []
    inner = sf._loso

    def counted(rows, start):
        done.append(len(rows))
        return inner(rows, start)

    monkeypatch.setattr(sf, "_loso", counted)
    return done


def _plain(rows, monkeypatch) -> dict[str, float]:
    monkeypatch.delenv(sf.LOSO_MEMO_ENV, raising=False)
    return sf.loso(rows, sf._snapshot())


def test_a_second_call_refits_nothing_and_gets_the_same_residuals(rows, tmp_path, monkeypatch,
                                                                   refits):
    plain = _plain(rows, monkeypatch)
    assert len(plain) > 20
    path = tmp_path / "memo" / "loso.json"
    monkeypatch.setenv(sf.LOSO_MEMO_ENV, str(path))
    first = sf.loso(rows, sf._snapshot())
    assert path.is_file() and len(refits) == 2
    second = sf.loso(rows, sf._snapshot())
    assert len(refits) == 2  # read from the file
    # the same floats in the same order (bands and reports iterate them)
    assert list(first.items()) == list(plain.items()) == list(second.items())
    assert _load(sf.TABLE) == sf._snapshot()


def test_a_changed_row_or_constant_refits(rows, tmp_path, monkeypatch, refits):
    monkeypatch.setenv(sf.LOSO_MEMO_ENV, str(tmp_path / "loso.json"))
    base = sf.loso(rows, sf._snapshot())
    moved = [{**r, "value": str(float(r["value"]) * 1.5)} if r["id"] in base else r
             for r in rows]  # every modelled measurement
    assert sf.loso(moved, sf._snapshot()) != base
    assert len(refits) == 2
    # a speed constant the estimates read, changed for the call
    name = "decode_bandwidth_efficiency"
    old = speed_value(name)
    assert isinstance(old, dict)
    with overridden("speed_constants", name, {k: v * 0.9 for k, v in old.items()}):
        changed = sf.loso(rows, sf._snapshot())
        assert len(refits) == 3
        assert list(changed.items()) == list(_plain(rows, monkeypatch).items())
    assert changed != base
    # a starting serving constant (the value a left-out source's refit starts from)
    start = sf._snapshot()
    key = next(iter(start["serving_step_per_sequence_us"].value))
    other = dict(start)
    other["serving_step_per_sequence_us"] = sf.Constant(
        "serving_step_per_sequence_us",
        {**start["serving_step_per_sequence_us"].value, key: 12345.0},
        start["serving_step_per_sequence_us"].source, None)
    assert sf._loso_key(rows, other, start) != sf._loso_key(rows, start, start)


def test_a_fit_that_agrees_with_the_toml_leaves_the_table_as_the_toml_loads_it():
    """calibrate_serving.py calls loso after its full fit, validate serving on the TOML as
    loaded: with the TOML current, both tables must be equal, types included, for the two to
    share one entry (a fitted 40 is kept as 40.0, as the TOML writes it)."""
    every = read_rows(default_path("serving"))
    before = sf._snapshot()
    only = {("serving_step_per_sequence_us", "trtllm/dense"),
            ("serving_ttft_overhead_ms", "trtllm")}
    try:
        chosen = sf.fit_all(every, report=lambda *a: None, only=only)
        assert set(chosen) == only
        after = sf._snapshot()
        assert after == before
        for name, key in only:
            assert type(after[name].value[key]) is float
        assert sf._loso_key(every, before, after) == sf._loso_key(every, before, before)
    finally:
        sf._restore(before)


def test_nothing_is_read_or_written_without_the_variable(rows, tmp_path, monkeypatch, refits):
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    _plain(rows, monkeypatch)
    _plain(rows, monkeypatch)
    assert len(refits) == 2 and not any(here.iterdir())
