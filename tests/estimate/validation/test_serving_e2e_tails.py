"""Published end-to-end latency tails against the serving simulation (issue 28, item 3): the
p99 end-to-end, TTFT and TPOT rows of dstack's DeepSeek-R1 runs (validation/serving.csv,
dstackai/benchmarks Deepseek-R1/raw_data/online_results.csv: vLLM, SGLang and TensorRT-LLM on
8 x H200 and 8 x MI300X, 3,200 / 800 tokens, concurrency 8, 64 and 128) and the p95 rows of
ai.wmx.dev's vLLM 0.23 sweep (Qwen2.5-0.5B on one L4, 256 / 128 tokens, concurrency 1-32),
scored as scripts/check_serving_traffic.py scores them. Nothing is fitted on these rows."""

from __future__ import annotations

import statistics

import pytest

# the dstack runs' p99 rows, scored together as scripts/check_serving_traffic.py scores them:
# each run simulated once for its three metrics (three calls simulated it three times, 5.1
# CPU-s against 1.7, the same scores: 2026-12-07, shared machine)
DSTACK_P99 = ("e2e_s_p99", "tpot_ms_p99", "ttft_ms_p99")


def _score(metrics: tuple[str, ...], source: str) -> list[dict]:
    """Every row of these metrics and this source (the prefix of the row's group), scored."""
    from whichgpu.estimate.validation import default_path, read_rows
    from whichgpu.estimate.validation.traffic import score

    rows = [r for r in read_rows(default_path("serving"))
            if r["metric"] in metrics and r["group"].split("-")[0] == source]
    return score(rows)


@pytest.fixture(scope="module")
def dstack() -> dict[str, list[dict]]:
    """The dstack rows scored, by metric (in the file's order)."""
    metric = {r["id"]: r["metric"] for r in _rows("dstack")}
    out: dict[str, list[dict]] = {m: [] for m in DSTACK_P99}
    for r in _score(DSTACK_P99, "dstack"):
        out[metric[r["id"]]].append(r)
    return out


def _rows(source: str) -> list[dict]:
    from whichgpu.estimate.validation import default_path, read_rows

    return [r for r in read_rows(default_path("serving")) if r["group"].split("-")[0] == source]


def _scored(metric: str, source: str = "dstack") -> list[dict]:
    """Every row of one metric and source, scored."""
    return _score((metric,), source)


def _median_error(scored: list[dict], key: str) -> float:
    return statistics.median(abs(r[key] / r["measured"] - 1) for r in scored)


def test_p99_end_to_end_rows_are_simulated_and_beat_a_mean_read_as_a_p99(dstack):
    """15 published p99 end-to-end latencies; the 3 of SGLang on H200 ran DP attention, which
    is not modelled, and say so. Of the 12 simulated: 33 % median error when they were added
    (the simulation gives the decode of DeepSeek-R1 at concurrency 8 in these early-2025
    engines 2-4 x too fast), against 50 % for the mean model's end-to-end latency read as a
    p99 (31 % and 43 % once TensorRT-LLM's eager runs pay the host's dispatch,
    test_serving_eager_floor.py). Fails if the simulation stops scoring them, loses its lead,
    or passes 40 %."""
    scored = dstack["e2e_s_p99"]
    assert len(scored) == 15
    skipped = [r for r in scored if "skipped" in r]
    assert len(skipped) == 3
    assert all("DP attention" in r["skipped"] for r in skipped)
    simulated = [r for r in scored if "skipped" not in r]
    err = _median_error(simulated, "simulated")
    assert err < _median_error(simulated, "mean_model")
    assert err < 0.40


def test_p99_tpot_rows_of_the_same_runs_beat_a_mean_read_as_a_p99(dstack):
    """The same 12 runs' p99 TPOT: 35 % median error when added, against 65 % for the mean
    model's TPOT read as a p99 (the gap a plan sized on means leaves at the tail). Since each
    run is estimated with its own engine build (serve28c: vLLM 0.7's and SGLang 0.4's slower
    MLA decode), 38.5 -> 25.8 % against 61.6 -> 34.1 %: the mean itself came closer, so the
    lead is no longer 1.5x. Fails if the simulation loses its lead or passes 30 %."""
    simulated = [r for r in dstack["tpot_ms_p99"] if "skipped" not in r]
    assert len(simulated) == 12
    err = _median_error(simulated, "simulated")
    assert err < _median_error(simulated, "mean_model")
    assert err < 0.30


def test_p99_ttft_rows_of_the_same_runs_are_scored_and_do_not_regress(dstack):
    """The same 12 runs' p99 TTFT: 54 % median error when added, and here the mean model read
    as a p99 is closer (32 %): the simulation's prefill of DeepSeek-R1 in vLLM's V0 scheduler
    (whole prompts in their own steps) is up to 2 x slow at concurrency 8, and its tail
    compounds it. Reported as it is; fails if the tail gets worse than 60 %."""
    simulated = [r for r in dstack["ttft_ms_p99"] if "skipped" not in r]
    assert len(simulated) == 12
    assert _median_error(simulated, "simulated") < 0.60


def test_p95_end_to_end_latency_of_a_dense_model_is_within_the_issues_ten_percent():
    """Issue 28's bar for end-to-end latency (10 %), checked on a published p95: the 6 rows of
    the L4 sweep, 5 % median error when added (the closed loop at fixed lengths leaves the
    p95 near the typical request, and the simulation says so)."""
    scored = [r for r in _scored("e2e_s_p95", "wmx") if "skipped" not in r]
    assert len(scored) == 6
    assert _median_error(scored, "simulated") <= 0.10
