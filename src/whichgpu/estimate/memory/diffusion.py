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

from whichgpu.errors import InputError
from whichgpu.estimate.constants import memory_constant, memory_value
from whichgpu.estimate.diffusion_parallel import DiffusionLayout, splits_dit
from whichgpu.estimate.memory.inference import nccl_term, runtime_term
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.estimate.memory.weights import (
    DENOISERS,
    component_bytes,
    component_dtype,
    component_quantized,
)
from whichgpu.estimate.workload import GROUP_OFFLOAD, Workload
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.models.spec import ComponentSpec
from whichgpu.vocabulary import Engine, Task

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
    if w.offload == "none" and w.engine_name == Engine.COMFYUI:
        return "model"
    return w.offload


def samples_in_flight(w: Workload) -> int:
    """Samples the denoiser holds at once: batch x CFG passes when CFG is batched."""
    d = w.diffusion_spec
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
    d = w.diffusion_spec
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
    d = w.diffusion_spec
    width, height = w.image_size
    tokens = d.image_tokens(width, height, w.video_frames)
    return tokens + (d.text_tokens if den.kind == "mmdit" else 0)


def denoiser_activation_bytes(w: Workload, den: ComponentSpec) -> tuple[float, Message]:
    """Peak activations of one denoiser step (CFG batches the two passes together)."""
    d = w.diffusion_spec
    width, height = w.image_size
    samples = samples_in_flight(w)
    scale = activation_bytes_per_value(w) / 2
    if den.kind == "unet":
        scale = 1.0  # the coefficient is measured; the fp32 rows show no doubling (notes)
        positions = (width // d.vae_scale_factor) * (height // d.vae_scale_factor)
        channels = den.hidden_size or 320
        c = memory_constant("diffusion_unet_activation_coeff")
        act = c.value * samples * positions * channels * 2 * scale
        eager: Message | str = ""
        if not w.flash_attention:
            # the largest self-attention runs at 1/2 resolution (SD) with 8-10 heads
            t = positions // 4
            act += samples * 10 * t * t * 2 * scale
            eager = msg("formula.unet.eager", " + eager attention scores at half resolution")
        return act, msg("formula.unet", "{coeff:g} x {samples} sample(s) x {positions:,} latent "
                        "positions x {channels} channels x {bytes:g} bytes{eager}",
                        coeff=c.value, samples=samples, positions=positions,
                        channels=channels, bytes=2 * scale, eager=eager)
    tokens = denoiser_tokens(w, den)
    hidden = den.hidden_size or 3072
    ffn = den.ffn_dim or 4 * hidden
    c = memory_value("diffusion_block_bytes_per_token")
    attn = c["attention"] * hidden
    mlp = c["mlp_hidden"] * hidden + c["mlp_ffn"] * ffn
    per_token = max(attn, mlp) * scale
    act = samples * tokens * per_token
    phase = (msg("formula.block.attention", "the attention phase: {coeff:g} x hidden {hidden}",
                 coeff=c["attention"], hidden=hidden) if attn >= mlp else
             msg("formula.block.mlp", "the MLP phase: {coeff:g} x hidden {hidden} + {ffn_coeff:g} "
                 "x MLP width {ffn}", coeff=c["mlp_hidden"], hidden=hidden,
                 ffn_coeff=c["mlp_ffn"], ffn=ffn))
    eager = ""
    if not w.flash_attention:
        act += samples * (den.num_heads or 24) * tokens * tokens * 2 * scale
        eager = msg("formula.block.eager", " + eager attention scores (heads x tokens^2)")
    int8 = _llm_int8_bytes(w, den, samples * tokens)
    if int8:
        act += int8
        eager = msg("formula.block.int8", "{eager} + LLM.int8's int32 product and float16 "
                    "result of its widest linear ({width:,} outputs x {bytes} bytes per "
                    "token)", eager=eager, width=_widest_output(den), bytes=_INT8_EXTRA_BYTES)
    formula = msg("formula.block", "one block's working set: {samples} sample(s) x {tokens:,} "
                  "tokens x {per:,.0f} bytes per token ({phase} at {bytes}-byte "
                  "activations){eager}", samples=samples, tokens=tokens, per=per_token,
                  phase=phase, bytes=4 if scale > 1 else 2, eager=eager)
    return act, formula


# bitsandbytes' LLM.int8 linear (autograd/_functions.py MatMul8bitLt.forward) multiplies in
# int8 into an int32 product (out32 = int8_linear_matmul), dequantizes it into a float16 tensor
# (int8_mm_dequant) and casts that to the activations' dtype: beside the bf16 output a 16-bit
# linear makes, the int32 product (4 bytes) and the float16 result (2) are alive at once
_INT8_EXTRA_BYTES = 6
BNB_INT8_SOURCE = ("https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/"
                   "bitsandbytes/autograd/_functions.py (MatMul8bitLt.forward: out32, "
                   "int8_mm_dequant)")


def _widest_output(den: ComponentSpec) -> int:
    return max((g.out_features for g in den.linears), default=den.ffn_dim or 0)


def _llm_int8_bytes(w: Workload, den: ComponentSpec, rows: int) -> float:
    """The extra working memory of a bitsandbytes 8-bit denoiser's widest linear."""
    if not (str(w.quant or "").lower() in BNB_INT8_NAMES
            and component_quantized(den, w.quant_format, w.quant_scope)):
        return 0.0
    return float(rows * _widest_output(den) * _INT8_EXTRA_BYTES)


def vae_decode_bytes(w: Workload) -> tuple[float, Message]:
    width, height = w.image_size
    pixels = width * height
    d = w.diffusion_spec
    tile = (d.vae_tile or 512) ** 2
    if w.vae_tiling:
        pixels = min(pixels, tile)
    # causal video VAEs decode one latent frame (temporal_compression frames) at a time, or
    # the frames their class decodes per pass (HunyuanVideo's: 17, models/diffusion/vaes.py)
    frames = min(w.video_frames, d.vae_decode_frames or max(d.temporal_compression, 1))
    # the VAE's run-time precision
    vae_bytes = 4 if (d.vae_dtype or pipeline_dtype(w)) == "fp32" else 2
    if w.tiny_vae:
        per_px = memory_value("tiny_vae_decode_bytes_per_pixel")
    elif d.vae_decode_bytes_per_dtype_byte:
        # a decoder unlike SD's (LTX-Video's works at 1/4 of the side): ComfyUI's own
        # figure for its class (models/diffusion/vaes.py VAE_DECODE_WORKING_SET)
        per_px = d.vae_decode_bytes_per_dtype_byte * vae_bytes
    else:
        per_px = memory_value("vae_decode_bytes_per_pixel")
    if d.vae_decodes_all_frames and not w.tiny_vae:
        frames = w.video_frames
    at_once = 1 if w.vae_slicing else w.batch
    out = width * height * w.video_frames * 3 * 4 * w.batch
    act = pixels * frames * per_px * at_once + out
    # Wan's causal VAE keeps 2 frames of every causal convolution's input between latent
    # frames (models/diffusion/vaes.py wan_cache_channels), at the VAE's run-time precision
    cache = d.vae_cache_channels * 2 * vae_bytes * pixels * at_once
    act += cache
    parts: list[Message] = [msg("formula.vae", "{per:g} bytes x {pixels:,} pixels", per=per_px,
                                pixels=pixels)]
    if frames > 1:
        parts.append(msg("formula.vae.frames", " x {n} frames", n=frames))
    if w.vae_tiling and d.vae_tile:
        parts.append(msg("formula.vae.tiled_side", " (tiled: one {side}x{side} tile)",
                         side=d.vae_tile))
    elif w.vae_tiling:
        parts.append(msg("formula.vae.tiled", " (tiled: one 512x512 tile)"))
    if w.tiny_vae:
        parts.append(msg("formula.vae.tiny", " (tiny autoencoder)"))
    elif d.vae_decode_bytes_per_dtype_byte:
        parts.append(msg("formula.vae.class", " (ComfyUI's working set for this VAE class)"))
    if cache:
        parts.append(msg("formula.vae.cache", " + the causal convolutions' cache ({ch:,.0f} "
                         "channels x 2 frames x {b} bytes per pixel)",
                         ch=d.vae_cache_channels, b=vae_bytes))
    if not (w.vae_slicing or w.batch == 1):
        parts.append(msg("formula.vae.batch", " x {n} images at once", n=w.batch))
    parts.append(msg("formula.vae.output", " + decoded output in fp32"))
    return act, msg("formula.vae.all", "{parts}", parts=Join(parts, ""))


def _vae_decode_source(w: Workload) -> str:
    """Where the VAE decode's bytes per pixel come from: the VAE class's own figure, or the
    constant fitted on SD-style decoders."""
    from whichgpu.models.diffusion.vaes import (
        VAE_DECODE_WORKING_SET_SOURCE,
        VIDEO_VAE_DECODING_SOURCE,
    )

    d = w.diffusion_spec
    src = (VAE_DECODE_WORKING_SET_SOURCE if d.vae_decode_bytes_per_dtype_byte and not w.tiny_vae
           else memory_constant("vae_decode_bytes_per_pixel").source)
    return f"{src}; {VIDEO_VAE_DECODING_SOURCE}" if d.vae_decode_frames else src


# the int8 format's names that say bitsandbytes (LLM.int8); plain "int8" may be torchao's or
# quanto's weight-only int8, whose tensors move like any other
BNB_INT8_NAMES = ("bnb-int8", "llm-int8")


def stays_on_gpu(w: Workload) -> bool:
    """Whether model offload leaves the denoiser on the GPU: bitsandbytes 8-bit weights cannot
    be moved to the CPU (https://huggingface.co/blog/video_gen: '8Bit models in bitsandbytes
    cannot be moved to CPU from GPU, unlike the 4Bit ones')."""
    return (str(w.quant or "").lower() in BNB_INT8_NAMES
            and w.engine_name == Engine.DIFFUSERS)


def _module_bytes(c: ComponentSpec, size: float) -> float:
    """Bytes of a component's largest module at the component's run-time precision."""
    if not c.params:
        return 0.0
    largest = c.largest_module_params or c.params / max(c.num_layers, 1)
    return size * min(largest / c.params, 1.0)


GROUP_SOURCE = ("https://huggingface.co/docs/diffusers/main/en/optimization/memory (group "
                "offloading: block_level onloads num_blocks_per_group blocks at a time, "
                "leaf_level one leaf module; use_stream prefetches the next group while the "
                "current one runs and keeps the weights in pinned memory); "
                "https://github.com/huggingface/diffusers/pull/11375 (use_stream needs "
                "num_blocks_per_group=1)")


def _group_bytes(c: ComponentSpec, size: float, leaf: bool) -> float:
    """One component's resident weights under group offload with CUDA streams: the group that
    runs and the next one, prefetched (diffusers hooks/group_offloading.py: with a stream the
    next group's onload starts when the current one starts). Leaf level: two of its largest
    modules; block level: two of its blocks (a component without blocks is one group)."""
    one = _module_bytes(c, size) if leaf else (size / c.num_layers if c.num_layers else size)
    return min(2 * one, size)


def _group_resident(w: Workload, den: ComponentSpec, den_bytes: float,
                    encoders: list[ComponentSpec], vae: list[ComponentSpec],
                    sizes: dict[str, int]) -> tuple[dict[str, float], Message]:
    """Weights resident in each stage under diffusers' group offload (every component
    group-offloaded, as pipe.enable_group_offload does)."""
    leaf = w.offload == "group-leaf"
    enc = max((_group_bytes(c, sizes[c.name], leaf) for c in encoders), default=0.0)
    dn = _group_bytes(den, den_bytes, leaf)
    dec = max((_group_bytes(c, sizes[c.name], leaf) for c in vae), default=0.0)
    how = msg("term.diffusion.group", "group offload with CUDA streams ({level}): the group "
              "that runs and the next one prefetched ({den:,.0f} MB in the denoiser, {enc:,.0f} "
              "MB in the text encoders)",
              level=("leaf_level" if leaf else "block_level, one block per group"),
              den=dn / 1e6, enc=enc / 1e6)
    return {"encode": enc, "denoise": dn, "decode": dec}, how


def diffusion_terms(w: Workload) -> tuple[list[MemoryTerm], list[Message], dict]:
    d = w.diffusion_spec
    q = w.quant_format
    den = d.component(d.denoiser)
    assumptions: list[Message] = []
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
    layout = _layout(w)
    whole_sizes = sizes
    if layout.per_pipeline > 1:
        # TP splits the DiT's linears (and the low-noise expert's); SGLang folds the idle
        # text encoders over the pipeline's GPUs (its encoder parallelism, "fold"); TP and
        # Ulysses split one block's working set (heads, tokens), CFG parallel the two passes
        den_bytes //= layout.tp
        expert_bytes //= layout.tp
        fold = layout.per_pipeline if splits_dit(w.engine_name) else 1
        enc_bytes //= fold
        sizes = {**sizes, d.denoiser: den_bytes,
                 **{c.name: sizes[c.name] // layout.tp for c in experts},
                 **{c.name: sizes[c.name] // fold for c in encoders}}
        cfg_split = 2 if layout.cfg > 1 and samples_in_flight(w) > w.batch else 1
        act = act / (layout.tp * layout.sp * cfg_split)
        act_formula = msg("formula.parallel", "{formula}, / {n} over the GPUs of one pipeline "
                          "({layout})", formula=act_formula, n=layout.tp * layout.sp * cfg_split,
                          layout=layout.describe())
    dec, dec_formula = vae_decode_bytes(w)
    training = w.task == Task.IMAGE_LORA
    pipe = pipeline_dtype(w)
    dtypes = {c.name: component_dtype(c, q, w.quant, w.quant_scope, pipeline_dtype=pipe,
                                      vae_dtype=d.vae_dtype) for c in d.components}
    quantized = ([c.name for c in d.components if component_quantized(c, q, w.quant_scope)]
                 if w.quant else [])

    if training:
        terms, peak_act = _training_terms(w, den, sizes, encoders, vae, act, assumptions)
        peak_act = act
    else:
        # Stages run one after another; the peak is the worst stage's weights + activations.
        offload = effective_offload(w)
        if offload == "model":
            # the offload hooks chain the models: starting one moves the previous one back to
            # the CPU, so one text encoder (one expert) at a time; the denoiser is counted
            # through the VAE decode (mem-sdxl-fp16-model-offload; but see speed-notes.md,
            # issue 29 session 5: today's diffusers fires the VAE's hook on decode() through
            # apply_forward_hook, and the HunyuanVideo rows of the video_gen post peak without
            # the transformer there). bitsandbytes 8-bit weights cannot leave the GPU, so an
            # 8-bit denoiser is resident in every stage, text encoding included
            # (in-mem-hfvideo-hyv-8bit-offload-tiling)
            largest_enc = max((sizes[c.name] for c in encoders), default=0)
            comfy = w.engine_name == Engine.COMFYUI
            # ComfyUI frees the diffusion model when the VAE needs the room (comfy/sd.py
            # VAE.decode asks model_management.load_models_gpu for its memory)
            pinned = den_bytes if stays_on_gpu(w) else 0
            resident: dict[str, float] = {"encode": largest_enc + pinned, "denoise": den_bytes,
                                          "decode": vae_bytes if comfy else den_bytes + vae_bytes}
            how = msg("term.diffusion.offload", "{who}: one component at a time (the largest "
                      "text encoder {gb:.2f} GB while encoding), {decode}",
                      who=msg("term.diffusion.comfy", "ComfyUI's model management (idle models "
                              "unloaded to make room)") if comfy else
                      msg("term.diffusion.model_offload", "model offload"),
                      gb=largest_enc / 1e9,
                      decode=msg("term.diffusion.comfy_decode", "ComfyUI unloads the denoiser "
                                 "for the VAE decode") if comfy else
                      msg("term.diffusion.stays_8bit", "the 8-bit denoiser stays on the GPU "
                          "throughout (bitsandbytes 8-bit weights cannot be moved)") if pinned
                      else msg("term.diffusion.stays", "the denoiser stays while the VAE "
                               "decodes"))
            if comfy and w.offload == "none":
                assumptions.append(msg("diffusion.comfy", "ComfyUI's default model management: "
                                       "models stay loaded while they fit and are unloaded "
                                       "(text encoders first) when the next one needs the "
                                       "room; this is the least it needs ({flag}: everything "
                                       "resident)", flag=Field("offload", "gpu-only")))
        elif offload == "sequential":
            # accelerate's cpu_offload streams each leaf module in for its forward
            enc_mod = max((_module_bytes(c, sizes[c.name]) for c in encoders), default=0.0)
            den_mod = _module_bytes(den, den_bytes)
            vae_mod = max((_module_bytes(c, sizes[c.name]) for c in vae), default=0.0)
            resident = {"encode": enc_mod, "denoise": den_mod, "decode": vae_mod}
            how = msg("term.diffusion.sequential", "sequential offload: one module at a time "
                      "(largest: {den:,.0f} MB in the denoiser, {enc:,.0f} MB in the text "
                      "encoders)", den=den_mod / 1e6, enc=enc_mod / 1e6)
            assumptions.append(msg("diffusion.sequential", "sequential offload is very slow: "
                                   "weights cross PCIe every step"))
        elif offload in GROUP_OFFLOAD:
            resident, how = _group_resident(w, den, den_bytes, encoders, vae, sizes)
            assumptions.append(msg("diffusion.group", "group offload keeps the weights in "
                                   "pinned host RAM (about {gb:.0f} GB of it) and copies "
                                   "each group in while the one before it computes",
                                   gb=sum(whole_sizes.values()) / 1e9))
        else:
            every = den_bytes + expert_bytes + enc_bytes + vae_bytes
            resident = {"encode": every, "denoise": every, "decode": every}
            parts = [msg("term.diffusion.component", "{name} {gb:.2f} GB", name=c.name,
                         gb=sizes[c.name] / 1e9) for c in d.components]
            how = msg("term.diffusion.components", "{parts}", parts=Join(parts, " + "))
        stage_act = {"encode": 0.0, "denoise": act, "decode": dec}
        stage = max(resident, key=lambda k: resident[k] + stage_act[k])
        peak_act = stage_act[stage]
        what = {"encode": msg("stage.encode", "text encoding"),
                "denoise": msg("stage.denoise", "denoising"),
                "decode": msg("stage.decode", "VAE decode")}
        precision = ", ".join(f"{k} {v}" for k, v in dtypes.items())
        formats = msg("term.diffusion.formats", "run-time formats: {formats}", formats=precision)
        quant_note = (msg("term.diffusion.quant", "{flag} applies to {parts}; {formats}",
                          flag=Field("quant", w.quant), parts=", ".join(quantized),
                          formats=formats) if quantized else formats)
        terms = [MemoryTerm("weights", int(resident[stage]),
                            msg("term.diffusion.weights", "{how}; resident during {stage}, the "
                                "peak stage", how=how, stage=what[stage]),
                            quant_note, GROUP_SOURCE if offload in GROUP_OFFLOAD
                            else _OFFLOAD_SOURCE)]
        if stage == "denoise":
            cfg_note = (msg("cfg.one_pass", "one pass per step (guidance-distilled or CFG off)")
                        if w.cfg_passes == 1 else
                        msg("cfg.sequential", "classifier-free guidance runs its two passes one "
                            "after the other") if d.pipeline in CFG_SEQUENTIAL else
                        msg("cfg.batched", "classifier-free guidance batches its two passes"))
            src = memory_constant("diffusion_unet_activation_coeff" if den.kind == "unet"
                                  else "diffusion_block_bytes_per_token").source
            if den.kind != "unet" and _llm_int8_bytes(w, den, 1):
                src = f"{src}; {BNB_INT8_SOURCE}"
            terms.append(MemoryTerm("activations", int(act),
                                    msg("term.diffusion.step", "denoiser step peak: {formula}",
                                        formula=act_formula), cfg_note, src))
        elif stage == "decode":
            terms.append(MemoryTerm("vae_decode", int(dec),
                                    msg("term.diffusion.decode", "VAE decode peak: {formula}",
                                        formula=dec_formula),
                                    msg("term.diffusion.less", "denoising needs less ({gb:.1f} "
                                        "GB of activations)", gb=act / 1e9),
                                    _vae_decode_source(w)))
    terms.append(runtime_term(Engine.TRANSFORMERS))
    # independent pipelines share nothing; a split pipeline's GPUs talk every block
    nccl = nccl_term(w.gpus) if training else nccl_term(layout.per_pipeline)
    if nccl:
        terms.append(nccl)
    frag = memory_constant("fragmentation_fraction")
    terms.append(MemoryTerm("fragmentation", int(peak_act * frag.value),
                            msg("term.diffusion.fragmentation", "{share:.0%} of the activation "
                                "peak", share=frag.value), None, frag.source))
    if w.gpus > 1 and layout.replicas > 1:
        assumptions.append(msg("diffusion.per_gpu", "{engine} runs one pipeline per GPU: more "
                               "GPUs add throughput (one image or video each), not memory per "
                               "GPU", engine=w.engine_name))
    elif layout.per_pipeline > 1 and not layout.measured_context_parallel:
        assumptions.append(msg("diffusion.split", "one pipeline over {n} GPUs ({layout}): "
                               "tensor parallelism splits the diffusion model's weights, "
                               "sequence (Ulysses) and CFG parallelism only its activations; "
                               "text encoders sharded over the idle GPUs while they encode",
                               n=layout.per_pipeline, layout=layout.describe()))
    width, height = w.image_size
    details = {"components_bytes": whole_sizes, "component_formats": dtypes, "denoiser": d.denoiser,
               "denoiser_activation_bytes": int(act), "vae_decode_bytes": int(dec),
               "tokens": denoiser_tokens(w, den), "resolution": f"{width}x{height}",
               "frames": w.video_frames, "cfg_passes": w.cfg_passes, "offload": w.offload,
               "resident_offload": effective_offload(w), "all_resident_bytes": int(
                   den_bytes + expert_bytes + enc_bytes + vae_bytes + max(act, dec))}
    details["layout"] = layout.to_json()
    if training:
        details["lora_params"] = diffusion_lora_params(w, den)
        details.update(_training_details(w, den, sizes))
    return terms, assumptions, details


def _training_terms(w: Workload, den: ComponentSpec, sizes: dict[str, int],
                    encoders: list[ComponentSpec], vae: list[ComponentSpec], act: float,
                    assumptions: list[Message]) -> tuple[list[MemoryTerm], float]:
    """A LoRA run's resident weights (the denoiser, less its swapped blocks; the text encoders
    and the VAE where the trainer keeps them), then the adapters and activations."""
    from whichgpu.estimate.diffusion_trainers import (
        BLOCK_SWAP_SOURCE,
        check_blocks_to_swap,
        residency,
    )

    d = w.diffusion_spec
    res = residency(w.diffusion_trainer, w.cache_embeddings)
    blocks = max(den.num_layers, 1)
    check_blocks_to_swap(w.blocks_to_swap, den.num_layers)
    den_full = sizes[d.denoiser]
    swapped = int(den_full * w.blocks_to_swap / blocks)
    parts = [msg("term.diffusion.lora.den", "denoiser {gb:.1f} GB", gb=(den_full - swapped) / 1e9)]
    if swapped:
        parts.append(msg("term.diffusion.lora.swap", " ({n} of its {blocks} blocks, {gb:.1f} GB, "
                         "in host RAM)", n=w.blocks_to_swap, blocks=blocks, gb=swapped / 1e9))
    resident = den_full - swapped
    if res.text_encoders:
        enc = sum(sizes[c.name] for c in encoders)
        resident += enc
        parts.append(msg("term.diffusion.lora.te", " + text encoders {gb:.1f} GB", gb=enc / 1e9))
    if res.vae:
        v = sum(sizes[c.name] for c in vae)
        resident += v
        parts.append(msg("term.diffusion.lora.vae", " + VAE {gb:.2f} GB", gb=v / 1e9))
    assumptions.append(res.said)
    if swapped:
        assumptions.append(msg("diffusion.block_swap", "block swap: {n} of the diffusion "
                               "model's {blocks} blocks stay in host RAM ({gb:.1f} GB of it, "
                               "pinned) and cross PCIe in forward and backward every step",
                               n=w.blocks_to_swap, blocks=blocks, gb=swapped / 1e9))
    terms = [MemoryTerm("weights", int(resident),
                        msg("term.diffusion.lora.weights", "{parts}", parts=Join(parts, "")),
                        None, f"{res.trainer.source}; {BLOCK_SWAP_SOURCE}"
                        if swapped else res.trainer.source)]
    terms += _lora_terms(w, den, act)
    return terms, act


def _training_details(w: Workload, den: ComponentSpec, sizes: dict[str, int]) -> dict:
    from whichgpu.estimate.diffusion_trainers import residency

    res = residency(w.diffusion_trainer, w.cache_embeddings)
    swapped = int(sizes[w.diffusion_spec.denoiser] * w.blocks_to_swap / max(den.num_layers, 1))
    return {"trainer": res.trainer.name, "text_encoders_resident": res.text_encoders,
            "vae_resident": res.vae, "blocks_to_swap": w.blocks_to_swap,
            "host_ram_swapped_bytes": swapped}


def _layout(w: Workload) -> DiffusionLayout:
    from whichgpu.estimate.diffusion_parallel import diffusion_layout

    if w.task == Task.IMAGE_LORA:
        if splits_dit(w.engine_name):
            raise InputError(msg("diffusion.lora_engine", "{engine} runs diffusion models, it "
                                 "does not train them; LoRA training runs in diffusers' "
                                 "scripts and trainers ({flag})", engine=w.engine_name,
                                 flag=Field("engine", "diffusers")))
        return DiffusionLayout(replicas=max(w.gpus, 1))
    return diffusion_layout(w)


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
    d = w.diffusion_spec
    layers = max(den.num_layers, 1)
    hidden = den.hidden_size or 3072
    adapters = diffusion_lora_params(w, den)
    exact = bool(den.linears)
    per_param, what = ((8.0, msg("term.diffusion.adamw", "AdamW on adapters"))
                       if w.optimizer == "adamw" else (2.0, w.optimizer))
    width, height = w.image_size
    tokens = d.image_tokens(width, height) + d.text_tokens
    ck = 2 * layers * tokens * hidden * w.batch
    # backward keeps about one block's working set per block; checkpointing keeps each block's
    # input and recomputes one block at a time
    train_act = ck + act * 2 if w.uses_checkpointing else act * layers
    targets = ", ".join(w.lora_targets)
    return [
        MemoryTerm("adapter_weights", int(adapters * 4),
                   msg("term.diffusion.adapters", "rank {rank} on {targets}: {params:,} params x "
                       "4 bytes", rank=w.lora_rank, targets=targets, params=adapters) if exact
                   else msg("term.diffusion.adapters.rough", "rank {rank} on {targets}: "
                            "{params:,} params x 4 bytes (about 16 x hidden x rank per block)",
                            rank=w.lora_rank, targets=targets, params=adapters),
                   msg("term.diffusion.adapters.exact", "rank x (in + out) for every targeted "
                       "linear of the denoiser's blocks") if exact else
                   msg("term.diffusion.adapters.approx", "no layer shapes for this denoiser "
                       "class: an approximation")),
        MemoryTerm("gradients", int(adapters * 4),
                   msg("term.diffusion.gradients", "fp32 adapter gradients")),
        MemoryTerm("optimizer_states", int(adapters * per_param), what),
        MemoryTerm("activations", int(train_act),
                   msg("term.diffusion.checkpointed", "checkpointed block inputs + one block "
                       "recomputed") if w.uses_checkpointing else
                   msg("term.diffusion.kept", "every block's activations kept for backward"),
                   msg("term.checkpointing.on", "gradient checkpointing on")
                   if w.uses_checkpointing else
                   msg("term.checkpointing.off", "gradient checkpointing off")),
    ]
