"""ModelSpec: what memory and speed estimates need to know about a model.

A ModelSpec is built from a preset, a config.json, a Hub id, a GGUF file, a diffusers
pipeline folder or a bare size. It records the exact architecture (GQA, explicit head_dim,
MLA, sliding windows, tied embeddings, MoE) and, where known, the checkpoint's exact bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Family = Literal["decoder", "encoder", "diffusion"]
# full: attends to the whole context; sliding: to the last ``window`` tokens; chunked (Llama 4):
# to the tokens of its own ``window``-sized chunk, so at most ``window`` cached tokens; linear:
# a linear-attention (Gated DeltaNet) or SSM (Mamba-2) layer with a constant state, no KV cache;
# none: a block without token mixing (Nemotron-H's MLP and MoE layers), nothing cached.
AttentionKind = Literal["full", "sliding", "chunked", "linear", "none"]


@dataclass(frozen=True)
class ParamCounts:
    """Parameters by component. ``active`` is what one token touches (MoE: top-k experts)."""

    embedding: int = 0  # token (and learned position) embeddings
    attention: int = 0  # q/k/v/o projections (or MLA projections), all layers, with biases
    mlp: int = 0  # dense (non-MoE) MLP layers
    experts: int = 0  # routed experts, all MoE layers
    shared_experts: int = 0
    router: int = 0
    lm_head: int = 0  # 0 when tied to the embedding
    norms: int = 0
    other: int = 0  # anything else (vision tower, MTP head, conv state ...)
    active: int = 0  # parameters a text token uses: MoE top-k experts only, no vision tower

    @property
    def total(self) -> int:
        return (self.embedding + self.attention + self.mlp + self.experts + self.shared_experts
                + self.router + self.lm_head + self.norms + self.other)

    def to_json(self) -> dict[str, int]:
        return {"embedding": self.embedding, "attention": self.attention, "mlp": self.mlp,
                "experts": self.experts, "shared_experts": self.shared_experts,
                "router": self.router, "lm_head": self.lm_head, "norms": self.norms,
                "other": self.other, "total": self.total, "active": self.active}


@dataclass(frozen=True)
class LayerSpec:
    """One decoder layer as the KV cache and the speed model see it."""

    attention: AttentionKind = "full"
    window: int | None = None  # tokens kept by a sliding-window layer
    kv_heads: int = 0  # KV heads of this layer (0 for linear/SSM layers)
    head_dim: int = 0  # K head dim
    v_head_dim: int = 0  # V head dim (differs from head_dim with MLA)
    moe: bool = False
    # linear-attention / SSM layers: elements of state one sequence holds, whatever its length
    # (convolution state over kernel-1 positions + the recurrent state matrix)
    state_elements: int = 0
    # of those, the elements the config asks to keep in float32 whatever the engine's dtype
    # (Qwen3.5 ``mamba_ssm_dtype``, Nemotron-H ``mamba_ssm_cache_dtype``: the recurrent state)
    state_fp32_elements: int = 0
    rope: bool = True  # False for Llama 4's no-RoPE (NoPE) global layers

    @property
    def state_bytes(self) -> int:
        """The state at 16 bits per element, the float32 part at 32 (vLLM / transformers)."""
        return 2 * self.state_elements + 2 * self.state_fp32_elements


@dataclass(frozen=True)
class LinearGroup:
    """Linear layers of one kind across the model, named as PEFT ``target_modules`` name them.

    LoRA of rank r on this group adds ``r * (in_features + out_features) * count`` parameters.
    """

    name: str  # q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, c_attn ...
    in_features: int
    out_features: int
    count: int  # instances in the whole model (layers x experts)
    expert: bool = False  # a routed-expert linear (only top-k active per token)
    bias: bool = False  # added by the models issue: the linear has a bias vector (out_features)

    @property
    def params(self) -> int:
        """Weight parameters only (what LoRA and weight quantization act on)."""
        return self.in_features * self.out_features * self.count

    @property
    def bias_params(self) -> int:
        """Bias parameters of the whole group (0 without a bias)."""
        return self.out_features * self.count if self.bias else 0


@dataclass(frozen=True)
class MoESpec:
    num_experts: int
    experts_per_token: int
    num_shared_experts: int = 0
    expert_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    moe_layers: int = 0
    dense_layers: int = 0  # leading dense layers (DeepSeek first_k_dense_replace)


@dataclass(frozen=True)
class MLASpec:
    """Multi-head latent attention (DeepSeek-V2/V3): the cache holds a compressed latent.

    DeepSeek-V3.2's sparse attention adds a lightning indexer: one key of ``index_head_dim``
    per token and layer is cached beside the latent, and attention reads only the
    ``index_topk`` tokens the indexer selects (0: dense MLA).
    """

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None
    index_head_dim: int = 0
    index_n_heads: int = 0
    index_topk: int = 0

    @property
    def cache_elements_per_token(self) -> int:
        """Elements cached per token per layer by vLLM/SGLang/llama.cpp: latent + rope key."""
        return self.kv_lora_rank + self.qk_rope_head_dim


@dataclass(frozen=True)
class CheckpointInfo:
    """Exact checkpoint facts from safetensors headers or a GGUF tensor table."""

    total_bytes: int
    bytes_by_dtype: dict[str, int] = field(default_factory=dict)
    params_by_dtype: dict[str, int] = field(default_factory=dict)
    tensor_count: int = 0
    embedding_bytes: int = 0  # token embedding table (looked up, not streamed per token)
    lm_head_bytes: int = 0
    source: str = ""  # "safetensors:<repo>" or "gguf:<path>"
    quant_types: tuple[str, ...] = ()  # GGUF tensor types present (Q4_K, Q6_K ...)


@dataclass(frozen=True)
class ComponentSpec:
    """One component of a diffusion pipeline (text encoder, denoiser, VAE)."""

    name: str  # text_encoder, text_encoder_2, transformer, unet, vae ...
    kind: str  # clip, t5, llm, unet, dit, mmdit, vae
    params: int
    native_dtype: str = "bf16"
    num_layers: int = 0
    hidden_size: int = 0
    num_heads: int = 0
    max_tokens: int = 0  # text encoders: sequence length used by the pipeline
    checkpoint_bytes: int | None = None
    ffn_dim: int = 0  # denoiser: MLP hidden width of a block (0: unknown, taken as 4 x hidden)
    largest_module_params: int = 0  # the biggest single module (what sequential offload holds)
    linears: tuple[LinearGroup, ...] = ()  # denoiser: attention and MLP linears (LoRA targets)


@dataclass(frozen=True)
class DiffusionSpec:
    pipeline: str  # diffusers class name: FluxPipeline, StableDiffusionXLPipeline ...
    denoiser: str  # component name of the UNet/transformer
    components: tuple[ComponentSpec, ...]
    is_video: bool = False
    vae_scale_factor: int = 8  # pixels per latent pixel (spatial)
    temporal_compression: int = 1  # frames per latent frame (video)
    latent_channels: int = 4
    patch_size: int = 1  # spatial patch of the transformer (1 for UNets)
    temporal_patch_size: int = 1
    text_tokens: int = 77  # text tokens the denoiser attends to
    guidance_distilled: bool = False  # FLUX-dev/schnell: one pass per step, no CFG batch
    default_steps: int = 30
    default_resolution: tuple[int, int] = (1024, 1024)
    default_frames: int = 1
    vae_dtype: str | None = None  # the VAE's run-time dtype when the pipeline loads it apart
    # edit pipelines (FLUX.1 Kontext, Qwen-Image-Edit) append the latents of the input image(s)
    # to the image tokens the denoiser attends to, at the output's resolution
    reference_images: int = 0
    # how the pipeline's video VAE decodes (diffusers' code defaults, not in config.json):
    # sample frames decoded at once without tiling (None: one latent frame at a time) and a
    # spatial tile's side in pixels when tiled (None: 512)
    vae_decode_frames: int | None = None
    vae_tile: int | None = None
    # a causal VAE that decodes latent frame by latent frame keeps the last 2 frames of every
    # causal convolution's input (Wan's feat_cache): those channels per output pixel
    vae_cache_channels: float = 0.0
    # a VAE class with its own decode working set (models/diffusion/vaes.py
    # VAE_DECODE_WORKING_SET): bytes per output pixel-frame per byte of its dtype (None: the
    # fitted SD-style constant), and whether it decodes every frame in one pass
    vae_decode_bytes_per_dtype_byte: float | None = None
    vae_decodes_all_frames: bool = False

    def component(self, name: str) -> ComponentSpec:
        return next(c for c in self.components if c.name == name)

    def image_tokens(self, width: int, height: int, frames: int = 1) -> int:
        """Tokens the denoiser processes for one sample, after VAE and patching (with the
        reference image's tokens of an edit pipeline)."""
        lat_w = width // self.vae_scale_factor // self.patch_size
        lat_h = height // self.vae_scale_factor // self.patch_size
        lat_t = 1
        if self.is_video:
            lat_t = ((frames - 1) // self.temporal_compression + 1) // self.temporal_patch_size
        return max(1, lat_w * lat_h * max(1, lat_t)) * (1 + self.reference_images)


@dataclass(frozen=True)
class ModelSpec:
    """Everything whichgpu knows about a model's architecture and checkpoint."""

    id: str  # what the user named, resolved (alias or Hub id or path)
    name: str
    family: Family
    architecture: str  # config.json model_type, or the diffusers pipeline class
    source: str  # "preset:llama-3.1-8b", "config:./config.json", "hub:org/name", "gguf:...",
    # "size:70B"
    params: ParamCounts
    num_layers: int = 0
    hidden_size: int = 0
    num_attention_heads: int = 0
    num_kv_heads: int = 0
    head_dim: int = 0
    intermediate_size: int = 0
    vocab_size: int = 0
    tie_word_embeddings: bool = False
    max_context: int = 0
    gated_mlp: bool = True
    layers: tuple[LayerSpec, ...] = ()
    linears: tuple[LinearGroup, ...] = ()
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    native_dtype: str = "bf16"
    quantization: str | None = None  # a checkpoint shipped quantized (mxfp4, fp8 ...)
    checkpoint: CheckpointInfo | None = None
    diffusion: DiffusionSpec | None = None
    hub_id: str | None = None
    approximate: bool = False  # True for a bare size: a generic spec, not the real model
    notes: tuple[str, ...] = ()
    # multi-token-prediction layers stored in the checkpoint but not in ``params``: engines
    # load them only for speculative decoding (DeepSeek-V3, GLM-4.5, Qwen3.5, MiniMax-M2)
    mtp_params: int = 0
    vision_params: int = 0  # the vision tower and projector, included in ``params.other``

    @property
    def params_total(self) -> int:
        return self.params.total

    @property
    def params_active(self) -> int:
        return self.params.active or self.params.total

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    @property
    def largest_layer_params(self) -> int:
        """Parameters of the biggest decoder layer (ZeRO-3 / FSDP gather one layer at a time)."""
        if not self.num_layers:
            return 0
        per_layer = (self.params.attention + self.params.mlp + self.params.experts
                     + self.params.shared_experts + self.params.router) / self.num_layers
        if self.moe and self.moe.moe_layers:
            moe_layer = (self.params.experts + self.params.shared_experts + self.params.router
                         ) / self.moe.moe_layers + self.params.attention / self.num_layers
            per_layer = max(per_layer, moe_layer)
        return int(per_layer)
