"""Vision towers of multimodal wrappers, counted from their ``vision_config`` as transformers
builds them (weights and biases of every module), with the projector into the text model.

Each function returns (parameters, a short description). A tower whose ``model_type`` has no
formula here is refused by the caller, never counted as 0.
"""

from __future__ import annotations

from whichgpu.models.config_fields import ConfigReader


def _vit_block(h: int, inter: int, *, qkv_bias: bool = True, ln_bias: bool = True,
               gated: bool = False) -> int:
    """One pre-norm ViT block: q/k/v/o (with biases), a 2-layer MLP (or a gated 3-layer one
    without biases: Pixtral) and two norms."""
    attn = 4 * h * h + (4 * h if qkv_bias else 0)
    mlp = 3 * h * inter if gated else h * inter + inter + inter * h + h
    return attn + mlp + 2 * h * (2 if ln_bias else 1)


def siglip(v: ConfigReader, text_hidden: int) -> tuple[int, str]:
    """Gemma 3's SigLIP encoder (no pooling head) + mm_input_projection and mm_soft_emb_norm."""
    hv = v.int("hidden_size", default=768, limit="hidden")
    iv = v.int("intermediate_size", default=3072, limit="intermediate")
    nl = v.int("num_hidden_layers", default=12, limit="layers")
    patch = v.int("patch_size", default=16, limit="hidden")
    image = v.int("image_size", default=224, limit="hidden")
    ch = v.int("num_channels", default=3, limit="hidden")
    total = ch * patch * patch * hv + hv + (image // patch) ** 2 * hv
    total += nl * _vit_block(hv, iv) + 2 * hv
    total += hv * text_hidden + hv
    return total, "a SigLIP vision tower and projector"


def qwen35(v: ConfigReader, text_hidden: int) -> tuple[int, str]:
    """Qwen3.5's ViT (Qwen3_5VisionModel): a Conv3d patch embedding over temporal x spatial
    patches, learned position embeddings, ``depth`` blocks, and a patch merger (LayerNorm,
    two linears from hidden x merge^2 to ``out_hidden_size``). Deepstack mergers when listed."""
    hv = v.int("hidden_size", default=1152, limit="hidden")
    iv = v.int("intermediate_size", default=4304, limit="intermediate")
    depth = v.int("depth", default=27, limit="layers")
    patch = v.int("patch_size", default=16, limit="hidden")
    tp = v.int("temporal_patch_size", default=2, limit="hidden")
    ch = v.int("in_channels", default=3, limit="hidden")
    pos = v.int("num_position_embeddings", default=2304, limit="context")
    merge = v.int("spatial_merge_size", default=2, limit="hidden")
    out = v.int("out_hidden_size", default=text_hidden, limit="hidden")
    deepstack = len(v.int_list("deepstack_visual_indexes"))
    m = hv * merge * merge
    total = ch * tp * patch * patch * hv + hv + pos * hv + depth * _vit_block(hv, iv)
    merger = m * m + m + m * out + out
    total += 2 * hv + merger + deepstack * (2 * m + merger)
    return total, "the Qwen3.5 vision transformer and patch merger"


def llama4(v: ConfigReader, text_hidden: int) -> tuple[int, str]:
    """Llama 4's vision encoder (Llama4VisionModel): an unfolded linear patch embedding, a class
    token, position embeddings for (image/patch)^2 + 1 positions, pre/post LayerNorms, the
    encoder layers, the pixel-shuffle adapter MLP (no biases) and the projector into the text
    model (multi_modal_projector.linear_1)."""
    hv = v.int("hidden_size", default=1408, limit="hidden")
    iv = v.int("intermediate_size", default=5632, limit="intermediate")
    nl = v.int("num_hidden_layers", default=34, limit="layers")
    patch = v.int("patch_size", default=14, limit="hidden")
    image = v.int("image_size", default=336, limit="hidden")
    ch = v.int("num_channels", default=3, limit="hidden")
    ratio = v.float("pixel_shuffle_ratio", default=0.5)
    pin = v.int("projector_input_dim", default=4096, limit="hidden")
    pout = v.int("projector_output_dim", default=4096, limit="hidden")
    vout = v.int("vision_output_dim", default=4096, limit="hidden")
    bias = v.bool("multi_modal_projector_bias", default=False)
    shuffled = int(round(hv / (ratio * ratio)))
    total = ch * patch * patch * hv + hv + ((image // patch) ** 2 + 1) * hv + 4 * hv
    total += nl * _vit_block(hv, iv)
    total += shuffled * pin + pin * pout  # vision_adapter.mlp fc1, fc2 (bias=False)
    total += vout * text_hidden + (text_hidden if bias else 0)
    return total, "the Llama 4 vision encoder and projector"


def pixtral(v: ConfigReader, text_hidden: int, merge: int, bias: bool,
            feature_layers: int = 1) -> tuple[int, str]:
    """Mistral 3's Pixtral encoder (RMSNorms, gated MLPs, no biases) and Mistral3's projector:
    an RMSNorm, the patch merger (hidden x merge^2 -> hidden) and two linears."""
    hv = v.int("hidden_size", default=1024, limit="hidden")
    iv = v.int("intermediate_size", default=4096, limit="intermediate")
    nl = v.int("num_hidden_layers", default=24, limit="layers")
    patch = v.int("patch_size", default=14, limit="hidden")
    ch = v.int("num_channels", default=3, limit="hidden")
    total = ch * patch * patch * hv + hv + nl * _vit_block(hv, iv, qkv_bias=False,
                                                           ln_bias=False, gated=True)
    projector = hv + hv * merge * merge * hv
    projector += hv * feature_layers * text_hidden + text_hidden * text_hidden
    projector += 2 * text_hidden if bias else 0
    return total + projector, "the Pixtral vision encoder and projector"


def moonvit(v: ConfigReader, text_hidden: int) -> tuple[int, str]:
    """Kimi K2.5's MoonViT (transformers' kimi_k25 vision tower): a Conv2d patch embedding, a
    learned init_pos_emb_height x init_pos_emb_width position grid (the temporal embedding of
    ``divided_fixed`` is fixed, not learned), ``vt_num_hidden_layers`` ViT blocks, a final
    LayerNorm, and the patch-merger projector (LayerNorm, merge_h x merge_w x hidden square
    linear, then into the text model)."""
    hv = v.int("vt_hidden_size", default=1152, limit="hidden")
    iv = v.int("vt_intermediate_size", default=4304, limit="intermediate")
    nl = v.int("vt_num_hidden_layers", default=27, limit="layers")
    patch = v.int("patch_size", default=14, limit="hidden")
    grid = v.int("init_pos_emb_height", default=64, limit="hidden") * v.int(
        "init_pos_emb_width", default=64, limit="hidden")
    mm = v.int("mm_hidden_size", default=hv, limit="hidden")
    kernel = v.raw("merge_kernel_size", [2, 2])
    merge = int(kernel[0]) * int(kernel[1]) if isinstance(kernel, list) and len(kernel) == 2 \
        else 4
    if str(v.raw("pos_emb_type", "divided_fixed")) != "divided_fixed":
        from whichgpu.errors import DataError

        raise DataError(v.origin, f"pos_emb_type {v.raw('pos_emb_type')!r} is not modelled",
                        field=v.prefix + "pos_emb_type")
    total = 3 * patch * patch * hv + hv + grid * hv + nl * _vit_block(hv, iv) + 2 * hv
    m = mm * merge
    total += 2 * mm + m * m + m + m * text_hidden + text_hidden
    return total, "the MoonViT vision encoder and patch-merger projector"
