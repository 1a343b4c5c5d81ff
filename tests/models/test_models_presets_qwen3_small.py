"""The Qwen3 0.6B and 1.7B presets: the counts their configs build are the model cards' counts.

The cards (https://huggingface.co/Qwen/Qwen3-0.6B, .../Qwen3-1.7B) give each model's total and its
count outside the embedding, to one or two significant figures; the technical report
(arXiv 2505.09388, Table 1) its layers, heads and tied embeddings. A config with one dimension
wrong (an untied head, 3 072 vs 6 144 in the MLP, 24 layers) misses at least one of them.
"""

from __future__ import annotations

import pytest

from whichgpu.models import resolve_model

# (alias, Hub ids, card total, card non-embedding, figures the card prints them to, layers,
#  query heads, KV heads)
CARDS = [
    ("qwen3-0.6b", ("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B-Base"), 0.6e9, 0.44e9, 0.1e9, 0.01e9,
     28, 16, 8),
    ("qwen3-1.7b", ("Qwen/Qwen3-1.7B", "Qwen/Qwen3-1.7B-Base"), 1.7e9, 1.4e9, 0.1e9, 0.1e9,
     28, 16, 8),
]


@pytest.mark.parametrize(("alias", "hub_ids", "total", "non_embedding", "unit_total",
                          "unit_non_embedding", "layers", "heads", "kv_heads"), CARDS,
                         ids=[c[0] for c in CARDS])
def test_small_qwen3_presets_build_the_model_cards_counts(alias, hub_ids, total, non_embedding,
                                                          unit_total, unit_non_embedding,
                                                          layers, heads, kv_heads):
    m = resolve_model(alias)
    p = m.params
    # the card rounds to its last printed digit: within half a unit of it
    assert abs(p.total - total) <= unit_total / 2, p.total
    assert abs(p.total - p.embedding - non_embedding) <= unit_non_embedding / 2, p.to_json()
    assert p.lm_head == 0  # tied embeddings (technical report, Table 1)
    assert (m.num_layers, m.num_attention_heads, m.num_kv_heads) == (layers, heads, kv_heads)
    assert m.tie_word_embeddings
    for hub_id in hub_ids:  # offline: the preset answers for the Hub id, not the Hub
        assert resolve_model(hub_id).params_total == p.total


def test_qwen3_0_6b_is_what_transformers_builds():
    # Qwen3ForCausalLM with the card's dimensions, counted by hand: embedding 151,936 x 1,024;
    # per layer q 1,024 x 2,048, k and v 1,024 x 1,024, o 2,048 x 1,024, MLP 3 x 1,024 x 3,072,
    # q/k norms 2 x 128, two RMSNorms 2 x 1,024; one final norm; the head tied.
    per_layer = (1024 * 2048 + 2 * 1024 * 1024 + 2048 * 1024 + 3 * 1024 * 3072 + 2 * 128
                 + 2 * 1024)
    expected = 151_936 * 1024 + 28 * per_layer + 1024
    assert resolve_model("qwen3-0.6b").params_total == expected == 596_049_920
