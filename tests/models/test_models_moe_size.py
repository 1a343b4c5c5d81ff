"""The bare MoE size ``106B-A12B``: a generic MoE stand-in with the total and active counts given,
a MoE's KV cache and a MoE's speed, where a dense ``106B`` would have neither."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.errors import InputError
from whichgpu.estimate.memory.kv import kv_cache
from whichgpu.estimate.speed.llm import streamed_weight_bytes
from whichgpu.models import resolve_model
from whichgpu.models.generic import parse_moe_size


@pytest.mark.parametrize("text,total,active", [
    ("106B-A12B", 106e9, 12e9), ("30b-a3b", 30e9, 3e9), ("1T-A32B", 1e12, 32e9),
    ("20B-A3.6B", 20e9, 3.6e9), (" 235B - A22B ", 235e9, 22e9)])
def test_moe_size_keeps_exactly_the_total_and_active_counts(text, total, active):
    assert parse_moe_size(text) == (total, active)
    m = resolve_model(text, offline=True)
    assert (m.params_total, m.params_active) == (int(total), int(active))
    assert m.approximate and m.is_moe and m.architecture == "generic-moe"
    assert min(m.params.mlp, m.params.experts, m.params.other) >= 0  # no negative fudge
    # the structure matches the counts: top-k of the experts' pool + the rest is the active
    p = m.params
    structural = p.total - p.experts + p.experts * m.moe.experts_per_token / m.moe.num_experts
    assert structural == pytest.approx(active, rel=0.01)
    assert any("approximation" in n for n in m.notes)


def test_the_generic_moe_is_shaped_like_glm45_air_at_106b_a12b():
    m = resolve_model("106B-A12B", offline=True)
    air = resolve_model("glm-4.5-air", offline=True)
    assert m.hidden_size == air.hidden_size == 4096
    assert m.num_kv_heads == air.num_kv_heads == 8 and m.head_dim == air.head_dim == 128
    assert m.moe.experts_per_token == air.moe.experts_per_token == 8
    # the KV cache is within 10 % of the real model's (50 vs 46 layers of 8 x 128)
    ratio = kv_cache(m, 8192, 2, "vllm").bytes_per_sequence / \
        kv_cache(air, 8192, 2, "vllm").bytes_per_sequence
    assert 0.9 < ratio < 1.2


def test_a_moe_size_streams_the_active_experts_where_a_dense_size_streams_everything():
    moe = build_workload(resolve_model("106B-A12B", offline=True), task="inference",
                         quant="bf16")
    dense = build_workload(resolve_model("106B", offline=True), task="inference",
                           quant="bf16")
    one_moe, _ = streamed_weight_bytes(moe, 1)
    one_dense, _ = streamed_weight_bytes(dense, 1)
    assert one_moe < 0.2 * one_dense  # one token reads ~12B of 106B
    assert one_moe == pytest.approx(
        2 * (moe.model.params_active - moe.model.params.embedding), rel=0.01)


@pytest.mark.parametrize("text", ["12B-A20B", "12B-A12B"])
def test_an_active_size_not_below_the_total_is_refused(text):
    with pytest.raises(InputError, match="active size"):
        resolve_model(text, offline=True)


def test_cli_model_with_a_moe_size(cli):
    r = cli("model", "106B-A12B", "--json")
    assert r.code == 0
    data = r.json()
    assert (data["params_total"], data["params_active"]) == (106_000_000_000, 12_000_000_000)
    assert data["approximate"] is True and data["moe"]["experts_per_token"] == 8
    bad = cli("model", "12B-A20B")
    assert bad.code == 2 and "active size" in bad.err and "Traceback" not in bad.err
