"""Measurements no card could have made as described: above a physical ceiling.

- decode of one sequence: every new token reads the weights it uses at least once, so tokens/s
  x the bytes of those weights cannot exceed the memory bandwidth of the GPUs that hold them.
  Both sides are lenient: the bytes are a lower bound (the active parameters without the
  embedding table, at the format's fewest bits per weight, or MXFP4's where the checkpoint
  ships MXFP4 experts; no KV cache, no output head beyond that), the bandwidth the datasheet
  figure of all ``gpu_count`` GPUs together (pipeline stages in fact take turns). Speculative
  decoding can pass it (several tokens per read): such a row describes something the speed
  model does not model.
- prefill, training and serving throughput: tokens/s x the FLOPs per token (2 x active
  parameters for a forward pass, 6 x for a training step, without attention) cannot exceed the
  highest dense tensor peak of the GPUs at any precision the card has.

A row above its ceiling is left out of the range and error figures, with the reason, instead
of counting as a hit or a miss.
"""

from __future__ import annotations

from collections.abc import Iterable

from whichgpu.errors import InputError

# dense tensor precisions a ceiling may use (the highest the card has)
_PEAK_PRECISIONS = ("fp4", "fp8", "int8", "bf16", "fp16")
# FLOPs per parameter per token
_FORWARD, _TRAINING = 2.0, 6.0
# what the stated measurement means per metric: (kind, FLOPs per parameter)
_COMPUTE_METRICS = {"prefill_tokens_per_s": _FORWARD, "output_tokens_per_s": _FORWARD,
                    "total_tokens_per_s": _FORWARD, "input_tokens_per_s": _FORWARD,
                    "train_tokens_per_s": _TRAINING, "train_tokens_per_s_per_gpu": _TRAINING}


def _peak_flops(gpu) -> tuple[float, str]:
    best, name = 0.0, ""
    for p in _PEAK_PRECISIONS:
        tf = gpu.tflops(p)
        if tf and tf * 1e12 > best:
            best, name = tf * 1e12, p
    return best, name


def ceiling_reason(row: dict[str, str]) -> str | None:
    """Why a speed row is above a physical ceiling, or None (also None when the row cannot
    be modelled: nothing to compare with)."""
    from whichgpu.estimate.speed.llm import linear_flops_per_token
    from whichgpu.estimate.validation.rows import gpu_of, workload_of
    from whichgpu.estimate.validation.speed import speed_settings
    from whichgpu.models.quant import get_quant

    metric = (row.get("metric") or "").strip()
    if metric != "decode_tokens_per_s" and metric not in _COMPUTE_METRICS:
        return None
    try:
        clean, _ = speed_settings(row)
        w = workload_of(clean, global_batch=True)
        gpu = gpu_of(row)
        value = float(row["value"])
    except (InputError, KeyError, ValueError, TypeError):
        return None
    if w.model.diffusion is not None:
        return None
    count = max(int(float(row.get("gpu_count") or 1)), 1)
    if (row.get("per_gpu") or "").strip().lower() == "true":  # serving.csv: a per-GPU figure
        count = 1
    if metric == "decode_tokens_per_s":
        if "offload" in (row.get("settings") or "") or "n_cpu_moe" in (row.get("settings")
                                                                       or ""):
            return None  # some weights are read from host RAM: not the GPU's ceiling
        q = w.quant_format
        bits = min(q.linear_bits, q.whole_model_bpw or q.linear_bits)
        if w.model.quantization == "mxfp4":
            # a checkpoint shipped with MXFP4 experts keeps them MXFP4 in every GGUF file
            # type (models/gguf_recipe.py): Unsloth's gpt-oss "F16" file is 16-bit elsewhere
            bits = min(bits, get_quant("mxfp4").linear_bits)
        nbytes = max(w.model.params_active - w.model.params.embedding, 0) * bits / 8
        bandwidth = gpu.bandwidth_bytes_per_s * count
        needed = value * nbytes
        if needed > bandwidth:
            return (f"above the memory-bandwidth ceiling: {value:g} tokens/s x "
                    f"at least {nbytes / 1e9:.2f} GB of weights per token = "
                    f"{needed / 1e9:,.0f} GB/s, "
                    f"more than {count} x {gpu.id}'s {bandwidth / count / 1e9:,.0f} GB/s "
                    "(speculative decoding, or the source's figure is not one sequence)")
        return None
    per_param = _COMPUTE_METRICS[metric]
    flops_per_token = linear_flops_per_token(w.model) * per_param / _FORWARD
    peak, precision = _peak_flops(gpu)
    if not peak:
        return None
    total_peak = peak * (1 if metric == "train_tokens_per_s_per_gpu" else count)
    needed = value * flops_per_token
    if needed > total_peak:
        return (f"above the compute ceiling: {value:g} tokens/s x "
                f"{flops_per_token / 1e9:,.1f} GFLOP per token = {needed / 1e12:,.0f} TFLOPS, "
                f"more than the {total_peak / 1e12:,.0f} dense {precision} TFLOPS of "
                f"{'one' if metric.endswith('per_gpu') else count} x {gpu.id}")
    return None


def excluded(rows: Iterable[dict[str, str]]) -> dict[str, str]:
    """{row id: reason} of the rows (speed.csv or serving.csv) above a physical ceiling."""
    out = {}
    for row in rows:
        reason = ceiling_reason(row)
        if reason:
            out[row["id"]] = reason
    return out
