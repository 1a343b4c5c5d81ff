"""The validation measures ranges: coverage and width per category and engine, a balanced
overall figure no engine dominates, and rows above a physical ceiling left out with a reason."""

from __future__ import annotations

import pytest

from whichgpu.estimate import validation_ceilings, validation_ranges
from whichgpu.estimate.validation import Outcome


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
