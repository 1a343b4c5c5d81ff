"""Training and fine-tuning memory per GPU: full fine-tuning, pre-training, LoRA, QLoRA.

Model states follow the ZeRO accounting (Rajbhandari et al. 2020; EleutherAI "Transformer
Math 101"): 16-bit weights and gradients, fp32 master weights, optimizer states per parameter;
ZeRO 1/2/3 (FSDP full shard) divide optimizer / gradients / weights over the data-parallel
group, tensor and pipeline parallelism divide the model. Activations come from the tensors a
block saves for backward (see the constant ``train_activation_bytes_per_token_layer``).

The frameworks' memory savers are modelled term by term: activation offloading (Unsloth's
offloaded gradient checkpointing, torchtune's activation offloading) keeps only the layers in
flight on the GPU; fused and chunked cross-entropy never hold the full fp32 logits; paged
optimizers keep their states in CUDA unified memory, which pages to CPU RAM when the GPU is
full; optimizer-in-backward needs one layer's gradients. What leaves the GPU is reported as
CPU RAM in the details (``host_bytes``).
"""

from __future__ import annotations

from whichgpu.estimate.constants import memory_constant, memory_value
from whichgpu.estimate.memory.inference import nccl_term, runtime_term
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.estimate.memory.weights import workload_weight_bytes
from whichgpu.estimate.workload import Workload, lora_groups
from whichgpu.messages import Join, Message, Say, msg
from whichgpu.models.spec import ModelSpec
from whichgpu.vocabulary import Engine, Task

# Optimizer state bytes per trainable parameter (fp32 states unless 8-bit).
OPTIMIZER_BYTES: dict[str, tuple[float | None, Message]] = {
    "adamw": (8.0, msg("optimizer.adamw", "AdamW: fp32 first and second moments (8 "
                       "bytes/param)")),
    "adamw-8bit": (2.0, msg("optimizer.adamw_8bit", "bitsandbytes 8-bit AdamW: two 1-byte "
                            "block-quantized moments")),
    "paged-adamw-8bit": (2.0, msg("optimizer.paged", "paged 8-bit AdamW: 2 bytes/param, pages "
                                  "to CPU under pressure")),
    "sgd": (0.0, msg("optimizer.sgd", "SGD without momentum keeps no state")),
    "sgd-momentum": (4.0, msg("optimizer.sgd_momentum", "SGD with momentum: one fp32 buffer (4 "
                              "bytes/param)")),
    "lion": (4.0, msg("optimizer.lion", "Lion: one fp32 momentum (4 bytes/param)")),
    "adafactor": (None, msg("optimizer.adafactor", "Adafactor: factored second moment, fp32 "
                            "row and column vectors per matrix, no first moment (beta1=None, "
                            "the transformers default)")),
}
_OPT_SOURCE = ("https://blog.eleuther.ai/transformer-math/ (AdamW 8 bytes/param + 4 fp32 master;"
               " 8-bit Adam 2; SGD+momentum 4)")


def lora_params(w: Workload) -> int:
    """Exact adapter parameters: rank x (in + out) for every targeted linear instance."""
    return sum(w.lora_rank * (g.in_features + g.out_features) * g.count for g in lora_groups(w))


def _adafactor_bytes(model: ModelSpec, trainable: int) -> float:
    if not model.linears:
        return 0.1 * trainable  # no shapes known: about 0.1 byte/param for large matrices
    matrix = sum(g.params for g in model.linears)
    factors = sum(4 * (g.in_features + g.out_features) * g.count for g in model.linears)
    return factors + 4 * max(trainable - matrix, 0)


def activation_bytes_per_token_layer(m: ModelSpec, tp: int, sp: int = 1,
                                     fused_swiglu: bool = False) -> float:
    """Bytes one token's activations take in one block, saved for backward (16-bit, FA).
    ``sp``: the sequence-parallel degree (Megatron's sequence parallelism with tensor
    parallelism shards the layer norms' inputs and outputs, the part TP leaves whole, over
    the TP ranks too; Korthikanti et al. 2022, arXiv:2205.05198). ``fused_swiglu``: a gated
    MLP whose activation saves only its input, the gate-and-up output, and recomputes SiLU in
    backward (Megatron Core's fused SwiGLU): three intermediate-width tensors, not four."""
    h, a, d = m.hidden_size, m.num_attention_heads, m.head_dim or m.hidden_size // max(
        m.num_attention_heads, 1)
    k = m.num_kv_heads or a
    if m.moe is not None:
        i_eff = (m.moe.experts_per_token * m.moe.expert_intermediate_size
                 + m.moe.num_shared_experts * m.moe.shared_expert_intermediate_size)
        mlp = (3 if fused_swiglu else 4) * i_eff + 2 * m.moe.experts_per_token * h  # + routed
        # copies of the input
    else:
        i_eff = m.intermediate_size or 4 * h
        mlp = ((3 if fused_swiglu else 4) if m.gated_mlp else 2) * i_eff
    split = (2 * a * d + 2 * k * d + mlp) / tp
    return 2 * (4 * h / sp + split) + 4 * a / tp


def fp8_saved_input_savings_per_token_layer(m: ModelSpec, tp: int, sp: int = 1) -> float:
    """Bytes per token and layer that Transformer Engine's FP8 linears save against the bf16
    block of :func:`activation_bytes_per_token_layer`: each linear keeps its input for the
    weight gradient as the FP8 tensor it multiplied (1 byte, not 2). That halves the two norm
    outputs (the QKV and the MLP input) and the down-projection's input; the attention output,
    which flash attention keeps in bf16 anyway, gains an FP8 copy for the output projection."""
    h, a = m.hidden_size, m.num_attention_heads
    d = m.head_dim or h // max(a, 1)
    i, _ = _mlp_width(m)
    return 2 * h / sp + i / tp - a * d / tp


def _mlp_width(m: ModelSpec) -> tuple[int, bool]:
    """(the MLP width a token sees, gated?): the active experts' for MoE."""
    if m.moe is not None:
        return (m.moe.experts_per_token * m.moe.expert_intermediate_size
                + m.moe.num_shared_experts * m.moe.shared_expert_intermediate_size), True
    return m.intermediate_size or 4 * m.hidden_size, m.gated_mlp


def backward_working_bytes_per_token(m: ModelSpec, tp: int, in_place: bool = False) -> float:
    """The gradients a block's MLP backward holds at once, per token, bf16: dL/d(act) from the
    down-projection, then dL/d(gate) and dL/d(up) (one up-projection when not gated). A
    layer's backward holds them beside its (recomputed) activations, which is where the peak
    is (Unsloth's long-context blog: 'peak VRAM occurs during the MLP backward'). Unsloth's
    SwiGLU backward kernel writes dL/d(gate) and dL/d(up) into the buffers it reads
    (unsloth/kernels/swiglu.py _DWf_DW_dfg_kernel), so only dL/d(act) is new there."""
    i, gated = _mlp_width(m)
    new = 1 if in_place else (3 if gated else 2)
    return 2 * new * i / tp


def selective_bytes_per_token_layer(m: ModelSpec, tp: int, sp: int = 1) -> float:
    """What op-level selective checkpointing keeps per token and layer (torchtitan): the layer
    input, the attention output with its fp32 log-sum-exp, and every second matmul output
    (half of q, k, v, o, gate, up, down), bf16."""
    h, a = m.hidden_size, m.num_attention_heads
    d = m.head_dim or h // max(a, 1)
    k = m.num_kv_heads or a
    i, gated = _mlp_width(m)
    mm = a * d + 2 * k * d + h + (2 if gated else 1) * i + h
    return 2 * (h / sp + a * d / tp + mm / 2 / tp) + 4 * a / tp


def training_terms(w: Workload, say: Say = msg
                   ) -> tuple[list[MemoryTerm], list[Message], dict]:
    """The terms, assumptions and details of a training estimate (``say`` makes its words:
    :func:`~whichgpu.messages.silent` for a probe that reads only the bytes)."""
    m = w.model
    q = w.quant_format
    tp, pp, dp = w.tp_degree, w.pp_degree, w.dp_degree
    zero = w.zero_stage
    split = tp * pp
    full = w.task in (Task.FULL_FT, Task.PRETRAIN)
    terms: list[MemoryTerm] = []
    assumptions: list[Message] = []

    # --- weights
    wb = workload_weight_bytes(w)
    w_div = split * (dp if zero >= 3 else 1)
    on_cpu = w.offload == "cpu"  # FSDP CPUOffload: model states live in CPU memory
    states_on_cpu = w.offload in ("optimizer", "cpu")
    if w.fp8_training:
        assumptions.append(say("train.fp8", "FP8 training: matmuls in FP8 (Transformer Engine, "
                               "torchao float8), weights, gradients and optimizer states kept "
                               "as in bf16 training"))
    if on_cpu:
        assumptions.append(say("train.fsdp_offload", "FSDP CPU offload: parameters, gradients "
                               "and optimizer states stay in CPU memory; each layer is copied "
                               "to the GPU as it runs"))
    elif states_on_cpu:
        assumptions.append(say("train.zero_offload", "ZeRO-Offload: optimizer states and fp32 "
                               "master weights stay in CPU memory"))
    terms.append(MemoryTerm(
        "weights", 0 if on_cpu else int(wb.total / w_div),
        say("term.train.weights", "{formula}{split}{sharded}", formula=wb.formula,
            split=say("term.train.split", ", / {n} GPUs", n=w_div) if w_div > 1 else "",
            sharded=say("term.train.sharded", " (ZeRO-3/FSDP shards them)")
            if zero >= 3 and dp > 1 else ""),
        say("term.train.trainable", "trainable") if full else
        say("term.train.frozen", "frozen base model"), q.source))

    n = m.params_total
    from whichgpu.estimate.frameworks import framework_defaults

    fw = framework_defaults(w.framework, w.task)
    if full:
        trainable = n
        grad_bytes = 2.0 if q.linear_bits <= 16 else 4.0
        # a framework that keeps its gradients in fp32 buffers (Megatron's
        # grad_reduce_in_fp32: the main_grad buffer the reduction writes into)
        grad_bytes = max(grad_bytes, float(fw.get("grad_bytes", 0)))
    else:
        trainable = lora_params(w)
        ab = w.adapter_bytes
        grad_bytes = float(ab)
        terms.append(MemoryTerm(
            "adapter_weights", int(trainable * ab / split),
            say("term.adapters", "LoRA rank {rank} on {targets}: {params:,} params x {bytes} "
                "bytes ({dtype} adapters)", rank=w.lora_rank, targets=", ".join(w.lora_targets),
                params=trainable, bytes=ab, dtype="fp32" if ab == 4 else "bf16"),
            say("term.adapters.peft", "PEFT keeps adapters in fp32 under mixed precision "
                "(autocast_adapter_dtype)") if ab == 4 else
            say("term.adapters.bf16", "{framework} trains the adapters in bf16 like the rest",
                framework=w.framework),
            "https://huggingface.co/docs/peft/main/en/developer_guides/lora"))
    # --- master weights, gradients, optimizer
    if full and w.uses_master_weights and not states_on_cpu:
        div = split * (dp if zero >= 1 else 1)
        terms.append(MemoryTerm("master_weights", int(trainable * 4 / div),
                                say("term.master", "fp32 master copy: {params:,} params x 4 "
                                    "bytes{div}", params=trainable, div=_over(div)),
                                say("term.master.why", "mixed precision keeps fp32 master "
                                    "weights"), _OPT_SOURCE))
    gdiv = split * (dp if zero >= 2 else 1)
    grads = 0 if on_cpu else trainable * grad_bytes / gdiv
    gformula = say("term.gradients", "{params:,} trainable params x {bytes:g} bytes{div}",
                   params=trainable, bytes=grad_bytes, div=_over(gdiv))
    if w.optimizer_in_backward and full:
        largest = max(m.largest_layer_params, m.vocab_size * m.hidden_size)
        grads = min(grads, largest * grad_bytes / split)
        gformula = say("term.gradients.in_backward", "optimizer step fused into backward: one "
                       "layer's gradients at a time (the largest, {params:,} params, x "
                       "{bytes:g} bytes)", params=largest, bytes=grad_bytes)
    terms.append(MemoryTerm("gradients", int(grads), gformula,
                            say("term.gradients.why", "gradients in the dtype of the trainable "
                                "weights"), _OPT_SOURCE))
    per_param, what = OPTIMIZER_BYTES[w.optimizer]
    if per_param is None:
        opt = _adafactor_bytes(m, trainable) if full else sum(
            4 * (2 * w.lora_rank + g.in_features + g.out_features) * g.count
            for g in lora_groups(w))
    else:
        opt = trainable * per_param
    state_note: Message | None = None
    if _states_follow_params(w, full, grad_bytes):
        # torch.optim creates its state like the parameter: bf16 states for bf16 parameters
        opt *= 0.5
        what = say("term.optimizer.bf16", "{what}, kept in bf16 like the parameters (no fp32 "
                   "master copy)", what=what)
        state_note = say("term.optimizer.bf16.why", "torch.optim states take the parameters' "
                         "dtype (pure bf16 training)")
    odiv = split * (dp if zero >= 1 else 1)
    opt_gpu = 0 if states_on_cpu else opt / odiv
    host: dict[str, int] = {}
    if states_on_cpu:
        host["optimizer_states"] = int(opt / odiv)
    oformula = say("term.optimizer", "{what}{div}", what=what, div=_over(odiv))
    if w.optimizer == "paged-adamw-8bit" and not states_on_cpu:
        # bitsandbytes allocates paged states with cudaMallocManaged: outside PyTorch's
        # allocator, they page to CPU RAM when the GPU is full and back when stepped
        layer = max(m.largest_layer_params, m.vocab_size * m.hidden_size) if full else trainable
        assert per_param is not None  # paged AdamW has its bytes per parameter
        resident = min(opt_gpu, layer * per_param / split)
        host["optimizer_states"] = int(opt_gpu)
        oformula = say("term.optimizer.paged", "paged 8-bit AdamW: {gb:,.2f} GB of states in "
                       "CUDA unified memory, paged to CPU RAM when the GPU is full; at least "
                       "the states of the layer being stepped are resident", gb=opt_gpu / 1e9)
        state_note = say("term.optimizer.paged.why", "paged states are not counted against the "
                         "GPU beyond one layer: nvidia-smi shows more while memory is free")
        opt_gpu = resident
    terms.append(MemoryTerm("optimizer_states", int(opt_gpu), oformula, state_note,
                            _OPT_SOURCE if w.optimizer != "paged-adamw-8bit" else
                            "https://github.com/bitsandbytes-foundation/bitsandbytes "
                            "(bitsandbytes/optim: paged optimizers allocate their state with "
                            "CUDA unified memory, cudaMallocManaged)"))

    # --- activations
    s, b = w.seq_len, w.batch
    L = m.num_layers
    sp = tp if fw.get("sequence_parallel") and tp > 1 else 1
    per_tl = activation_bytes_per_token_layer(m, tp, sp, bool(fw.get("fused_swiglu")))
    fp8_inputs = bool(w.fp8_training and fw.get("fp8_saved_inputs"))
    if fp8_inputs:
        per_tl -= fp8_saved_input_savings_per_token_layer(m, tp, sp)
    in_flight = int(memory_value("activation_offload_layers_in_flight"))
    in_place = bool(fw.get("fused_mlp_backward"))
    bwd = s * b * backward_working_bytes_per_token(m, tp, in_place)
    selective = bool(w.selective_checkpointing) and not w.uses_checkpointing
    kept_per_layer: float
    if w.uses_checkpointing:
        kept_per_layer = s * b * 2 * m.hidden_size / sp
    elif selective:
        kept_per_layer = s * b * selective_bytes_per_token_layer(m, tp, sp)
    else:
        kept_per_layer = s * b * per_tl
    parts: list[Message] = []
    if w.uses_checkpointing or selective:
        act = L * kept_per_layer + s * b * per_tl + bwd
        parts.append(say("term.act.checkpointed", "checkpointed: {layers} layers x {seq} tokens "
                         "x batch {batch} x 2 x hidden (layer inputs)", layers=L, seq=s,
                         batch=b) if w.uses_checkpointing else
                     say("term.act.selective", "selective (op-level) checkpointing: {layers} "
                         "layers x {seq} tokens x batch {batch} x {kept:,.0f} bytes kept (layer "
                         "input, attention output, every second matmul output)", layers=L,
                         seq=s, batch=b, kept=kept_per_layer / (s * b)))
        parts.append(say("term.act.recomputed", " + one layer recomputed in full with its MLP "
                         "backward gradients"))
    else:
        act = L * kept_per_layer + bwd
        parts.append(say("term.act.full", "{layers} layers x {seq} tokens x batch {batch} x "
                         "{per:,.0f} bytes per token-layer + the last layer's MLP backward "
                         "gradients", layers=L, seq=s, batch=b, per=per_tl))
    if w.activation_offload_layers and w.is_training:
        # a chosen number of layers offloaded (Megatron's cpu_offloading_num_layers), the rest
        # kept on the GPU as usual
        n_off = min(w.activation_offload_layers, L - 1)
        host["activations"] = int(n_off * kept_per_layer)
        act -= n_off * kept_per_layer
        parts.append(say("term.act.offloaded_layers", "; offloaded: the kept activations of "
                         "{n} of {layers} layers in CPU RAM ({gb:,.2f} GB)", n=n_off, layers=L,
                         gb=host["activations"] / 1e9))
    elif w.offloads_activations and L > in_flight:
        host["activations"] = int((L - in_flight) * kept_per_layer)
        act -= (L - in_flight) * kept_per_layer
        parts.append(say("term.act.offloaded", "; offloaded: only {n} layers' kept activations "
                         "on the GPU (the rest, {gb:,.2f} GB, in CPU RAM)", n=in_flight,
                         gb=host["activations"] / 1e9))
    if not w.flash_attention:
        extra = (1 if w.uses_checkpointing else L) * b * m.num_attention_heads / tp * s * s * 2
        act += extra
        parts.append(say("term.act.eager", " + attention probabilities (eager, 2 x heads x "
                         "seq^2 bytes per layer)"))
    formula = say("term.activations", "{parts}", parts=Join(parts, ""))
    c = memory_constant("train_activation_bytes_per_token_layer")
    how: list[Message] = [say("term.train.checkpointing.on", "gradient checkpointing on")
                          if w.uses_checkpointing else
                          say("term.train.selective", "selective checkpointing") if selective
                          else say("term.train.checkpointing.off", "gradient checkpointing off")]
    if w.offloads_activations:
        how.append(say("term.train.act_offloaded", ", activations offloaded to CPU RAM as they "
                       "are produced"))
    how.append(say("term.train.flash", ", flash attention") if w.flash_attention else
               say("term.train.eager", ", eager attention"))
    if fp8_inputs:
        how.append(say("term.train.fp8_inputs", ", FP8 linears keep their inputs in FP8 for "
                       "backward (Transformer Engine)"))
    if sp > 1:
        how.append(say("term.train.sequence_parallel", ", sequence parallelism over the {n} "
                       "tensor-parallel ranks", n=sp))
    if pp > 1:
        how.append(say("term.train.pipeline", "; pipeline stages hold {n} micro-batches in "
                       "flight", n=pp))
    terms.append(MemoryTerm("activations", int(act), formula,
                            say("term.train.how", "{how}", how=Join(how, "")),
                            _OFFLOAD_LAYERS_SOURCE if w.activation_offload_layers else
                            c.source if not w.offloads_activations else
                            memory_constant("activation_offload_layers_in_flight").source))
    v = m.vocab_size
    own_loss_bytes = float(fw.get("logits_bytes_per_element", 0)) if (
        w.loss_kind == "full") else 0.0
    if w.loss_kind == "fused":
        logits = min(b * s, 1024) * v * 6 / tp
        lformula = say("term.logits.fused", "fused/chunked cross-entropy: one chunk of 1,024 "
                       "tokens x vocab x 6 bytes (bf16 + fp32)")
    elif w.loss_kind == "compiled":
        per = memory_value("train_logits_compiled_bytes_per_element")
        logits = b * s * v * per / tp
        lformula = say("term.logits.compiled", "compiled loss: batch {batch} x {seq} tokens x "
                       "vocab {vocab:,} x {per:g} bytes (bf16 logits and their bf16 gradient; "
                       "the fp32 upcast fused away)", batch=b, seq=s, vocab=v, per=per)
    elif w.loss_kind == "chunked":
        per = memory_value("train_logits_chunked_bytes_per_element")
        logits = b * s * v * per / tp
        lformula = say("term.logits.chunked", "chunked output: batch {batch} x {seq} tokens x "
                       "vocab {vocab:,} x {per:g} bytes (bf16 logits and their gradient, fp32 "
                       "loss one chunk of 8 at a time)", batch=b, seq=s, vocab=v, per=per)
    elif own_loss_bytes:
        # the framework's own full-logits loss (Megatron's vocab-parallel cross-entropy)
        logits = b * s * v * own_loss_bytes / tp
        lformula = say("term.logits.vocab_parallel", "batch {batch} x {seq} tokens x vocab "
                       "{vocab:,} x {per:g} bytes{tp} (the framework's vocab-parallel "
                       "cross-entropy: no second fp32 copy, the gradient written in place)",
                       batch=b, seq=s, vocab=v, per=own_loss_bytes, tp=_over(tp))
    else:
        per = memory_value("train_logits_bytes_per_element")
        logits = b * s * v * per / tp
        lformula = say("term.logits", "batch {batch} x {seq} tokens x vocab {vocab:,} x {per} "
                       "bytes (bf16 + fp32 + grad)", batch=b, seq=s, vocab=v, per=per)
    if own_loss_bytes and w.loss_kind == "full" and w.framework:  # the framework's own loss
        from whichgpu.estimate.frameworks import get_framework

        sources = get_framework(w.framework).sources
        logits_source = next((x for x in sources if "cross_entropy" in x), sources[0])
    else:
        logits_source = memory_constant(_LOGITS_CONSTANT.get(
            w.loss_kind, "train_logits_bytes_per_element")).source
    terms.append(MemoryTerm("logits", int(logits), lformula, None, logits_source))
    if q.linear_bits < 16 and m.linears:
        largest = max(g.in_features * g.out_features for g in m.linears)
        terms.append(MemoryTerm(
            "dequant_workspace", int(largest * 2 / tp),
            say("term.dequant", "largest linear ({weights:,} weights) dequantized to 16-bit for "
                "its matmul", weights=largest),
            say("term.dequant.why", "bitsandbytes dequantizes one weight at a time"),
            "https://github.com/bitsandbytes-foundation/bitsandbytes (matmul_4bit)"))
    sharding = sharding_terms(w, on_cpu)
    terms.extend(sharding)
    loop = expert_loop_term(w, fw, full, grad_bytes)
    if loop is not None:
        terms.append(loop)
        sharding = [*sharding, loop]  # churns through the allocator like the gathered layers
    terms.append(runtime_term(Engine.TRANSFORMERS))
    nccl = nccl_term(w.gpus)
    if nccl:
        terms.append(nccl)
    # what churns through PyTorch's caching allocator: activations, logits, gradients and
    # the layers FSDP gathers and frees one after another
    dynamic = act + logits + grads + sum(t.bytes for t in sharding)
    frag = memory_constant("fragmentation_fraction")
    terms.append(MemoryTerm("fragmentation", int(dynamic * frag.value),
                            say("term.train.fragmentation.sharded", "{share:.0%} of "
                                "activations, logits, gradients and what FSDP gathers",
                                share=frag.value) if sharding else
                            say("term.train.fragmentation", "{share:.0%} of activations, logits "
                                "and gradients", share=frag.value),
                            say("term.fragmentation.why", "PyTorch caching allocator"),
                            frag.source))
    if w.framework:
        from whichgpu.estimate.frameworks import Framework, describe

        assumptions.extend(describe(w.framework, w.task))
        if w.framework == Framework.UNSLOTH and q.linear_bits < 8:
            assumptions.append(say("train.unsloth_4bit", "Unsloth's dynamic 4-bit checkpoints "
                                   "('-unsloth-bnb-4bit') keep some layers in 16-bit: up to "
                                   "about 10 % more weight memory than plain NF4 "
                                   "(github.com/unslothai/unsloth README)"))
    if on_cpu:
        host["model_states"] = int((wb.total + trainable * (grad_bytes + (per_param or 2)))
                                   / split / (dp if zero >= 3 else 1))
    if host:
        total_host = sum(host.values())
        parts_host = [say("train.host.part", "{what} {gb:,.1f} GB", what=_HOST_WORDS[k],
                          gb=v / 1e9) for k, v in host.items()]
        assumptions.append(say("train.host", "CPU RAM per GPU for what leaves it: {gb:,.1f} GB "
                               "({parts})", gb=total_host / 1e9, parts=Join(parts_host)))
    details = {"trainable_params": trainable, "seq_len": s, "micro_batch": b,
               "zero_stage": zero, "tp": tp, "pp": pp, "dp": dp,
               "activation_bytes_per_token_layer": per_tl, "loss": w.loss_kind,
               "framework": w.framework, "host_bytes": host}
    return terms, assumptions, details


_OFFLOAD_LAYERS_SOURCE = (
    "https://github.com/NVIDIA/Megatron-LM (megatron/core/transformer/transformer_config.py "
    "cpu_offloading_num_layers: 'the number of transformer layers for which activations has to "
    "be offloaded'; Megatron-Bridge's Llama 3 70B performance recipes offload 5 to 40 of 80)")

_LOGITS_CONSTANT = {"chunked": "train_logits_chunked_bytes_per_element",
                    "compiled": "train_logits_compiled_bytes_per_element"}


def sharding_terms(w: Workload, on_cpu: bool) -> list[MemoryTerm]:
    """What sharding keeps on each GPU beyond its shard of the model states.

    FSDP / ZeRO-3 (and FSDP CPU offload): the layers gathered for compute (the current one and
    the one prefetched), one layer's unsharded gradients beside the reduce-scatter input in the
    reduce dtype, and the parameters FSDP never reshards between forward and backward (the root
    unit's embedding and head, with the head's gradients until the root reduces them at the end
    of backward; torchtitan keeps only its output layer gathered). ZeRO-1/2 (DeepSpeed): the
    gradient-reduction and all-gather buckets."""
    from whichgpu.estimate.frameworks import framework_defaults

    m, q, tp, dp, zero = w.model, w.quant_format, w.tp_degree, w.dp_degree, w.zero_stage
    out: list[MemoryTerm] = []
    if zero in (1, 2) and dp > 1 and not on_cpu:
        c = memory_constant("zero_bucket_elements")
        n = m.params_total / (tp * w.pp_degree)
        elements = min(c.value["reduce"], n) + min(c.value["allgather"], n)
        out.append(MemoryTerm(
            "zero_buckets", int(elements * 2),
            msg("term.zero_buckets", "ZeRO-{stage} buckets: {reduce:,.0f} gradient elements "
                "reduced and {gather:,.0f} parameters all-gathered at a time x 2 bytes",
                stage=zero, reduce=min(c.value["reduce"], n),
                gather=min(c.value["allgather"], n)),
            msg("term.zero_buckets.why", "DeepSpeed's default bucket sizes"), c.source))
    if not ((zero >= 3 and dp > 1) or on_cpu):
        return out
    layer_bytes = min(q.linear_bits, 16) / 8
    nlayers = memory_value("zero3_prefetch_layers")
    out.append(MemoryTerm(
        "zero3_working_set", int(nlayers * m.largest_layer_params * layer_bytes / tp),
        msg("term.zero3", "{n} gathered layers x {params:,} params x {bytes:g} bytes",
            n=nlayers, params=m.largest_layer_params, bytes=layer_bytes),
        msg("term.zero3.why", "FSDP/ZeRO-3 all-gathers the current and the prefetched layer"),
        memory_constant("zero3_prefetch_layers").source))
    if w.task not in (Task.FULL_FT, Task.PRETRAIN):
        # frozen weights: no weight gradients to reduce; the adapters' are small (torchtune's
        # 70B LoRA row over 8 GPUs, validation/memory.csv, needs nothing more)
        return out
    fw = framework_defaults(w.framework, w.task)
    resident = fw.get("fsdp_resident", "embedding+head")
    reduce_bytes = float(fw.get("fsdp_reduce_bytes", 2))
    head = m.params.lm_head or m.params.embedding  # a tied head is the embedding
    grad_layer = max(m.largest_layer_params, head if resident == "head" else 0)
    c = memory_constant("fsdp_unsharded_grad_layers")
    out.append(MemoryTerm(
        "fsdp_unsharded_gradients", int(c.value * grad_layer * (2 + reduce_bytes) / tp),
        msg("term.fsdp_grads", "{n} layer's unsharded gradients: {params:,} params x (2 bytes "
            "+ {reduce:g} bytes of reduce-scatter input)", n=c.value, params=grad_layer,
            reduce=reduce_bytes),
        msg("term.fsdp_grads.why", "gradients are reduce-scattered one layer at a time"),
        c.source))
    what: Message | str = ""
    if resident == "none":
        kept, grads_kept = 0, 0
    elif resident == "head":
        kept, grads_kept = head, 0
        what = msg("term.fsdp_resident.head", "the output layer ({params:,} params) x 2 bytes, "
                   "kept gathered from forward through backward", params=head)
    else:
        kept = m.params.embedding + m.params.lm_head
        grads_kept = head  # produced first in backward (a tied head: the embedding's), reduced last
        what = msg("term.fsdp_resident.root", "the root unit's embedding and head ({params:,} "
                   "params) x 2 bytes gathered from forward through backward, + the head's "
                   "{grads:,} unsharded gradients x 2 bytes until the root reduces them",
                   params=kept, grads=grads_kept)
    if kept:
        out.append(MemoryTerm(
            "fsdp_resident", int((kept + grads_kept) * 2 / tp), what,
            msg("term.fsdp_resident.why", "FSDP does not reshard the root after forward"),
            "https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html "
            "(reshard_after_forward: 'The root FSDP state has its value specially set to False "
            "as a heuristic since its parameters would typically be immediately all-gathered "
            "for backward'); torchtitan/distributed/fsdp.py for torchtitan's output layer"))
    return out


_EXPERT_LOOP_SOURCE = (
    "https://github.com/huggingface/transformers/blob/00d4b3d2142cb4ced2f51b90614b5d26bc045015/"
    "src/transformers/models/gpt_oss/modeling_gpt_oss.py (GptOssExperts.forward in training: "
    "'for expert_idx in expert_hit[:]' with a one-element index tensor, so "
    "self.gate_up_proj[expert_idx] and self.down_proj[expert_idx] are advanced-indexing copies "
    "(shape (1, ...)), which the matmuls save for backward; PyTorch's index backward "
    "(index_put_ into zeros_like of the whole parameter) hands autograd a gradient the size of "
    "the whole stacked parameter per expert, summed into the running one)")


def expert_loop_term(w: Workload, fw: dict, full: bool,
                     grad_bytes: float) -> MemoryTerm | None:
    """What Hugging Face transformers' training loop over stacked experts (gpt-oss) keeps for
    the layer in backward: each hit expert's weights copied by indexing and saved by its
    matmuls (every expert is hit at training batch sizes: one layer's expert weights), and,
    when the experts train, one more gradient the size of the largest stacked parameter (the
    gate-and-up projection) beside the running sum. None for other models and frameworks,
    and where a fused hub kernel replaces the loop (``moe_kernels``)."""
    m, q = w.model, w.quant_format
    if not (fw.get("stacked_expert_loop") and not w.moe_kernels and m.moe is not None
            and m.architecture in STACKED_EXPERT_ARCHITECTURES and q.linear_bits >= 16):
        return None
    e, h, i = m.moe.num_experts, m.hidden_size, m.moe.expert_intermediate_size
    copies = e * 3 * h * i * 2.0  # gate-and-up (h x 2i) and down (i x h) of every expert, bf16
    extra = e * h * 2 * i * grad_bytes if full else 0.0
    return MemoryTerm(
        "moe_expert_copies", int((copies + extra) / w.tp_degree),
        msg("term.moe_expert_copies", "{experts} experts' weights copied by indexing and saved "
            "for backward ({gb:,.2f} GB){grad}", experts=e, gb=copies / 1e9,
            grad=msg("term.moe_expert_copies.grad", " + one gate-and-up gradient the size of "
                     "the stacked parameter ({gb:,.2f} GB)", gb=extra / 1e9) if extra else ""),
        msg("term.moe_expert_copies.why", "transformers' training loop over stacked experts"),
        _EXPERT_LOOP_SOURCE)


# model_type of the transformers models whose training forward loops over stacked expert
# parameters indexed with a tensor (modeling_gpt_oss.py GptOssExperts)
STACKED_EXPERT_ARCHITECTURES = ("gpt_oss",)


_HOST_WORDS = {"optimizer_states": msg("train.host.optimizer_states.name", "optimizer states"),
               "activations": msg("train.host.activations.name", "activations"),
               "model_states": msg("train.host.model_states.name", "model states")}


def _over(n: int) -> Message | str:
    """' / 8' when a term is divided over ``n`` > 1 GPUs."""
    return msg("term.over", " / {n}", n=n) if n > 1 else ""


def _states_follow_params(w: Workload, full: bool, grad_bytes: float) -> bool:
    """fp32-state optimizers (AdamW, SGD with momentum, Lion) keep 16-bit states when the
    trainable parameters are themselves 16-bit and no fp32 master copy is kept."""
    if w.optimizer not in ("adamw", "sgd-momentum", "lion"):
        return False
    if full:
        return not w.uses_master_weights and grad_bytes == 2.0
    return w.adapter_bytes == 2
