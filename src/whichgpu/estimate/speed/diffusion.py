"""Diffusion speed: per-step FLOPs from the denoiser's size and its tokens, times steps.

DiT/MMDiT pass:  2 x params x tokens + 4 x layers x tokens^2 x hidden (attention)
UNet pass:       2 x params x latent positions x a position fraction (conv levels shrink)
per image:       steps x CFG passes x pass FLOPs / (peak x eta) + text encoding + VAE decode
Tokens are latent pixels after the VAE and patching (+ text tokens for MMDiT joint attention);
video adds latent frames. Several GPUs run independent pipelines for images; a video is split
by sequence parallelism.
"""

from __future__ import annotations

from whichgpu.estimate.constants import per_key, speed_value
from whichgpu.estimate.speed.hardware import Hardware, arch_key, compute_precision
from whichgpu.estimate.speed.result import Component
from whichgpu.estimate.workload import Workload


def pass_flops(w: Workload) -> tuple[float, int, str]:
    """FLOPs of one denoiser pass (linear + attention), its token count and the formula."""
    lin, attn, tokens, formula = pass_flops_split(w)
    return lin + attn, tokens, formula


def pass_flops_split(w: Workload) -> tuple[float, float, int, str]:
    d = w.model.diffusion
    den = d.component(d.denoiser)
    width, height = w.image_size
    if den.kind == "unet":
        positions = (width // d.vae_scale_factor) * (height // d.vae_scale_factor)
        frac = speed_value("unet_position_fraction")
        return (2 * den.params * positions * frac, 0.0, positions,
                f"2 x {den.params / 1e9:.2f}B params x {positions:,} positions x {frac:g}")
    tokens = d.image_tokens(width, height, w.video_frames)
    if den.kind == "mmdit":
        tokens += d.text_tokens
    layers = max(den.num_layers, 1)
    hidden = den.hidden_size or 3072
    return (2 * den.params * tokens, 4 * layers * tokens * tokens * hidden, tokens,
            f"2 x {den.params / 1e9:.1f}B params x {tokens:,} tokens + attention "
            f"4 x {layers} x {tokens:,}^2 x {hidden}")


def diffusion_run(w: Workload, hw: Hardware, compiled: bool = False) -> dict:
    d = w.model.diffusion
    den = d.component(d.denoiser)
    q = w.quant_format
    precision, why = compute_precision(hw.gpu, q, "transformers")
    if den.native_dtype == "fp16" and precision == "bf16" and q.is_16bit:
        precision = "fp16"
    if precision in ("fp8", "int8", "fp4") and not compiled:
        # Measured: FP8 weights run no faster than 16-bit in eager pipelines. diffusers +
        # torchao FP8 without compile took 1.96 s vs 1.54 s in bf16 for FLUX.1-schnell on an
        # H100 PCIe (pollinations/flux-optimizations); ComfyUI ran FLUX.1-dev and SD 3.5 Medium
        # as fast in FP8 as in 16-bit on an RTX 5090 (validation rows img-comfy-*).
        precision = "fp16" if den.native_dtype == "fp16" else \
            ("bf16" if hw.gpu.supports("bf16") else "fp16")
        why = (f"{q.name} weights are upcast to {precision} per layer: eager diffusers and "
               "ComfyUI gain no FP8 matmul speed (measured; --compile for FP8 kernels)")
    if w.engine_name == "comfyui" and hw.gpu.form_factor == "consumer" and \
            precision in ("fp16", "bf16", "fp8"):
        # ComfyUI's --fast mode: FP8 matmuls and FP16 accumulation, the GeForce fast path (S22)
        precision = "fp8_acc16" if precision == "fp8" else "fp16_acc16"
        why = "ComfyUI --fast: GeForce FP16-accumulate tensor rate (S22)" + (
            f"; {q.name} weights upcast" if q.compute in ("fp8", "int8", "fp4") else "")
    peak = hw.peak(precision) or hw.peak("fp16") or 1.0
    eta = per_key("diffusion_compute_efficiency", den.kind) * per_key(
        "compute_arch_factor", arch_key(hw.gpu))
    steps = w.steps or d.default_steps
    lin, attn, tokens, formula = pass_flops_split(w)
    passes = w.cfg_passes * w.batch
    # attention (flash attention) stays in 16-bit even when the linears run in FP8
    attn_precision = {"fp8": "bf16", "fp8_acc16": "fp16_acc16"}.get(precision, precision)
    lin_eta = eta * (speed_value("fp8_compute_efficiency_factor")
                     if precision.startswith("fp8") else 1.0)
    attn_peak = hw.peak(attn_precision) * per_key(
        "attention_arch_factor", str(hw.gpu.architecture.value)) or peak
    # CUDA graphs (torch.compile max-autotune / reduce-overhead, TensorRT) replay a step's
    # kernels without the CPU launching each one: the launch overhead goes
    # diffusers and ComfyUI batch the conditional and unconditional passes into one call
    overhead = 0.0 if compiled else per_key("diffusion_step_overhead_ms", den.kind) * 1e-3
    t_step = passes * (lin / (peak * lin_eta) + attn / (attn_peak * eta)) + overhead
    t_denoise = steps * t_step
    width, height = w.image_size
    base_peak = hw.peak("bf16") or hw.peak("fp16") or peak
    aux = speed_value("aux_model_efficiency")
    vae = (speed_value("vae_decode_flops_per_pixel") * width * height * w.video_frames * w.batch
           / (base_peak * aux))
    text = sum(2 * c.params * max(c.max_tokens, 77) for c in d.components
               if c.kind in ("clip", "t5", "llm")) / (base_peak * aux)
    fixed = per_key("diffusion_fixed_s", "video" if d.is_video else "image")
    offload = 0.0
    if w.offload in ("model", "sequential"):
        from whichgpu.estimate.memory.diffusion import component_sizes

        moved = {"model": [c for c in d.components if c.kind != "vae"],
                 "sequential": list(d.components)}[w.offload]
        host_bw = per_key("host_offload_gb_s", str(hw.gpu.interconnect.host_link.value)) * 1e9
        sizes = component_sizes(w)  # the bytes the memory model holds: the run-time dtypes
        moved_bytes = sum(sizes[c.name] for c in moved)
        # model offload moves each component in once per image; sequential every step
        offload = moved_bytes / host_bw * (steps if w.offload == "sequential" else 1)
    per_run = t_denoise + vae + text + fixed + offload
    sp_eff = 1.0
    if d.is_video and w.gpus > 1:
        sp_eff = per_key("sequence_parallel_efficiency", hw.link.kind)
        per_run = per_run / (w.gpus * sp_eff)
    comps = (
        Component("denoising", t_denoise,
                  f"{steps} steps x {w.cfg_passes} pass(es) x batch {w.batch} x "
                  f"({formula}) / ({peak / 1e12:,.0f} TFLOPS {precision} x {eta:.2f}) + "
                  f"{overhead * 1e3:.0f} ms launch overhead per step (CFG passes batched)"),
        Component("VAE decode", vae, f"decoder FLOPs per output pixel at {aux:.0%} of the "
                                     "16-bit peak"),
        Component("text encoders", text, f"one encoder pass per prompt at {aux:.0%} of the "
                                         "16-bit peak"),
        Component("pipeline overhead", fixed, "scheduler, transfers, Python"),
        Component("CPU offload transfers", offload,
                  f"--offload {w.offload}: weights copied over the host link "
                  "(host_offload_gb_s)"),
    )
    return {"precision": precision, "why": why, "seconds_per_run": per_run,
            "steps": steps, "tokens": tokens, "it_per_s": 1 / t_step,
            "sequence_parallel_efficiency": sp_eff,
            "components": comps,
            "bound": "compute" if t_denoise > (vae + text + fixed) else "fixed-overhead"}
