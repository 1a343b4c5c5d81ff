"""The serving simulation (estimate/speed/serving_sim.py) and request-length traffic
(estimate/speed/traffic.py): percentiles that come from how the engine schedules, not from
averages (issue 28, item 3)."""

from __future__ import annotations

import pytest

from whichgpu.catalog.gpus import default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.speed.serving_sim import Arrival, Traffic, simulate
from whichgpu.estimate.speed.traffic import LengthShape, fixed, from_file, sharegpt
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def _gpu(gid: str):
    return next(g for g in default_catalog().gpus if g.id == gid)


@pytest.fixture(scope="module")
def sm() -> ServingModel:
    model = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True)
    w = Workload(model=model, engine="vllm", prompt_tokens=512, output_tokens=128, context=640)
    return ServingModel(w, _gpu("h100-sxm"), lengths="mean")


def test_first_wave_of_a_closed_loop_is_prefilled_in_turn(sm):
    """32 users sending 1,024-token prompts at once: the last of the first wave waits for the
    prompts before it: p99 is several times one prompt alone, and well above p50."""
    res = simulate(sm, Traffic(fixed(1024, 128), Arrival.CLOSED, 32, 64))
    one = simulate(sm, Traffic(fixed(1024, 128), Arrival.CLOSED, 1, 20))
    assert one.ttft.p99 == pytest.approx(one.ttft.p50, rel=0.05)
    assert res.ttft.p99 > 3 * one.ttft.p50
    assert res.ttft.p99 > 1.3 * res.ttft.p50


def test_tails_grow_with_the_rate(sm):
    cap = sm.max_requests_per_s
    low = simulate(sm, Traffic(fixed(512, 128), Arrival.POISSON, 0.2 * cap, 400))
    high = simulate(sm, Traffic(fixed(512, 128), Arrival.POISSON, 0.9 * cap, 400))
    assert high.ttft.p99 > low.ttft.p99
    assert high.tpot.p50 > low.tpot.p50
    assert high.requests_per_s == pytest.approx(0.9 * cap, rel=0.2)


def test_sharegpt_lengths_skew_the_latency(sm):
    """Long-tailed lengths: the median request ends well before the mean one (the mean
    model's end-to-end latency is the mean's)."""
    lengths = sharegpt()
    assert lengths.shape is LengthShape.SHAREGPT
    res = simulate(sm, Traffic(lengths, Arrival.POISSON, 4.0, 400))
    assert res.e2e.p50 < 0.85 * res.e2e.mean
    assert res.e2e.p99 > 2 * res.e2e.p50


def test_prefix_cache_hits_shorten_the_first_token(sm):
    base = Traffic(fixed(2048, 64), Arrival.POISSON, 2.0, 200)
    cached = Traffic(fixed(2048, 64), Arrival.POISSON, 2.0, 200, prefix_hit=0.75)
    assert simulate(sm, cached).ttft.p50 < 0.6 * simulate(sm, base).ttft.p50


def test_goodput_counts_requests_within_the_targets(sm):
    res = simulate(sm, Traffic(sharegpt(), Arrival.POISSON, 4.0, 300))
    assert res.goodput() == pytest.approx(res.requests_per_s)
    assert res.goodput(ttft_s=res.ttft.p50) == pytest.approx(res.requests_per_s * 0.5, rel=0.1)
    assert res.goodput(ttft_s=1e-9) == 0.0


def test_the_same_answer_each_time(sm):
    t = Traffic(sharegpt(), Arrival.POISSON, 3.0, 200)
    assert simulate(sm, t).ttft == simulate(sm, t).ttft


def test_lengths_from_a_file_and_a_histogram(tmp_path):
    f = tmp_path / "lengths.csv"
    f.write_text("prompt,output\n100,20\n300,60\n")
    lengths = from_file(f)
    assert (lengths.prompt, lengths.output) == (200, 40)
    h = tmp_path / "hist.csv"
    h.write_text("100,20,3\n300,60,1\n")
    assert from_file(h).prompt == pytest.approx(150)
    bad = tmp_path / "bad.csv"
    bad.write_text("prompt,output\n100,x\n")
    with pytest.raises(InputError, match="line 2"):
        from_file(bad)
    with pytest.raises(InputError, match="cannot read"):
        from_file(tmp_path / "missing.csv")


def test_bad_traffic_is_refused(sm):
    with pytest.raises(InputError):
        simulate(sm, Traffic(fixed(10, 10), Arrival.POISSON, 0.0, 10))
    with pytest.raises(InputError):
        simulate(sm, Traffic(fixed(10, 10), Arrival.POISSON, 1.0, 10, prefix_hit=1.0))


def test_published_p99_ttft_rows_stay_within_the_measured_error():
    """The 13 published p99 TTFT rows of validation/serving.csv: the simulation's median
    error was 38 % when this landed (the mean model read as a p99: 85 %; a distribution of
    independent waits, not merged: 50 %). Fails if the tails regress. (With the MLA-MoE
    prefill time and SGLang's receive interval, 24 rows: simulation 33 %, the mean model read as
    a p99 66 %, its B200 means now near the measured ones.) dstack's DeepSeek-R1 tails are
    scored apart, in tests/estimate/validation/test_serving_e2e_tails.py."""
    import statistics

    from whichgpu.estimate.validation import default_path, read_rows
    from whichgpu.estimate.validation.traffic import score

    rows = [r for r in read_rows(default_path("serving")) if r["metric"] == "ttft_ms_p99"
            and not r["group"].startswith("dstack-")]
    scored = [r for r in score(rows) if "skipped" not in r]
    assert len(scored) >= 12
    err = statistics.median(abs(r["simulated"] / r["measured"] - 1) for r in scored)
    mean_err = statistics.median(abs(r["mean_model"] / r["measured"] - 1) for r in scored)
    assert err < 0.42
    assert err < mean_err * 0.6
