"""Diffusion speed: per-step FLOPs from the denoiser's layers and its tokens, times steps.

DiT/MMDiT pass: 2 x (each linear's weights x the tokens it sees) + 4 x layers x tokens^2 x
                hidden (attention). Dual-stream blocks (FLUX, SD3, Qwen-Image) run their
                image-stream linears on the image tokens and their text-stream linears on the
                text tokens; FLUX's single-stream blocks run on both; cross-attention DiTs (Wan)
                project the text keys and values once per text token; modulation and embedders
                run once per sample. (Counting every parameter on every token overstates a
                FLUX.1 pass by about 1.7x.)
UNet pass:      counted layer by layer from the preset's UNet config (speed/diffusion_unet.py:
                3x3 convolutions and linears at each level's positions, attention matmuls
                apart); 2 x params x latent positions x a position fraction otherwise.
                On a GeForce card (FP32-accumulate rate cut to half) its narrow kernels
                reach more of that peak than on the A100 its efficiency is fitted on.
per image:      steps x CFG passes x pass FLOPs / (sustained peak x eta) + text encoding +
                VAE decode (+ tiling overlap) + CPU offload transfers
The sustained peak is the datasheet peak at the precision the kernels really use (16-bit with
FP32 accumulate in diffusers and ComfyUI by default: the half rate on GeForce cards) times what
the card's matmuls sustain (speed/sustained.py: power-limited T4/L4 far less than datasheet,
GeForce the full half rate). FP8 weights run FP8 matmuls only when compiled (torch.compile +
torchao, TensorRT, ComfyUI's --fast). Several GPUs run independent pipelines for images; a
video is split by sequence parallelism.
"""

from __future__ import annotations

from whichgpu.engines import has, module
from whichgpu.estimate.constants import per_key, speed_value
from whichgpu.estimate.diffusion_parallel import DiffusionLayout, all_to_all_s, diffusion_layout
from whichgpu.estimate.speed.hardware import Hardware, arch_key, compute_precision
from whichgpu.estimate.speed.result import Component
from whichgpu.estimate.speed.tensor_feed import card_arch_factor
from whichgpu.estimate.workload import GROUP_OFFLOAD, Workload
from whichgpu.models.spec import ComponentSpec
from whichgpu.vocabulary import Engine

# Text-stream linears of dual-stream blocks (diffusers names), and their image-stream twins.
_CONTEXT = ("add_q_proj", "add_k_proj", "add_v_proj", "to_add_out", "ff_context.", "txt_mlp.")
_TWIN = {"to_q": "add_q_proj", "to_k": "add_k_proj", "to_v": "add_v_proj",
         "to_out.0": "to_add_out", "ff.net.0.proj": "ff_context.net.0.proj",
         "ff.net.2": "ff_context.net.2", "img_mlp.net.0.proj": "txt_mlp.net.0.proj",
         "img_mlp.net.2": "txt_mlp.net.2"}
# Cross-attention DiTs (Wan, LTX-Video): each block has one self-attention and one
# cross-attention, and the linears are named by leaf module (PEFT targets), so the instances of
# to_k / to_v beyond one per block are the cross-attention's, projecting the text tokens.
_CROSS_KV = ("to_k", "to_v")
# Single-stream blocks (FLUX, HunyuanVideo: proj_mlp; FLUX.2: fused qkv+MLP) run on the image
# and text tokens together; an MMDiT without them (SD3) has only joint blocks.
_SINGLE_STREAM = ("proj_mlp", "attn.to_qkv_mlp_proj")


def _has_single_stream(den: ComponentSpec) -> bool:
    return any(g.name.startswith(_SINGLE_STREAM) for g in den.linears)


def image_only_attentions(den: ComponentSpec) -> int:
    """Self-attentions over the image tokens alone besides the blocks' joint attention: SD3.5's
    dual attention layers (``dual_attention_layers``: a second self-attention in the first
    13 blocks of SD3.5 Medium), seen as to_q instances beyond one per block in an MMDiT
    without single-stream blocks."""
    if den.kind != "mmdit" or _has_single_stream(den):
        return 0
    to_q = sum(g.count for g in den.linears if g.name == "to_q")
    return max(0, to_q - max(den.num_layers, 0))


def linear_token_flops(den: ComponentSpec, image_tokens: int, text_tokens: int,
                       frames_tokens: int | None = None) -> tuple[float, str]:
    """2 x weights x tokens summed over the denoiser's linear groups, each group at the tokens
    it runs on; the parameters no group lists (modulation, embedders) once per sample."""
    groups = {g.name: g for g in den.linears}
    joint_only = den.kind == "mmdit" and not _has_single_stream(den)
    self_left = {name: den.num_layers for name in _CROSS_KV}  # cross-attention DiTs
    total = 0.0
    listed = 0
    for g in den.linears:
        listed += g.params
        per = g.in_features * g.out_features
        if g.name.startswith(_CONTEXT):
            total += 2 * g.params * text_tokens
        elif den.kind == "dit" and g.name in _CROSS_KV:
            own = min(g.count, self_left[g.name])
            self_left[g.name] -= own
            total += 2 * per * (own * image_tokens + (g.count - own) * text_tokens)
        elif g.name in _TWIN and _TWIN[g.name] in groups:
            dual = min(groups[_TWIN[g.name]].count, g.count)  # dual-stream instances
            rest = image_tokens if joint_only else image_tokens + text_tokens
            total += 2 * per * (dual * image_tokens + (g.count - dual) * rest)
        elif any(n.startswith(_CONTEXT) for n in groups) and not joint_only:
            total += 2 * g.params * (image_tokens + text_tokens)  # single-stream blocks
        else:
            total += 2 * g.params * image_tokens
    other = max(den.params - listed, 0)
    total += 2 * other  # per sample
    return total, (f"2 x each linear's weights x its tokens ({image_tokens:,} image/video, "
                   f"{text_tokens:,} text) + {other / 1e9:.1f}B modulation/embedding params "
                   "once per sample")


def pass_flops(w: Workload) -> tuple[float, int, str]:
    """FLOPs of one denoiser pass (linear + attention), its token count and the formula."""
    lin, attn, tokens, formula = pass_flops_split(w)
    return lin + attn, tokens, formula


def pass_flops_split(w: Workload) -> tuple[float, float, int, str]:
    d = w.diffusion_spec
    den = d.component(d.denoiser)
    width, height = w.image_size
    if den.kind == "unet":
        lh, lw = height // d.vae_scale_factor, width // d.vae_scale_factor
        positions = lh * lw
        counted = _unet_counted(w, lh, lw)
        if counted is not None:
            return counted
        frac = speed_value("unet_position_fraction")
        return (2 * den.params * positions * frac, 0.0, positions,
                f"2 x {den.params / 1e9:.2f}B params x {positions:,} positions x {frac:g}")
    image = d.image_tokens(width, height, w.video_frames)
    tokens = image + (d.text_tokens if den.kind == "mmdit" else 0)
    layers = max(den.num_layers, 1)
    hidden = den.hidden_size or 3072
    attn = 4 * layers * tokens * tokens * hidden
    extra = image_only_attentions(den)
    attn += 4 * extra * image * image * hidden
    if den.linears:
        lin, how = linear_token_flops(den, image, d.text_tokens)
    else:  # no layer shapes: every parameter on every token (an over-count for dual streams)
        lin = 2 * den.params * tokens
        how = f"2 x {den.params / 1e9:.1f}B params x {tokens:,} tokens"
    return (lin, attn, tokens,
            f"{how} + attention 4 x {layers} x {tokens:,}^2 x {hidden}"
            + (f" + 4 x {extra} x {image:,}^2 x {hidden} (image-only self-attentions)"
               if extra else ""))


def _unet_counted(w: Workload, lh: int, lw: int) -> tuple[float, float, int, str] | None:
    """A UNet's pass counted layer by layer from its config (speed/diffusion_unet.py), where
    the model is a shipped preset; None otherwise (the position-fraction prior applies)."""
    from whichgpu.estimate.speed.diffusion_unet import preset_layout, unet_macs

    layout = preset_layout(w.model.source)
    if layout is None:
        return None
    dense, attn = unet_macs(layout, lh, lw, w.diffusion_spec.text_tokens)
    return (2 * dense, 2 * attn, lh * lw,
            f"UNet counted layer by layer at {lw}x{lh} latents: {2 * dense / 1e12:.2f} "
            f"TFLOP convolutions and linears + {2 * attn / 1e12:.2f} TFLOP attention matmuls")


def _precision(w: Workload, hw: Hardware, compiled: bool) -> tuple[str, str]:
    """The matmul precision key and why: 16-bit with FP32 accumulate unless compiled, where
    FP8 weights get FP8 kernels (FP8-capable cards) and ComfyUI's --fast mode accumulates FP16
    on GeForce."""
    d = w.diffusion_spec
    den = d.component(d.denoiser)
    q = w.quant_format
    precision, why = compute_precision(hw.gpu, q, Engine.TRANSFORMERS)
    if den.native_dtype == "fp16" and precision == "bf16" and q.is_16bit:
        precision = "fp16"
    sixteen = "fp16" if den.native_dtype == "fp16" else \
        ("bf16" if hw.gpu.supports("bf16") else "fp16")
    if precision in ("fp8", "int8", "fp4") and not compiled:
        # Measured: FP8 weights run no faster than 16-bit in eager pipelines. diffusers +
        # torchao FP8 without compile took 1.96 s vs 1.54 s in bf16 for FLUX.1-schnell on an
        # H100 PCIe (pollinations/flux-optimizations); ComfyUI computes FP8 checkpoints in
        # 16-bit (unet_manual_cast) unless --fast fp8_matrix_mult
        precision = sixteen
        why = (f"{q.name} weights are upcast to {precision} per layer: eager diffusers and "
               "ComfyUI gain no FP8 matmul speed (measured; --compile for FP8 kernels)")
    elif precision in ("fp16", "bf16"):
        why = (f"{precision} matmuls with FP32 accumulate (PyTorch's cuBLAS default; "
               "allow_fp16_accumulation is off)")
    consumer = hw.gpu.form_factor == "consumer"
    if compiled and precision == "fp8" and consumer and hw.gpu.supports("fp8_acc16"):
        # FP8 inference kernels ask cuBLASLt for fast accumulation: torchao's
        # Float8DynamicActivationFloat8WeightConfig defaults to Float8MMConfig(use_fast_accum=
        # True), flux-fp8-api's F8Linear passes use_fast_accum=True ("much faster than float16
        # matmul w/ float32 accumulate on ADA devices"); on GeForce that is the full FP8 rate
        precision = "fp8_acc16"
        why = ("FP8 matmuls with fast accumulation (torchao and flux-fp8-api defaults): the "
               "GeForce full FP8 rate")
    elif compiled and w.engine_name == Engine.COMFYUI and consumer and precision == "fp16" and \
            hw.gpu.supports("fp16_acc16"):
        # ComfyUI --fast: fp16_accumulation (PyTorch 2.7 allow_fp16_accumulation) for fp16
        # models; GeForce runs FP16-accumulate at the full rate (S22)
        precision = "fp16_acc16"
        why = "ComfyUI --fast: FP16 accumulation, the GeForce full-rate path (S22)"
    return precision, why


def upcast_seconds(w: Workload, hw: Hardware, precision: str, compiled: bool) -> float:
    """Per step, an eager pipeline whose quantized weights compute in 16-bit casts every
    layer's weights before its matmul (diffusers' layerwise casting and torchao/quanto
    weight-only tensors, ComfyUI's manual cast): the quantized bytes read, a 16-bit copy
    written and read back by the matmul, at the datasheet bandwidth (one forward per step:
    the CFG passes are batched). Compiled graphs fuse the cast into the matmul's load."""
    q = w.quant_format
    if compiled or q.is_16bit or precision not in ("bf16", "fp16"):
        return 0.0
    d = w.diffusion_spec
    params = d.component(d.denoiser).params
    moved = params * (q.linear_bits / 8 + 4)
    return moved / hw.gpu.bandwidth_bytes_per_s


def compile_speedup(w: Workload, hw: Hardware, compiled: bool) -> tuple[float, str]:
    """How much faster a compiled transformer denoiser's step runs than the eager one: the
    elementwise work between the matmuls (norms, modulation, RoPE, activations, FP8 input
    scaling) is fused into few kernels; UNets gain mostly the launch overhead (counted
    apart)."""
    d = w.diffusion_spec
    if not compiled or d.component(d.denoiser).kind not in ("dit", "mmdit"):
        return 1.0, ""
    arch = arch_key(hw.gpu)
    s = per_key("diffusion_compile_speedup", arch)
    return s, f"compiled: x{s:g} on the denoiser's compute ({arch} fused elementwise work)"


def gemm_size_factor(den: ComponentSpec) -> tuple[float, str]:
    """How much less of the peak a transformer denoiser's GEMMs reach for its width: a
    narrow model's matmuls fill the GPU less and its per-token elementwise work (norms,
    modulation, activations: ~tokens x hidden) weighs more against the matmuls (~tokens x
    hidden^2). The same measured curve as small_model_mfu (llm-foundry's MFU against d_model
    on H100s); UNets keep 1.0 (their efficiency is fitted on their own rows)."""
    from whichgpu.estimate.speed.training import size_factor

    if den.kind not in ("dit", "mmdit") or not den.hidden_size:
        return 1.0, ""
    f = size_factor(den.hidden_size)
    if f >= 1.0:
        return 1.0, ""
    return f, (f"hidden size {den.hidden_size:,}: x{f:.2f} for its narrower GEMMs "
               "(small_model_mfu)")


def _offload_seconds(w: Workload, hw: Hardware, steps: int, t_step: float = 0.0,
                     ) -> tuple[float, str]:
    """Weights copied over the host link per image: model offload moves each component in
    once per image, sequential offload every step; ComfyUI's model management only when the
    pipeline does not fit this GPU whole; group offload with CUDA streams like sequential
    offload, but each forward's copies overlap that forward's compute (``t_step``: the GPU's
    seconds per denoising step)."""
    from whichgpu.estimate.memory.diffusion import (
        component_sizes,
        effective_offload,
        stays_on_gpu,
    )

    d = w.diffusion_spec
    mode = effective_offload(w)
    if mode in GROUP_OFFLOAD:
        return _group_seconds(w, hw, steps, t_step)
    if mode not in ("model", "sequential"):
        return 0.0, "none"
    if w.offload == "none" and w.engine_name == Engine.COMFYUI:
        from whichgpu.estimate.memory import estimate_memory

        resident = estimate_memory(w.with_(offload="gpu-only")).total_bytes
        if resident <= hw.gpu.usable_memory_bytes:
            return 0.0, "none: ComfyUI keeps every model loaded when they fit"
    host_bw = per_key("host_offload_gb_s", str(hw.gpu.interconnect.host_link.value)) * 1e9
    if mode == "sequential" and w.engine_name == Engine.COMFYUI:
        # ComfyUI's partial loading (lowvram) keeps what fits and streams only the rest of the
        # diffusion model each step (comfy/model_management.py load_models_gpu)
        from whichgpu.estimate.memory import estimate_memory

        whole = estimate_memory(w.with_(offload="none")).total_bytes
        over = max(whole - hw.gpu.usable_memory_bytes, 0)
        return over * steps / host_bw, (f"ComfyUI partial loading: {over / 1e9:.1f} GB of the "
                                        "diffusion model streamed over the host link every "
                                        "step")
    sizes = component_sizes(w)  # the bytes the memory model holds: the run-time dtypes
    if mode == "sequential":
        # accelerate's cpu_offload streams a module in for each forward: the text encoders and
        # the VAE once per image, the denoiser every forward (one per step, two where the
        # pipeline runs its CFG passes one after the other; Wan 2.2's experts take turns)
        from whichgpu.estimate.memory.diffusion import CFG_SEQUENTIAL
        from whichgpu.estimate.memory.weights import DENOISERS

        forwards = steps * (w.cfg_passes if d.pipeline in CFG_SEQUENTIAL else 1)
        den = sizes[d.denoiser]
        once = sum(sizes[c.name] for c in d.components if c.kind not in DENOISERS)
        seconds = (den * forwards + once) / host_bw
        return seconds, (f"sequential offload: the diffusion model's {den / 1e9:.1f} GB over "
                         f"the host link for each of {forwards} forward passes, the other "
                         f"components' {once / 1e9:.1f} GB once per image")
    moved = [c for c in d.components if c.kind != "vae"]
    if stays_on_gpu(w):  # 8-bit bitsandbytes weights never move
        moved = [c for c in moved if c.name != d.denoiser]
    moved_bytes = sum(sizes[c.name] for c in moved)
    # the engine's own words for it (engines/comfyui.py), else diffusers'
    who = getattr(module(w.engine_name), "MODEL_OFFLOAD_WORDS", "model offload")
    return moved_bytes / host_bw, (f"{who}: {moved_bytes / 1e9:.1f} GB over the host link "
                                   "once per image")


def _group_seconds(w: Workload, hw: Hardware, steps: int, t_step: float) -> tuple[float, str]:
    """diffusers' group offload with CUDA streams: the diffusion model crosses the host link
    once per forward pass as under sequential offload, from pinned memory, on a side stream
    that copies the next group while the current one computes (diffusers
    hooks/group_offloading.py), so a forward takes the longer of its compute and its copies;
    only the first group's copy and what the compute does not cover show. The text encoders
    and the VAE run once per image, too briefly to hide theirs."""
    from whichgpu.estimate.memory.diffusion import CFG_SEQUENTIAL, component_sizes
    from whichgpu.estimate.memory.weights import DENOISERS

    d = w.diffusion_spec
    den = d.component(d.denoiser)
    sizes = component_sizes(w)
    host_bw = per_key("host_offload_gb_s", str(hw.gpu.interconnect.host_link.value)) * 1e9
    per_step = w.cfg_passes if d.pipeline in CFG_SEQUENTIAL else 1
    forwards = steps * per_step
    copy = sizes[d.denoiser] / host_bw  # one forward's copies
    compute = t_step / per_step  # one forward's GPU time
    first = copy / max(den.num_layers, 1)  # nothing to overlap the first group with
    exposed = forwards * (max(copy - compute, 0.0) + first)
    once = sum(sizes[c.name] for c in d.components if c.kind not in DENOISERS)
    return exposed + once / host_bw, (
        f"group offload with CUDA streams: the diffusion model's {sizes[d.denoiser] / 1e9:.1f} "
        f"GB copied in {copy * 1e3:,.0f} ms a forward pass behind {compute * 1e3:,.0f} ms of "
        f"compute ({forwards} passes, {exposed:.1f} s not hidden), the other components' "
        f"{once / 1e9:.1f} GB once per image")


def block_swap_seconds(w: Workload, hw: Hardware) -> tuple[float, str]:
    """LoRA training with block swap: the swapped blocks cross the host link into the GPU for
    the forward and again for the backward, every step (kohya's and musubi-tuner's
    --blocks_to_swap); the copies overlap the compute, so a step takes the longer of the two."""
    if not w.blocks_to_swap:
        return 0.0, ""
    from whichgpu.estimate.memory.diffusion import component_sizes

    d = w.diffusion_spec
    den = d.component(d.denoiser)
    swapped = component_sizes(w)[d.denoiser] * w.blocks_to_swap / max(den.num_layers, 1)
    host_bw = per_key("host_offload_gb_s", str(hw.gpu.interconnect.host_link.value)) * 1e9
    return 2 * swapped / host_bw, (f"block swap: {swapped / 1e9:.1f} GB of {w.blocks_to_swap} "
                                   "blocks over the host link twice a step (forward, backward), "
                                   "overlapped with the compute")


def parallel_comm_seconds(w: Workload, hw: Hardware, layout: DiffusionLayout, passes: int,
                          tokens: int, t_attn: float = 0.0, compiled: bool = False,
                          ) -> tuple[float, str]:
    """Communication of one denoising step of a pipeline split over GPUs, on the critical
    path (no overlap assumed): tensor parallel, two all-reduces of the block's output
    activations per block (attention and MLP, Megatron-style); Ulysses, four all-to-alls per
    attention layer (Q, K, V in, the output back) of this GPU's tokens, each with a fixed cost
    (ulysses_all_to_all_fixed_us: measured on xDiT's FLUX runs); ring attention, its K/V
    exchanges and merges (:func:`ring_attention_seconds`; ``t_attn``: this GPU's attention
    seconds per step, which hide the exchanges); CFG parallel, one
    all-gather of the predicted latents per step. 16-bit activations, the link between the
    GPUs from the catalog (NVLink, PCIe with or without peer-to-peer) at its efficiency."""
    if layout.measured_context_parallel or layout.per_pipeline == 1:
        return 0.0, ""
    d = w.diffusion_spec
    den = d.component(d.denoiser)
    layers = max(den.num_layers, 1)
    hidden = den.hidden_size or 3072
    local = passes * tokens / layout.sp * 2  # bytes per hidden unit held by this GPU
    tp = 2 * layers * hw.link.all_reduce_s(local * hidden, layout.tp)
    sp = 4 * layers * all_to_all_s(hw.link, local * hidden / layout.tp, layout.ulysses)
    if sp:  # the reshapes, copies and rank synchronisation around each all-to-all
        sp += 4 * layers * speed_value("ulysses_all_to_all_fixed_us") * 1e-6
    width, height = w.image_size
    latent = d.image_tokens(width, height, w.video_frames) * 64 * 4 * passes
    cfg = hw.link.all_gather_s(latent * layout.cfg, layout.cfg)
    ring, _, _ = ring_attention_seconds(w, hw, layout, passes, tokens, t_attn,
                                        compiled)
    parts = [f"{name} {t * 1e3:.1f} ms" for name, t in (("tensor-parallel all-reduces", tp),
                                                      ("Ulysses all-to-alls", sp),
                                                      ("ring attention K/V exchanges and "
                                                       "merges", ring),
                                                      ("CFG all-gather", cfg)) if t]
    return tp + sp + ring + cfg, f"{', '.join(parts)} over {hw.link.kind}"


# Bytes moved per element of this GPU's attention output when ring attention merges the
# partial outputs of its blocks (zhuzilin/ring-flash-attention and yunchang, used by xDiT:
# update_out_and_lse keeps the output in FP32). Eager: the first block cast up (read 2, write
# 4) and the result cast back (read 4, write 2) = 12; each further block merged by separate
# kernels (block to FP32: 2 + 4; out - block: 8 + 4; x sigmoid(lse difference): 4 + 4;
# out - that: 8 + 4) = 38. Compiled: each merge one fused kernel (read out 4 and block 2,
# write 4) = 10.
RING_MERGE_ENDS_BYTES = 12
RING_MERGE_BYTES = {False: 38, True: 10}
# Host-issued operations per ring step beyond Ulysses's one attention call (ring_flash_attn
# forward): two send_recv buffers, one batch_isend_irecv, four request waits; a further
# attention call and its merge (about 8 elementwise kernels); plus the first block's cast up
# and the last cast back once per layer.
RING_HOST_OPS_PER_STEP = 2 + 1 + 4 + 1 + 8
RING_HOST_OPS_PER_LAYER = 2


def ring_attention_seconds(w: Workload, hw: Hardware, layout: DiffusionLayout, passes: int,
                           tokens: int, t_attn: float, compiled: bool,
                           ) -> tuple[float, float, str]:
    """Ring attention per denoising step: (GPU seconds on the critical path, host seconds of
    an eager step, why). Each attention layer takes ``ring - 1`` ring steps; in each, this
    GPU's K and V blocks (its tokens / ring x its heads, 16-bit) go to the next GPU while it
    computes attention on the block in hand, so only the transfer beyond that block's
    attention shows, plus the synchronisation of the two P2P operations (K, V) at the fixed
    cost measured for Ulysses's collectives; the partial outputs are merged in FP32 (memory
    traffic at the datasheet bandwidth). Eager, the host issues every exchange, wait,
    attention call and merge kernel (``diffusion_eager_host_us_per_op`` each)."""
    r = layout.ring
    if r <= 1:
        return 0.0, 0.0, ""
    d = w.diffusion_spec
    den = d.component(d.denoiser)
    layers = max(den.num_layers, 1)
    hidden = den.hidden_size or 3072
    block = passes * tokens / r * hidden / (layout.ulysses * layout.tp)  # elements per GPU
    link = hw.link
    xfer = 2 * block * 2 / (link.one_way_bytes_per_s * link.efficiency) + link.latency_s
    exposed = max(0.0, xfer - t_attn / layers / r)
    sync = 2 * speed_value("ulysses_all_to_all_fixed_us") * 1e-6
    merge = block * (RING_MERGE_ENDS_BYTES + (r - 1) * RING_MERGE_BYTES[compiled]) \
        / hw.gpu.bandwidth_bytes_per_s
    gpu = layers * ((r - 1) * (exposed + sync) + merge)
    host = 0.0 if compiled else layers * (
        (r - 1) * RING_HOST_OPS_PER_STEP + RING_HOST_OPS_PER_LAYER) * speed_value(
            "diffusion_eager_host_us_per_op") * 1e-6
    return gpu, host, (f"ring attention over {r} GPUs: {(r - 1) * layers} K/V exchanges "
                       f"a step ({xfer * 1e6:.0f} us each, {exposed * 1e6:.0f} us of it "
                       "not hidden by the block's attention)")


def eager_host_seconds(den: ComponentSpec, compiled: bool) -> float:
    """The host time to issue one eager denoising step of a transformer denoiser: Python and
    kernel launches per block (diffusion_eager_host_ms_per_block). The GPU runs behind the
    host, so a step never takes less; it shows when the GPU work per step is small (a split
    over several GPUs: xDiT's FLUX.1-dev stays at about 150 ms a step on 2 and 4 H100s eager,
    where compiled it keeps scaling). Compiled graphs issue few kernels: none."""
    if compiled:
        return 0.0
    return per_key("diffusion_eager_host_ms_per_block", den.kind) * 1e-3 * max(den.num_layers,
                                                                              1)


def residency(w: Workload, offload_why: str) -> str:
    """Which memory management the speed assumes, in the engine's own terms."""
    from whichgpu.estimate.memory.diffusion import effective_offload

    mode = effective_offload(w)
    if w.engine_name == Engine.COMFYUI and (w.offload == "none" or mode == "model"):
        # ComfyUI has no model-offload switch: unloading idle models is its model management
        return ("ComfyUI's default model management: models stay loaded while they fit, idle "
                "ones are unloaded when the next needs the room")
    if w.engine_name == Engine.COMFYUI and mode == "sequential":
        return f"{offload_why} (its lowvram mode)"
    words = getattr(module(w.engine_name), "CPU_OFFLOAD_WORDS", None)
    if mode in ("model", "sequential") and words:  # the engine's own words (engines/sglang.py)
        return (f"{mode} CPU offload ({words}): " + ("one component on the GPU at a time"
                                                     if mode == "model" else
                                                     "weights streamed in every step"))
    if mode == "model":
        return "model CPU offload: one component on the GPU at a time (diffusers " \
            "enable_model_cpu_offload)"
    if mode == "sequential":
        return "sequential CPU offload: weights streamed in module by module every step " \
            "(diffusers enable_sequential_cpu_offload)"
    if mode in GROUP_OFFLOAD:
        return ("group offload with CUDA streams: weights copied in group by group every "
                "step, overlapped with the compute (diffusers enable_group_offload, "
                + ("leaf_level" if mode == "group-leaf" else "block_level, one block per group")
                + ", use_stream=True)")
    from whichgpu.engines import label

    return (f"the whole pipeline resident on the GPU (the default of {label(w.engine_name)}; "
            "CPU offload only when asked)")


def group_alternative(w: Workload, hw: Hardware, compiled: bool, seconds: float) -> str | None:
    """What diffusers' group offload with CUDA streams would take where the run streams its
    weights by sequential offload (about the same GPU memory: the next block prefetched), or
    None where it does not apply."""
    from whichgpu.estimate.memory.diffusion import effective_offload

    if not has(w.engine_name, "group_offload") or effective_offload(w) != "sequential":
        return None
    group = diffusion_run(w.with_(offload="group"), hw, compiled)["seconds_per_run"]
    if group >= seconds:
        return None
    return (f"group offload with CUDA streams (diffusers enable_group_offload, block_level, "
            f"use_stream=True; offload mode 'group') copies the same weights behind the "
            f"compute: about {group:,.0f} s instead of {seconds:,.0f} s a run, at about the "
            "same GPU memory, with the weights pinned in host RAM")


def diffusion_run(w: Workload, hw: Hardware, compiled: bool = False) -> dict:
    from whichgpu.estimate.speed.sustained import sustained_scale

    d = w.diffusion_spec
    den = d.component(d.denoiser)
    precision, why = _precision(w, hw, compiled)
    scale, scale_why = sustained_scale(hw.gpu)
    peak = (hw.peak(precision) or hw.peak("fp16") or 1.0) * scale
    size, size_why = gemm_size_factor(den)
    arch_factor, arch_why = card_arch_factor(hw.gpu)
    eta = per_key("diffusion_compute_efficiency", den.kind) * arch_factor * size
    relief, relief_why = 1.0, ""
    if den.kind == "unet":  # narrow convolutions: a cut-rate tensor path is easier to keep busy
        from whichgpu.estimate.speed.diffusion_unet import half_rate_relief

        relief, relief_why = half_rate_relief(hw.gpu, precision)
        eta *= relief
    steps = w.steps or d.default_steps
    lin, attn, tokens, formula = pass_flops_split(w)
    passes = w.cfg_passes * w.batch
    # attention (flash attention: 16-bit inputs, FP32 accumulate) stays at the 16-bit rate
    # whatever the linears run at
    attn_precision = "bf16" if hw.gpu.supports("bf16") and den.native_dtype != "fp16" \
        else "fp16"
    # the constant's note: FP8/INT8/FP4 matmuls reach a smaller share of their higher peak
    lin_eta = eta * (speed_value("fp8_compute_efficiency_factor")
                     if precision.startswith(("fp8", "int8", "fp4")) else 1.0)
    attn_peak = (hw.peak(attn_precision) * scale * per_key(
        "attention_arch_factor", str(hw.gpu.architecture.value))) or peak
    # CUDA graphs (torch.compile max-autotune / reduce-overhead, TensorRT) replay a step's
    # kernels without the CPU launching each one: the launch overhead goes
    overhead = 0.0 if compiled else per_key("diffusion_step_overhead_ms", den.kind) * 1e-3
    speedup, speedup_why = compile_speedup(w, hw, compiled)
    layout = diffusion_layout(w)
    split = 1 if layout.measured_context_parallel else layout.tp * layout.sp
    passes = passes // layout.cfg  # CFG parallel: each GPU runs one branch
    upcast = upcast_seconds(w, hw, precision, compiled) / layout.tp
    t_attn = passes * attn / (attn_peak * eta) / speedup / split  # quadratic in the tokens
    comm, comm_why = parallel_comm_seconds(w, hw, layout, passes, tokens, t_attn, compiled)
    t_gpu = passes * lin / (peak * lin_eta) / speedup / split + t_attn + upcast + comm
    host = eager_host_seconds(den, compiled) + ring_attention_seconds(
        w, hw, layout, passes, tokens, t_attn, compiled)[1]
    t_step = max(t_gpu, host) + overhead
    t_denoise = steps * t_step
    width, height = w.image_size
    base_peak = (hw.peak("bf16") or hw.peak("fp16") or peak) * scale
    aux = speed_value("aux_model_efficiency")
    tiling = per_key("vae_tiling_compute_factor", w.engine_name) if w.vae_tiling else 1.0
    vae = (speed_value("vae_decode_flops_per_pixel") * width * height * w.video_frames * w.batch
           / (base_peak * aux)) * tiling
    text = sum(2 * c.params * max(c.max_tokens, 77) for c in d.components
               if c.kind in ("clip", "t5", "llm")) / (base_peak * aux)
    fixed = per_key("diffusion_fixed_s", "video" if d.is_video else "image")
    offload, offload_why = _offload_seconds(w, hw, steps, t_step - overhead)
    # the copies made every step (sequential and group offload, ComfyUI's partial loading) slow
    # the step rate a progress bar shows; what moves once per image does not
    per_step = (offload - _offload_seconds(w, hw, 0, t_step - overhead)[0]) / max(steps, 1)
    per_run = t_denoise + vae + text + fixed + offload
    sp_eff = 1.0
    if layout.measured_context_parallel:
        sp_eff = per_key("sequence_parallel_efficiency", hw.link.kind)
        per_run = per_run / (w.gpus * sp_eff)
    comps = (
        Component("denoising", t_denoise,
                  f"{steps} steps x {w.cfg_passes} pass(es) x batch {w.batch} x "
                  f"({formula}) / ({peak / 1e12:,.0f} TFLOPS sustained {precision} x "
                  f"{eta:.2f})" + (f" / {speedup:g} (compiled)" if speedup != 1 else "")
                  + (f" / {split} GPUs ({layout.describe()})" if split > 1 else "")
                  + (f"; each step at least {host * 1e3:.0f} ms, the host's time to issue "
                     "it eager" if host >= t_gpu else "")
                  + f" + {overhead * 1e3:.0f} ms launch overhead per step (CFG passes "
                  "batched)" + (f" + {upcast * 1e3:.0f} ms per step casting the quantized "
                                "weights to 16-bit" if upcast else "")
                  + (f" + {comm * 1e3:.1f} ms per step of communication ({comm_why})"
                     if comm else "")),
        Component("VAE decode", vae, f"decoder FLOPs per output pixel at {aux:.0%} of the "
                                     "16-bit peak" + (f", x{tiling:g} for the tiles' overlap"
                                                      if w.vae_tiling else "")),
        Component("text encoders", text, f"one encoder pass per prompt at {aux:.0%} of the "
                                         "16-bit peak"),
        Component("pipeline overhead", fixed, "scheduler, transfers, Python"),
        Component("CPU offload transfers", offload, offload_why),
    )
    why = f"{why}; {scale_why}" + (f"; {speedup_why}" if speedup_why else "") + (
        f"; {size_why}" if size_why else "") + (f"; {arch_why}" if arch_why else "") + (
        f"; {relief_why}" if relief_why else "")
    return {"precision": precision, "why": why, "seconds_per_run": per_run,
            "steps": steps, "tokens": tokens, "it_per_s": 1 / (t_step + per_step),
            "sequence_parallel_efficiency": sp_eff, "layout": layout,
            "residency": residency(w, offload_why),
            "communication_s": comm * steps, "attention_share": t_attn / t_step,
            "components": comps, "sustained_scale": scale,
            "bound": "compute" if t_denoise > (vae + text + fixed + offload) else
            ("interconnect" if offload > t_denoise else "fixed-overhead")}
