"""LLM inference memory per GPU, with each engine's own semantics.

- llama.cpp: weights + KV (padded context) + one compute buffer sized by the micro-batch.
- vLLM / SGLang: weights + profiled activation peak + CUDA graphs + KV for the requested
  sequences, all within a fixed fraction of the GPU (the rest is the engine's reserve).
- TensorRT-LLM: like vLLM, but the KV pool is a fraction of the memory left free.
- transformers / exllamav2: weights + a dynamic KV cache + the prefill activation peak.
"""

from __future__ import annotations

from whichgpu.estimate.constants import memory_constant, memory_value
from whichgpu.estimate.memory.kv import kv_cache, kv_tp_divisor
from whichgpu.estimate.memory.placement import SOURCE as PLACEMENT_SOURCE
from whichgpu.estimate.memory.placement import placement
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.estimate.memory.weights import workload_weight_bytes
from whichgpu.estimate.workload import Workload
from whichgpu.units import GiB, MiB

SERVING = ("vllm", "sglang", "trtllm")


def _coeff(table: str, tp: int) -> float:
    values = memory_value(table)
    key = str(min((int(k) for k in values), key=lambda k: (abs(k - tp), k)))
    return float(values[key])


def runtime_term(engine: str) -> MemoryTerm:
    if engine == "mlx":  # no CUDA context; Metal's own runtime is of llama.cpp's minimum's order
        c = memory_constant("llamacpp_cuda_minimum_mib")
        return MemoryTerm("runtime", int(c.value * MiB), "Metal runtime (llama.cpp's minimum "
                          "taken for MLX)", c.note, c.source)
    if engine in ("llamacpp", "mlc"):
        c = memory_constant("llamacpp_cuda_minimum_mib")
        return MemoryTerm("runtime", int(c.value * MiB), "CUDA context and llama.cpp minimum",
                          c.note, c.source)
    c = memory_constant("torch_cuda_context_gib")
    return MemoryTerm("runtime", int(c.value * GiB), "CUDA context, cuBLAS/cuDNN workspaces",
                      c.note, c.source)


def nccl_term(gpus: int) -> MemoryTerm | None:
    if gpus <= 1:
        return None
    c = memory_constant("nccl_buffers_mib")
    return MemoryTerm("nccl", int(c.value * MiB), "NCCL communication buffers per GPU",
                      c.note, c.source)


def inference_terms(w: Workload) -> tuple[list[MemoryTerm], list[str], dict]:
    m = w.model
    q = w.quant_format
    engine = w.engine_name
    tp, pp = w.tp_degree, w.pp_degree
    split = tp * pp
    assumptions: list[str] = []
    terms: list[MemoryTerm] = []

    wb = workload_weight_bytes(w)
    host_terms: list[MemoryTerm] = []
    layout = None
    on_gpu = wb.total
    if engine == "llamacpp" and m.num_layers:
        layout = placement(w, wb)
        on_gpu = layout.gpu_bytes
    weights = on_gpu / split
    where = ""
    if layout is not None:
        where = ("; " + layout.formula() if layout.offloaded else "; token embedding in host "
                 "RAM (llama.cpp keeps the input layer on the CPU)")
    terms.append(MemoryTerm(
        "weights", int(weights),
        wb.formula + (f", split over {split} GPUs" if split > 1 else "") + where,
        None if wb.exact else f"{q.name}: {q.description}",
        m.checkpoint.source if wb.exact and m.checkpoint else wb.source or q.source))

    ctx = w.seq_len
    kv = kv_cache(m, ctx, w.kv_bytes, engine)
    kv_all = kv.bytes_per_sequence * w.batch / kv_tp_divisor(m, tp)
    kv_share = layout.kv_gpu_fraction if layout is not None else 1.0
    kv_gpu = kv_all * kv_share / pp
    terms.append(MemoryTerm(
        "kv_cache", int(kv_gpu),
        f"{w.batch} sequence(s) x {kv.context_cached:,} tokens; {kv.formula}"
        + (f"; split over tp={tp}" if tp > 1 else "")
        + (f"; in the GPU layers: {kv_share:.0%}" if kv_share < 1 else ""),
        f"KV dtype {w.kv_dtype} ({w.kv_bytes:g} bytes per element)"))
    if layout is not None:
        host_terms.append(MemoryTerm(
            "weights", layout.host_bytes,
            "token embedding" + (f" + {layout.describe()}" if layout.offloaded else ""),
            "memory-mapped from the GGUF file (llama.cpp's default)", PLACEMENT_SOURCE))
        if kv_share < 1:
            host_terms.append(MemoryTerm("kv_cache", int(kv_all * (1 - kv_share)),
                                         "the KV cache of the layers on the CPU",
                                         None, PLACEMENT_SOURCE))
    if m.max_context and ctx > m.max_context:
        assumptions.append(f"context {ctx:,} exceeds the model's trained maximum "
                           f"{m.max_context:,}: quality may drop without RoPE scaling")

    h, v = m.hidden_size, m.vocab_size
    act_bytes = 0.0
    if engine in SERVING:
        tokens = int(memory_value("vllm_max_num_batched_tokens"))
        table = "activation_coeff_moe" if m.is_moe else "activation_coeff_dense"
        coeff = _coeff(table, tp)
        floor = memory_value("activation_floor_mib") * MiB
        act = max(2 * tokens * h * coeff, floor)
        sampler = min(256, max(w.batch, 1)) * v * 4 / tp
        act_bytes = act + sampler
        terms.append(MemoryTerm(
            "activations", int(act_bytes),
            f"2 x {tokens} batched tokens x hidden {h} x {coeff:g} (profiling peak) + sampler "
            f"logits for up to 256 sequences x vocab x 4 bytes",
            "the engine profiles one full batch of max_num_batched_tokens",
            memory_constant(table).source))
        g = memory_constant("vllm_cuda_graph_gib")
        terms.append(MemoryTerm("cuda_graphs", int(g.value * GiB), "captured CUDA graphs",
                                g.note, g.source))
    elif engine in ("llamacpp", "mlc"):
        ub = min(w.ubatch_tokens, max(ctx, 1))
        attn = 2 * ub * kv.context_cached if w.flash_attention else \
            4 * ub * kv.context_cached * (1 + m.num_attention_heads)
        act_bytes = max(4 * ub * (1 + 4 * h) + attn, 4 * ub * (h + v))
        terms.append(MemoryTerm(
            "activations", int(act_bytes),
            f"compute buffer: max(4 x ubatch {ub} x (1 + 4 hidden) + attention scratch, "
            "4 x ubatch x (hidden + vocab))",
            "flash attention on" if w.flash_attention else "flash attention off",
            "https://github.com/ollama/ollama (llm/ggml.go GraphSize, llama family)"))
    else:  # transformers, exllamav2: dynamic allocation, prefill peak
        # ExLlamaV2 and MLX-LM (generate.py prefill_step_size = 2048) prefill 2,048 at a time
        chunk = min(ctx, 2048) if engine in ("exllamav2", "mlx") else (w.prompt_tokens or ctx)
        tokens = chunk * w.batch
        i = m.intermediate_size or 4 * h
        per_token = 2 * max(h + 3 * i / tp, 2 * h + 2 * m.num_kv_heads * m.head_dim / tp)
        act = tokens * per_token
        if not w.flash_attention:
            act += w.batch * m.num_attention_heads / tp * chunk * chunk * 6
        act_bytes = act + w.batch * v * 4
        terms.append(MemoryTerm(
            "activations", int(act_bytes),
            f"prefill of {tokens:,} tokens: live MLP tensors (hidden + 3 x intermediate, "
            "16-bit) + last-token logits in fp32"
            + ("" if w.flash_attention else " + eager attention scores (fp32 softmax)"),
            f"{'exllamav2 prefills in chunks of 2,048 tokens; ' if engine == 'exllamav2' else ''}"
            f"{'SDPA/flash attention' if w.flash_attention else 'eager attention'}"))
    terms.append(runtime_term(engine))
    nccl = nccl_term(w.gpus)
    if nccl:
        terms.append(nccl)
    if engine in ("transformers", "exllamav2"):
        dynamic = kv_gpu + act_bytes
        c = memory_constant("fragmentation_fraction")
        terms.append(MemoryTerm("fragmentation", int(dynamic * c.value),
                                f"{c.value:.0%} of KV cache and activations",
                                "PyTorch caching allocator", c.source))
    reserve = _engine_reserve(engine, terms, kv_gpu)
    if reserve:
        terms.append(reserve)
    details = {"host_terms": host_terms, "model_weight_bytes": wb.total,
               "placement": layout.to_json() if layout is not None else None,
               "kv_bytes_per_sequence": kv.bytes_per_sequence,
               "kv_bytes_per_token": kv.bytes_per_sequence / max(kv.context_cached, 1),
               "context": ctx, "context_cached": kv.context_cached,
               "weights_exact": wb.exact, "kv_by_layer_kind": kv.by_kind,
               "tp": tp, "pp": pp}
    return terms, assumptions, details


def _engine_reserve(engine: str, terms: list[MemoryTerm], kv_gpu: float) -> MemoryTerm | None:
    used = sum(t.bytes for t in terms)
    if engine == "vllm":
        c = memory_constant("vllm_gpu_memory_utilization")
        return MemoryTerm("engine_reserve", int(used / c.value - used),
                          f"vLLM uses {c.value:.0%} of the GPU; the other "
                          f"{1 - c.value:.0%} stays free", "--gpu-memory-utilization default",
                          c.source)
    if engine == "sglang":
        c = memory_constant("sglang_mem_fraction_static")
        return MemoryTerm("engine_reserve", int(used / c.value - used),
                          f"SGLang keeps {1 - c.value:.0%} of the GPU out of its static pool",
                          "--mem-fraction-static default", c.source)
    if engine == "trtllm":
        c = memory_constant("trtllm_free_gpu_memory_fraction")
        return MemoryTerm("engine_reserve", int(kv_gpu / c.value - kv_gpu),
                          f"TensorRT-LLM gives {c.value:.0%} of the free memory to the KV pool",
                          "free_gpu_memory_fraction default", c.source)
    return None
