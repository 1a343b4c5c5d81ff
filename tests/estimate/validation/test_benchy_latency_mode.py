"""llama-benchy's ``--latency-mode generation`` prefill rates (issue 28 item 1).

The client reports prompt / (time to first response - the time of a one-token request); the
one-token request costs the server about one decode step, so a row measured that way is
predicted as prompt / (prefill - decode step). Without it, vLLM's MXFP4 pp512 row on a DGX
Spark looked like 64 GB of weights read above the GB10's 273 GB/s peak.
"""

import pytest

from paths import ROOT
from whichgpu.estimate.validation import read_rows
from whichgpu.estimate.validation import speed as vs

SPEED = ROOT / "validation/speed.csv"


def _benchy_rows() -> list[dict[str, str]]:
    return [r for r in read_rows(SPEED) if "latency_mode=generation" in (r["settings"] or "")]


def test_rows_measured_in_generation_latency_mode_say_so():
    """Every row whose conditions say llama-benchy ran in generation latency mode carries the
    setting, and the other way round (the Spark vLLM rows are four of them)."""
    said = {r["id"] for r in read_rows(SPEED)
            if "llama-benchy" in r["conditions"] and "latency_mode generation" in r["conditions"]}
    carried = {r["id"] for r in _benchy_rows()}
    assert said == carried
    assert len(carried) >= 4


def test_the_rate_is_the_prompt_over_prefill_less_one_decode_step():
    row = next(r for r in _benchy_rows() if r["prompt_tokens"] == "512")
    plain = {**row, "settings": ""}
    rate0, _, (low0, high0) = vs.predict(plain)
    rate, note, (low, high) = vs.predict(row)
    _, _, est, _ = vs.estimate_of(plain)
    step = 1 / est.rates["decode_tokens_per_s_per_sequence"].typical
    prompt = int(row["prompt_tokens"])
    assert rate == pytest.approx(prompt / (prompt / rate0 - step))
    assert low == pytest.approx(prompt / (prompt / low0 - step))
    assert high == pytest.approx(prompt / (prompt / high0 - step))
    assert rate > rate0
    assert "decode step" in note


def test_the_byte_count_is_not_above_the_peak_once_the_latency_is_added_back():
    """pp512 of gpt-oss-120b touches every expert (128 x (1 - (1 - 4/128)^512) = 128): the
    prompt's time with the subtracted one-token request added back reads the weights below
    the GB10's 273 GB/s peak."""
    from whichgpu.estimate.speed.llm import expected_distinct_experts, streamed_weight_bytes

    row = next(r for r in _benchy_rows() if r["prompt_tokens"] == "512")
    w, gpu, est, _ = vs.estimate_of({**row, "settings": ""})
    assert expected_distinct_experts(128, 4, 512) == pytest.approx(128, abs=0.01)
    weights, _ = streamed_weight_bytes(w, 512)
    step = 1 / est.rates["decode_tokens_per_s_per_sequence"].typical
    seconds = 512 / float(row["value"]) + step
    assert weights / seconds < gpu.bandwidth_bytes_per_s
    assert weights / (512 / float(row["value"])) > gpu.bandwidth_bytes_per_s


def test_an_unknown_latency_mode_is_refused():
    row = {**_benchy_rows()[0], "settings": "latency_mode=api"}
    with pytest.raises(ValueError, match="latency_mode=api"):
        vs.predict(row)
