"""Prefill/decode disaggregation: pools sized from the serving model, the KV cache sent over
the link, and the verdict against the same GPUs serving both phases together."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate import disaggregation as D

PROMPT, OUTPUT = 2000, 200


@pytest.fixture(scope="module")
def w():
    return build_workload("llama-3.1-8b", prompt_tokens=str(PROMPT), output_tokens=str(OUTPUT),
                          engine="vllm", context=str(PROMPT + OUTPUT))


@pytest.fixture(scope="module")
def h100():
    return default_catalog().get("h100-sxm")


def test_the_kv_sent_is_the_models_own_kv_per_token_times_the_prompt(w):
    m = w.model
    per_token = 2 * m.num_layers * m.num_kv_heads * m.head_dim * 2  # K and V, bf16
    assert D.kv_bytes_per_request(w, PROMPT) == per_token * PROMPT
    fp8 = w.with_(kv_dtype="fp8")
    assert D.kv_bytes_per_request(fp8, PROMPT) == per_token * PROMPT // 2


def test_the_transfer_takes_longer_over_a_slower_link(w, h100):
    kv = D.kv_bytes_per_request(w, PROMPT)
    times = [D.network_link(h100, link).transfer_s(kv) for link in ("10gbe", "100gbe", "ib-ndr")]
    assert times[0] > times[1] > times[2] > D.server_link(h100).transfer_s(kv)
    ten = D.network_link(h100, "10gbe")
    # 10 GbE's line rate (IEEE 802.3ae: 1.25 GB/s) at the efficiency its data row gives
    from whichgpu.estimate.interconnect import node_link

    row = node_link("10gbe")
    assert ten.effective_bytes_per_s == pytest.approx(1.25e9 * row.efficiency)
    assert times[0] == pytest.approx(kv / ten.effective_bytes_per_s + row.latency_s)


def test_each_pool_meets_its_target_at_the_planned_load(w, h100):
    p, d = D.prefill_instance(w, h100, 1), D.decode_instance(w, h100, 1)
    plan = D.plan(w, 20, p, d, D.network_link(h100, "100gbe"), ttft_s=0.5, tpot_s=0.03)
    assert plan is not None
    assert plan.ttft_s <= 0.5 and plan.tpot_s <= 0.03
    # and one instance fewer of either kind would miss a target or overload
    assert 20 / (plan.prefill_instances - 1 or 1e-9) > plan.prefill_max_rate or \
        plan.prefill_instances == 1
    assert 20 / (plan.decode_instances - 1 or 1e-9) > plan.decode_max_rate or \
        plan.decode_instances == 1


def test_decode_steps_without_prompt_chunks_are_the_serving_models_decode_step(w, h100):
    d = D.decode_instance(w, h100, 1)
    tpot, batch = d.tpot_s(10.0)
    assert tpot == pytest.approx(d.steps.decode(batch), rel=1e-3)
    assert batch == pytest.approx(10.0 * OUTPUT * tpot, rel=1e-3)  # Little's law


def test_more_traffic_needs_proportionally_more_prefill_instances(w, h100):
    p, d = D.prefill_instance(w, h100, 1), D.decode_instance(w, h100, 1)
    link = D.server_link(h100)
    low = D.plan(w, 20, p, d, link, ttft_s=0.5, tpot_s=0.03)
    high = D.plan(w, 200, p, d, link, ttft_s=0.5, tpot_s=0.03)
    assert low and high
    assert high.prefill_instances >= 8 * low.prefill_instances // 2
    assert high.decode_instances > low.decode_instances


def test_a_slow_link_eats_the_ttft_budget_and_costs_instances(w, h100):
    p, d = D.prefill_instance(w, h100, 1), D.decode_instance(w, h100, 1)
    fast = D.plan(w, 20, p, d, D.server_link(h100), ttft_s=0.5, tpot_s=0.03)
    slow = D.plan(w, 20, p, d, D.network_link(h100, "10gbe"), ttft_s=0.5, tpot_s=0.03)
    assert fast and slow
    assert slow.transfer_s > 0.2  # 262 MB over about 1.1 GB/s
    assert slow.gpus > fast.gpus


def test_a_target_no_instance_meets_gives_no_plan(w, h100):
    p, d = D.prefill_instance(w, h100, 1), D.decode_instance(w, h100, 1)
    assert D.plan(w, 20, p, d, D.server_link(h100), ttft_s=0.001) is None
    assert D.plan(w, 20, p, d, D.server_link(h100), tpot_s=0.0001) is None


def _answer(rate: str, **kw):
    from whichgpu.answers import recommend
    from whichgpu.answers.requests import Recommend

    return recommend(Recommend(model="llama-3.1-8b", requests_per_s=rate,
                               prompt_tokens="1000", output_tokens="200", ttft="1s",
                               tpot="50ms", disaggregate=True, prices="article-000", **kw))


def test_at_one_request_per_second_serving_together_wins_and_says_why():
    ans = _answer("1")
    split = ans.to_json()["disaggregation"]
    assert split["verdict"] == "colocated"
    plan = split["plan"]
    assert plan["prefill"]["instances"] == 1 and plan["decode"]["instances"] == 1
    said = " ".join(split["explanation"])
    assert "round each pool up" in said
    # the explanation the CLI and the page show carries the same sentences
    assert any("Serving both phases together is cheaper" in str(m)
               for m in ans.rec.explanation)
    assert split["cost_per_hour"]["amount"] > split["colocated"]["cost_per_hour"]["amount"]


def test_the_json_names_the_ratio_the_gpus_and_the_kv_transfer():
    plan = _answer("20", interconnect="25gbe").to_json()["disaggregation"]["plan"]
    assert plan["ratio"] == f"{plan['prefill']['instances']}P:{plan['decode']['instances']}D"
    from whichgpu.estimate.memory.kv import cached_context

    # Llama 3.1 8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 131,072 bytes a token,
    # for the prompt rounded up to vLLM's 16-token blocks
    assert plan["kv_transfer"]["bytes_per_request"] == 131072 * cached_context(1000, "vllm")
    assert plan["gpus"] == (plan["prefill"]["instances"] * plan["prefill"]["tp"]
                            + plan["decode"]["instances"] * plan["decode"]["tp"])


def test_a_split_on_one_card_is_compared_with_that_card_serving_together():
    split = _answer("20").to_json()["disaggregation"]
    plan = split["plan"]
    if plan["prefill"]["gpu"] == plan["decode"]["gpu"]:
        assert split["same_card"]["gpu"] == plan["decode"]["gpu"]
    else:
        assert split["same_card"] is None


def test_disaggregate_needs_a_request_rate(cli, web):
    from whichgpu.answers import recommend
    from whichgpu.answers.requests import Recommend

    with pytest.raises(InputError, match="request rate"):
        recommend(Recommend(model="llama-3.1-8b", tokens="1M", disaggregate=True))
    c = cli("recommend", "llama-3.1-8b", "--disaggregate")
    assert c.code == 2 and "--requests-per-s" in c.err
    r = web.get("/api/v1/recommend?model=llama-3.1-8b&disaggregate=true")
    assert r.status_code == 422
    assert r.json()["detail"] == r_cli_reason(cli)  # the REST API says the CLI's reason


def r_cli_reason(cli) -> str:
    return cli("recommend", "llama-3.1-8b", "--disaggregate").err.strip().removeprefix("error: ")


def test_the_advisor_page_says_the_split_in_english_and_french(web):
    url = ("/?task=inference&model=llama-3.1-8b&requests_per_s=5&prompt_tokens=1000"
           "&output_tokens=200&disaggregate=true&prices=article-000")
    en = web.get(url)
    assert en.status_code == 200
    assert 'data-msg="disagg.plan"' in en.text and "Prefill/decode split" in en.text
    assert 'name="disaggregate"' in en.text  # the control
    fr = web.get(url + "&lang=fr")
    assert "Séparation prefill/décodage" in fr.text
    assert "--interconnect" not in en.text and "--interconnect" not in fr.text
