"""The validation measures ranges: coverage and width per category and engine, a balanced
overall figure no engine dominates, and rows above a physical ceiling left out with a reason."""

from __future__ import annotations

import pytest

from whichgpu.estimate.validation import Outcome
from whichgpu.estimate.validation import (
    ceilings as validation_ceilings,
)
from whichgpu.estimate.validation import (
    ranges as validation_ranges,
)


def _o(i: str, measured: float, predicted: float, low: float | None, high: float | None,
       category: str = "decode") -> Outcome:
    return Outcome(i, category, "holdout", measured, predicted, "x", low=low, high=high)


def test_coverage_and_width_count_each_row_of_a_group():
    outs = [_o("a", 10, 10, 8, 12), _o("b", 20, 10, 8, 12), _o("c", 9, 10, 5, 20),
            _o("d", 10, 10, None, None)]
    s = validation_ranges.stats(("decode",), outs)
    assert (s.n, s.n_ranged, s.inside) == (4, 3, 2)
    assert s.coverage == pytest.approx(2 / 3)
    assert s.median_width == pytest.approx(1.5)  # widths 1.5, 1.5, 4.0
    assert s.widest == pytest.approx(4.0)
    assert s.median_abs_error == pytest.approx(1 / 18)  # errors 0, 0.5, 1/9, 0


def test_the_balanced_figure_is_not_dominated_by_the_engine_with_most_rows():
    rows = {}
    outs = []
    for i in range(30):  # llama.cpp: many rows, all right
        rows[f"l{i}"] = {"engine": "llamacpp-vulkan" if i % 2 else "llamacpp"}
        outs.append(_o(f"l{i}", 10, 10, 9, 11))
    for i in range(3):  # vLLM and SGLang: few rows, far off
        for eng in ("vllm", "sglang"):
            rows[f"{eng}{i}"] = {"engine": eng}
            outs.append(_o(f"{eng}{i}", 10, 20, 18, 22))
    rep = validation_ranges.report(outs, rows)
    overall = rep.category("decode")
    assert overall is not None and overall.median_abs_error == pytest.approx(0.0)
    (bal,) = rep.balanced
    assert bal.engines == 3  # llama.cpp's backends count as one engine
    assert bal.median_abs_error == pytest.approx(1.0)  # the median of 0, 1, 1
    assert bal.coverage == pytest.approx(1 / 3)
    assert bal.worst_engine in ("vllm", "sglang")


def test_rows_above_a_ceiling_are_left_out_of_every_figure_and_listed_with_why():
    outs = [_o("ok", 10, 10, 9, 11), _o("impossible", 1000, 10, 9, 11)]
    rep = validation_ranges.report(outs, {"ok": {"engine": "vllm"},
                                          "impossible": {"engine": "vllm"}},
                                   {"impossible": "above the memory-bandwidth ceiling",
                                    "elsewhere": "not in these outcomes"})
    s = rep.category("decode")
    assert s is not None and (s.n, s.inside) == (1, 1)
    assert rep.excluded == {"impossible": "above the memory-bandwidth ceiling"}
    assert rep.to_json()["excluded"] == [{"id": "impossible",
                                          "reason": "above the memory-bandwidth ceiling"}]


def test_the_issue_targets_apply_from_20_rows_and_name_what_is_missed():
    ok = validation_ranges.RangeStats(("decode",), 40, 40, 32, 1.7, 3.0, 5.0, 0.1)
    assert validation_ranges.target_verdict(ok) == (
        "coverage 80% in 75%-85%: met; median width 1.70x <= 2x: met")
    wide = validation_ranges.RangeStats(("prefill",), 40, 40, 39, 3.5, 6.0, 9.0, 0.2)
    assert "coverage 98% in 75%-85%: missed" in validation_ranges.target_verdict(wide)
    assert "<= 3x: missed" in validation_ranges.target_verdict(wide)
    few = validation_ranges.RangeStats(("video",), 5, 5, 5, 3.8, 3.8, 3.8, 0.05)
    assert validation_ranges.target_verdict(few) == "no target under 20 rows"
    unranged = validation_ranges.RangeStats(("weights",), 30, 0, 0, None, None, None, 0.004)
    assert validation_ranges.target_verdict(unranged, "memory") == "no stated range"
    memory = validation_ranges.RangeStats(("qlora",), 30, 30, 24, 2.5, 2.5, 2.5, 0.07)
    assert "<= 2x: missed" in validation_ranges.target_verdict(memory, "memory")


def _row(**kw: str) -> dict[str, str]:
    base = {"id": "r", "category": "decode", "model": "meta-llama/Llama-3.1-8B-Instruct",
            "task": "inference", "quant": "q4_k_m", "engine": "llamacpp", "gpu": "rtx-4090",
            "gpu_count": "1", "batch": "1", "prompt_tokens": "512", "output_tokens": "128",
            "metric": "decode_tokens_per_s", "value": "130", "settings": ""}
    return {**base, **kw}


def test_a_decode_faster_than_the_cards_bandwidth_allows_is_flagged():
    # 8B at >= 4.5 bits is at least 4 GB a token; the 4090 streams about 1,008 GB/s
    assert validation_ceilings.ceiling_reason(_row(value="130")) is None
    reason = validation_ceilings.ceiling_reason(_row(value="400"))
    assert reason is not None and "memory-bandwidth ceiling" in reason and "rtx-4090" in reason


def test_a_prefill_above_the_cards_peak_flops_is_flagged():
    ok = _row(category="prefill", metric="prefill_tokens_per_s", value="10000")
    assert validation_ceilings.ceiling_reason(ok) is None
    # 8B x 2 FLOPs = 15 GFLOP a token; a million tokens/s needs 15 PFLOPS
    too = _row(category="prefill", metric="prefill_tokens_per_s", value="1000000")
    reason = validation_ceilings.ceiling_reason(too)
    assert reason is not None and "compute ceiling" in reason


def test_the_shipped_speed_rows_are_all_below_their_ceilings():
    """With the lenient ceilings (a lower bound on the bytes, the datasheet peak) no published
    row is impossible; a row added above one would be listed, not scored."""
    from whichgpu.estimate.validation import default_path, read_rows

    assert validation_ceilings.excluded(read_rows(default_path("speed"))) == {}
