"""Gemma 3n (``gemma3n`` / ``gemma3n_text``): the text decoder and its audio and vision towers.

Shapes follow transformers' ``models/gemma3n/modeling_gemma3n.py`` (5.24.0). Beyond a Gemma 3
layer (q/k/v/o with q/k norms, a GeGLU MLP, four layer norms) each layer has:

- AltUp: ``altup_num_inputs`` copies of the hidden state, mixed by prediction (n x n^2) and
  correction (n x n) coefficients chosen by a modality router (hidden x n, with its norm), and a
  per-channel output scale; the model adds n-1 projections into and n-1 out of the copies;
- LAuReL: a low-rank residual (hidden -> ``laurel_rank`` -> hidden) with a norm;
- per-layer inputs: a gate (hidden -> ``hidden_size_per_layer_input``), a projection back and a
  norm, fed from one table of ``vocab_size_per_layer_input`` x layers x per-layer width (a
  lookup, so in ``embedding``) plus a projection of the hidden state to that width.

The last ``num_kv_shared_layers`` layers read the keys and values of the last earlier layer of
their kind, so they cache nothing; the checkpoints still store their k/v projections (the
Hub totals hold them; transformers 5.x no longer builds them: 2 x hidden x kv width + a k norm
per shared layer fewer), and they are counted here as stored.
"""

from __future__ import annotations

from whichgpu.errors import DataError
from whichgpu.models.arch.build import Arch, Build, attention_kinds, decoder_dims, embed_and_head
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import LayerSpec

# MobileNet-V5 encoders by the timm architecture ``vision_config.architecture`` names. The
# block layout is timm code, not config fields, so the count is a recorded build: timm 1.0.31
# ``timm.create_model(name)`` on the meta device, 2026-12-01 (with it and the formulas below,
# google/gemma-3n-E4B-it's 7,849,978,192 Hub total is reproduced to the parameter).
MOBILENET_V5_PARAMS: dict[str, int] = {"mobilenetv5_300m_enc": 294_126_912}


def _intermediate(r: ConfigReader, n: int) -> list[int]:
    """``intermediate_size``: one width for every layer, or a list of one per layer."""
    raw = r.raw("intermediate_size")
    if isinstance(raw, list):
        widths = r.int_list("intermediate_size", lo=1)
        if len(widths) != n:
            raise DataError(r.origin, f"has {len(widths)} entries, expected one per layer ({n})",
                            field=r.prefix + "intermediate_size")
        return widths
    return [r.int("intermediate_size", default=16384, limit="intermediate")] * n


def gemma3n_text(r: ConfigReader, mt: str) -> Arch:
    """The Gemma 3n text decoder (Gemma3nTextModel + the tied LM head)."""
    h, n, a, k = decoder_dims(r)
    d = r.int("head_dim", default=256, limit="hidden")
    vocab = r.int("vocab_size", default=262400, limit="vocab")
    ple_vocab = r.int("vocab_size_per_layer_input", default=262144, limit="vocab")
    ple = r.int("hidden_size_per_layer_input", default=256, limit="hidden")
    alt = r.int("altup_num_inputs", default=4, limit="heads")
    rank = r.int("laurel_rank", default=64, limit="hidden")
    shared = r.int("num_kv_shared_layers", default=0, lo=0, limit="layers")
    if shared >= n:
        raise DataError(r.origin, f"{shared} KV-shared layers leave no layer of the {n} to "
                        "compute keys and values", field=r.prefix + "num_kv_shared_layers")
    tied = r.bool("tie_word_embeddings", default=True)
    ctx = r.int("max_position_embeddings", default=32768, limit="context")
    window = r.int("sliding_window", default=512, limit="context")
    widths = _intermediate(r, n)

    b = Build()
    embed_and_head(b, vocab, h, tied)
    b.add("embedding", ple_vocab * n * ple)  # embed_tokens_per_layer: one row per token
    # attention: every layer stores q/k/v/o (the shared layers' k/v unused but in the files)
    b.linear("q_proj", h, a * d, n, "attention")
    b.linear("k_proj", h, k * d, n, "attention")
    b.linear("v_proj", h, k * d, n, "attention")
    b.linear("o_proj", a * d, h, n, "attention")
    for inter in sorted(set(widths)):
        b.swiglu(h, inter, widths.count(inter), "mlp")  # gelu-tanh gated, same three linears
    # norms: q/k per layer (v's has no scale), input / post-attention / pre- and post-FFN /
    # post-per-layer-input, AltUp's router norm and LAuReL's, the final norm and the
    # per-layer projection's norm
    b.add("norms", n * (2 * d + 7 * h) + h + ple)
    # AltUp per layer: output scale, correction (n x n) and prediction (n x n^2) coefficients,
    # the modality router; and the model's n-1 projections into and out of the copies
    b.add("other", n * (h + alt * alt + alt ** 3 + h * alt))
    b.linear("altup_projections", h, h, 2 * (alt - 1), "other", lora=False)
    # LAuReL and the per-layer input gate / projection (linears, not LoRA targets)
    b.linear("laurel.linear_left", h, rank, n, "other", lora=False)
    b.linear("laurel.linear_right", rank, h, n, "other", lora=False)
    b.linear("per_layer_input_gate", h, ple, n, "other", lora=False)
    b.linear("per_layer_projection", ple, h, n, "other", lora=False)
    b.linear("per_layer_model_projection", h, n * ple, 1, "other", lora=False)

    kinds = attention_kinds(r, n, lambda i: (i + 1) % 5 != 0, window)
    first_shared = n - shared
    layers = [LayerSpec(attention=kind, window=w, kv_heads=0 if i >= first_shared else k,
                        head_dim=d, v_head_dim=d)
              for i, (kind, w) in enumerate(kinds)]
    sources = {kd for kd, _ in kinds[:first_shared]}
    if any(kd not in sources for kd, _ in kinds[first_shared:]):
        raise DataError(r.origin, "a KV-shared layer has no earlier layer of its attention "
                        "kind to read keys and values from", field=r.prefix + "layer_types")
    n_sliding = sum(1 for kd, _ in kinds if kd == "sliding")
    notes = [f"{n_sliding} of {n} layers use a sliding window of {window} tokens",
             f"the last {shared} layers reuse earlier layers' keys and values (no KV cache "
             "of their own)" if shared else "no KV-shared layers",
             f"per-layer input embeddings: {ple_vocab:,} x {n} layers x {ple} "
             f"({ple_vocab * n * ple / 1e9:.2f}B parameters, a lookup: in 'embedding', not "
             "streamed per token)",
             f"AltUp with {alt} inputs and LAuReL of rank {rank} in 'other'"]
    if len(set(widths)) > 1:
        notes.append(f"MLP widths per layer from {min(widths):,} to {max(widths):,}")
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                intermediate=max(widths), vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                notes=notes, architecture=mt)


def usm_audio(v: ConfigReader, text_hidden: int) -> int:
    """Gemma 3n's audio encoder (Gemma3nAudioEncoder, a USM conformer) and its embedder.

    Subsampling: two bias-free Conv2d + cumulative group norms, then a linear from channels x
    frequencies to hidden. Each conformer block: two macaron feed-forwards (hidden -> 4 hidden
    -> hidden, two norms each), chunked attention (q/k/v, a relative-position projection, a
    per-dimension scale, the output linear, two norms), a light conv (GLU linear to 2 hidden,
    a depthwise conv, a norm, a linear) and a final norm.
    """
    h = v.int("hidden_size", default=1536, limit="hidden")
    heads = v.int("conf_num_attention_heads", default=8, limit="heads")
    blocks = v.int("conf_num_hidden_layers", default=12, limit="layers")
    kernel = v.int("conf_conv_kernel_size", default=5, limit="layers")
    feats = v.int("input_feat_size", default=128, limit="hidden")
    channels = v.int_list("sscp_conv_channel_size", lo=1) or [128, 32]
    kernels = v.raw("sscp_conv_kernel_size", [[3, 3], [3, 3]])
    strides = v.raw("sscp_conv_stride_size", [[2, 2], [2, 2]])
    vocab = v.int("vocab_size", default=128, limit="vocab")
    if h % heads:
        raise DataError(v.origin, f"hidden_size {h} is not a multiple of {heads} heads",
                        field=v.prefix + "conf_num_attention_heads")
    if not (len(channels) == 2 and _pairs(kernels) and _pairs(strides)):
        raise DataError(v.origin, "the audio subsampler is modelled with two convolutions "
                        "(two channel sizes, two [h, w] kernels and strides)",
                        field=v.prefix + "sscp_conv_channel_size")
    total = 0
    freq, cin = feats, 1
    for cout, (kh, kw), (_, sw) in zip(channels, kernels, strides, strict=True):
        total += cin * cout * kh * kw + cout  # conv (no bias) + group-norm scale
        freq = (freq + 2 - kw) // sw + 1  # one frequency bin of padding each side
        cin = cout
    total += cin * freq * h  # input_proj_linear
    block = 24 * h * h + 9 * h + h // heads + h * kernel
    total += blocks * block
    # Gemma3nMultimodalEmbedder: its vocabulary, two norms, the projection into the text
    total += vocab * h + 2 * h + h * text_hidden
    return total


def mobilenet_vision(v: ConfigReader, text_hidden: int) -> int:
    """The MobileNet-V5 vision encoder (a recorded timm build) and its embedder."""
    name = v.str("architecture", default="mobilenetv5_300m_enc")
    if name not in MOBILENET_V5_PARAMS:
        raise DataError(v.origin, f"vision encoder {name!r} is not modelled here (known: "
                        f"{', '.join(MOBILENET_V5_PARAMS)}); its weights would be missing",
                        field=v.prefix + "architecture")
    h = v.int("hidden_size", default=2048, limit="hidden")
    vocab = v.int("vocab_size", default=128, limit="vocab")
    return MOBILENET_V5_PARAMS[name] + vocab * h + 2 * h + h * text_hidden


def _pairs(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(
        isinstance(p, list) and len(p) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in p) for p in value)
