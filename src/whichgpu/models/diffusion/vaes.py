"""Parameter counts and latent geometry of the 2025-26 video and image autoencoders:
``AutoencoderKLFlux2`` (FLUX.2), ``AutoencoderKLHunyuanVideo`` and ``AutoencoderKLLTXVideo``.

The formulas follow the modules the diffusers classes build (diffusers
``src/diffusers/models/autoencoders/autoencoder_kl_flux2.py``, ``autoencoder_kl_hunyuan_video.py``,
``autoencoder_kl_ltx.py`` at commit 58eb52c0); counts include the persistent buffers a
checkpoint stores (FLUX.2's batch-norm statistics, LTX's latent mean and std).
"""

from __future__ import annotations

from typing import Any

from whichgpu.errors import DataError
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.diffusion.blocks import lin as _lin
from whichgpu.models.diffusion.blocks import resnet as _resnet


def vae_kl_params(c: ConfigReader, k: int = 9) -> int:
    """AutoencoderKL: 2D ResNet encoder/decoder with one attention block in each middle.

    ``k`` is the convolutions' kernel volume: 27 for the 3x3x3 causal convolutions of
    AutoencoderKLHunyuanVideo, which otherwise has the same layout.
    """
    cin = c.int("in_channels", default=3, limit="hidden")
    cout = c.int("out_channels", default=3, limit="hidden")
    chans = c.int_list("block_out_channels", lo=1) or [64]
    lpb = c.int("layers_per_block", default=1, limit="layers")
    lat = c.int("latent_channels", default=4, limit="hidden")
    attn = c.bool("mid_block_add_attention", default=True)
    nb = len(chans)

    def mid(ch: int) -> int:
        return 2 * _resnet(ch, ch, None, k) + (2 * ch + 4 * _lin(ch, ch) if attn else 0)

    enc = cin * chans[0] * k + chans[0]
    out = chans[0]
    for i in range(nb):
        prev, out = out, chans[i]
        for j in range(lpb):
            enc += _resnet(prev if j == 0 else out, out, None, k)
        if i != nb - 1:
            enc += out * out * k + out
    enc += mid(chans[-1]) + 2 * chans[-1] + chans[-1] * 2 * lat * k + 2 * lat
    dec = lat * chans[-1] * k + chans[-1] + mid(chans[-1])
    r = chans[::-1]
    out = r[0]
    for i in range(nb):
        prev, out = out, r[i]
        for j in range(lpb + 1):
            dec += _resnet(prev if j == 0 else out, out, None, k)
        if i != nb - 1:
            dec += out * out * k + out
    dec += 2 * chans[0] + chans[0] * cout * k + cout
    total = enc + dec
    if c.bool("use_quant_conv", default=True):
        total += _lin(2 * lat, 2 * lat)
    if c.bool("use_post_quant_conv", default=True):
        total += _lin(lat, lat)
    return total


# ---------------------------------------------------------------------------- block shapes


def flux2_vae_params(c: ConfigReader) -> int:
    """AutoencoderKLFlux2: the AutoencoderKL layout (32 latent channels) plus a BatchNorm over the
    2x2-patchified latents, whose running mean and variance (and step counter) it stores."""
    lat = c.int("latent_channels", default=32, limit="hidden")
    patch = c.int_list("patch_size", lo=1) or [2, 2]
    packed = lat * patch[0] * patch[-1]
    return vae_kl_params(c) + 2 * packed + 1


def hunyuan_video_vae_params(c: ConfigReader) -> int:
    """AutoencoderKLHunyuanVideo: the AutoencoderKL layout with 3x3x3 causal convolutions."""
    return vae_kl_params(c, k=27)


def _per_block(c: ConfigReader, key: str, n: int, default: list[Any]) -> list[Any]:
    raw = c.raw(key, default)
    if not isinstance(raw, list) or len(raw) != n:
        raise DataError(c.origin, f"expected a list of {n} entries", field=c.prefix + key)
    return list(raw)


def _conv(cin: int, cout: int, k: int = 27) -> int:
    return cin * cout * k + cout


def _ltx_resnet(cin: int, cout: int, *, noise: bool = False, temb: bool = False) -> int:
    """LTXVideoResnetBlock3d: two 3x3x3 convolutions (RMS norms without weights); a LayerNorm and
    1x1x1 shortcut when the width changes; noise scales and a 4 x width scale-shift table when
    the decoder injects noise or is timestep-conditioned."""
    p = _conv(cin, cout) + _conv(cout, cout)
    if cin != cout:
        p += 2 * cin + _conv(cin, cout, 1)
    if noise:
        p += 2 * cin
    if temb:
        p += 4 * cin
    return p


def _pixart_time_embedder(dim: int) -> int:
    """PixArtAlphaCombinedTimestepSizeEmbeddings(dim, 0): a TimestepEmbedding from 256."""
    return 256 * dim + dim + dim * dim + dim


def ltx_video_vae_params(c: ConfigReader) -> int:
    """AutoencoderKLLTXVideo, for every published layout (0.9.0, 0.9.1, 0.9.5/0.9.7/0.9.8):
    a causal 3D ResNet encoder over 4x4-patchified frames and a decoder that upsamples by
    depth-to-space (each upsampler's convolution multiplies the width by 8 / upsample_factor)."""
    cin = c.int("in_channels", default=3, limit="hidden")
    cout = c.int("out_channels", default=3, limit="hidden")
    lat = c.int("latent_channels", default=128, limit="hidden")
    patch = c.int("patch_size", default=4, limit="hidden")
    pt = c.int("patch_size_t", default=1, limit="hidden")
    if pt != 1:
        raise DataError(c.origin, "only 1 is modelled", field=c.prefix + "patch_size_t")
    chans = c.int_list("block_out_channels", lo=1) or [128, 256, 512, 512]
    nb = len(chans)
    downs = c.str_list("down_block_types") or ["LTXVideoDownBlock3D"] * (nb if nb == 4 else 4)
    v095 = downs[-1] == "LTXVideo095DownBlock3D"
    n_down = nb - (1 if v095 else 0)
    if len(downs) != n_down:
        raise DataError(c.origin, f"expected {n_down} down block types",
                        field=c.prefix + "down_block_types")
    lpb = _per_block(c, "layers_per_block", n_down + 1, [4, 3, 3, 3, 4])
    scaling = _per_block(c, "spatio_temporal_scaling", n_down, [True, True, True, False])
    dtypes = _per_block(c, "downsample_type", n_down, ["conv"] * n_down)
    # encoder
    total = _conv(cin * patch * patch, chans[0])
    out = chans[0]
    for i in range(n_down):
        inp = out
        out = chans[i + 1] if (v095 or i + 1 < n_down) else chans[i]
        total += sum(_ltx_resnet(inp, inp) for _ in range(lpb[i]))
        if scaling[i]:
            if dtypes[i] == "conv":
                total += _conv(inp, inp)
            else:
                stride = {"spatial": 4, "temporal": 2, "spatiotemporal": 8}.get(dtypes[i])
                if stride is None:
                    raise DataError(c.origin, f"unknown downsample type {dtypes[i]!r}",
                                    field=c.prefix + "downsample_type")
                total += _conv(inp, out // stride)
        if not v095 and inp != out:
            total += _ltx_resnet(inp, out)
    total += sum(_ltx_resnet(out, out) for _ in range(lpb[-1]))  # mid block
    total += _conv(out, lat + 1)  # mean and one shared log-variance channel
    # decoder
    dchans = c.int_list("decoder_block_out_channels", lo=1) or list(chans)
    nd = len(dchans)
    dlpb = _per_block(c, "decoder_layers_per_block", nd + 1, list(lpb))[::-1]
    dscale = _per_block(c, "decoder_spatio_temporal_scaling", nd, list(scaling))[::-1]
    noise = _per_block(c, "decoder_inject_noise", nd + 1, [False] * (nd + 1))[::-1]
    factor = _per_block(c, "upsample_factor", nd, [1] * nd)[::-1]
    temb = c.bool("timestep_conditioning", default=False)
    rch = dchans[::-1]
    width = rch[0]
    total += _conv(lat, width)
    if temb:
        total += _pixart_time_embedder(width * 4)
    total += sum(_ltx_resnet(width, width, noise=noise[0], temb=temb) for _ in range(dlpb[0]))
    for i in range(nd):
        inp = width // factor[i]
        width = rch[i] // factor[i]
        if temb:
            total += _pixart_time_embedder(inp * 4)
        if inp != width:
            total += _ltx_resnet(inp, width, noise=noise[i + 1], temb=temb)
        if dscale[i]:
            up_in = width * factor[i]
            total += _conv(up_in, up_in * 8 // factor[i])
        total += sum(_ltx_resnet(width, width, noise=noise[i + 1], temb=temb)
                     for _ in range(dlpb[i + 1]))
    total += _conv(width, cout * patch * patch)
    if temb:  # timestep_scale_multiplier, the output time embedder and scale-shift table
        total += 1 + _pixart_time_embedder(width * 2) + 2 * width
    return total + 2 * lat  # latents_mean, latents_std (persistent buffers)


def ltx_video_vae_geometry(c: ConfigReader) -> tuple[int, int, int]:
    """(latent channels, spatial, temporal compression) as AutoencoderKLLTXVideo derives them:
    patch x 2^(scaling stages), and 2^(scaling stages) in time when not given."""
    lat = c.int("latent_channels", default=128, limit="hidden")
    patch = c.int("patch_size", default=4, limit="hidden")
    pt = c.int("patch_size_t", default=1, limit="hidden")
    stages = sum(bool(x) for x in (c.raw("spatio_temporal_scaling")
                                   or [True, True, True, False]))
    spatial = c.opt_int("spatial_compression_ratio", limit="hidden") or patch * 2 ** stages
    temporal = c.opt_int("temporal_compression_ratio", limit="hidden") or pt * 2 ** stages
    return lat, spatial, temporal


FORMULAS = {
    "AutoencoderKLFlux2": flux2_vae_params,
    "AutoencoderKLHunyuanVideo": hunyuan_video_vae_params,
    "AutoencoderKLLTXVideo": ltx_video_vae_params,
}


# How diffusers' video VAEs decode, by class (code defaults, not in config.json): (sample frames
# decoded at once without spatial tiling, tile side in pixels when tiled). Classes not listed
# decode one latent frame at a time (AutoencoderKLWan: a loop over latent frames with a
# feature cache) and tile at 512.
VIDEO_VAE_DECODING: dict[str, tuple[int, int]] = {
    # diffusers models/autoencoders/autoencoder_kl_hunyuan_video.py: use_framewise_decoding is
    # on by default and _temporal_tiled_decode decodes tile_sample_min_num_frames // 4 + 1 =
    # 5 latent frames (17 frames) per pass; enable_tiling tiles 256 x 256
    # (tile_sample_min_height / width)
    "AutoencoderKLHunyuanVideo": (17, 256),
}
VIDEO_VAE_DECODING_SOURCE = ("https://github.com/huggingface/diffusers/blob/main/src/diffusers/"
                             "models/autoencoders/autoencoder_kl_hunyuan_video.py")


def video_vae_decoding(cls: str | None) -> tuple[int | None, int | None]:
    """(frames decoded at once, tile side) of a VAE class; (None, None) where not listed."""
    return VIDEO_VAE_DECODING.get(str(cls), (None, None))


# Video VAEs whose decoder is unlike the SD-style one ``vae_decode_bytes_per_pixel`` was fitted
# on, with ComfyUI's own estimate of a decode's working memory (comfy/sd.py VAE.__init__,
# memory_used_decode, the figure ComfyUI budgets the decode with): bytes per output
# pixel-frame per byte of the VAE's working dtype, and whether diffusers decodes every frame in
# one pass.
VAE_DECODE_WORKING_SET: dict[str, tuple[float, bool]] = {
    # AutoencoderKLLTXVideo: 900 x latent frames x height x width x (8 x 8 x 8) x dtype size,
    # spread over the 8 x 32 x 32 output pixel-frames of a latent position (56.25 bytes per
    # byte of dtype; its decoder runs at 1/4 of the output's side until the final
    # depth-to-space). diffusers' AutoencoderKLLTXVideo has use_framewise_decoding off by
    # default, so the whole clip decodes at once.
    "AutoencoderKLLTXVideo": (900 * 8 * 8 * 8 / (8 * 32 * 32), True),
    # AutoencoderKLHunyuanVideo (ComfyUI's 3D AutoencoderKL, time_compress 4): 1500 x latent
    # frames x height x width x (4 x 8 x 8) x dtype size over the 4 x 8 x 8 output
    # pixel-frames of a latent position; diffusers decodes 17 frames a pass (above)
    "AutoencoderKLHunyuanVideo": (1500 * 4 * 8 * 8 / (4 * 8 * 8), False),
}
VAE_DECODE_WORKING_SET_SOURCE = (
    "https://github.com/comfyanonymous/ComfyUI/blob/master/comfy/sd.py (VAE.__init__, "
    "memory_used_decode per VAE class); https://github.com/huggingface/diffusers/blob/main/src/"
    "diffusers/models/autoencoders/autoencoder_kl_ltx.py (use_framewise_decoding = False)")


def vae_decode_working_set(cls: str | None) -> tuple[float | None, bool]:
    """(bytes per output pixel-frame per dtype byte, decodes every frame at once) of a VAE
    class; (None, False) where the fitted SD-style constant applies."""
    return VAE_DECODE_WORKING_SET.get(str(cls), (None, False))


WAN_CACHE_SOURCE = ("https://github.com/huggingface/diffusers/blob/main/src/diffusers/models/"
                    "autoencoders/autoencoder_kl_wan.py (WanDecoder3d, CACHE_T = 2; decode() runs "
                    "the decoder one latent frame at a time with feat_cache)")


def wan_cache_channels(c) -> float:
    """Channels of cached input per output pixel in AutoencoderKLWan's decoder (Wan 2.1 and
    the VAEs built like it): every WanCausalConv3d keeps its input's last CACHE_T = 2 frames
    between latent frames, so the cache holds, per output pixel, the sum over the decoder's
    causal convolutions of their input channels times the share of the output's pixels at
    their level (1/4 per 2x spatial upsample below the output). The decoder: conv_in (z_dim)
    and the mid block's two residual blocks (2 convolutions each) at the latent level; per
    up block i of len(dim_mult), num_res_blocks + 1 residual blocks (in_dim, out_dim, then
    out_dim twice per further block; in_dim halved after the first up block) and, where it
    upsamples in time, the upsampler's time_conv (out_dim); conv_out at the output level.
    The residual Wan 2.2 VAE (is_residual) is built otherwise: 0, not modelled."""
    if c.raw("is_residual", False):
        return 0.0
    dim = c.int("decoder_base_dim", default=c.int("base_dim", default=96, limit="hidden"),
                limit="hidden") if c.raw("decoder_base_dim") else c.int(
        "base_dim", default=96, limit="hidden")
    mult = list(c.raw("dim_mult", [1, 2, 4, 4]))
    res = c.int("num_res_blocks", default=2, limit="hidden")
    z = c.int("z_dim", default=16, limit="hidden")
    up_time = list(c.raw("temperal_downsample", [False, True, True]))[::-1]
    dims = [dim * u for u in [mult[-1]] + mult[::-1]]
    n = len(mult)
    total = (z + 4 * dims[0]) / 4 ** (n - 1)  # conv_in and the mid block, latent level
    for i in range(n):
        share = 1 / 4 ** (n - 1 - i)
        in_dim = dims[i] // 2 if i > 0 else dims[i]
        out = dims[i + 1]
        convs = in_dim + out + 2 * res * out
        if i != n - 1 and i < len(up_time) and up_time[i]:
            convs += out  # the upsampler's time_conv
        total += convs * share
    return total + dims[-1]  # conv_out at the output level
