"""Diffusion memory per GPU: image and video generation, and LoRA training of the denoiser.

Stages run one after another (encode the prompt, denoise, decode the latents), so their
activations never coexist. Offload modes change which weights are resident:
``none`` keeps every component on the GPU; ``model`` (diffusers enable_model_cpu_offload)
keeps only the component that runs (one text encoder at a time, one expert transformer at a
time); ``sequential`` (enable_sequential_cpu_offload) streams every component module by module.

Denoiser activations at inference are a per-block working set: no block keeps its tensors for
a backward pass, so the peak is the largest set of tensors one transformer block holds at once
for all its tokens (see the constant ``diffusion_block_bytes_per_token``), not a multiple of
the number of blocks.
"""

from __future__ import annotations

from whichgpu.estimate.constants import memory_constant, memory_value
from whichgpu.estimate.memory.inference import nccl_term, runtime_term
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.estimate.memory.weights import (
    DENOISERS,
    component_bytes,
    component_dtype,
    component_quantized,
)
from whichgpu.estimate.workload import Workload
from whichgpu.models.spec import ComponentSpec

_OFFLOAD_SOURCE = ("https://huggingface.co/docs/diffusers/main/en/optimization/memory; "
                   "https://github.com/comfyanonymous/ComfyUI (comfy/model_management.py)")
# Pipelines that run the conditional and unconditional passes one after the other instead of
# as one doubled batch (diffusers WanPipeline and QwenImagePipeline call the transformer twice
# per step), so CFG doubles their time but not their activation peak.
CFG_SEQUENTIAL = ("WanPipeline", "WanImageToVideoPipeline", "QwenImagePipeline",
                  "QwenImageEditPipeline")
_BYTES = {"fp32": 4, "float32": 4}


def effective_offload(w: Workload) -> str:
    """What stays on the GPU, as the engine runs it: ``none`` is each engine's default, which
    for ComfyUI is its model management (comfy/model_management.py: load_models_gpu frees idle
    models when the next one needs the room, and text encoders and the diffusion model go back
    to the CPU), so it needs what model offload needs; ``gpu-only`` keeps everything resident
    (ComfyUI --gpu-only, diffusers pipe.to("cuda"))."""
    if w.offload == "gpu-only":
        return "none"
    if w.offload == "none" and w.engine_name == "comfyui":
        return "model"
    return w.offload


def samples_in_flight(w: Workload) -> int:
    """Samples the denoiser holds at once: batch x CFG passes when CFG is batched."""
    d = w.model.diffusion
    return w.batch * (1 if d.pipeline in CFG_SEQUENTIAL else w.cfg_passes)


def pipeline_dtype(w: Workload) -> str:
    """The pipeline's torch_dtype: --quant when it is a plain dtype, else the denoiser's."""
    if w.quant and w.quant_format.name in ("fp32", "fp16", "bf16"):
        return w.quant_format.name
    native = w.model.native_dtype
    return native if native in ("fp32", "fp16", "bf16") else "bf16"


def component_sizes(w: Workload) -> dict[str, int]:
    """Bytes of every pipeline component as this workload runs it (the speed model's offload
    traffic should use the same figures)."""
    d = w.model.diffusion
    q = w.quant_format
    pipe = pipeline_dtype(w)
    sizes = {c.name: component_bytes(c, q, w.quant, w.quant_scope, pipeline_dtype=pipe,
                                     vae_dtype=d.vae_dtype) for c in d.components}
    if w.tiny_vae:
        for c in d.components:
            if c.kind == "vae":
                sizes[c.name] = int(memory_value("tiny_vae_params") * 2)
    return sizes


def activation_bytes_per_value(w: Workload) -> int:
    """Activations run in the pipeline's dtype: 4 bytes in fp32, else 2 (quantized weights are
    dequantized to a 16-bit compute dtype)."""
    return _BYTES.get(pipeline_dtype(w), 2)


def denoiser_tokens(w: Workload, den: ComponentSpec) -> int:
    """Tokens one block processes: image (or video) tokens, plus the text tokens for joint
    (MMDiT) attention; cross-attention DiTs (Wan) attend to the text without carrying it."""
    d = w.model.diffusion
    width, height = w.image_size
    tokens = d.image_tokens(width, height, w.video_frames)
    return tokens + (d.text_tokens if den.kind == "mmdit" else 0)


def denoiser_activation_bytes(w: Workload, den: ComponentSpec) -> tuple[float, str]:
    """Peak activations of one denoiser step (CFG batches the two passes together)."""
    d = w.model.diffusion
    width, height = w.image_size
    samples = samples_in_flight(w)
    scale = activation_bytes_per_value(w) / 2
    if den.kind == "unet":
        scale = 1.0  # the coefficient is measured; the fp32 rows show no doubling (notes)
        positions = (width // d.vae_scale_factor) * (height // d.vae_scale_factor)
        channels = den.hidden_size or 320
        c = memory_constant("diffusion_unet_activation_coeff")
        act = c.value * samples * positions * channels * 2 * scale
        formula = (f"{c.value:g} x {samples} sample(s) x {positions:,} latent positions x "
                   f"{channels} channels x {2 * scale:g} bytes")
        if not w.flash_attention:
            # the largest self-attention runs at 1/2 resolution (SD) with 8-10 heads
            t = positions // 4
            act += samples * 10 * t * t * 2 * scale
            formula += " + eager attention scores at half resolution"
        return act, formula
    tokens = denoiser_tokens(w, den)
    hidden = den.hidden_size or 3072
    ffn = den.ffn_dim or 4 * hidden
    c = memory_value("diffusion_block_bytes_per_token")
    attn = c["attention"] * hidden
    mlp = c["mlp_hidden"] * hidden + c["mlp_ffn"] * ffn
    per_token = max(attn, mlp) * scale
    act = samples * tokens * per_token
    phase = "attention" if attn >= mlp else "MLP"
    formula = (f"one block's working set: {samples} sample(s) x {tokens:,} tokens x "
               f"{per_token:,.0f} bytes per token (the {phase} phase: "
               + (f"{c['attention']:g} x hidden {hidden}" if attn >= mlp else
                  f"{c['mlp_hidden']:g} x hidden {hidden} + {c['mlp_ffn']:g} x MLP width {ffn}")
               + (" at 4-byte activations)" if scale > 1 else " at 2-byte activations)"))
    if not w.flash_attention:
        act += samples * (den.num_heads or 24) * tokens * tokens * 2 * scale
        formula += " + eager attention scores (heads x tokens^2)"
    return act, formula


def vae_decode_bytes(w: Workload) -> tuple[float, str]:
    width, height = w.image_size
    pixels = width * height
    tile = 512 * 512
    if w.vae_tiling:
        pixels = min(pixels, tile)
    # causal video VAEs decode one latent frame (temporal_compression frames) at a time
    frames = min(w.video_frames, max(w.model.diffusion.temporal_compression, 1))
    if w.tiny_vae:
        per_px = memory_value("tiny_vae_decode_bytes_per_pixel")
    else:
        per_px = memory_value("vae_decode_bytes_per_pixel")
    at_once = 1 if w.vae_slicing else w.batch
    out = width * height * w.video_frames * 3 * 4 * w.batch
    act = pixels * frames * per_px * at_once + out
    formula = (f"{per_px:g} bytes x {pixels:,} pixels"
               + (f" x {frames} frames" if frames > 1 else "")
               + (" (tiled: one 512x512 tile)" if w.vae_tiling else "")
               + (" (tiny autoencoder)" if w.tiny_vae else "")
               + ("" if w.vae_slicing or w.batch == 1 else f" x {w.batch} images at once")
               + " + decoded output in fp32")
    return act, formula


def _module_bytes(c: ComponentSpec, size: int) -> float:
    """Bytes of a component's largest module at the component's run-time precision."""
    if not c.params:
        return 0.0
    largest = c.largest_module_params or c.params / max(c.num_layers, 1)
    return size * min(largest / c.params, 1.0)


def diffusion_terms(w: Workload) -> tuple[list[MemoryTerm], list[str], dict]:
    d = w.model.diffusion
    q = w.quant_format
    den = d.component(d.denoiser)
    assumptions: list[str] = []
    sizes = component_sizes(w)
    encoders = [c for c in d.components if c.name != d.denoiser and c.kind != "vae"
                and c.kind not in DENOISERS]
    # a second denoiser (Wan 2.2 A14B's low-noise expert) is resident unless offloaded
    experts = [c for c in d.components if c.name != d.denoiser and c.kind in DENOISERS]
    vae = [c for c in d.components if c.kind == "vae"]
    enc_bytes = sum(sizes[c.name] for c in encoders)
    expert_bytes = sum(sizes[c.name] for c in experts)
    vae_bytes = sum(sizes[c.name] for c in vae)
    den_bytes = sizes[d.denoiser]
    act, act_formula = denoiser_activation_bytes(w, den)
    dec, dec_formula = vae_decode_bytes(w)
    training = w.task == "image-lora"
    pipe = pipeline_dtype(w)
    dtypes = {c.name: component_dtype(c, q, w.quant, w.quant_scope, pipeline_dtype=pipe,
                                      vae_dtype=d.vae_dtype) for c in d.components}
    quantized = ([c.name for c in d.components if component_quantized(c, q, w.quant_scope)]
                 if w.quant else [])

    if training:
        resident = den_bytes + vae_bytes
        wformula = (f"denoiser {den_bytes / 1e9:.1f} GB + VAE; text encoders not resident "
                    "(prompt embeddings cached before training)")
        assumptions.append("LoRA training caches text embeddings and latents first, as "
                           "kohya/ai-toolkit do; the text encoders are not on the GPU")
        terms = [MemoryTerm("weights", int(resident), wformula, None, _OFFLOAD_SOURCE)]
        terms += _lora_terms(w, den, act)
        peak_act = act
    else:
        # Stages run one after another; the peak is the worst stage's weights + activations.
        offload = effective_offload(w)
        if offload == "model":
            # the offload hooks chain the models: starting one moves the previous one back to
            # the CPU, so one text encoder (one expert) at a time; the hooks fire on forward()
            # and vae.decode() is not forward, so the denoiser stays resident through the decode
            # (mem-sdxl-fp16-model-offload)
            largest_enc = max((sizes[c.name] for c in encoders), default=0)
            comfy = w.engine_name == "comfyui"
            # ComfyUI frees the diffusion model when the VAE needs the room (comfy/sd.py
            # VAE.decode asks model_management.load_models_gpu for its memory)
            resident = {"encode": largest_enc, "denoise": den_bytes,
                        "decode": vae_bytes if comfy else den_bytes + vae_bytes}
            how = (("ComfyUI's model management (idle models unloaded to make room)"
                    if comfy and w.offload == "none" else "model offload")
                   + ": one component at a time (the largest text encoder "
                   f"{largest_enc / 1e9:.2f} GB while encoding), "
                   + ("ComfyUI unloads the denoiser for the VAE decode" if comfy else
                      "the denoiser stays while the VAE decodes"))
            if comfy and w.offload == "none":
                assumptions.append("ComfyUI's default model management: models stay loaded "
                                   "while they fit and are unloaded (text encoders first) when "
                                   "the next one needs the room; this is the least it needs "
                                   "(--offload gpu-only: everything resident)")
        elif offload == "sequential":
            # accelerate's cpu_offload streams each leaf module in for its forward
            enc_mod = max((_module_bytes(c, sizes[c.name]) for c in encoders), default=0.0)
            den_mod = _module_bytes(den, den_bytes)
            vae_mod = max((_module_bytes(c, sizes[c.name]) for c in vae), default=0.0)
            resident = {"encode": enc_mod, "denoise": den_mod, "decode": vae_mod}
            how = (f"sequential offload: one module at a time (largest: {den_mod / 1e6:,.0f} MB "
                   f"in the denoiser, {enc_mod / 1e6:,.0f} MB in the text encoders)")
            assumptions.append("sequential offload is very slow: weights cross PCIe every step")
        else:
            every = den_bytes + expert_bytes + enc_bytes + vae_bytes
            resident = {"encode": every, "denoise": every, "decode": every}
            how = " + ".join(f"{c.name} {sizes[c.name] / 1e9:.2f} GB" for c in d.components)
        stage_act = {"encode": 0.0, "denoise": act, "decode": dec}
        stage = max(resident, key=lambda k: resident[k] + stage_act[k])
        peak_act = stage_act[stage]
        what = {"encode": "text encoding", "denoise": "denoising", "decode": "VAE decode"}
        precision = ", ".join(f"{k} {v}" for k, v in dtypes.items())
        quant_note = ((f"--quant {w.quant} applies to {', '.join(quantized)}; " if quantized
                       else "") + f"run-time formats: {precision}")
        terms = [MemoryTerm("weights", int(resident[stage]),
                            f"{how}; resident during {what[stage]}, the peak stage",
                            quant_note, _OFFLOAD_SOURCE)]
        if stage == "denoise":
            cfg_note = ("one pass per step (guidance-distilled or CFG off)" if w.cfg_passes == 1
                        else "classifier-free guidance runs its two passes one after the other"
                        if d.pipeline in CFG_SEQUENTIAL
                        else "classifier-free guidance batches its two passes")
            src = memory_constant("diffusion_unet_activation_coeff" if den.kind == "unet"
                                  else "diffusion_block_bytes_per_token").source
            terms.append(MemoryTerm("activations", int(act), "denoiser step peak: "
                                    + act_formula, cfg_note, src))
        elif stage == "decode":
            terms.append(MemoryTerm("vae_decode", int(dec), "VAE decode peak: " + dec_formula,
                                    f"denoising needs less ({act / 1e9:.1f} GB of activations)",
                                    memory_constant("vae_decode_bytes_per_pixel").source))
    terms.append(runtime_term("transformers"))
    nccl = nccl_term(w.gpus) if training else None  # independent pipelines share nothing
    if nccl:
        terms.append(nccl)
    frag = memory_constant("fragmentation_fraction")
    terms.append(MemoryTerm("fragmentation", int(peak_act * frag.value),
                            f"{frag.value:.0%} of the activation peak", None, frag.source))
    if w.gpus > 1:
        assumptions.append("diffusers runs one pipeline per GPU: more GPUs add throughput "
                           "(one image each), not memory per GPU")
    width, height = w.image_size
    details = {"components_bytes": sizes, "component_formats": dtypes, "denoiser": d.denoiser,
               "denoiser_activation_bytes": int(act), "vae_decode_bytes": int(dec),
               "tokens": denoiser_tokens(w, den), "resolution": f"{width}x{height}",
               "frames": w.video_frames, "cfg_passes": w.cfg_passes, "offload": w.offload,
               "resident_offload": effective_offload(w), "all_resident_bytes": int(
                   den_bytes + expert_bytes + enc_bytes + vae_bytes + max(act, dec))}
    if training:
        details["lora_params"] = diffusion_lora_params(w, den)
    return terms, assumptions, details


def diffusion_lora_params(w: Workload, den: ComponentSpec) -> int:
    """Adapter parameters: rank x (in + out) for every targeted linear of the denoiser.

    'all-linear' takes every attention and MLP linear of the blocks (diffusers' own FLUX
    script targets the same set without the single-block proj_mlp/proj_out); named targets
    (to_q, to_k, to_v, to_out.0 ...) pick groups by their diffusers module names.
    """
    if not den.linears:  # a class without shapes here: about 16 x hidden per block
        return w.lora_rank * max(den.num_layers, 1) * 16 * (den.hidden_size or 3072)
    targets = set(w.lora_targets)
    if "all-linear" in targets or "all" in targets:
        groups = den.linears
    else:
        groups = tuple(g for g in den.linears
                       if g.name in targets or g.name.split(".")[-1] in targets
                       or g.name.removesuffix(".0") in targets)
    return sum(w.lora_rank * (g.in_features + g.out_features) * g.count for g in groups)


def _lora_terms(w: Workload, den: ComponentSpec, act: float) -> list[MemoryTerm]:
    """Adapters, their gradients and optimizer states, and training activations."""
    d = w.model.diffusion
    layers = max(den.num_layers, 1)
    hidden = den.hidden_size or 3072
    adapters = diffusion_lora_params(w, den)
    exact = bool(den.linears)
    per_param, what = ((8.0, "AdamW on adapters") if w.optimizer == "adamw"
                       else (2.0, w.optimizer))
    width, height = w.image_size
    tokens = d.image_tokens(width, height) + d.text_tokens
    ck = 2 * layers * tokens * hidden * w.batch
    # backward keeps about one block's working set per block; checkpointing keeps each block's
    # input and recomputes one block at a time
    train_act = ck + act * 2 if w.uses_checkpointing else act * layers
    targets = ", ".join(w.lora_targets)
    return [
        MemoryTerm("adapter_weights", int(adapters * 4),
                   f"rank {w.lora_rank} on {targets}: {adapters:,} params x 4 bytes"
                   + ("" if exact else " (about 16 x hidden x rank per block)"),
                   "rank x (in + out) for every targeted linear of the denoiser's blocks"
                   if exact else "no layer shapes for this denoiser class: an approximation"),
        MemoryTerm("gradients", int(adapters * 4), "fp32 adapter gradients"),
        MemoryTerm("optimizer_states", int(adapters * per_param), what),
        MemoryTerm("activations", int(train_act),
                   "checkpointed block inputs + one block recomputed" if w.uses_checkpointing
                   else "every block's activations kept for backward",
                   "gradient checkpointing " + ("on" if w.uses_checkpointing else "off")),
    ]
