"""The speed of an MoE served with expert parallelism and data-parallel attention (issue 30,
estimate/speed/expert_parallel.py): each GPU reads its non-expert weights and only its share of
the experts the step's tokens route to, each rank its own sequences' KV cache, and every MoE
layer pays the all-to-all (all-gather + reduce-scatter) over the GPUs' link."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed.expert_parallel import (
    ModelTerms,
    all_to_all_s,
    decode_share,
    ranks_batch,
)
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.llm import (
    attention_flops_per_token,
    decode_step,
    linear_flops_per_token,
    prefill_time,
    streamed_weight_bytes,
)

_MODEL = "qwen3-30b-a3b"


def _w(**kw):
    return build_workload(_MODEL, quant="fp8", engine="vllm", gpus=8, context=4096, **kw)


def _hw(gpu: str = "h100-sxm"):
    return hardware(get_gpu(gpu), 8, None, None, None)


def test_each_gpu_reads_its_share_of_the_touched_experts_and_its_ranks_kv():
    ep, hw = _w(expert_parallel=True), _hw()
    assert (ep.tp_degree, ep.dp_degree) == (1, 8)
    batch = 64
    terms = ModelTerms(streamed_weight_bytes(ep, 0)[0], streamed_weight_bytes(ep, batch)[0],
                       linear_flops_per_token(ep.model),
                       attention_flops_per_token(ep.model, 2048))
    share = decode_share(ep, hw, batch, 2048, kv_per_sequence=1e6, terms=terms)
    dense = streamed_weight_bytes(ep, 0)[0]
    touched = streamed_weight_bytes(ep, batch)[0] - dense
    assert touched > 5 * dense  # an MoE: the experts are most of what a batch of 64 reads
    assert share.weight_bytes == pytest.approx(dense + touched / 8)
    assert ranks_batch(ep, batch) == 8 and share.kv_bytes == pytest.approx(8e6)
    # a data-parallel replica without EP holds and reads every touched expert for its batch
    replica = _w(tp=1)
    assert streamed_weight_bytes(replica, batch)[0] > 3 * share.weight_bytes


def test_the_decode_step_pays_the_all_to_all_and_a_pcie_box_pays_more():
    ep = _w(expert_parallel=True)
    nv, pcie = _hw("h100-sxm"), _hw("l40s")
    assert nv.link.kind == "nvlink" and pcie.link.kind != "nvlink"
    step = decode_step(ep, nv, 64, 2048)
    m = ep.model
    assert m.moe is not None
    expected = m.moe.moe_layers * 2 * nv.link.all_gather_s(64 * m.hidden_size * 2, 8)
    assert expected > 0 and step.parts["interconnect"] == pytest.approx(expected)
    assert all_to_all_s(ep, pcie, 64) > 2 * all_to_all_s(ep, nv, 64)
    assert "expert parallel over 8 GPUs" in step.components[0].formula
    # the memory read is the EP share, far below the whole model read by one replica
    replica = decode_step(_w(tp=1), nv, 64, 2048)
    assert step.parts["memory-bandwidth"] < replica.parts["memory-bandwidth"] / 3


def test_prefill_spreads_the_prompts_over_the_ranks_and_pays_the_all_to_all():
    ep, hw = _w(expert_parallel=True), _hw()
    replica = prefill_time(_w(tp=1), hw, 64, 512)
    step = prefill_time(ep, hw, 64, 512)
    assert step.seconds < replica.seconds / 2
    a2a = all_to_all_s(ep, hw, 64 * 512)
    assert a2a > 0 and step.parts["interconnect"] == pytest.approx(a2a)


def test_the_speed_command_answers_with_it(cli):
    args = ("speed", _MODEL, "--gpu", "h100-sxm", "--count", "8", "--engine", "vllm",
            "--quant", "fp8", "--batch", "64", "--json")
    ep = cli(*args, "--expert-parallel")
    replica = cli(*args, "--tp", "1")
    assert ep.code == 0 and replica.code == 0, ep.err + replica.err

    def decode(r) -> float:
        return r.json()["decode_tokens_per_s"]["typical"]

    assert decode(ep) > 2 * decode(replica)
