"""llama.cpp offload: layers (-ngl) and MoE experts (--n-cpu-moe, --cpu-moe, -ot) in host RAM,
in memory, speed and recommend. gpt-oss-120b runs on one 24 GB card with its experts in system
RAM (llama.cpp discussion #15396); whichgpu once answered "does not fit, 4 x rtx-4090"."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.host import parse_host
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.offload_plan import offload_plan
from whichgpu.estimate.memory.placement import placement
from whichgpu.estimate.memory.weights import workload_weight_bytes
from whichgpu.estimate.speed import estimate_speed

RTX_4090 = get_gpu("rtx-4090")


def _oss(**kw):
    return build_workload("gpt-oss-120b", quant="mxfp4", engine="llamacpp", **kw)


def test_gpt_oss_120b_on_a_4090_answers_with_the_expert_offload_that_fits(cli):
    res = cli("memory", "gpt-oss-120b", "--quant", "mxfp4", "--engine", "llamacpp", "--gpu",
              "rtx-4090", "--json")
    assert res.code == 0
    data = res.json()
    assert data["target"]["verdict"] == "does not fit"  # the whole model, on the GPU alone
    plan = data["offload"]
    assert plan["kind"] == "experts" and "--n-cpu-moe" in plan["flags"]
    assert 0 < plan["expert_layers_in_ram"] < 36
    assert plan["gpu_bytes"] <= RTX_4090.usable_memory_bytes and plan["host_fits"]
    assert plan["decode_tokens_per_s_per_sequence"]["typical"] > 5
    # the suggestions offer the one card with experts in RAM before four cards
    first = data["suggestions"][0]
    assert "--n-cpu-moe" in first["change"] and first["fits_on"] == ["rtx-4090"]
    four = [i for i, s in enumerate(data["suggestions"]) if s["change"].startswith("4 x")]
    assert not four or four[0] > 0
    text = cli("memory", "gpt-oss-120b", "--quant", "mxfp4", "--engine", "llamacpp", "--gpu",
               "rtx-4090").out
    assert "With llama.cpp offload" in text and "host RAM" in text


def test_more_experts_in_ram_move_bytes_from_the_gpu_to_the_host():
    totals, hosts = [], []
    for n in (0, 8, 24, 36):
        e = estimate_memory(_oss(n_cpu_moe=n or None))
        totals.append(e.total_bytes)
        hosts.append(e.host_total_bytes)
    assert totals == sorted(totals, reverse=True) and hosts == sorted(hosts)
    wb = workload_weight_bytes(_oss())
    per_layer = wb.experts / 36
    # each expert layer moved costs the GPU about one layer's experts and the host the same
    assert (totals[1] - totals[2]) / 16 == pytest.approx(per_layer, rel=0.05)
    assert (hosts[2] - hosts[1]) / 16 == pytest.approx(per_layer, rel=0.05)


def test_ngl_keeps_the_last_layers_and_then_the_output_on_the_gpu():
    w = build_workload("llama-3.1-70b", quant="q4_k_m", engine="llamacpp", gpu_layers=41)
    p = placement(w, workload_weight_bytes(w))
    # llama.cpp: i_gpu_start = n_layer + 1 - ngl, the output head being the last slot
    assert p.layer_on_gpu == tuple(i >= 40 for i in range(80))
    assert p.output_on_gpu
    w0 = w.with_(gpu_layers=0)
    p0 = placement(w0, workload_weight_bytes(w0))
    assert not any(p0.layer_on_gpu) and not p0.output_on_gpu
    assert p0.gpu_bytes == 0


def test_override_tensor_patterns_match_tensor_names_as_llama_cpp_does():
    by_flag = _oss(n_cpu_moe=2)
    by_regex = _oss(override_tensor=[r"blk\.(0|1)\.ffn_.*_exps=CPU"])
    a = placement(by_flag, workload_weight_bytes(by_flag))
    b = placement(by_regex, workload_weight_bytes(by_regex))
    assert a.host_expert_layers == b.host_expert_layers == 2
    assert a.host_bytes == b.host_bytes
    everything = _oss(override_tensor=["exps=CPU"])
    assert placement(everything, workload_weight_bytes(everything)).host_expert_layers == 36
    assert _oss(cpu_moe=True).cpu_moe_layers == 36


def test_decode_with_experts_in_ram_is_bound_by_the_host_memory():
    slow = estimate_speed(_oss(n_cpu_moe=24, host_memory="ddr4-3200x2"), RTX_4090,
                          check_fit=False, saturation=False)
    fast = estimate_speed(_oss(n_cpu_moe=24, host_memory="ddr5-6400x2"), RTX_4090,
                          check_fit=False, saturation=False)
    r_slow = slow.rates["decode_tokens_per_s_per_sequence"].typical
    r_fast = fast.rates["decode_tokens_per_s_per_sequence"].typical
    assert slow.bound == "host-memory"
    assert r_fast > 1.5 * r_slow  # 102 vs 51 GB/s
    fewer = estimate_speed(_oss(n_cpu_moe=12, host_memory="ddr4-3200x2"), get_gpu("h100-nvl"),
                           check_fit=False, saturation=False)
    assert fewer.rates["decode_tokens_per_s_per_sequence"].typical > r_slow


def test_prefill_copies_host_weights_over_pcie_once_per_micro_batch():
    def prefill(**kw):
        e = estimate_speed(_oss(n_cpu_moe=24, prompt_tokens="4096", **kw), RTX_4090,
                           check_fit=False, saturation=False)
        return e.rates["prefill_tokens_per_s"].typical

    base = prefill()
    assert prefill(ubatch=2048) > 2.5 * base  # a quarter of the copies
    assert prefill(mmap=False) > 1.5 * base  # pinned buffers copy faster than pageable ones


def test_recommend_offers_one_card_with_experts_in_ram(cli):
    res = cli("recommend", "gpt-oss-120b", "--engine", "llamacpp", "--tokens", "100k",
              "--only", "rtx-4090", "--max-gpus", "1", "--prices", "vramfarm-2026-11",
              "--json")
    assert res.code == 0
    (option,) = res.json()["options"]
    assert option["count"] == 1
    assert any("in host RAM" in n and "--n-cpu-moe" in n for n in option["notes"])


def test_an_engine_without_an_offload_mode_says_so(cli):
    res = cli("recommend", "gpt-oss-120b", "--engine", "vllm", "--tokens", "100k", "--only",
              "rtx-4090", "--max-gpus", "1", "--prices", "vramfarm-2026-11", "--json")
    assert any("host RAM" in line and "vllm" in line for line in res.json()["explanation"])


def test_too_little_host_ram_is_not_a_fit():
    w = _oss(host_ram="32GB")
    plan = offload_plan(w, RTX_4090)
    assert plan is not None and not plan.host_ok
    assert not estimate_memory(plan.workload).host_fits


def test_offload_flags_belong_to_llama_cpp(cli):
    with pytest.raises(InputError, match=r"llama\.cpp's offload flags"):
        build_workload("gpt-oss-120b", engine="vllm", n_cpu_moe=4)
    with pytest.raises(InputError, match="dense model"):
        build_workload("llama-3.1-8b", quant="q4_k_m", n_cpu_moe=4)
    res = cli("memory", "gpt-oss-120b", "--engine", "vllm", "--n-cpu-moe", "4")
    assert res.code == 2 and "Traceback" not in res.err


def test_host_memory_reads_type_speed_and_channels():
    h = parse_host("96GB", "ddr5-6000x2")
    assert h.ram_bytes == 96e9 and h.bandwidth_bytes_per_s == 6000e6 * 8 * 2
    assert parse_host(None, "ddr4").bandwidth_bytes_per_s == 3200e6 * 8 * 2
    assert parse_host(None, None, "200GB/s").bandwidth_bytes_per_s == 200e9
    with pytest.raises(InputError, match="host memory"):
        parse_host(None, "ddr9")
