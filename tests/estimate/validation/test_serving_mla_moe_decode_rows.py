"""DeepSeek-R1 (MLA-MoE) decode at moderate concurrency on a current engine (issue 28,
serving7): InferenceX issue #870's SGLang 0.5.7 sweep on 8 x H200 (TP8, FP8, 1k/1k,
concurrency 8-64, March 2026). The model's TPOT at concurrency 8 is within a few % of it
(12.6 ms against 12.8 measured), while dstack's March 2025 runs of vLLM 0.7.4 and SGLang
0.4.2 measured 31-51 ms on the same kind of replica: the gap there is those engines' early-2025
kernels, not a term the model misses. Fails if MLA-MoE decode at small batches drifts."""

from __future__ import annotations

import pytest


def _errors(metric: str) -> dict[int, float]:
    from whichgpu.estimate.validation import default_path, read_rows
    from whichgpu.estimate.validation import serving as vs

    rows = [r for r in read_rows(default_path("serving"))
            if r["group"].startswith("ix870-dsr1-h200-sglang-") and r["metric"] == metric]
    assert len(rows) == 4
    memo: dict = {}
    out = {}
    for row in rows:
        value, _, _ = vs.predict(row, memo)
        out[int(row["concurrency"])] = value / float(row["value"]) - 1
    return out


@pytest.mark.parametrize("metric", ["tpot_ms_mean", "e2e_s_mean", "output_tokens_per_s"])
def test_concurrency_8_is_within_ten_percent(metric):
    assert abs(_errors(metric)[8]) < 0.10


@pytest.mark.xfail(strict=True, reason=(
    "a known miss since 2026-12-07, narrowed by serve28: SGLang's routed-expert half-efficiency "
    "size now shrinks with the expert's size ((S_ref / S)^0.25: 640 tokens per expert at "
    "Qwen3.6-35B-A3B's 2048 x 512 experts, about 555 at DeepSeek-R1's 7168 x 256 per GPU at TP8) "
    "and a prefill's fixed expert cost is paid once per forward pass, yet a 922-token prompt "
    "(29 tokens per expert) still costs about 116 ms of it: TPOT +2/+14/+18/+29 % at "
    "concurrency 8/16/32/64 (was +4/+18/+22/+36). Fails (strict) once the small-n expert "
    "efficiency (or the prompts SGLang batches into one prefill under load) brings every row "
    "inside 25 %"))
def test_tpot_grows_with_concurrency_as_measured():
    """12.8 -> 34.6 ms from concurrency 8 to 64: every point within 25 %."""
    errors = _errors("tpot_ms_mean")
    assert max(abs(e) for e in errors.values()) < 0.25
