"""Presets the validation rows waited for (issue 14, second pass): Qwen3.8-27B, Qwen2.5-Coder,
the DeepSeek-R1 Qwen distills; and no row still waits for a preset that exists."""

from __future__ import annotations

import csv
import re

import pytest

from paths import ROOT
from whichgpu.estimate.memory.kv import kv_cache
from whichgpu.models import resolve_model
from whichgpu.models.preset_index import find_preset

VALIDATION = ROOT / "validation"
BF16 = 2


def test_no_validation_row_waits_for_a_preset_that_is_shipped():
    waiting = []
    for name in ("speed.csv", "memory.csv", "fits.csv", "serving.csv"):
        with open(VALIDATION / name, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                for alias in re.findall(r"needs preset ([a-z0-9.\-]+)", row.get("settings") or ""):
                    if find_preset(alias) is not None:
                        waiting.append((row["id"], alias))
    assert waiting == []


@pytest.mark.parametrize(("hub_id", "alias"), [
    ("Qwen/Qwen3.8-27B", "qwen3.8-27b"), ("Qwen/Qwen2.5-Coder-7B", "qwen2.5-coder-7b"),
    ("google/gemma-3-4b-it", "gemma-3-4b"), ("zai-org/GLM-4.5-Base", "glm-4.5"),
    ("zai-org/GLM-4.5-Air", "glm-4.5-air")])
def test_the_hub_ids_the_rows_name_resolve_offline_to_the_preset(hub_id, alias):
    assert resolve_model(hub_id, offline=True).source == f"preset:{alias}"


def test_qwen38_27b_keeps_the_qwen35_27b_architecture():
    new, old = (resolve_model(a, offline=True) for a in ("qwen3.8-27b", "qwen3.5-27b"))
    assert new.params_total == old.params_total and new.mtp_params == old.mtp_params
    assert new.vision_params == old.vision_params > 0


def test_qwen38_27b_cache_is_16_full_layers_of_kv_and_48_constant_gdn_states():
    """From its text_config: 4 KV heads of 256 on every fourth layer; each Gated DeltaNet
    layer holds a conv state (kernel - 1 steps of the q, k, v projections) in bf16 and a
    48 x 128 x 128 recurrent state in float32 (mamba_ssm_dtype)."""
    t = find_preset("qwen3.8-27b").read_json("config.json")["text_config"]
    m = resolve_model("qwen3.8-27b", offline=True)
    n_full = t["layer_types"].count("full_attention")
    n_lin = t["layer_types"].count("linear_attention")
    assert (n_full, n_lin) == (64 // t["full_attention_interval"], 48)
    per_token = n_full * 2 * t["num_key_value_heads"] * t["head_dim"] * BF16
    a, b = (kv_cache(m, ctx, BF16, "vllm") for ctx in (4096, 8192))
    assert (b.by_kind["full"] - a.by_kind["full"]) / 4096 == per_token
    conv = (2 * t["linear_num_key_heads"] * t["linear_key_head_dim"]
            + t["linear_num_value_heads"] * t["linear_value_head_dim"])
    ssm = t["linear_num_value_heads"] * t["linear_key_head_dim"] * t["linear_value_head_dim"]
    state = n_lin * (conv * (t["linear_conv_kernel_dim"] - 1) * BF16 + ssm * 4)
    assert a.by_kind["linear-state"] == b.by_kind["linear-state"] == state


@pytest.mark.parametrize(("alias", "base"), [
    ("qwen2.5-coder-7b", "qwen2.5-7b"), ("qwen2.5-coder-32b", "qwen2.5-32b"),
    ("deepseek-r1-distill-qwen-14b", "qwen2.5-14b"),
    ("deepseek-r1-distill-qwen-32b", "qwen2.5-32b")])
def test_fine_tunes_count_as_the_base_model_they_were_trained_from(alias, base):
    a, b = (resolve_model(x, offline=True) for x in (alias, base))
    assert a.params_total == b.params_total
    assert (a.num_layers, a.num_kv_heads, a.head_dim) == (b.num_layers, b.num_kv_heads, b.head_dim)
