"""The link between servers (--interconnect, --gpus-per-node) is an input to multi-node
training and serving time, and the answer says what it adds per step."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.interconnect import parse_interconnect
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate.interconnect import Interconnect, links, node_link
from whichgpu.estimate.speed import estimate_speed


def _train(link: str | None, count: int = 16, **kw):
    w = build_workload("llama-3.1-8b", task="full-ft", gpus=count, zero=3, interconnect=link,
                       **kw)
    return estimate_speed(w, default_catalog().get("h100-sxm"), count)


def test_every_link_has_a_sourced_row_and_the_vocabulary_matches_the_data():
    assert set(links()) == set(Interconnect)
    for link in links().values():
        assert link.line_rate_bytes_per_s > 0 and 0 < link.efficiency <= 1
        assert link.latency_s > 0
        assert "http" in link.source or "IEEE" in link.source, link.id
        assert link.transport in ("rdma", "tcp")


def test_line_rates_are_the_standards():
    # IEEE 802.3: 10/25/100 Gb/s; InfiniBand NDR 400 Gb/s; Thunderbolt 5 80 Gb/s
    assert node_link("10gbe").line_rate_bytes_per_s == 1.25e9
    assert node_link("25gbe").line_rate_bytes_per_s == 3.125e9
    assert node_link("ib-ndr").line_rate_bytes_per_s == 50e9
    assert node_link("tb5").line_rate_bytes_per_s == 10e9


@pytest.mark.parametrize(("text", "ident"), [
    ("100GbE", "100gbe"), ("ib-ndr", "ib-ndr"), ("NDR", "ib-ndr"), ("Thunderbolt 5", "tb5"),
    ("25G", "25gbe"), ("tb5_rdma", "tb5-rdma"), ("InfiniBand XDR", "ib-xdr")])
def test_the_usual_spellings_name_a_link(text, ident):
    assert parse_interconnect(text) == ident


def test_an_unknown_link_is_an_input_error_that_lists_the_links():
    with pytest.raises(InputError, match=r"unknown link between servers 'ethernet'.*ib-ndr"):
        parse_interconnect("ethernet")


def test_a_slower_link_adds_more_to_each_training_step():
    added = {link: _train(link).details["interconnect"]["added_s_per_step"]
             for link in ("ib-ndr", "100gbe", "25gbe", "10gbe")}
    assert added["ib-ndr"] < added["100gbe"] < added["25gbe"] < added["10gbe"]
    # the exposed ZeRO-3 traffic scales with the link's effective bandwidth (before the
    # gradient accumulation that a slow link forces, which multiplies the step)
    est = _train("25gbe")
    said = [str(w) for w in est.warnings if "25gbe" in str(w)]
    assert said and "per step" in said[0] and "% of the step" in said[0]
    info = est.details["interconnect"]
    assert info["share_of_step"] == pytest.approx(
        info["added_s_per_step"] / est.times["step_s"].typical)
    assert info["stated"] is True and info["servers"] == 2


def test_the_link_changes_nothing_within_one_server():
    one = _train(None, count=8)
    assert _train("10gbe", count=8).times["step_s"].typical == one.times["step_s"].typical
    assert "interconnect" not in one.details


def test_without_a_link_the_default_network_is_used_and_said():
    est = _train(None)
    info = est.details["interconnect"]
    assert info["stated"] is False
    assert info["link"]["line_rate_bytes_per_s"] == 50e9  # Hopper: 400 Gb/s per GPU
    assert any("--interconnect" in str(w) for w in est.warnings)


def test_two_single_gpu_machines_over_thunderbolt_pay_the_link_in_each_decode_step():
    gpu = default_catalog().get("rtx-4090")

    def decode(link: str) -> tuple[float, float]:
        w = build_workload("qwen2.5-7b", quant="awq", gpus=2, tp=2, interconnect=link,
                           gpus_per_node=1)
        est = estimate_speed(w, gpu, 2)
        return (est.rates["decode_tokens_per_s"].typical,
                est.details["interconnect"]["added_s_per_step"])

    tcp, rdma = decode("tb5"), decode("tb5-rdma")
    assert rdma[0] > tcp[0]  # lower latency per all-reduce: faster decode
    assert tcp[1] > rdma[1] > 0


def test_gpus_per_node_below_one_is_refused():
    with pytest.raises(InputError, match="at least 1"):
        build_workload("llama-3.1-8b", gpus_per_node=0)


def test_cli_takes_the_link_and_refuses_an_unknown_one(cli):
    ok = cli("speed", "llama-3.1-8b", "--task", "full-ft", "--gpu", "h100-sxm", "--count", "16",
             "--interconnect", "25GbE", "--json")
    assert ok.code == 0, ok.err
    assert ok.json()["interconnect"]["link"]["id"] == "25gbe"
    bad = cli("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--interconnect", "56k-modem")
    assert bad.code == 2
    assert bad.err.strip().count("\n") == 0 and "unknown link" in bad.err


def test_rest_answers_422_for_an_unknown_link(web):
    r = web.get("/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&interconnect=56k-modem")
    assert r.status_code == 422
    assert "unknown link between servers" in r.json()["detail"]


def test_recommend_says_what_the_link_adds_for_an_option_over_many_servers():
    from whichgpu.answers import recommend
    from whichgpu.answers.requests import Recommend

    def ask(link: str):
        return recommend(Recommend(model="llama-3.1-70b", task="pretrain", train_tokens="20B",
                                   objective="time", only="h100-sxm", interconnect=link,
                                   prices="article-000"))

    slow, fast = ask("25gbe"), ask("ib-ndr")
    said = [str(m) for m in slow.rec.explanation if m.id == "recommend.link_effect"]
    assert said and "25gbe" in said[0] and "per step" in said[0]
    assert slow.rec.options[0].time_s.typical > fast.rec.options[0].time_s.typical
