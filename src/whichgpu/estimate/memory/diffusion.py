"""Diffusion memory per GPU: image and video generation, and LoRA training of the denoiser.

Stages run one after another (encode the prompt, denoise, decode the latents), so their
activations never coexist. Offload modes change which weights are resident:
``none`` keeps every component on the GPU; ``model`` (diffusers enable_model_cpu_offload)
keeps only the component that runs; ``sequential`` streams the denoiser block by block.
"""

from __future__ import annotations

from whichgpu.estimate.constants import memory_constant, memory_value
from whichgpu.estimate.memory.inference import nccl_term, runtime_term
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.estimate.memory.weights import DENOISERS, component_bytes, component_quantized
from whichgpu.estimate.workload import Workload
from whichgpu.models.spec import ComponentSpec

_OFFLOAD_SOURCE = "https://huggingface.co/docs/diffusers/main/en/optimization/memory"
# Pipelines that run the conditional and unconditional passes one after the other instead of
# as one doubled batch (diffusers WanPipeline and QwenImagePipeline call the transformer twice
# per step), so CFG doubles their time but not their activation peak.
CFG_SEQUENTIAL = ("WanPipeline", "WanImageToVideoPipeline", "QwenImagePipeline",
                  "QwenImageEditPipeline")


def samples_in_flight(w: Workload) -> int:
    """Samples the denoiser holds at once: batch x CFG passes when CFG is batched."""
    d = w.model.diffusion
    return w.batch * (1 if d.pipeline in CFG_SEQUENTIAL else w.cfg_passes)


def denoiser_activation_bytes(w: Workload, den: ComponentSpec) -> tuple[float, str]:
    """Peak activations of one denoiser step (CFG batches the two passes together)."""
    d = w.model.diffusion
    width, height = w.image_size
    samples = samples_in_flight(w)
    if den.kind == "unet":
        positions = (width // d.vae_scale_factor) * (height // d.vae_scale_factor)
        channels = den.hidden_size or 320
        c = memory_constant("diffusion_unet_activation_coeff")
        act = c.value * samples * positions * channels * 2
        formula = (f"{c.value:g} x {samples} sample(s) x {positions:,} latent positions x "
                   f"{channels} channels x 2 bytes")
        if not w.flash_attention:
            # the largest self-attention runs at 1/2 resolution (SD) with 8-10 heads
            t = positions // 4
            act += samples * 10 * t * t * 2
            formula += " + eager attention scores at half resolution"
        return act, formula
    tokens = d.image_tokens(width, height, w.video_frames) + d.text_tokens
    hidden = den.hidden_size or 3072
    c = memory_constant("diffusion_dit_activation_coeff")
    act = c.value * samples * tokens * hidden * 2
    formula = (f"{c.value:g} x {samples} sample(s) x {tokens:,} tokens (image after patching + "
               f"text) x hidden {hidden} x 2 bytes")
    if not w.flash_attention:
        act += samples * (den.num_heads or 24) * tokens * tokens * 2
        formula += " + eager attention scores"
    return act, formula


def vae_decode_bytes(w: Workload) -> tuple[float, str]:
    width, height = w.image_size
    pixels = width * height
    tile = 512 * 512
    if w.vae_tiling:
        pixels = min(pixels, tile)
    # causal video VAEs decode one latent frame (temporal_compression frames) at a time
    frames = min(w.video_frames, max(w.model.diffusion.temporal_compression, 1))
    per_px = memory_value("vae_decode_bytes_per_pixel")
    at_once = 1 if w.vae_slicing else w.batch
    out = width * height * w.video_frames * 3 * 4 * w.batch
    act = pixels * frames * per_px * at_once + out
    formula = (f"{per_px:g} bytes x {pixels:,} pixels"
               + (f" x {frames} frames" if frames > 1 else "")
               + (" (tiled: one 512x512 tile)" if w.vae_tiling else "")
               + ("" if w.vae_slicing or w.batch == 1 else f" x {w.batch} images at once")
               + " + decoded output in fp32")
    return act, formula


def diffusion_terms(w: Workload) -> tuple[list[MemoryTerm], list[str], dict]:
    d = w.model.diffusion
    q = w.quant_format
    den = d.component(d.denoiser)
    assumptions: list[str] = []
    sizes = {c.name: component_bytes(c, q, w.quant, w.quant_scope) for c in d.components}
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
        if w.offload == "model":
            # diffusers' offload hooks fire on forward(); vae.decode() is not forward, so the
            # denoiser stays resident through the decode (mem-sdxl-fp16-model-offload).
            resident = {"encode": enc_bytes, "denoise": den_bytes,
                        "decode": den_bytes + vae_bytes}
            how = "model offload: the running component is resident (and the denoiser while " \
                  "the VAE decodes)"
        elif w.offload == "sequential":
            blocks = max(den.num_layers, 1)
            small = den_bytes / blocks
            resident = {"encode": enc_bytes / 24, "denoise": small, "decode": vae_bytes}
            how = f"sequential offload: one of {blocks} denoiser blocks at a time"
            assumptions.append("sequential offload is very slow: weights cross PCIe every step")
        else:
            every = den_bytes + expert_bytes + enc_bytes + vae_bytes
            resident = {"encode": every, "denoise": every, "decode": every}
            how = " + ".join(f"{c.name} {sizes[c.name] / 1e9:.2f} GB" for c in d.components)
        stage_act = {"encode": 0.0, "denoise": act, "decode": dec}
        stage = max(resident, key=lambda k: resident[k] + stage_act[k])
        peak_act = stage_act[stage]
        what = {"encode": "text encoding", "denoise": "denoising", "decode": "VAE decode"}
        quant_note = (f"--quant {w.quant} applies to {', '.join(quantized)}" if quantized
                      else "components at their native precision")
        terms = [MemoryTerm("weights", int(resident[stage]),
                            f"{how}; resident during {what[stage]}, the peak stage",
                            quant_note, _OFFLOAD_SOURCE)]
        if stage == "denoise":
            cfg_note = ("one pass per step (guidance-distilled or CFG off)" if w.cfg_passes == 1
                        else "classifier-free guidance runs its two passes one after the other"
                        if d.pipeline in CFG_SEQUENTIAL
                        else "classifier-free guidance batches its two passes")
            terms.append(MemoryTerm("activations", int(act), "denoiser step peak: "
                                    + act_formula, cfg_note,
                                    memory_constant("diffusion_dit_activation_coeff").source))
        elif stage == "decode":
            terms.append(MemoryTerm("vae_decode", int(dec), "VAE decode peak: " + dec_formula,
                                    f"denoising needs less ({act / 1e9:.1f} GB of activations)",
                                    memory_constant("vae_decode_bytes_per_pixel").source))
    terms.append(runtime_term("transformers"))
    nccl = nccl_term(w.gpus)
    if nccl:
        terms.append(nccl)
    frag = memory_constant("fragmentation_fraction")
    terms.append(MemoryTerm("fragmentation", int(peak_act * frag.value),
                            f"{frag.value:.0%} of the activation peak", None, frag.source))
    if w.gpus > 1:
        assumptions.append("diffusers runs one pipeline per GPU: more GPUs add throughput "
                           "(one image each), not memory per GPU")
    width, height = w.image_size
    details = {"components_bytes": sizes, "denoiser": d.denoiser,
               "denoiser_activation_bytes": int(act), "vae_decode_bytes": int(dec),
               "tokens": d.image_tokens(width, height, w.video_frames) + d.text_tokens,
               "resolution": f"{width}x{height}", "frames": w.video_frames,
               "cfg_passes": w.cfg_passes, "offload": w.offload}
    return terms, assumptions, details


def _lora_terms(w: Workload, den: ComponentSpec, act: float) -> list[MemoryTerm]:
    """Adapters, their gradients and optimizer states, and training activations."""
    d = w.model.diffusion
    layers = max(den.num_layers, 1)
    hidden = den.hidden_size or 3072
    adapters = w.lora_rank * layers * 16 * hidden  # qkv, out, MLP up/down per block
    per_param, what = ((8.0, "AdamW on adapters") if w.optimizer == "adamw"
                       else (2.0, w.optimizer))
    width, height = w.image_size
    tokens = d.image_tokens(width, height) + d.text_tokens
    ck = 2 * layers * tokens * hidden * w.batch
    train_act = ck + act * 2 if w.uses_checkpointing else act * layers * 0.5
    return [
        MemoryTerm("adapter_weights", int(adapters * 4),
                   f"rank {w.lora_rank} x {layers} blocks x 16 x hidden {hidden} params x "
                   "4 bytes", "LoRA on attention and MLP linears of every block "
                   "(about 16 x hidden x rank)"),
        MemoryTerm("gradients", int(adapters * 4), "fp32 adapter gradients"),
        MemoryTerm("optimizer_states", int(adapters * per_param), what),
        MemoryTerm("activations", int(train_act),
                   "checkpointed block inputs + one block recomputed" if w.uses_checkpointing
                   else "every block's activations kept for backward",
                   "gradient checkpointing " + ("on" if w.uses_checkpointing else "off")),
    ]
