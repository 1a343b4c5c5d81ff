"""LLM inference memory per GPU, with each engine's own semantics.

- llama.cpp: weights + KV (padded context) + one compute buffer sized by the micro-batch.
- vLLM / SGLang: weights + profiled activation peak + CUDA graphs + KV for the requested
  sequences, all within a fixed fraction of the GPU (the rest is the engine's reserve).
- TensorRT-LLM: like vLLM, but the KV pool is a fraction of the memory left free.
- transformers / exllamav2: weights + a dynamic KV cache + the prefill activation peak.
"""

from __future__ import annotations

from collections.abc import Callable

from whichgpu.engines import engines_with, has, module, prefill_chunk
from whichgpu.estimate.constants import Constant, memory_constant, memory_value
from whichgpu.estimate.memo import by_identity
from whichgpu.estimate.memory.kv import kv_cache, kv_tp_divisor
from whichgpu.estimate.memory.placement import SOURCE as PLACEMENT_SOURCE
from whichgpu.estimate.memory.placement import workload_placement
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.estimate.memory.weights import workload_weight_bytes
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Message, Say, data_text, msg
from whichgpu.units import GiB, MiB
from whichgpu.vocabulary import Engine

SERVING = engines_with("continuous_batching")


def _coeff(table: str, tp: int) -> float:
    values = memory_value(table)
    key = str(min((int(k) for k in values), key=lambda k: (abs(k - tp), k)))
    return float(values[key])


def _note(c: Constant) -> str | None:
    """A constant's note, marked as data-file text (the runtime constants all have one)."""
    return data_text(c.note) if c.note is not None else None


@by_identity(size=64)  # the same term in every estimate on this engine: made once
def runtime_term(engine: Engine) -> MemoryTerm:
    """The CUDA context and runtime an engine keeps on each GPU (its module's own, else
    llama.cpp's minimum or PyTorch's context)."""
    own: RuntimeTerm | None = getattr(module(engine), "runtime_term", None)
    if own is not None:  # the engine's own runtime (engines/<engine>.py)
        return own()
    if has(engine, "ggml_runtime"):
        c = memory_constant("llamacpp_cuda_minimum_mib")
        return MemoryTerm("runtime", int(c.value * MiB),
                          msg("term.runtime.llamacpp", "CUDA context and llama.cpp minimum"),
                          _note(c), c.source)
    c = memory_constant("torch_cuda_context_gib")
    return MemoryTerm("runtime", int(c.value * GiB),
                      msg("term.runtime.torch", "CUDA context, cuBLAS/cuDNN workspaces"),
                      _note(c), c.source)


def nccl_term(gpus: int) -> MemoryTerm | None:
    """NCCL's communication buffers on each GPU of a multi-GPU job (the same at any count)."""
    return _nccl_term(True) if gpus > 1 else None


@by_identity(size=4)  # the same term in every multi-GPU estimate: made once
def _nccl_term(multi: bool) -> MemoryTerm:
    c = memory_constant("nccl_buffers_mib")
    return MemoryTerm("nccl", int(c.value * MiB),
                      msg("term.nccl", "NCCL communication buffers per GPU"), _note(c),
                      c.source)


def drafter_term(w: Workload, kv_gpu: float, split: int) -> MemoryTerm:
    """The speculative drafter's weights and its own KV cache per GPU (an MTP layer or an
    EAGLE head keeps one layer's KV per token; a draft model its whole cache)."""
    from whichgpu.estimate.speculative import drafter

    spec = w.speculative
    assert spec is not None
    d = drafter(spec, w.model, w.quant_format.linear_bits / 8)
    if spec.draft_model is not None:
        dk = kv_cache(spec.draft_model, w.seq_len, w.kv_bytes, w.engine_name)
        kv = dk.bytes_per_sequence * w.batch / max(kv_tp_divisor(spec.draft_model,
                                                                 w.tp_degree), 1)
    else:
        kv = kv_gpu * d.kv_layers_share
    return MemoryTerm(
        "drafter", int(d.weight_bytes / split + kv),
        msg("term.drafter", "{what}: {formula}; its KV cache {kv:.2f} GB",
            what=spec.describe(), formula=d.formula, kv=kv / 1e9),
        msg("term.drafter.why", "the engine keeps the drafter beside the target on the GPU"),
        "estimate/speculative.py")


def inference_terms(w: Workload, say: Say = msg
                    ) -> tuple[list[MemoryTerm], list[Message], dict]:
    """The terms, assumptions and details of an LLM inference estimate (``say`` makes its
    words: :func:`~whichgpu.messages.silent` for a probe that reads only the bytes)."""
    m = w.model
    q = w.quant_format
    engine = w.engine_name
    tp, pp = w.tp_degree, w.pp_degree
    split = tp * pp
    assumptions: list[Message] = []
    terms: list[MemoryTerm] = []

    wb = workload_weight_bytes(w)
    host_terms: list[MemoryTerm] = []
    layout = None
    on_gpu = wb.total
    if has(engine, "host_offload") and m.num_layers:  # llama.cpp places the weights
        layout = workload_placement(w)  # placement(w, wb), memoized
        on_gpu = layout.gpu_bytes
    weights = on_gpu / split
    where: Message | str = ""
    if w.expert_parallel and w.dp_degree > 1:
        # expert parallelism over every GPU (tp x dp ranks): each holds 1/(split x dp) of the
        # routed experts and its rank's share of everything else; attention is data-parallel,
        # so each rank keeps its own sequences' whole KV cache ('the expert layers will by
        # default form a (DP x TP) sized tensor parallel group', vLLM data parallel deployment:
        # https://docs.vllm.ai/en/v0.12.0/serving/data_parallel_deployment/)
        weights = (on_gpu - wb.experts) / split + wb.experts / (split * w.dp_degree)
        where = say("term.weights.expert_parallel", "; routed experts over all {n} GPUs "
                    "(expert parallel), the rest on each of {dp} data-parallel ranks",
                    n=split * w.dp_degree, dp=w.dp_degree)
    if layout is not None:
        where = (say("term.weights.placed", "; {layout}", layout=layout.formula())
                 if layout.offloaded else
                 say("term.weights.embedding_on_cpu", "; token embedding in host RAM "
                     "(llama.cpp keeps the input layer on the CPU)"))
    split_text = say("term.split", ", split over {n} GPUs", n=split) if split > 1 else ""
    terms.append(MemoryTerm(
        "weights", int(weights),
        say("term.weights", "{formula}{split}{where}", formula=wb.formula, split=split_text,
            where=where),
        None if wb.exact else say("term.weights.format", "{quant}: {description}",
                                  quant=q.name, description=q.said),
        m.checkpoint.source if wb.exact and m.checkpoint else wb.source or q.source))

    ctx = w.seq_len
    kv = kv_cache(m, ctx, w.kv_bytes, engine)
    kv_all = kv.bytes_per_sequence * w.batch / kv_tp_divisor(m, tp)
    kv_share = layout.kv_gpu_fraction if layout is not None else 1.0
    kv_gpu = kv_all * kv_share / pp
    terms.append(MemoryTerm(
        "kv_cache", int(kv_gpu),
        say("term.kv", "{batch} sequence(s) x {context:,} tokens; {formula}{tp}{share}",
            batch=w.batch, context=kv.context_cached, formula=kv.formula,
            tp=say("term.kv.tp", "; split over tp={tp}", tp=tp) if tp > 1 else "",
            share=say("term.kv.share", "; in the GPU layers: {share:.0%}", share=kv_share)
            if kv_share < 1 else ""),
        say("term.kv.dtype", "KV dtype {dtype} ({bytes:g} bytes per element)",
            dtype=w.kv_dtype, bytes=w.kv_bytes)))
    if w.speculative is not None:
        terms.append(drafter_term(w, kv_gpu, split))
    if layout is not None:
        host_terms.append(MemoryTerm(
            "weights", layout.host_bytes,
            say("term.host.weights.placed", "token embedding + {layout}",
                layout=layout.describe()) if layout.offloaded else
            say("term.host.embedding", "token embedding"),
            say("term.host.mmap", "memory-mapped from the GGUF file (llama.cpp's default)"),
            PLACEMENT_SOURCE))
        if kv_share < 1:
            host_terms.append(MemoryTerm("kv_cache", int(kv_all * (1 - kv_share)),
                                         say("term.host.kv", "the KV cache of the layers on "
                                             "the CPU"), None, PLACEMENT_SOURCE))
    lora = None
    if w.lora_adapters:  # many adapters on this base: their GPU slots (estimate/multi_lora.py)
        from whichgpu.estimate.multi_lora import lora_term

        term, lora = lora_term(w)
        terms.append(term)
    if m.max_context and ctx > m.max_context:
        assumptions.append(say("memory.beyond_context", "context {context:,} exceeds the "
                               "model's trained maximum {maximum:,}: quality may drop without "
                               "RoPE scaling", context=ctx, maximum=m.max_context))

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
            say("term.activations.serving", "2 x {tokens} batched tokens x hidden {hidden} x "
                "{coeff:g} (profiling peak) + sampler logits for up to 256 sequences x vocab x "
                "4 bytes", tokens=tokens, hidden=h, coeff=coeff),
            say("term.activations.serving.why", "the engine profiles one full batch of "
                "max_num_batched_tokens"),
            memory_constant(table).source))
        g = memory_constant("vllm_cuda_graph_gib")
        terms.append(MemoryTerm("cuda_graphs", int(g.value * GiB),
                                say("term.cuda_graphs", "captured CUDA graphs"),
                                _note(g), g.source))
    elif has(engine, "ggml_runtime"):
        ub = min(w.ubatch_tokens, max(ctx, 1))
        attn = 2 * ub * kv.context_cached if w.flash_attention else \
            4 * ub * kv.context_cached * (1 + m.num_attention_heads)
        act_bytes = max(4 * ub * (1 + 4 * h) + attn, 4 * ub * (h + v))
        terms.append(MemoryTerm(
            "activations", int(act_bytes),
            say("term.activations.llamacpp", "compute buffer: max(4 x ubatch {ubatch} x (1 + 4 "
                "hidden) + attention scratch, 4 x ubatch x (hidden + vocab))", ubatch=ub),
            say("term.flash.on", "flash attention on") if w.flash_attention else
            say("term.flash.off", "flash attention off"),
            "https://github.com/ollama/ollama (llm/ggml.go GraphSize, llama family)"))
    else:  # transformers, exllamav2: dynamic allocation, prefill peak
        # an engine that prefills in chunks (ExLlamaV2, MLX-LM: data/engines.toml)
        step = prefill_chunk(engine)
        chunk = min(ctx, step) if step else (w.prompt_tokens or ctx)
        tokens = chunk * w.batch
        i = m.intermediate_size or 4 * h
        per_token = 2 * max(h + 3 * i / tp, 2 * h + 2 * m.num_kv_heads * m.head_dim / tp)
        act = tokens * per_token
        if not w.flash_attention:
            act += w.batch * m.num_attention_heads / tp * chunk * chunk * 6
        act_bytes = act + w.batch * v * 4
        attention = (say("term.sdpa", "SDPA/flash attention") if w.flash_attention else
                     say("term.eager", "eager attention"))
        note: PrefillNote | None = getattr(module(engine), "prefill_note", None)
        terms.append(MemoryTerm(
            "activations", int(act_bytes),
            say("term.activations.prefill", "prefill of {tokens:,} tokens: live MLP tensors "
                "(hidden + 3 x intermediate, 16-bit) + last-token logits in fp32", tokens=tokens)
            if w.flash_attention else
            say("term.activations.prefill.eager", "prefill of {tokens:,} tokens: live MLP "
                "tensors (hidden + 3 x intermediate, 16-bit) + last-token logits in fp32 + "
                "eager attention scores (fp32 softmax)", tokens=tokens),
            note(attention) if note is not None else attention))
    terms.append(runtime_term(engine))
    nccl = nccl_term(w.gpus)
    if nccl:
        terms.append(nccl)
    if has(engine, "caching_allocator"):  # KV and activations allocated as it runs
        dynamic = kv_gpu + act_bytes
        c = memory_constant("fragmentation_fraction")
        terms.append(MemoryTerm("fragmentation", int(dynamic * c.value),
                                say("term.fragmentation", "{share:.0%} of KV cache and "
                                    "activations", share=c.value),
                                say("term.fragmentation.why", "PyTorch caching allocator"),
                                c.source))
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
    if lora is not None:
        details["lora"] = lora.to_json()
    return terms, assumptions, details


#: an engine module's ``memory_reserve``: (bytes the terms above use, KV cache bytes on the GPU)
#: -> the memory the engine keeps back beyond them, or None
MemoryReserve = Callable[[int, float], MemoryTerm | None]
#: an engine module's ``runtime_term``: its runtime's own memory (MLX: Metal's)
RuntimeTerm = Callable[[], MemoryTerm]
#: an engine module's ``prefill_note``: what the activations term says of its prefill, given
#: the attention it runs (ExLlamaV2: its chunks)
PrefillNote = Callable[[Message], Message]


def _engine_reserve(engine: Engine, terms: list[MemoryTerm], kv_gpu: float
                    ) -> MemoryTerm | None:
    """The memory the engine keeps beyond the model (its module's ``memory_reserve``)."""
    reserve: MemoryReserve | None = getattr(module(engine), "memory_reserve", None)
    return reserve(sum(t.bytes for t in terms), kv_gpu) if reserve is not None else None
