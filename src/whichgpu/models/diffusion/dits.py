"""Parameter counts and block shapes of the 2025-26 diffusion transformers: FLUX.2
(``Flux2Transformer2DModel``), HunyuanVideo (``HunyuanVideoTransformer3DModel``) and LTX-Video
(``LTXVideoTransformer3DModel``).

Each formula follows the modules the diffusers class builds (diffusers
``src/diffusers/models/transformers/transformer_flux2.py``, ``transformer_hunyuan_video.py``,
``transformer_ltx.py``, read at commit 58eb52c0); ``scripts/check_counts_with_transformers.py``
builds the same classes on the meta device and compares, to the parameter.
"""

from __future__ import annotations

from whichgpu.errors import DataError
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import LinearGroup


def _lin(fin: int, fout: int, bias: bool = True) -> int:
    return fin * fout + (fout if bias else 0)


def _timestep_embedding(fin: int, dim: int, bias: bool = True) -> int:
    """diffusers TimestepEmbedding: linear_1 (fin -> dim), SiLU, linear_2 (dim -> dim)."""
    return _lin(fin, dim, bias) + _lin(dim, dim, bias)


def _text_projection(fin: int, dim: int) -> int:
    """diffusers PixArtAlphaTextProjection: linear_1 (fin -> dim), activation, linear_2."""
    return _lin(fin, dim) + _lin(dim, dim)


def _gelu_ffn(d: int, mult: float = 4.0) -> int:
    """diffusers FeedForward with a GELU/linear input projection: d -> inner -> d, biases."""
    inner = int(d * mult)
    return _lin(d, inner) + _lin(inner, d)


def _lg(name: str, fin: int, fout: int, count: int) -> LinearGroup | None:
    return LinearGroup(name, fin, fout, count) if count > 0 else None


def _groups(parts: list[tuple[str, int, int, int]]) -> tuple[LinearGroup, ...]:
    return tuple(g for g in (_lg(*p) for p in parts) if g)


def _mlp_width(c: ConfigReader, d: int, default: float) -> int:
    ratio = c.raw("mlp_ratio", default)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio <= 0:
        raise DataError(c.origin, f"expected a positive number, got {ratio!r:.40}",
                        field=c.prefix + "mlp_ratio")
    return int(d * ratio)


# ---------------------------------------------------------------------------- FLUX.2

def flux2_params(c: ConfigReader) -> int:
    """Flux2Transformer2DModel: 8 double-stream and 48 single-stream blocks for FLUX.2 [dev],
    with modulation shared across blocks (three modulation linears, not one per block), SwiGLU
    MLPs, the single blocks' QKV and MLP input fused, and no biases anywhere."""
    hd = c.int("attention_head_dim", default=128, limit="hidden")
    heads = c.int("num_attention_heads", default=48, limit="heads")
    n2 = c.int("num_layers", default=8, lo=0, limit="layers")
    n1 = c.int("num_single_layers", default=48, lo=0, limit="layers")
    cin = c.int("in_channels", default=128, limit="hidden")
    cout = c.opt_int("out_channels", limit="hidden") or cin
    joint = c.int("joint_attention_dim", default=15360, limit="hidden")
    tgc = c.int("timestep_guidance_channels", default=256, limit="hidden")
    patch = c.int("patch_size", default=1, limit="hidden")
    d = hd * heads
    mlp = _mlp_width(c, d, 3.0)
    total = _timestep_embedding(tgc, d, bias=False)
    if c.bool("guidance_embeds", default=True):  # diffusers' default: FLUX.2 [dev] omits it
        total += _timestep_embedding(tgc, d, bias=False)
    total += 2 * d * 6 * d + d * 3 * d  # double-stream (image, text) and single modulation
    total += cin * d + joint * d  # x_embedder, context_embedder
    double = 8 * d * d + 4 * hd + 2 * (d * 2 * mlp + mlp * d)
    single = d * (3 * d + 2 * mlp) + (d + mlp) * d + 2 * hd
    total += n2 * double + n1 * single
    return total + d * 2 * d + d * patch * patch * cout  # norm_out (AdaLN), proj_out


def flux2_shapes(c: ConfigReader) -> tuple[int, int, tuple[LinearGroup, ...], int]:
    hd = c.int("attention_head_dim", default=128, limit="hidden")
    d = hd * c.int("num_attention_heads", default=48, limit="heads")
    n2 = c.int("num_layers", default=8, lo=0, limit="layers")
    n1 = c.int("num_single_layers", default=48, lo=0, limit="layers")
    mlp = _mlp_width(c, d, 3.0)
    parts = [("to_q", d, d, n2), ("to_k", d, d, n2), ("to_v", d, d, n2), ("to_out.0", d, d, n2),
             ("add_q_proj", d, d, n2), ("add_k_proj", d, d, n2), ("add_v_proj", d, d, n2),
             ("to_add_out", d, d, n2), ("ff.linear_in", d, 2 * mlp, n2),
             ("ff.linear_out", mlp, d, n2), ("ff_context.linear_in", d, 2 * mlp, n2),
             ("ff_context.linear_out", mlp, d, n2),
             ("attn.to_qkv_mlp_proj", d, 3 * d + 2 * mlp, n1), ("attn.to_out", d + mlp, d, n1)]
    joint = c.int("joint_attention_dim", default=15360, limit="hidden")
    largest = max(d * (3 * d + 2 * mlp), joint * d)
    return mlp, largest, _groups(parts), n2 + n1


# ---------------------------------------------------------------------------- HunyuanVideo

def hunyuan_video_params(c: ConfigReader) -> int:
    """HunyuanVideoTransformer3DModel: a Conv3d patch embedding, a 2-block token refiner over
    the LLM's text states, 20 dual-stream and 40 single-stream blocks (per-block AdaLN-Zero,
    RMS q/k norms, biases), as FLUX.1 but over video latents."""
    hd = c.int("attention_head_dim", default=128, limit="hidden")
    heads = c.int("num_attention_heads", default=24, limit="heads")
    n2 = c.int("num_layers", default=20, lo=0, limit="layers")
    n1 = c.int("num_single_layers", default=40, lo=0, limit="layers")
    nref = c.int("num_refiner_layers", default=2, lo=0, limit="layers")
    cin = c.int("in_channels", default=16, limit="hidden")
    cout = c.opt_int("out_channels", limit="hidden") or cin
    p = c.int("patch_size", default=2, limit="hidden")
    pt = c.int("patch_size_t", default=1, limit="hidden")
    text = c.int("text_embed_dim", default=4096, limit="hidden")
    pooled = c.int("pooled_projection_dim", default=768, limit="hidden")
    if c.raw("image_condition_type") == "token_replace":
        raise DataError(c.origin, "token-replace image conditioning (HunyuanVideo-I2V) is not "
                        "modelled", field=c.prefix + "image_condition_type")
    qk = 2 * hd if c.raw("qk_norm", "rms_norm") else 0
    d = hd * heads
    mlp = _mlp_width(c, d, 4.0)
    total = cin * pt * p * p * d + d  # x_embedder (Conv3d)
    # context_embedder: token refiner with its own timestep + pooled-text embedding
    refiner_block = (2 * d + 4 * _lin(d, d) + 2 * d + _lin(d, 4 * d) + _lin(4 * d, d)
                     + _lin(d, 2 * d))
    total += (_timestep_embedding(256, d) + _text_projection(text, d) + _lin(text, d)
              + nref * refiner_block)
    total += _timestep_embedding(256, d) + _text_projection(pooled, d)  # time_text_embed
    if c.bool("guidance_embeds", default=True):
        total += _timestep_embedding(256, d)
    double = (2 * _lin(d, 6 * d) + 8 * _lin(d, d) + 2 * qk
              + 2 * (_lin(d, mlp) + _lin(mlp, d)))
    single = 3 * _lin(d, d) + qk + _lin(d, 3 * d) + _lin(d, mlp) + _lin(d + mlp, d)
    total += n2 * double + n1 * single
    return total + _lin(d, 2 * d) + _lin(d, pt * p * p * cout)


def hunyuan_video_shapes(c: ConfigReader) -> tuple[int, int, tuple[LinearGroup, ...], int]:
    hd = c.int("attention_head_dim", default=128, limit="hidden")
    d = hd * c.int("num_attention_heads", default=24, limit="heads")
    n2 = c.int("num_layers", default=20, lo=0, limit="layers")
    n1 = c.int("num_single_layers", default=40, lo=0, limit="layers")
    mlp = _mlp_width(c, d, 4.0)
    nref = c.int("num_refiner_layers", default=2, lo=0, limit="layers")
    # the token refiner's self-attention modules carry the same names (PEFT matches them too)
    parts = [("to_q", d, d, n2 + n1 + nref), ("to_k", d, d, n2 + n1 + nref),
             ("to_v", d, d, n2 + n1 + nref), ("to_out.0", d, d, n2 + nref),
             ("add_q_proj", d, d, n2), ("add_k_proj", d, d, n2),
             ("add_v_proj", d, d, n2), ("to_add_out", d, d, n2),
             ("ff.net.0.proj", d, mlp, n2), ("ff.net.2", mlp, d, n2),
             ("ff_context.net.0.proj", d, mlp, n2), ("ff_context.net.2", mlp, d, n2),
             ("proj_mlp", d, mlp, n1), ("proj_out", d + mlp, d, n1)]
    return mlp, (d + mlp) * d, _groups(parts), n2 + n1


# ---------------------------------------------------------------------------- LTX-Video

def ltx_video_params(c: ConfigReader) -> int:
    """LTXVideoTransformer3DModel: PixArt-style DiT blocks (self-attention, cross-attention to
    the T5 states, GELU MLP, a per-block 6 x d scale-shift table) with RMS q/k norms across
    heads, over 1x1x1-patched video latents."""
    hd = c.int("attention_head_dim", default=64, limit="hidden")
    heads = c.int("num_attention_heads", default=32, limit="heads")
    n = c.int("num_layers", default=28, limit="layers")
    cin = c.int("in_channels", default=128, limit="hidden")
    cout = c.opt_int("out_channels", limit="hidden") or cin
    cross = c.int("cross_attention_dim", default=2048, limit="hidden")
    caption = c.int("caption_channels", default=4096, limit="hidden")
    bias = c.bool("attention_bias", default=True)
    out_bias = c.bool("attention_out_bias", default=True)
    if c.bool("norm_elementwise_affine", default=False):
        raise DataError(c.origin, "affine block norms are not modelled",
                        field=c.prefix + "norm_elementwise_affine")
    for key, want in (("patch_size", 1), ("patch_size_t", 1)):
        if c.int(key, default=1, limit="hidden") != want:
            raise DataError(c.origin, f"only {want} is modelled", field=c.prefix + key)
    d = hd * heads
    total = _lin(cin, d) + 2 * d  # proj_in, final scale_shift_table
    total += _timestep_embedding(256, d) + _lin(d, 6 * d)  # AdaLayerNormSingle
    total += _text_projection(caption, d)  # caption_projection
    self_attn = 2 * d + 3 * _lin(d, d, bias) + _lin(d, d, out_bias)
    cross_attn = 2 * d + _lin(d, d, bias) + 2 * _lin(cross, d, bias) + _lin(d, d, out_bias)
    block = self_attn + cross_attn + _gelu_ffn(d) + 6 * d
    return total + n * block + _lin(d, cout)


def ltx_video_shapes(c: ConfigReader) -> tuple[int, int, tuple[LinearGroup, ...], int]:
    hd = c.int("attention_head_dim", default=64, limit="hidden")
    d = hd * c.int("num_attention_heads", default=32, limit="heads")
    n = c.int("num_layers", default=28, limit="layers")
    cross = c.int("cross_attention_dim", default=2048, limit="hidden")
    # leaf module names, as PEFT targets match them: attn1 (self) and attn2 (cross to T5)
    parts = [("to_q", d, d, 2 * n), ("to_k", d, d, n), ("to_k", cross, d, n),
             ("to_v", d, d, n), ("to_v", cross, d, n), ("to_out.0", d, d, 2 * n),
             ("ff.net.0.proj", d, 4 * d, n), ("ff.net.2", 4 * d, d, n)]
    caption = c.int("caption_channels", default=4096, limit="hidden")
    return 4 * d, max(4 * d * d, caption * d), _groups(parts), n


FORMULAS = {
    "Flux2Transformer2DModel": (flux2_params, flux2_shapes),
    "HunyuanVideoTransformer3DModel": (hunyuan_video_params, hunyuan_video_shapes),
    "LTXVideoTransformer3DModel": (ltx_video_params, ltx_video_shapes),
}

__all__ = ["FORMULAS", "flux2_params", "hunyuan_video_params", "ltx_video_params"]
