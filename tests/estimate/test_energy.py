"""Energy per token and per image (issue 33, item 6): measured board power where published,
a sourced share of the TDP by phase otherwise, power caps and their cost in speed, and the
ownership costs' electricity from the measured power instead of the TDP."""

from __future__ import annotations

import pytest

from paths import ROOT
from whichgpu.catalog.gpus import default_catalog
from whichgpu.cost.ownership import ownership, ownership_inputs
from whichgpu.errors import InputError
from whichgpu.estimate.energy import (
    JOULES_PER_KWH,
    PowerBasis,
    PowerPhase,
    board_power,
    cap_speed_factor,
    measurements,
)


def gpu(gpu_id: str):
    return default_catalog().get(gpu_id)


def test_h100_decode_at_batch_1_is_the_measured_300_w_not_the_700_w_tdp():
    d = board_power(gpu("h100-sxm"), PowerPhase.DECODE, 1)
    assert d.basis is PowerBasis.MEASURED
    assert d.watts.typical == 300
    assert "mlenergy-h100-b1" in d.source and "ML.ENERGY" in " ".join(d.citations)


def test_h100_decode_between_measured_batches_is_interpolated_on_a_log_scale():
    # 300 W at batch 1, 600 W at batch 128: batch 16 (log2 = 4 of 7) is 300 + 300 x 4/7
    d = board_power(gpu("h100-sxm"), PowerPhase.DECODE, 16)
    assert d.watts.typical == pytest.approx(300 + 300 * 4 / 7)


def test_an_unmeasured_datacenter_card_decodes_below_its_prefill_power():
    l40s = gpu("l40s")
    decode = board_power(l40s, PowerPhase.DECODE, 1)
    prefill = board_power(l40s, PowerPhase.PREFILL, 1)
    assert decode.basis is PowerBasis.FALLBACK
    assert decode.watts.typical < prefill.watts.typical <= l40s.tdp_watts


def test_every_measurement_names_a_known_card_a_source_and_a_plausible_wattage():
    catalog = default_catalog()
    for m in measurements():
        g = catalog.get(m.gpu)
        assert m.url.startswith("http") and m.date and m.source
        assert 0 < m.measured_w <= g.tdp_watts * 1.05, m.id


def test_a_cap_above_what_decode_draws_costs_no_speed():
    # the H100 draws 300 W decoding one sequence: a 500 W cap is never reached
    d = board_power(gpu("h100-sxm"), PowerPhase.DECODE, 1, power_cap_w=500)
    assert d.speed_factor == 1.0 and d.watts.typical == 300


def test_a_cap_costs_compute_bound_phases_more_than_decode():
    # llmgarage's 3090 sweep: capped at 71 % of its draw, decode keeps 97 %, prefill 85 %
    assert cap_speed_factor(PowerPhase.DECODE, 0.714) == pytest.approx(0.974)
    assert cap_speed_factor(PowerPhase.PREFILL, 0.714) == pytest.approx(0.853)


def test_a_cap_is_read_against_what_the_phase_draws_not_the_tdp():
    # the H100 decodes one sequence at 300 W (measured): 250 W is 83 % of that draw
    d = board_power(gpu("h100-sxm"), PowerPhase.DECODE, 1, power_cap_w=250)
    assert d.speed_factor == pytest.approx(cap_speed_factor(PowerPhase.DECODE, 250 / 300))
    assert d.speed_factor > 0.98


def test_speed_at_a_power_cap_is_slower_and_its_energy_uses_the_capped_power(cli):
    plain = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", "--json").json()
    capped = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", "--power-cap", "300W",
                 "--json").json()
    decode = capped["energy"]["power"][0]
    assert decode["phase"] == "decode" and decode["power_cap_w"] == 300
    factor = decode["speed_factor"]
    assert 0.9 < factor < 1.0
    assert capped["decode_tokens_per_s"]["typical"] == pytest.approx(
        plain["decode_tokens_per_s"]["typical"] * factor, rel=1e-3)
    j = capped["energy"]["joules_per_token"]["typical"]
    assert j == pytest.approx(300 / capped["decode_tokens_per_s"]["typical"], rel=1e-3)
    assert capped["energy"]["kwh_per_million_tokens"]["typical"] == pytest.approx(
        j * 1e6 / JOULES_PER_KWH, rel=1e-3)
    assert j < plain["energy"]["joules_per_token"]["typical"]  # 300 W, not 432 W, per token


def test_speed_of_images_gives_joules_per_image_and_kwh_per_thousand(cli):
    data = cli("speed", "sdxl", "--task", "image", "--gpu", "rtx-4090", "--json").json()
    e = data["energy"]
    seconds = data["seconds_per_image"]["typical"]
    watts = e["power"][0]["board_power_w"]["typical"]
    assert e["power"][0]["phase"] == "image"
    assert e["joules_per_image"]["typical"] == pytest.approx(watts * seconds, rel=1e-2)
    assert e["kwh_per_thousand_images"]["typical"] == pytest.approx(
        watts * seconds * 1e3 / JOULES_PER_KWH, rel=1e-2)


def test_a_cap_below_every_published_sweep_is_one_line_and_exit_2(cli):
    r = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", "--power-cap", "50W")
    assert r.code == 2
    assert "below" in r.err and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) <= 2


def test_rest_speed_takes_the_power_cap_and_refuses_a_bad_one(web):
    ok = web.get("/api/v1/speed?model=llama-3.1-8b&gpu=rtx-4090&power_cap=300W")
    assert ok.status_code == 200
    assert ok.json()["energy"]["power"][0]["power_cap_w"] == 300
    bad = web.get("/api/v1/speed?model=llama-3.1-8b&gpu=rtx-4090&power_cap=10W")
    assert bad.status_code == 422


def test_ownership_electricity_uses_the_measured_busy_power_not_the_tdp():
    # H100 SXM decoding at batch 128 draws 600 W (ML.ENERGY), not its 700 W TDP
    i = ownership_inputs("h100-sxm")
    assert i.load_factor == pytest.approx(600 / 700)
    o = ownership(i)
    full = ownership(ownership_inputs("h100-sxm", load_factor=1.0))
    assert o.electricity_per_year.amount == pytest.approx(
        full.electricity_per_year.amount * 600 / 700)
    assert "measured" in str(i.sources["load_factor"])


def test_a_given_load_factor_still_wins():
    assert ownership_inputs("h100-sxm", load_factor=0.5).load_factor == 0.5


def test_a_card_without_a_tdp_has_no_board_power():
    from whichgpu.catalog.user_gpu import resolve_gpu_arg

    res = resolve_gpu_arg(None, "memory=12GB,bandwidth=360GB/s,fp16=30")
    with pytest.raises(InputError):
        board_power(res.gpu, PowerPhase.DECODE)


def test_the_power_validation_table_is_sourced_and_every_row_gets_a_prediction():
    import importlib.util

    path = ROOT / "scripts" / "validate_power.py"
    spec = importlib.util.spec_from_file_location("validate_power", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rows = script.rows()
    assert {r["kind"] for r in rows} == {"board_power", "cap_speed"}
    assert any(r["split"] == "holdout" for r in rows)
    for r in rows:
        assert r["url"].startswith("http") and r["date"] and r["source"], r["id"]
        assert script.predict(r) > 0, r["id"]


def test_power_budget_keeps_the_ranked_options_whose_gpus_draw_no_more(cli):
    data = cli("recommend", "llama-3.3-70b", "--tokens", "50M", "--power-budget", "1kW",
               "--json").json()
    b = data["power_budget"]
    assert b["budget_w"] == 1000
    assert b["within"] and b["over_count"] > 0
    ranks = [o["rank"] for o in b["within"]]
    assert ranks == sorted(ranks)  # in the recommendation's order
    for o in b["within"]:
        assert o["board_power_w"] <= 1000
        option = data["options"][o["rank"] - 1] if o["rank"] <= len(data["options"]) else None
        if option is not None:
            assert option["gpu"] == o["gpu"]
    # the cheapest option (4 x H200 at ~517 W each) is over a 1 kW budget
    assert 1 not in ranks


def test_power_budget_is_read_in_watts_and_refused_when_unreadable(cli):
    r = cli("recommend", "llama-3.1-8b", "--tokens", "1M", "--power-budget", "lots")
    assert r.code == 2
    assert "cannot read 'lots' as a power budget" in r.err and "Traceback" not in r.err


def test_an_offloaded_model_says_the_host_power_is_not_counted(cli):
    data = cli("speed", "qwen3-next-80b-a3b", "--quant", "q4_k_m", "--gpu", "rtx-4090",
               "--engine", "llamacpp", "--cpu-moe", "--json").json()
    assert any("host RAM" in a for a in data["energy"]["assumptions"])
    plain = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", "--json").json()
    assert not any("host RAM" in a for a in plain["energy"]["assumptions"])


def test_a_cap_at_the_lowest_published_point_in_watts_is_accepted():
    """The sweep's lowest point is 100 W of 350 W (0.2857, written 0.286): on a 700 W H100 that
    is 200 W, which was refused as '200 W is below 200 W'; 199 W is still refused."""
    from whichgpu.catalog.gpus import resolve_gpu
    from whichgpu.errors import InputError
    from whichgpu.estimate.energy import PowerPhase, check_power_cap, lowest_cap_fraction

    h100 = resolve_gpu("h100-sxm").gpu
    for phase in PowerPhase:
        at = round(lowest_cap_fraction(phase) * float(h100.tdp_watts or 0))
        check_power_cap(h100, phase, float(at))
        with pytest.raises(InputError, match="is below"):
            check_power_cap(h100, phase, float(at - 1))
