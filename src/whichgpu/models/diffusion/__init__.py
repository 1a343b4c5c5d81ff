"""Diffusers pipelines (model_index.json + one config per component) → ModelSpec.

Each component's parameters are counted from its config with the exact layer structure the
diffusers/transformers class builds (text encoders, UNet/transformer, VAE). A local folder's
safetensors headers, when present, replace the formula with the checkpoint's exact count.
Classes without a formula take a count recorded in the preset index (with its source), or
are reported as not counted.

``params`` of a pipeline spec: the per-decoder fields (embedding, attention, mlp ...) do not
apply, so the total over all components is in ``params.other`` and the per-component counts
are in ``diffusion.components``. ``params.active`` is the total minus components that sit idle
(Wan 2.2 A14B runs one of its two expert transformers at a time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from whichgpu.errors import DataError, InputError
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.diffusion.blocks import lin as _lin
from whichgpu.models.diffusion.blocks import resnet as _resnet
from whichgpu.models.diffusion.vaes import vae_kl_params
from whichgpu.models.spec import (
    ComponentSpec,
    DiffusionSpec,
    LinearGroup,
    ModelSpec,
    ParamCounts,
)

Reader = Callable[[str], Any]
_SKIP = {"tokenizer", "tokenizer_2", "tokenizer_3", "tokenizer_4", "scheduler",
         "feature_extractor", "image_processor", "processor", "safety_checker"}
_DENOISERS = ("transformer", "unet", "prior", "decoder")
# transformers base classes a pipeline loads as a text encoder: the decoder without an LM head
# (HunyuanVideo's text_encoder is the LlamaModel of llava-llama-3-8b)
_BARE_DECODERS = ("LlamaModel", "MistralModel", "Qwen2Model", "Qwen3Model")


# ---------------------------------------------------------------------------- text encoders

def clip_text_params(c: ConfigReader, with_projection: bool) -> int:
    """CLIPTextModel(WithProjection): token + position embeddings, pre-LN encoder layers."""
    h = c.int("hidden_size", default=512, limit="hidden")
    i = c.int("intermediate_size", default=2048, limit="intermediate")
    n = c.int("num_hidden_layers", default=12, limit="layers")
    v = c.int("vocab_size", default=49408, limit="vocab")
    p = c.int("max_position_embeddings", default=77, limit="context")
    total = v * h + p * h + n * (4 * (h * h + h) + 4 * h + h * i + i + i * h + h) + 2 * h
    if with_projection:
        total += h * c.int("projection_dim", default=512, limit="hidden")
    return total


def t5_encoder_params(c: ConfigReader, umt5: bool) -> int:
    """T5EncoderModel / UMT5EncoderModel (UMT5 has relative position biases in every layer)."""
    d = c.int("d_model", limit="hidden")
    kv = c.int("d_kv", default=64, limit="hidden")
    ff = c.int("d_ff", limit="intermediate")
    n = c.int("num_layers", limit="layers")
    heads = c.int("num_heads", limit="heads")
    v = c.int("vocab_size", default=32128, limit="vocab")
    buckets = c.int("relative_attention_num_buckets", default=32, limit="vocab")
    gated = "gated" in str(c.raw("feed_forward_proj", "relu"))
    ffn = (3 if gated else 2) * d * ff
    per_layer = 4 * d * heads * kv + ffn + 2 * d
    rel = buckets * heads * (n if umt5 else 1)
    return v * d + n * per_layer + rel + d


def qwen25_vl_params(c: ConfigReader, origin: str) -> int:
    """Qwen2.5-VL: the Qwen2 language model plus its ViT (windowed attention, patch merger)."""
    from whichgpu.models.config_parse import parse_config

    text = dict(c.data.get("text_config") or c.data)
    text["model_type"] = "qwen2"
    total = parse_config(text, origin=origin).params.total
    v = c.sub("vision_config")
    hv = v.int("hidden_size", default=1280, limit="hidden")
    iv = v.int("intermediate_size", default=3420, limit="intermediate")
    depth = v.int("depth", default=32, limit="layers")
    out = v.int("out_hidden_size", default=3584, limit="hidden")
    patch = v.int("patch_size", default=14, limit="hidden")
    tp = v.int("temporal_patch_size", default=2, limit="hidden")
    ch = v.int("in_chans", "in_channels", default=3, limit="hidden")
    merge = v.int("spatial_merge_size", default=2, limit="hidden")
    vision = ch * tp * patch * patch * hv
    vision += depth * (2 * hv + hv * 3 * hv + 3 * hv + hv * hv + hv + 2 * (hv * iv + iv)
                       + iv * hv + hv)
    m = hv * merge * merge
    vision += hv + m * m + m + m * out + out
    return total + vision


# ---------------------------------------------------------------------------- denoisers

def _timestep_embedding(fin: int, dim: int) -> int:
    return fin * dim + dim + dim * dim + dim


def flux_params(c: ConfigReader) -> int:
    """FluxTransformer2DModel: 19 double-stream (MMDiT) and 38 single-stream blocks for FLUX.1."""
    hd = c.int("attention_head_dim", default=128, limit="hidden")
    heads = c.int("num_attention_heads", default=24, limit="heads")
    n2 = c.int("num_layers", default=19, lo=0, limit="layers")
    n1 = c.int("num_single_layers", default=38, lo=0, limit="layers")
    cin = c.int("in_channels", default=64, limit="hidden")
    cout = c.int("out_channels", default=cin, limit="hidden")
    joint = c.int("joint_attention_dim", default=4096, limit="hidden")
    pooled = c.int("pooled_projection_dim", default=768, limit="hidden")
    patch = c.int("patch_size", default=1, limit="hidden")
    d = hd * heads
    total = _timestep_embedding(256, d) + _lin(pooled, d) + _lin(d, d)
    if c.bool("guidance_embeds", default=False):
        total += _timestep_embedding(256, d)
    total += _lin(joint, d) + _lin(cin, d)
    double = (2 * _lin(d, 6 * d) + 8 * _lin(d, d) + 4 * hd
              + 2 * (_lin(d, 4 * d) + _lin(4 * d, d)))
    single = _lin(d, 3 * d) + _lin(d, 4 * d) + _lin(5 * d, d) + 3 * _lin(d, d) + 2 * hd
    total += n2 * double + n1 * single
    return total + _lin(d, 2 * d) + _lin(d, patch * patch * cout)


def sd3_params(c: ConfigReader) -> int:
    """SD3Transformer2DModel (MMDiT): joint blocks, the last one context-pre-only."""
    hd = c.int("attention_head_dim", default=64, limit="hidden")
    heads = c.int("num_attention_heads", default=18, limit="heads")
    n = c.int("num_layers", default=18, limit="layers")
    cin = c.int("in_channels", default=16, limit="hidden")
    cout = c.int("out_channels", default=cin, limit="hidden")
    patch = c.int("patch_size", default=2, limit="hidden")
    joint = c.int("joint_attention_dim", default=4096, limit="hidden")
    cap = c.int("caption_projection_dim", default=hd * heads, limit="hidden")
    pooled = c.int("pooled_projection_dim", default=2048, limit="hidden")
    pos_max = c.opt_int("pos_embed_max_size", limit="hidden")
    qk_norm = c.raw("qk_norm") is not None
    dual = set(c.int_list("dual_attention_layers"))
    d = hd * heads
    total = cin * patch * patch * d + d  # patch embedding conv
    if pos_max:
        total += pos_max * pos_max * d  # stored position table (persistent buffer)
    total += _timestep_embedding(256, d) + _lin(pooled, d) + _lin(d, d) + _lin(joint, cap)
    for i in range(n):
        last = i == n - 1
        blk = _lin(d, 6 * d) + (_lin(d, 2 * d) if last else _lin(d, 6 * d))
        blk += 3 * _lin(d, d) + 3 * _lin(d, d) + _lin(d, d) + (0 if last else _lin(d, d))
        blk += 4 * hd if qk_norm else 0
        blk += _lin(d, 4 * d) + _lin(4 * d, d)
        if not last:
            blk += _lin(d, 4 * d) + _lin(4 * d, d)
        if i in dual:
            # SD3.5 dual attention: a second self-attention and a 9-way modulation
            blk += 4 * _lin(d, d) + (2 * hd if qk_norm else 0) + _lin(d, 9 * d) - _lin(d, 6 * d)
        total += blk
    return total + _lin(d, 2 * d) + _lin(d, patch * patch * cout)


def qwen_image_params(c: ConfigReader) -> int:
    """QwenImageTransformer2DModel: 60 dual-stream MMDiT blocks for Qwen-Image."""
    hd = c.int("attention_head_dim", default=128, limit="hidden")
    heads = c.int("num_attention_heads", default=24, limit="heads")
    n = c.int("num_layers", default=60, limit="layers")
    cin = c.int("in_channels", default=64, limit="hidden")
    cout = c.int("out_channels", default=16, limit="hidden")
    patch = c.int("patch_size", default=2, limit="hidden")
    joint = c.int("joint_attention_dim", default=3584, limit="hidden")
    d = hd * heads
    total = _timestep_embedding(256, d) + joint + _lin(cin, d) + _lin(joint, d)
    block = 2 * _lin(d, 6 * d) + 8 * _lin(d, d) + 4 * hd + 2 * (_lin(d, 4 * d) + _lin(4 * d, d))
    return total + n * block + _lin(d, 2 * d) + _lin(d, patch * patch * cout)


def wan_params(c: ConfigReader) -> int:
    """WanTransformer3DModel: self- and cross-attention DiT blocks over video latents."""
    hd = c.int("attention_head_dim", default=128, limit="hidden")
    heads = c.int("num_attention_heads", default=40, limit="heads")
    n = c.int("num_layers", default=40, limit="layers")
    cin = c.int("in_channels", default=16, limit="hidden")
    cout = c.int("out_channels", default=16, limit="hidden")
    text = c.int("text_dim", default=4096, limit="hidden")
    freq = c.int("freq_dim", default=256, limit="hidden")
    ffn = c.int("ffn_dim", default=13824, limit="intermediate")
    patch = c.int_list("patch_size", lo=1) or [1, 2, 2]
    d = hd * heads
    vol = math.prod(patch)
    total = cin * vol * d + d  # Conv3d patch embedding
    total += _timestep_embedding(freq, d) + _lin(d, 6 * d) + _lin(text, d) + _lin(d, d)
    image_dim = c.opt_int("image_dim", limit="hidden")
    if image_dim:
        total += 2 * image_dim * 2 + _lin(image_dim, image_dim) + _lin(image_dim, d) + 2 * d
    qk = 2 * d if c.raw("qk_norm") else 0
    added = c.opt_int("added_kv_proj_dim", limit="hidden")
    block = 4 * _lin(d, d) + qk + 4 * _lin(d, d) + qk
    if added:
        block += 2 * _lin(added, d) + d
    block += (2 * d if c.bool("cross_attn_norm", default=True) else 0)
    block += _lin(d, ffn) + _lin(ffn, d) + 6 * d
    return total + n * block + _lin(d, cout * vol) + 2 * d


def _transformer2d(ch: int, layers: int, cross: int) -> int:
    d = ch
    block = (2 * d + 3 * d * d + d * d + d + 2 * d + d * d + 2 * cross * d + d * d + d
             + 2 * d + _lin(d, 8 * d) + _lin(4 * d, d))
    return 2 * ch + _lin(ch, d) + layers * block + _lin(d, ch)


def _per_block(value: Any, n: int, name: str, c: ConfigReader) -> list[int]:
    if isinstance(value, list):
        if len(value) != n or not all(isinstance(v, int) and v > 0 for v in value):
            raise DataError(c.origin, f"expected {n} positive integers", field=c.prefix + name)
        return list(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise DataError(c.origin, f"expected a positive integer, got {value!r:.40}",
                        field=c.prefix + name)
    return [value] * n


def unet_params(c: ConfigReader) -> int:
    """UNet2DConditionModel: ResNet + cross-attention transformer blocks (SD 1.x, SDXL)."""
    cin = c.int("in_channels", default=4, limit="hidden")
    cout = c.int("out_channels", default=4, limit="hidden")
    chans = c.int_list("block_out_channels", lo=1) or [320, 640, 1280, 1280]
    nb = len(chans)
    downs = c.str_list("down_block_types") or ["CrossAttnDownBlock2D"] * 3 + ["DownBlock2D"]
    ups = c.str_list("up_block_types") or ["UpBlock2D"] + ["CrossAttnUpBlock2D"] * 3
    if len(downs) != nb or len(ups) != nb:
        raise DataError(c.origin, f"needs one block type per entry of block_out_channels ({nb})",
                        field=c.prefix + "down_block_types")
    lpb = _per_block(c.raw("layers_per_block", 2), nb, "layers_per_block", c)
    tlpb = _per_block(c.raw("transformer_layers_per_block", 1), nb,
                      "transformer_layers_per_block", c)
    cross = _per_block(c.raw("cross_attention_dim", 1280), nb, "cross_attention_dim", c)
    temb = c.int("time_embedding_dim", default=4 * chans[0], limit="hidden")
    total = cin * chans[0] * 9 + chans[0] + _timestep_embedding(chans[0], temb)
    if c.raw("addition_embed_type") == "text_time":
        pin = c.int("projection_class_embeddings_input_dim", limit="hidden")
        total += _lin(pin, temb) + _lin(temb, temb)
    out = chans[0]
    for i, kind in enumerate(downs):
        prev, out = out, chans[i]
        for j in range(lpb[i]):
            total += _resnet(prev if j == 0 else out, out, temb)
            if "CrossAttn" in kind:
                total += _transformer2d(out, tlpb[i], cross[i])
        if i != nb - 1:
            total += out * out * 9 + out
    mid = c.raw("mid_block_type", "UNetMidBlock2DCrossAttn")
    if mid:
        total += 2 * _resnet(chans[-1], chans[-1], temb)
        total += _transformer2d(chans[-1], tlpb[-1], cross[-1])
    rchans, rlpb, rtl, rcross = chans[::-1], lpb[::-1], tlpb[::-1], cross[::-1]
    out = rchans[0]
    for i, kind in enumerate(ups):
        prev, out = out, rchans[i]
        inp = rchans[min(i + 1, nb - 1)]
        layers = rlpb[i] + 1
        for j in range(layers):
            skip = inp if j == layers - 1 else out
            res_in = prev if j == 0 else out
            total += _resnet(res_in + skip, out, temb)
            if "CrossAttn" in kind:
                total += _transformer2d(out, rtl[i], rcross[i])
        if i != nb - 1:
            total += out * out * 9 + out
    return total + 2 * chans[0] + chans[0] * cout * 9 + cout


def _lg(name: str, fin: int, fout: int, count: int) -> LinearGroup | None:
    return LinearGroup(name, fin, fout, count) if count > 0 else None


def _unet_levels(c: ConfigReader) -> tuple[list[int], list[int], int]:
    """(channels, transformer layers) of every cross-attention transformer layer of a
    UNet2DConditionModel, and the largest module's parameters."""
    chans = c.int_list("block_out_channels", lo=1) or [320, 640, 1280, 1280]
    nb = len(chans)
    downs = c.str_list("down_block_types") or ["CrossAttnDownBlock2D"] * 3 + ["DownBlock2D"]
    ups = c.str_list("up_block_types") or ["UpBlock2D"] + ["CrossAttnUpBlock2D"] * 3
    lpb = _per_block(c.raw("layers_per_block", 2), nb, "layers_per_block", c)
    tlpb = _per_block(c.raw("transformer_layers_per_block", 1), nb,
                      "transformer_layers_per_block", c)
    widths: list[int] = []
    for i, kind in enumerate(downs):
        if "CrossAttn" in kind:
            widths += [chans[i]] * (lpb[i] * tlpb[i])
    if c.raw("mid_block_type", "UNetMidBlock2DCrossAttn"):
        widths += [chans[-1]] * tlpb[-1]
    rchans, rlpb, rtl = chans[::-1], lpb[::-1], tlpb[::-1]
    for i, kind in enumerate(ups):
        if "CrossAttn" in kind:
            widths += [rchans[i]] * ((rlpb[i] + 1) * rtl[i])
    top = max(chans)
    # the first resnet of the deepest up block convolves the skip concatenation (2c -> c, 3x3)
    largest = max(18 * top * top, 8 * top * top)
    return widths, chans, largest


def denoiser_shapes(cls: str, c: ConfigReader) -> tuple[int, int, tuple[LinearGroup, ...], int]:
    """(MLP width, largest module's parameters, attention/MLP linears, transformer blocks) of a
    denoiser, from the layer structure its diffusers class builds; zeros where unknown.

    The linears carry diffusers' module names (``to_q``, ``add_k_proj``, ``ff.net.0.proj`` ...):
    they are what a LoRA on the denoiser adapts.
    """
    if cls == "UNet2DConditionModel":
        widths, _, largest = _unet_levels(c)
        cross = _per_block(c.raw("cross_attention_dim", 1280), 1, "cross_attention_dim", c)[0] \
            if not isinstance(c.raw("cross_attention_dim"), list) else \
            c.raw("cross_attention_dim")[0]
        groups: dict[tuple[str, int, int], int] = {}
        for ch in widths:
            for name, fin, fout in (("to_q", ch, ch), ("to_k", ch, ch), ("to_v", ch, ch),
                                    ("to_out.0", ch, ch), ("to_q", ch, ch),
                                    ("to_k", cross, ch), ("to_v", cross, ch),
                                    ("to_out.0", ch, ch), ("ff.net.0.proj", ch, 8 * ch),
                                    ("ff.net.2", 4 * ch, ch)):
                groups[(name, fin, fout)] = groups.get((name, fin, fout), 0) + 1
        lin = tuple(LinearGroup(n, i, o, k) for (n, i, o), k in groups.items())
        return 0, largest, lin, len(widths)
    hd = c.raw("attention_head_dim")
    heads = c.raw("num_attention_heads")
    if not (isinstance(hd, int) and isinstance(heads, int)):
        return 0, 0, (), 0
    d = hd * heads
    if cls == "FluxTransformer2DModel":
        n2 = c.int("num_layers", default=19, lo=0, limit="layers")
        n1 = c.int("num_single_layers", default=38, lo=0, limit="layers")
        parts = [("to_q", d, d, n2 + n1), ("to_k", d, d, n2 + n1), ("to_v", d, d, n2 + n1),
                 ("to_out.0", d, d, n2), ("add_q_proj", d, d, n2), ("add_k_proj", d, d, n2),
                 ("add_v_proj", d, d, n2), ("to_add_out", d, d, n2),
                 ("ff.net.0.proj", d, 4 * d, n2), ("ff.net.2", 4 * d, d, n2),
                 ("ff_context.net.0.proj", d, 4 * d, n2), ("ff_context.net.2", 4 * d, d, n2),
                 ("proj_mlp", d, 4 * d, n1), ("proj_out", 5 * d, d, n1)]
        return 4 * d, 5 * d * d, tuple(g for g in (_lg(*p) for p in parts) if g), n2 + n1
    if cls in ("SD3Transformer2DModel", "QwenImageTransformer2DModel"):
        n = c.int("num_layers", limit="layers")
        ctx = n - 1 if cls == "SD3Transformer2DModel" else n  # SD3's last block: context only
        dual = len(c.int_list("dual_attention_layers"))
        txt_mlp = "ff_context" if cls == "SD3Transformer2DModel" else "txt_mlp"
        img_mlp = "ff" if cls == "SD3Transformer2DModel" else "img_mlp"
        parts = [("to_q", d, d, n + dual), ("to_k", d, d, n + dual), ("to_v", d, d, n + dual),
                 ("to_out.0", d, d, n + dual), ("add_q_proj", d, d, n),
                 ("add_k_proj", d, d, n), ("add_v_proj", d, d, n), ("to_add_out", d, d, ctx),
                 (f"{img_mlp}.net.0.proj", d, 4 * d, n), (f"{img_mlp}.net.2", 4 * d, d, n),
                 (f"{txt_mlp}.net.0.proj", d, 4 * d, ctx), (f"{txt_mlp}.net.2", 4 * d, d, ctx)]
        largest = 4 * d * d
        pos_max = c.opt_int("pos_embed_max_size", limit="hidden")
        if pos_max:  # SD3's patch embedding holds its position table (pos_max^2 x d)
            largest = max(largest, pos_max * pos_max * d)
        return 4 * d, largest, tuple(g for g in (_lg(*p) for p in parts) if g), n
    from whichgpu.models.diffusion import dits as diffusion_dits

    if cls in diffusion_dits.FORMULAS:
        return diffusion_dits.FORMULAS[cls][1](c)
    if cls == "WanTransformer3DModel":
        n = c.int("num_layers", default=40, limit="layers")
        ffn = c.int("ffn_dim", default=13824, limit="intermediate")
        # leaf names as PEFT targets match them (attn1: self, attn2: cross-attention), so a
        # 'to_out.0' target finds both attentions' output projections
        parts = [("to_q", d, d, 2 * n), ("to_k", d, d, 2 * n), ("to_v", d, d, 2 * n),
                 ("to_out.0", d, d, 2 * n), ("ffn.net.0.proj", d, ffn, n),
                 ("ffn.net.2", ffn, d, n)]
        return ffn, d * ffn, tuple(g for g in (_lg(*p) for p in parts) if g), n
    return 4 * d, 4 * d * d, (), 0


def encoder_largest_module(cls: str, c: ConfigReader) -> int:
    """A text encoder's biggest module: its token embedding (vocabulary x width)."""
    width = c.raw("d_model", c.raw("hidden_size"))
    vocab = c.raw("vocab_size")
    if isinstance(c.raw("text_config"), dict):
        t = c.data["text_config"]
        width, vocab = t.get("hidden_size", width), t.get("vocab_size", vocab)
    if isinstance(width, int) and isinstance(vocab, int):
        return width * vocab
    return 0


# ---------------------------------------------------------------------------- per class

def _kind(cls: str) -> str:
    low = cls.lower()
    if "clip" in low:
        return "clip"
    if "t5" in low:
        return "t5"
    if "unet" in low:
        return "unet"
    if "autoencoder" in low or "vae" in low:
        return "vae"
    if "flux" in low or "sd3" in low or "qwenimage" in low or "hidream" in low \
            or "hunyuanvideo" in low:
        return "mmdit"  # joint attention over image (or video) and text tokens
    if "transformer" in low:
        return "dit"
    return "llm"


def component_params(cls: str, cfg: ConfigReader) -> int | None:
    """Parameters of one pipeline component from its config, or None for a class we do not
    model."""
    formulas: dict[str, Callable[[], int]] = {
        "CLIPTextModel": lambda: clip_text_params(cfg, False),
        "CLIPTextModelWithProjection": lambda: clip_text_params(cfg, True),
        "T5EncoderModel": lambda: t5_encoder_params(cfg, False),
        "UMT5EncoderModel": lambda: t5_encoder_params(cfg, True),
        "FluxTransformer2DModel": lambda: flux_params(cfg),
        "SD3Transformer2DModel": lambda: sd3_params(cfg),
        "QwenImageTransformer2DModel": lambda: qwen_image_params(cfg),
        "WanTransformer3DModel": lambda: wan_params(cfg),
        "UNet2DConditionModel": lambda: unet_params(cfg),
        "AutoencoderKL": lambda: vae_kl_params(cfg),
        "Qwen2_5_VLForConditionalGeneration": lambda: qwen25_vl_params(cfg, cfg.origin),
    }
    if cls in formulas:
        return formulas[cls]()
    from whichgpu.models.diffusion import dits as diffusion_dits
    from whichgpu.models.diffusion import vaes as diffusion_vaes

    if cls in diffusion_dits.FORMULAS:
        return diffusion_dits.FORMULAS[cls][0](cfg)
    if cls in diffusion_vaes.FORMULAS:
        return diffusion_vaes.FORMULAS[cls](cfg)
    if cls.endswith(("ForCausalLM", "ForConditionalGeneration")) or cls in _BARE_DECODERS:
        from whichgpu.models.config_parse import parse_config

        spec = parse_config(cfg.data, origin=cfg.origin)
        if cls in _BARE_DECODERS and not spec.tie_word_embeddings:
            # LlamaModel / MistralModel: the decoder without its LM head, as a text encoder
            return spec.params_total - spec.vocab_size * spec.hidden_size
        return spec.params_total
    return None


@cache
def _pipeline_defaults() -> tuple[dict[str, dict], dict[str, str]]:
    from whichgpu.parse_cache import cached_toml

    data = cached_toml("whichgpu.models", "data/pipelines.toml")
    return data["pipeline"], data["sources"]


def pipeline_source(key: str) -> str:
    return _pipeline_defaults()[1].get(key, key)


# ---------------------------------------------------------------------------- entry point

def parse_pipeline(read: Reader, *, origin: str, source: str, name: str,
                   hub_id: str | None = None, local_folder: Path | None = None,
                   recorded: Mapping[str, Mapping[str, Any]] | None = None,
                   overrides: Mapping[str, Any] | None = None) -> ModelSpec:
    """A diffusion ModelSpec from ``model_index.json`` and the components' configs.

    ``read(relpath)`` returns a parsed JSON file of the pipeline or None. ``recorded`` gives
    counts (``{"params": n, "source": "..."}``) for components whose class has no formula.
    """
    index_origin = f"{origin}/model_index.json"
    index = ConfigReader(read("model_index.json"), index_origin)
    cls = index.str("_class_name")
    defaults, _ = _pipeline_defaults()
    if cls not in defaults:
        raise InputError(f"{index_origin}: pipeline {cls!r} is not supported; supported "
                         f"pipelines: {', '.join(sorted(defaults))}")
    run = dict(defaults[cls])
    run.update(overrides or {})
    comps: list[ComponentSpec] = []
    notes: list[str] = []
    cfgs: dict[str, ConfigReader] = {}
    for key, value in index.data.items():
        if key.startswith("_") or key in _SKIP:
            continue
        if not (isinstance(value, list) and len(value) == 2):
            continue
        lib, ccls = value
        if ccls is None or lib is None:
            continue
        rel = f"{key}/config.json"
        raw = read(rel)
        if raw is None:
            if recorded and key in recorded:
                raw = {}
            else:
                raise DataError(f"{origin}/{rel}", f"config of component {key!r} ({ccls}) is "
                                "missing")
        cfg = ConfigReader(raw, f"{origin}/{rel}")
        cfgs[key] = cfg
        params = None
        ckpt_bytes = None
        if local_folder is not None:
            from whichgpu.models.safetensors_local import checkpoint_from_folder

            ck = checkpoint_from_folder(local_folder / key)
            if ck is not None:
                params = sum(ck.params_by_dtype.values())
                ckpt_bytes = ck.total_bytes
        if params is None and recorded and key in recorded:
            params = int(recorded[key]["params"])
            notes.append(f"{key} ({ccls}): {params / 1e9:.2f}B parameters as recorded "
                         f"({recorded[key].get('source', 'preset index')})")
        if params is None:
            params = component_params(str(ccls), cfg)
        if params is None:
            notes.append(f"{key} ({ccls}): no parameter formula for this class; not counted")
            params = 0
        dtype = _dtype(cfg)
        kind = _kind(str(ccls))
        layers = _blocks(cfg)
        ffn, largest = 0, 0
        linears: tuple[LinearGroup, ...] = ()
        if kind in ("unet", "dit", "mmdit"):
            ffn, largest, linears, blocks = denoiser_shapes(str(ccls), cfg)
            layers = blocks or layers
        elif kind == "vae":
            chans = cfg.int_list("block_out_channels", lo=1) if cfg.has(
                "block_out_channels") else []
            top = max(chans) if chans else 4 * cfg.raw("base_dim", 96) if isinstance(
                cfg.raw("base_dim", 96), int) else 384
            # a 3x3 (video VAEs: 3x3x3) convolution at the widest level
            largest = (27 if "Video" in str(ccls) else 9) * top * top
        else:
            largest = encoder_largest_module(str(ccls), cfg)
        comps.append(ComponentSpec(
            name=key, kind=kind, params=params, native_dtype=dtype,
            num_layers=layers, hidden_size=_width(cfg),
            num_heads=int(cfg.raw("num_attention_heads", cfg.raw("num_heads", 0)) or 0)
            if not isinstance(cfg.raw("num_attention_heads"), list) else 0,
            max_tokens=_max_tokens(str(ccls), key, run),
            checkpoint_bytes=ckpt_bytes, ffn_dim=ffn,
            largest_module_params=min(largest, params) if params else largest,
            linears=linears))
    den = next((k for k in _DENOISERS if k in cfgs), None)
    if den is None:
        raise DataError(index_origin, "no transformer or unet component")
    vae_name = next((c.name for c in comps if c.kind == "vae"), None)
    dcfg = cfgs[den]
    vcfg = cfgs.get(vae_name) if vae_name else None
    latent, scale, tcomp = _vae_geometry(vcfg)
    patch, tpatch = _patch(dcfg, latent)
    is_video = "Wan" in cls or "3D" in str(index.raw(den, [None, ""])[1])
    if not is_video:
        tcomp = 1
    total = sum(c.params for c in comps)
    idle = 0
    if "transformer_2" in cfgs:
        idle = next(c.params for c in comps if c.name == "transformer_2")
        notes.append("two expert transformers (high-noise and low-noise): one runs at a time; "
                     "active parameters count one of them")
    res = run.get("default_resolution", [1024, 1024])
    vae_frames, vae_tile, vae_cache = _vae_decoding(vcfg, is_video)
    vae_per_byte, vae_all_frames = _vae_working_set(vcfg, is_video)
    spec = DiffusionSpec(
        pipeline=cls, denoiser=den, components=tuple(comps), is_video=is_video,
        vae_scale_factor=scale, temporal_compression=tcomp, latent_channels=latent,
        patch_size=patch, temporal_patch_size=tpatch, text_tokens=int(run["text_tokens"]),
        guidance_distilled=bool(run["guidance_distilled"]),
        default_steps=int(run["default_steps"]), default_resolution=(int(res[0]), int(res[1])),
        default_frames=int(run.get("default_frames", 1)), vae_dtype=run.get("vae_dtype"),
        reference_images=int(run.get("reference_images", 0)),
        vae_decode_frames=vae_frames, vae_tile=vae_tile, vae_cache_channels=vae_cache,
        vae_decode_bytes_per_dtype_byte=vae_per_byte, vae_decodes_all_frames=vae_all_frames)
    notes.append(f"run-time defaults from {pipeline_source(str(run['source']))}")
    den_comp = next(c for c in comps if c.name == den)
    return ModelSpec(
        id=hub_id or origin, name=name, family="diffusion", architecture=cls, source=source,
        params=ParamCounts(other=total, active=total - idle), hidden_size=den_comp.hidden_size,
        num_layers=den_comp.num_layers, native_dtype=den_comp.native_dtype, diffusion=spec,
        hub_id=hub_id, notes=tuple(notes))


def _dtype(cfg: ConfigReader) -> str:
    raw = cfg.raw("torch_dtype") or cfg.raw("dtype")
    if isinstance(raw, str):
        from whichgpu.models.config_parse import _DTYPES

        return _DTYPES.get(raw.lower(), raw.lower())
    return "bf16"


def _max_tokens(cls: str, key: str, run: Mapping[str, Any]) -> int:
    if "CLIP" in cls:
        return 77
    if "T5" in cls or cls.endswith(("ForCausalLM", "ForConditionalGeneration")) or "VL" in cls \
            or cls in _BARE_DECODERS:
        return int(run.get("text_tokens", 77))
    return 0


def _vae_decoding(v: ConfigReader | None, is_video: bool,
                  ) -> tuple[int | None, int | None, float]:
    """How a video pipeline's VAE decodes, by its class: (frames at once, tile side, cached
    channels per output pixel)."""
    from whichgpu.models.diffusion.vaes import video_vae_decoding, wan_cache_channels

    if v is None or not is_video:
        return None, None, 0.0
    frames, tile = video_vae_decoding(v.raw("_class_name"))
    cache = wan_cache_channels(v) if v.raw("_class_name") == "AutoencoderKLWan" else 0.0
    return frames, tile, cache


def _vae_working_set(v: ConfigReader | None, is_video: bool) -> tuple[float | None, bool]:
    """A video VAE class's own decode working set, where it has one (see
    ``vaes.VAE_DECODE_WORKING_SET``)."""
    from whichgpu.models.diffusion.vaes import vae_decode_working_set

    if v is None or not is_video:
        return None, False
    return vae_decode_working_set(v.raw("_class_name"))


def _vae_geometry(v: ConfigReader | None) -> tuple[int, int, int]:
    """(latent channels, spatial scale, temporal compression) of the pipeline's VAE."""
    if v is None:
        return 4, 8, 1
    if v.raw("_class_name") == "AutoencoderKLLTXVideo":
        from whichgpu.models.diffusion.vaes import ltx_video_vae_geometry

        return ltx_video_vae_geometry(v)
    if v.has("temporal_compression_ratio"):  # HunyuanVideo's causal 3D VAE
        return (v.int("latent_channels", default=16, limit="hidden"),
                v.int("spatial_compression_ratio", default=8, limit="hidden"),
                v.int("temporal_compression_ratio", limit="hidden"))
    if v.has("z_dim"):  # Wan / Qwen-Image causal 3D VAEs
        lat = v.int("z_dim", limit="hidden")
        down = v.raw("temperal_downsample", [False, True, True])
        spatial = v.int("scale_factor_spatial", default=2 ** len(down), limit="hidden")
        temporal = v.int("scale_factor_temporal", default=2 ** sum(bool(x) for x in down),
                         limit="hidden")
        return lat, spatial, temporal
    chans = v.int_list("block_out_channels", lo=1) or [128, 256, 512, 512]
    return v.int("latent_channels", default=4, limit="hidden"), 2 ** (len(chans) - 1), 1


def _patch(d: ConfigReader, latent: int) -> tuple[int, int]:
    """Spatial and temporal patch of the denoiser; packed 2x2 latents count as patch 2."""
    raw = d.raw("patch_size", 1)
    if isinstance(raw, list):
        return int(raw[-1]), int(raw[0])
    cin = d.raw("in_channels", latent)
    if isinstance(cin, int) and cin == 4 * latent and raw == 1:
        return 2, 1  # FLUX packs 2x2 latent patches into 64 channels (FLUX.2: 128)
    pt = d.raw("patch_size_t", 1)
    return int(raw), int(pt) if isinstance(pt, int) and pt > 0 else 1


def _blocks(cfg) -> int:
    """Transformer blocks that attend: dual-stream plus single-stream blocks (FLUX, HiDream)."""
    layers = cfg.raw("num_layers", cfg.raw("num_hidden_layers", 0)) or 0
    single = cfg.raw("num_single_layers", 0) or 0
    try:
        return int(layers) + int(single)
    except (TypeError, ValueError):
        return 0


def _width(cfg) -> int:
    """Hidden width: hidden_size / d_model, else heads x head_dim (DiTs), else the first UNet
    block's channels."""
    for key in ("hidden_size", "d_model", "inner_dim"):
        v = cfg.raw(key)
        if isinstance(v, int) and v > 0:
            return v
    heads, head_dim = cfg.raw("num_attention_heads"), cfg.raw("attention_head_dim")
    if isinstance(heads, int) and isinstance(head_dim, int):
        return heads * head_dim
    channels = cfg.raw("block_out_channels")
    if isinstance(channels, list) and channels and isinstance(channels[0], int):
        return channels[0]
    return 0
