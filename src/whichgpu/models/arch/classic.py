"""Pre-Llama decoders: GPT-2, GPT-NeoX (Pythia), Falcon and MPT (biases, learned or ALiBi
positions, fused query_key_value projections), counted as transformers builds them.
"""

from __future__ import annotations

from whichgpu.errors import DataError
from whichgpu.models.arch.build import Arch, Build, embed_and_head
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import LayerSpec


def gpt2(r: ConfigReader, mt: str) -> Arch:
    h = r.int("n_embd", "hidden_size", limit="hidden")
    n = r.int("n_layer", "num_hidden_layers", limit="layers")
    a = r.int("n_head", "num_attention_heads", limit="heads")
    vocab = r.int("vocab_size", default=50257, limit="vocab")
    pos = r.int("n_positions", "max_position_embeddings", default=1024, limit="context")
    inner = r.int("n_inner", default=4 * h, limit="intermediate")
    tied = r.bool("tie_word_embeddings", default=True)
    _heads_divide(r, h, a, "n_head")
    b = Build()
    embed_and_head(b, vocab, h, tied)
    b.add("embedding", pos * h)  # learned position embeddings (wpe)
    b.linear("c_attn", h, 3 * h, n, "attention", bias=True)
    b.linear("c_proj", h, h, n, "attention", bias=True)
    b.linear("c_fc", h, inner, n, "mlp", bias=True)
    b.linear("c_proj", inner, h, n, "mlp", bias=True)
    b.add("norms", 4 * h * n + 2 * h)
    layers = [LayerSpec(kv_heads=a, head_dim=h // a, v_head_dim=h // a)] * n
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=a, head_dim=h // a,
                 intermediate=inner, vocab=vocab, tied=tied, max_ctx=pos, layers=layers,
                 gated=False, architecture=mt)


def gpt_neox(r: ConfigReader, mt: str) -> Arch:
    h = r.int("hidden_size", limit="hidden")
    n = r.int("num_hidden_layers", limit="layers")
    a = r.int("num_attention_heads", limit="heads")
    inter = r.int("intermediate_size", default=4 * h, limit="intermediate")
    vocab = r.int("vocab_size", limit="vocab")
    ctx = r.int("max_position_embeddings", default=2048, limit="context")
    tied = r.bool("tie_word_embeddings", default=False)
    bias = r.bool("attention_bias", default=True)
    _heads_divide(r, h, a, "num_attention_heads")
    b = Build()
    embed_and_head(b, vocab, h, tied)
    b.linear("query_key_value", h, 3 * h, n, "attention", bias=bias)
    b.linear("dense", h, h, n, "attention", bias=bias)
    b.linear("dense_h_to_4h", h, inter, n, "mlp", bias=True)
    b.linear("dense_4h_to_h", inter, h, n, "mlp", bias=True)
    b.add("norms", 4 * h * n + 2 * h)
    d = h // a
    layers = [LayerSpec(kv_heads=a, head_dim=d, v_head_dim=d)] * n
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=a, head_dim=d,
                 intermediate=inter, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                 gated=False, architecture=mt)


def falcon(r: ConfigReader, mt: str) -> Arch:
    h = r.int("hidden_size", "n_embed", limit="hidden")
    n = r.int("num_hidden_layers", "n_layer", limit="layers")
    a = r.int("num_attention_heads", "n_head", limit="heads")
    vocab = r.int("vocab_size", limit="vocab")
    ctx = r.int("max_position_embeddings", default=2048, limit="context")
    tied = r.bool("tie_word_embeddings", default=True)
    new = r.bool("new_decoder_architecture", default=False)
    mq = r.bool("multi_query", default=True)
    parallel = r.bool("parallel_attn", default=True)
    bias = r.bool("bias", default=False)
    ffn = r.int("ffn_hidden_size", default=4 * h, limit="intermediate")
    _heads_divide(r, h, a, "num_attention_heads")
    d = h // a
    if new:
        k = r.int("num_kv_heads", "n_head_kv", default=a, limit="heads")
    else:
        k = 1 if mq else a
    b = Build()
    embed_and_head(b, vocab, h, tied)
    b.linear("query_key_value", h, (a + 2 * k) * d, n, "attention", bias=bias)
    b.linear("dense", h, h, n, "attention", bias=bias)
    b.linear("dense_h_to_4h", h, ffn, n, "mlp", bias=bias)
    b.linear("dense_4h_to_h", ffn, h, n, "mlp", bias=bias)
    if new:
        lns = r.int("num_ln_in_parallel_attn", default=2, limit="layers")
    else:
        lns = 1 if parallel else 2
    b.add("norms", 2 * h * lns * n + 2 * h)
    layers = [LayerSpec(kv_heads=k, head_dim=d, v_head_dim=d)] * n
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                 intermediate=ffn, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                 gated=False, architecture="falcon")


def mpt(r: ConfigReader, mt: str) -> Arch:
    h = r.int("d_model", limit="hidden")
    n = r.int("n_layers", limit="layers")
    a = r.int("n_heads", limit="heads")
    vocab = r.int("vocab_size", limit="vocab")
    ctx = r.int("max_seq_len", default=2048, limit="context")
    ratio = r.int("expansion_ratio", default=4, limit="heads")
    no_bias = r.bool("no_bias", default=True)
    _heads_divide(r, h, a, "n_heads")
    d = h // a
    k = a
    if r.has("attn_config"):
        ac = r.sub("attn_config")
        if ac.raw("attn_type") == "grouped_query_attention":
            k = ac.int("kv_n_heads", default=a, limit="heads")
    b = Build()
    embed_and_head(b, vocab, h, True)  # MPT always ties the output to wte
    b.linear("Wqkv", h, h + 2 * k * d, n, "attention", bias=not no_bias)
    b.linear("out_proj", h, h, n, "attention", bias=not no_bias)
    b.linear("up_proj", h, ratio * h, n, "mlp", bias=not no_bias)
    b.linear("down_proj", ratio * h, h, n, "mlp", bias=not no_bias)
    per_norm = h if no_bias else 2 * h
    b.add("norms", per_norm * (2 * n + 1))
    layers = [LayerSpec(kv_heads=k, head_dim=d, v_head_dim=d)] * n
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                 intermediate=ratio * h, vocab=vocab, tied=True, max_ctx=ctx, layers=layers,
                 gated=False, architecture=mt)


def _heads_divide(r: ConfigReader, h: int, a: int, name: str) -> None:
    if h % a:
        raise DataError(r.origin, f"hidden size {h} is not a multiple of {a} heads",
                        field=r.prefix + name)
