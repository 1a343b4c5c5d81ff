"""Training memory at scale (issue 29, item 5): what FSDP / ZeRO keep on each GPU beyond their
shard of the model states, per framework, and torchtitan's compiled loss."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.estimate.constants import memory_value
from whichgpu.estimate.frameworks import FSDP_RESIDENT, profiles
from whichgpu.estimate.memory import estimate_memory


def _terms(model: str = "llama-3.1-8b", **kw) -> dict[str, int]:
    e = estimate_memory(build_workload(model, **kw))
    return {t.name: t.bytes for t in e.terms}


def test_compiled_loss_keeps_only_bf16_logits_and_their_gradient():
    w = build_workload("llama-3.1-8b", task="pretrain", context="8k", gpus=8,
                       framework="torchtitan", loss="compiled")
    e = estimate_memory(w)
    tokens, vocab = 8192, w.model.vocab_size
    assert e.term("logits") == tokens * vocab * 4
    full = _terms(task="pretrain", context="8k", gpus=8, framework="torchtitan")["logits"]
    assert full == tokens * vocab * 16  # the uncompiled loss's fp32 copies
    assert e.total_bytes < estimate_memory(build_workload(
        "llama-3.1-8b", task="pretrain", context="8k", gpus=8,
        framework="torchtitan")).total_bytes - 0.7 * full


def test_fsdp_root_keeps_embedding_and_head_gathered_with_the_heads_gradients():
    w = build_workload("llama-3.1-8b", task="full-ft", context="2k", gpus=8)
    p = w.model.params
    t = _terms(task="full-ft", context="2k", gpus=8)
    assert t["fsdp_resident"] == (p.embedding + p.lm_head + p.lm_head) * 2
    # one layer's gradients unsharded, plus its reduce-scatter input in the parameters' dtype
    assert t["fsdp_unsharded_gradients"] == w.model.largest_layer_params * (2 + 2)


def test_torchtitan_keeps_only_its_output_layer_and_reduces_in_fp32():
    w = build_workload("llama-3.1-8b", task="pretrain", context="8k", gpus=8,
                       framework="torchtitan")
    head = w.model.params.lm_head
    t = _terms(task="pretrain", context="8k", gpus=8, framework="torchtitan")
    assert t["fsdp_resident"] == head * 2
    # the head is the largest unit whose gradients are reduced, in float32 (4 bytes)
    assert head > w.model.largest_layer_params
    assert t["fsdp_unsharded_gradients"] == head * (2 + 4)


def test_torchtune_shards_embedding_and_output_on_their_own():
    t = _terms("llama-3.1-70b", task="full-ft", context="2k", batch=2, gpus=8,
               framework="torchtune", offload="cpu")
    assert "fsdp_resident" not in t
    assert t["fsdp_unsharded_gradients"] > 0


def test_fsdp_terms_only_when_sharded_over_several_gpus():
    one = _terms(task="full-ft", context="2k")
    assert not {"fsdp_resident", "fsdp_unsharded_gradients", "zero3_working_set"} & set(one)
    ddp = _terms(task="full-ft", context="2k", gpus=8, zero=0)
    assert "fsdp_resident" not in ddp and "zero_buckets" not in ddp


@pytest.mark.parametrize("stage", [1, 2])
def test_zero_1_and_2_hold_deepspeeds_default_buckets(stage):
    t = _terms(task="full-ft", context="2k", gpus=8, zero=stage)
    c = memory_value("zero_bucket_elements")
    assert t["zero_buckets"] == int((c["reduce"] + c["allgather"]) * 2)
    assert "fsdp_resident" not in t


def test_zero_buckets_never_exceed_a_small_model():
    w = build_workload("qwen2.5-0.5b", task="full-ft", context="2k", gpus=4, zero=2)
    t = _terms("qwen2.5-0.5b", task="full-ft", context="2k", gpus=4, zero=2)
    assert t["zero_buckets"] == 2 * w.model.params_total * 2


def test_sharding_adds_to_what_the_allocator_fragments():
    w = build_workload("llama-3.1-8b", task="full-ft", context="2k", gpus=8)
    e = estimate_memory(w)
    frag = memory_value("fragmentation_fraction")
    dynamic = sum(e.term(n) for n in ("activations", "logits", "gradients", "zero3_working_set",
                                      "fsdp_unsharded_gradients", "fsdp_resident"))
    assert e.term("fragmentation") == int(dynamic * frag)


def test_every_profile_names_a_known_fsdp_residency():
    for p in profiles().values():
        assert p.full.get("fsdp_resident", "embedding+head") in FSDP_RESIDENT


def test_a_tied_head_keeps_the_embeddings_gradients_until_the_root_reduces_them():
    w = build_workload("qwen2.5-0.5b", task="full-ft", context="2k", gpus=4)
    assert w.model.params.lm_head == 0  # tied to the embedding
    t = _terms("qwen2.5-0.5b", task="full-ft", context="2k", gpus=4)
    assert t["fsdp_resident"] == 2 * w.model.params.embedding * 2
