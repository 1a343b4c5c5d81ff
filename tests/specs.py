"""Hand-built ModelSpecs for estimator tests (independent of the config parsers)."""

from __future__ import annotations

from whichgpu.models.spec import LayerSpec, LinearGroup, ModelSpec, MoESpec, ParamCounts


def llama_like(*, name="llama-like", layers=32, hidden=4096, heads=32, kv_heads=8,
               intermediate=14336, vocab=128256, tied=False, max_context=131072,
               head_dim=None, sliding=None, moe: MoESpec | None = None) -> ModelSpec:
    """A Llama-architecture decoder (GQA, gated MLP, RMSNorm), counted exactly."""
    d = head_dim or hidden // heads
    q, kv, o = hidden * heads * d, 2 * hidden * kv_heads * d, heads * d * hidden
    attention = (q + kv + o) * layers
    linears = [LinearGroup("q_proj", hidden, heads * d, layers),
               LinearGroup("k_proj", hidden, kv_heads * d, layers),
               LinearGroup("v_proj", hidden, kv_heads * d, layers),
               LinearGroup("o_proj", heads * d, hidden, layers)]
    if moe:
        e, ie = moe.num_experts, moe.expert_intermediate_size
        experts = 3 * hidden * ie * e * layers
        router = hidden * e * layers
        mlp = 0
        linears += [LinearGroup(n, i, o_, layers * e, expert=True) for n, i, o_ in
                    (("gate_proj", hidden, ie), ("up_proj", hidden, ie), ("down_proj", ie, hidden))]
        active_mlp = 3 * hidden * ie * moe.experts_per_token * layers
    else:
        experts = router = 0
        mlp = 3 * hidden * intermediate * layers
        linears += [LinearGroup("gate_proj", hidden, intermediate, layers),
                    LinearGroup("up_proj", hidden, intermediate, layers),
                    LinearGroup("down_proj", intermediate, hidden, layers)]
        active_mlp = mlp
    emb = vocab * hidden
    head = 0 if tied else vocab * hidden
    norms = (2 * layers + 1) * hidden
    active = emb + attention + active_mlp + router + head + norms
    layer_specs = tuple(
        LayerSpec("sliding" if sliding and i % 2 == 0 else "full",
                  sliding if sliding and i % 2 == 0 else None, kv_heads, d, d, moe is not None)
        for i in range(layers))
    return ModelSpec(
        id=name, name=name, family="decoder", architecture="llama", source="test",
        params=ParamCounts(embedding=emb, attention=attention, mlp=mlp, experts=experts,
                           router=router, lm_head=head, norms=norms, active=active),
        num_layers=layers, hidden_size=hidden, num_attention_heads=heads, num_kv_heads=kv_heads,
        head_dim=d, intermediate_size=intermediate, vocab_size=vocab, tie_word_embeddings=tied,
        max_context=max_context, layers=layer_specs, linears=tuple(linears), moe=moe)


LLAMA_31_8B = llama_like(name="llama-3.1-8b")
LLAMA_31_70B = llama_like(name="llama-3.1-70b", layers=80, hidden=8192, heads=64, kv_heads=8,
                          intermediate=28672)
LLAMA_2_7B = llama_like(name="llama-2-7b", layers=32, hidden=4096, heads=32, kv_heads=32,
                        intermediate=11008, vocab=32000, max_context=4096)


def flux_like(name="flux.1-dev", distilled=True, denoiser_params=11_901_408_320) -> ModelSpec:
    """A FLUX.1-style pipeline: CLIP-L + T5-XXL text encoders, 12B MMDiT, 16-channel VAE."""
    from whichgpu.models.spec import ComponentSpec, DiffusionSpec

    comps = (
        ComponentSpec("text_encoder", "clip", 123_060_480, "bf16", 12, 768, 12, 77),
        ComponentSpec("text_encoder_2", "t5", 4_762_310_656, "bf16", 24, 4096, 64, 512),
        ComponentSpec("transformer", "mmdit", denoiser_params, "bf16", 57, 3072, 24),
        ComponentSpec("vae", "vae", 83_819_683, "bf16", 0, 128, 0),
    )
    d = DiffusionSpec(pipeline="FluxPipeline", denoiser="transformer", components=comps,
                      vae_scale_factor=8, latent_channels=16, patch_size=2, text_tokens=512,
                      guidance_distilled=distilled, default_steps=28)
    total = sum(c.params for c in comps)
    return ModelSpec(id=name, name=name, family="diffusion", architecture="FluxPipeline",
                     source="test", params=ParamCounts(other=total, active=total), diffusion=d)


def sdxl_like() -> ModelSpec:
    from whichgpu.models.spec import ComponentSpec, DiffusionSpec

    comps = (
        ComponentSpec("text_encoder", "clip", 123_060_480, "fp16", 12, 768, 12, 77),
        ComponentSpec("text_encoder_2", "clip", 694_659_840, "fp16", 32, 1280, 20, 77),
        ComponentSpec("unet", "unet", 2_567_463_684, "fp16", 70, 320, 20),
        ComponentSpec("vae", "vae", 83_653_863, "fp16", 0, 128, 0),
    )
    d = DiffusionSpec(pipeline="StableDiffusionXLPipeline", denoiser="unet", components=comps,
                      vae_scale_factor=8, latent_channels=4, patch_size=1, text_tokens=77,
                      guidance_distilled=False, default_steps=30)
    total = sum(c.params for c in comps)
    return ModelSpec(id="sdxl", name="sdxl", family="diffusion",
                     architecture="StableDiffusionXLPipeline", source="test",
                     params=ParamCounts(other=total, active=total), native_dtype="fp16",
                     diffusion=d)
