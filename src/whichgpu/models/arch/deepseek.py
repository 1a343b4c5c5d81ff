"""DeepSeek-V2/V3 (MLA + DeepSeekMoE), Kimi K2 (the DeepSeek-V3 architecture under
``kimi_k2``) and DeepSeek-V3.2 (``deepseek_v32``: V3 plus the lightning indexer of its sparse
attention).

Shapes follow DeepSeek's modeling_deepseek.py and transformers' deepseek_v3: a low-rank query
(q_a_proj, q_b_proj), a latent KV projection (kv_a_proj_with_mqa: kv_lora_rank + rope dims),
kv_b_proj expanding the latent to per-head keys and values, the first ``first_k_dense_replace``
layers dense, the others routed experts + shared experts with a sigmoid router and its
``e_score_correction_bias`` (noaux_tc).

V3.2's indexer (DeepSeek's inference/model.py ``Indexer``) per layer: wq_b (q_lora_rank ->
index heads x index_head_dim), wk (hidden -> index_head_dim), k_norm (LayerNorm with bias) and
weights_proj (hidden -> index heads). It caches one key of index_head_dim per token.

Multi-token prediction: each of the ``num_nextn_predict_layers`` modules is one full MoE layer
plus enorm, hnorm, eh_proj (2 x hidden -> hidden) and shared_head.norm, reported in
``mtp_params`` (DeepSeek's 671B leaves them out); the checkpoint also stores a copy of the token
embedding and LM head with each, which ``mtp_params`` does not include.
"""

from __future__ import annotations

from whichgpu.models.arch.build import Arch, Build, check_top_k, embed_and_head
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import LayerSpec, MLASpec, MoESpec


def deepseek(r: ConfigReader, mt: str) -> Arch:
    h = r.int("hidden_size", limit="hidden")
    n = r.int("num_hidden_layers", limit="layers")
    a = r.int("num_attention_heads", limit="heads")
    kvh = r.int("num_key_value_heads", default=a, limit="heads")
    inter = r.int("intermediate_size", limit="intermediate")
    vocab = r.int("vocab_size", limit="vocab")
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=2048, limit="context")
    q_lora = r.opt_int("q_lora_rank", limit="hidden")
    kv_lora = r.int("kv_lora_rank", limit="hidden")
    rope = r.int("qk_rope_head_dim", limit="hidden")
    nope = r.int("qk_nope_head_dim", limit="hidden")
    v = r.int("v_head_dim", limit="hidden")
    bias = r.bool("attention_bias", default=False)
    qk = nope + rope
    indexer = mt == "deepseek_v32"
    ih = r.int("index_n_heads", default=64, limit="heads") if indexer else 0
    idim = r.int("index_head_dim", default=128, limit="hidden") if indexer else 0
    topk = r.int("index_topk", default=2048, limit="context") if indexer else 0

    b = Build()
    embed_and_head(b, vocab, h, tied)

    def attention(count: int) -> None:
        if q_lora:
            b.linear("q_a_proj", h, q_lora, count, "attention", bias=bias)
            b.linear("q_b_proj", q_lora, a * qk, count, "attention")
            b.add("norms", q_lora * count)
        else:
            b.linear("q_proj", h, a * qk, count, "attention")
        b.linear("kv_a_proj_with_mqa", h, kv_lora + rope, count, "attention", bias=bias)
        b.linear("kv_b_proj", kv_lora, a * (nope + v), count, "attention")
        b.linear("o_proj", a * v, h, count, "attention", bias=bias)
        b.add("norms", kv_lora * count + 2 * h * count)
        if indexer:
            b.linear("wq_b", q_lora or h, ih * idim, count, "attention")
            b.linear("wk", h, idim, count, "attention")
            b.linear("weights_proj", h, ih, count, "attention")
            b.add("norms", 2 * idim * count)  # k_norm: a LayerNorm with bias

    attention(n)
    b.add("norms", h)  # the final norm
    e = r.int("n_routed_experts", default=0, lo=0, limit="experts")
    moe_layers = [False] * n
    moe = None
    top = shared = mi = 0
    if e:
        top = r.int("num_experts_per_tok", limit="experts")
        shared = r.int("n_shared_experts", default=0, lo=0, limit="experts")
        mi = r.int("moe_intermediate_size", limit="intermediate")
        first = r.int("first_k_dense_replace", default=0, lo=0, limit="layers")
        freq = r.int("moe_layer_freq", default=1, limit="layers")
        check_top_k(r, top, e, "num_experts_per_tok")
        moe_layers = [i >= first and i % freq == 0 for i in range(n)]
        ml = sum(moe_layers)
        moe = MoESpec(num_experts=e, experts_per_token=top, num_shared_experts=shared,
                      expert_intermediate_size=mi, shared_expert_intermediate_size=mi * shared,
                      moe_layers=ml, dense_layers=n - ml)
    correction = r.raw("topk_method") == "noaux_tc"

    def moe_block(count: int) -> None:
        b.linear("gate", h, e, count, "router", lora=False)
        if correction:
            b.add("router", e * count)  # e_score_correction_bias
        b.swiglu(h, mi, count * e, "experts", expert=True)
        if shared:
            b.swiglu(h, mi * shared, count, "shared_experts")

    if moe:
        moe_block(moe.moe_layers)
    b.swiglu(h, inter, moe_layers.count(False), "mlp")

    mla = MLASpec(kv_lora_rank=kv_lora, qk_rope_head_dim=rope, qk_nope_head_dim=nope,
                  v_head_dim=v, q_lora_rank=q_lora, index_head_dim=idim, index_n_heads=ih,
                  index_topk=topk)
    layers = [LayerSpec(attention="full", kv_heads=a, head_dim=qk, v_head_dim=v, moe=m)
              for m in moe_layers]
    notes = [f"MLA: the KV cache holds {kv_lora + rope} elements per token per layer "
             f"(kv_lora_rank {kv_lora} + rope {rope}), not per-head keys and values"]
    if indexer:
        notes.append(f"DeepSeek sparse attention: a lightning indexer ({ih} heads of {idim}) "
                     f"caches a {idim}-element key per token and layer and picks the {topk:,} "
                     "tokens each query attends to")

    mtp = r.int("num_nextn_predict_layers", default=0, lo=0, limit="layers")
    mtp_params = 0
    if mtp:
        before = sum(b.counts.values())
        scratch = (dict(b.counts), list(b.groups))
        attention(1)
        if moe:
            moe_block(1)
        else:
            b.swiglu(h, inter, 1, "mlp")
        one_layer = sum(b.counts.values()) - before
        b.counts, b.groups = scratch
        mtp_params = mtp * (one_layer + 2 * h * h + 3 * h)
        notes.append(f"the checkpoint also holds {mtp} multi-token-prediction layer(s) "
                     f"({mtp_params / 1e9:.1f}B parameters, and a copy of the embedding and LM "
                     "head each): not counted, as in DeepSeek's figures; engines load them only "
                     "for speculative decoding")
    if mt == "kimi_k2":
        notes.append("Kimi K2: the DeepSeek-V3 architecture (MLA, 384 routed experts)")
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=kvh, head_dim=qk,
                intermediate=inter, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                moe=moe, mla=mla, notes=notes, architecture=mt, mtp_params=mtp_params)
