"""Published tails against the serving simulation (issue 28, item 3): the p99 TPOT rows and
the end-to-end latency rows of validation/serving.csv, scored as scripts/check_serving_traffic.py
scores them (nothing fitted on them). Fails if the tails or the end-to-end latency regress."""

from __future__ import annotations

import statistics


def _scored(metric: str, source: str | None = None) -> list[dict]:
    """The scored rows of one metric (of one source: the prefix of the row's group)."""
    from whichgpu.estimate.validation import default_path, read_rows
    from whichgpu.estimate.validation.traffic import score

    rows = [r for r in read_rows(default_path("serving")) if r["metric"] == metric
            and (source is None or r["group"].split("-")[0] == source)]
    return [r for r in score(rows) if "skipped" not in r]


def _median(scored: list[dict], key: str) -> float:
    return statistics.median(abs(r[key] / r["measured"] - 1) for r in scored)


def test_p99_tpot_rows_are_simulated_within_their_measured_error():
    """11 published p99 TPOT rows (GPUStack performance lab, vllm bench serve outputs for
    Qwen3-8B and gpt-oss-120b on H100 and A100): 14 % median error when they were added; the
    mean model, read as a p99, 31 %."""
    scored = _scored("tpot_ms_p99", "gpustack")
    assert len(scored) >= 10
    err, mean_err = _median(scored, "simulated"), _median(scored, "mean_model")
    assert err < 0.18
    assert err < mean_err / 1.5


def test_end_to_end_latency_is_within_ten_percent():
    """Issue 28's bar for end-to-end latency (10 %): 9 % median over the 8 published
    medians (SGLang 0.3 / vLLM 0.6 on A100 and H100, Poisson 4 and 8 requests/s), where
    the mean model's mean is 43 % off."""
    scored = _scored("e2e_s_median")
    assert len(scored) >= 8
    assert _median(scored, "simulated") <= 0.10
    assert _median(scored, "mean_model") > 0.3
