"""LLM inference speed: a roofline per decode step and per prefill, with engine constants.

decode step = max(bytes streamed / (bandwidth x eta_bw), FLOPs / (peak x eta_c))
              + tensor-parallel all-reduces + fixed costs (per step and per layer)
prefill     = max(FLOPs / (peak x eta_prefill), weights / bandwidth) + all-reduces + dispatch

Bytes streamed per step are the weights actually read (not the embedding table, which is only
looked up; for MoE the distinct experts the batch touches) plus the KV cache read at the
current context (``kv_read_bytes``: a chunked layer reads at most its chunk, DeepSeek-V3.2 its
indexer keys and top-k latents). Weight-only quantization shrinks bytes but computes in 16-bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from whichgpu.engines import has
from whichgpu.estimate.constants import per_key, speed_value
from whichgpu.estimate.memo import by_identity, by_settings
from whichgpu.estimate.memory.kv import kv_read_bytes, kv_tp_divisor
from whichgpu.estimate.memory.weights import WeightBytes, workload_weight_bytes
from whichgpu.estimate.speed.codebook import Lattice, lattice_of, lookup_extra_s
from whichgpu.estimate.speed.dies import layer_dispatch_factor
from whichgpu.estimate.speed.hardware import Hardware, Link, arch_key, compute_precision
from whichgpu.estimate.speed.kernels import kernel
from whichgpu.estimate.speed.offload import OP_OFFLOAD_MIN_BATCH, host_share
from whichgpu.estimate.speed.result import Component, dominant
from whichgpu.estimate.workload import Workload
from whichgpu.models.spec import ModelSpec
from whichgpu.units import EngineVersion
from whichgpu.vocabulary import Engine


class StepTime:
    """One step's seconds, its terms by bound, and its components in words. The components
    may be given as a function that builds them: the words (formatted numbers) are then made
    only when read (a serving model asks thousands of steps for their seconds alone)."""

    __slots__ = ("_components", "parts", "seconds")

    def __init__(self, seconds: float, parts: dict[str, float],
                 components: tuple[Component, ...] | Callable[[], tuple[Component, ...]]
                 ) -> None:
        self.seconds = seconds
        self.parts = parts  # bound name -> seconds of that term
        self._components = components

    @property
    def components(self) -> tuple[Component, ...]:
        c = self._components
        if callable(c):
            c = self._components = c()
        return c

    @property
    def bound(self) -> str:
        return dominant(self.parts)


def expected_distinct_experts(num_experts: int, top_k: int, tokens: int) -> float:
    """Experts a batch of ``tokens`` touches in one MoE layer, if routing were uniform.

    Each token picks ``top_k`` of ``num_experts``; an expert is missed by all tokens with
    probability (1 - k/E)^tokens.
    """
    if num_experts <= 0:
        return 0.0
    return num_experts * (1 - (1 - top_k / num_experts) ** max(tokens, 0))


def tied_head_bytes(m: ModelSpec, wb: WeightBytes) -> float:
    """Bytes of the output head when it is the token embedding (tied): the vocab x hidden
    share of the embedding bytes (Gemma 3n's per-layer input table is not the head)."""
    if not m.tie_word_embeddings or wb.lm_head or not wb.embedding:
        return 0.0
    share = m.vocab_size * m.hidden_size / max(m.params.embedding, 1)
    return wb.embedding * min(share, 1.0)


def streamed_weight_bytes(w: Workload, tokens: int) -> tuple[float, str]:
    """Weight bytes read from memory for one forward pass over ``tokens`` tokens."""
    m = w.model
    wb = workload_weight_bytes(w)
    # the embedding table is looked up, not streamed, but a tied output head is that table
    # read in full for every token; a vision/audio tower is not read for a text token (only
    # when an image or a clip is encoded)
    total = wb.total - wb.embedding - wb.towers + tied_head_bytes(m, wb)
    if m.moe is None or not m.params.experts:
        return total, ("weights without the embedding table and the vision/audio tower"
                       if wb.towers else "weights without the embedding table")
    expert_bytes = wb.experts
    moe = m.moe
    touched = expected_distinct_experts(moe.num_experts, moe.experts_per_token, tokens)
    frac = touched / moe.num_experts
    streamed = total - expert_bytes * (1 - frac)
    return streamed, (f"dense weights + {touched:.1f} of {moe.num_experts} experts per MoE "
                      f"layer for {tokens} token(s)")


def expert_bytes_streamed(w: Workload, tokens: int) -> float:
    """Routed-expert weight bytes one forward pass over ``tokens`` tokens reads (the distinct
    experts the batch touches, if routing were uniform)."""
    m = w.model
    if m.moe is None or not m.params.experts:
        return 0.0
    touched = expected_distinct_experts(m.moe.num_experts, m.moe.experts_per_token, tokens)
    return workload_weight_bytes(w).experts * touched / m.moe.num_experts


@by_identity()
def attention_flops_per_token(m: ModelSpec, context: int) -> float:
    """QK^T and PV FLOPs for one new token attending to ``context`` tokens, all layers.

    Sliding and chunked layers attend to at most their window; linear/SSM and MLP-only layers
    have no attention over the context; DeepSeek-V3.2's sparse attention attends to its
    ``index_topk`` tokens, after an indexer that scores every cached token."""
    if m.layers:
        total = 0.0
        sparse = m.mla.index_topk if m.mla else 0
        for layer in m.layers:
            if layer.attention in ("linear", "none"):
                continue
            c = min(context, layer.window) if layer.attention in ("sliding", "chunked") and \
                layer.window else context
            if sparse and m.mla:
                total += 2 * c * m.mla.index_n_heads * m.mla.index_head_dim  # indexer scores
                c = min(c, sparse)
            total += 4 * c * m.num_attention_heads * (m.head_dim or 128)
        return total
    return 4 * context * m.num_layers * m.num_attention_heads * (m.head_dim or 128)


def linear_flops_per_token(m: ModelSpec) -> float:
    """2 x active parameters, without the embedding lookup."""
    return 2 * max(m.params_active - m.params.embedding, 1)


def engine_value(name: str, key: str, hw: Hardware, era: str | None = None) -> float:
    """A per-engine (or per-kernel) constant, refined by engine version (``key@era``),
    architecture (``key/arch``) and memory class (``key/HBM``, ``key/GDDR``) where the table
    has such keys; the most specific key wins."""
    table = speed_value(name)
    memory = "HBM" if str(hw.gpu.memory_type.value).upper().startswith("HBM") else "GDDR"
    arch = arch_key(hw.gpu)
    # a llama.cpp backend's key ('llamacpp-metal') falls back to llama.cpp's own
    keys = [key] + ([key.split("-", 1)[0]] if key.startswith("llamacpp-") else [])
    bases = [b for k in keys for b in ([f"{k}@{era}"] if era else []) + [k]]
    for base in bases:
        for k in (f"{base}/{arch}", f"{base}/{memory}", base):
            if k in table:
                return float(table[k])
    return float(table["default"])


# the ggml backend llama.cpp uses on each software platform when none is named
_PLATFORM_BACKEND = {"cuda": "cuda", "rocm": "rocm", "metal": "metal", "xpu": "sycl"}


def llamacpp_backend(w: Workload, gpu) -> str | None:
    """llama.cpp's GPU backend for this job on ``gpu``: the one named (``backend``), else the
    card's own (CUDA, HIP on AMD, Metal on Apple silicon, SYCL on Intel); None for other
    engines."""
    if w.engine_name != Engine.LLAMACPP:
        return None
    return w.backend or _PLATFORM_BACKEND.get(str(gpu.platform.value), "cuda")


def constants_key(w: Workload, hw: Hardware) -> str:
    """The key of the engine's constants: the engine, or 'llamacpp-<backend>' for llama.cpp
    on a backend other than CUDA (whose keys fall back to llama.cpp's own)."""
    backend = llamacpp_backend(w, hw.gpu)
    return w.engine_name if backend in (None, "cuda") else f"llamacpp-{backend}"


def engine_era(w: Workload) -> str | None:
    """The engine version the constants are taken for: the workload's, else today's."""
    from whichgpu.estimate.speed.kernels import default_era, era_of

    if w.engine_version:
        return era_of(w.engine_name, w.engine_version)
    return default_era(w.engine_name)


def engine_platform_factor(engine: str, hw: Hardware) -> float:
    """An engine's efficiency on hardware it is less tuned for (vLLM's ROCm kernels)."""
    table = speed_value("engine_arch_factor")
    key = f"{engine}/{arch_key(hw.gpu)}"
    return float(table.get(key, table["default"]))


def bandwidth_reach(hw: Hardware) -> float:
    """The share of the engines' fitted bandwidth efficiency this card's GPU reaches in a
    bandwidth-bound read (``gpu_bandwidth_reach`` by catalog id; 1 unless measured lower:
    the M1 Ultra's GPU draws less of its datasheet 800 GB/s than the chips the efficiency
    was fitted on)."""
    return per_key("gpu_bandwidth_reach", hw.gpu.id)


def decode_fixed_s(engine: str, hw: Hardware, era: str | None = None) -> float:
    """The fixed time of one decode step (sampling, scheduling, launches), in seconds."""
    return engine_value("decode_fixed_ms", engine, hw, era) * 1e-3


@by_identity(identities=2)  # asked once per estimate: per configuration, whatever the batch
@by_settings()
def kernel_precision(w: Workload, hw: Hardware) -> str | None:
    """The precision prefill computes at when a kernel path sets it (kernel_notes' first
    value, without the words)."""
    path = kernel(constants_key(w, hw), "prefill", arch_key(hw.gpu), w.quant_format,
                  w.engine_version)
    return path.peak if path is not None and path.peak and hw.peak(path.peak) else None


def kernel_notes(w: Workload, hw: Hardware) -> tuple[str | None, list[str]]:
    """(the precision prefill computes at when a kernel path sets it, what the paths are),
    for the estimate's assumptions."""
    arch = arch_key(hw.gpu)
    notes = []
    precision = None
    era = engine_era(w)
    if era:
        notes.append(f"{w.engine_name} constants of its {era} builds"
                     + (" (today's; --engine-version to change)" if not w.engine_version
                        else f" (engine version {w.engine_version})"))
    key = constants_key(w, hw)
    backend = llamacpp_backend(w, hw.gpu)
    if backend and backend != "cuda":
        notes.append(f"llama.cpp's {backend} backend")
    for phase in ("prefill", "decode"):
        path = kernel(key, phase, arch, w.quant_format, w.engine_version)
        if path is None or (path.experts_only and not w.model.is_moe):
            continue  # an MoE experts' path is not said of a dense model
        if phase == "prefill" and path.peak and hw.peak(path.peak):
            precision = path.peak
        at = ""
        if path.peak and path.speedup != 1:
            at = f" ({path.speedup:g}x the {path.efficiency} rate on the {path.peak} peak)"
        elif path.peak:
            at = f" at the {path.peak} peak"
        notes.append(f"{phase}: {path.path}{at}")
    return precision, notes


def moe_layer_s(w: Workload, hw: Hardware, era: str | None) -> float:
    """Per decode step, the fixed cost of the MoE layers: routing (router GEMV, top-k) and
    the launches of each active expert's matrices, whatever their size (0 for dense
    models); much larger in engine builds that synchronise with the host per MoE layer, and
    in the fused Marlin MoE kernel of the serving engines' weight-only experts, which at a
    handful of tokens takes about 0.1 ms per layer beyond its bytes."""
    m = w.model
    if m.moe is None or not m.moe.moe_layers:
        return 0.0
    key = constants_key(w, hw)
    # the decode kernel of the routed experts may carry its own layer cost (fused Marlin MoE)
    path = kernel(key, "decode", arch_key(hw.gpu), w.quant_format, w.engine_version)
    layer_key = (path.efficiency if path is not None
                 and path.efficiency in speed_value("decode_moe_layer_us") else key)
    per_layer = (engine_value("decode_moe_layer_us", layer_key, hw, era)
                 + m.moe.experts_per_token
                 * engine_value("decode_moe_expert_us", key, hw, era))
    return m.moe.moe_layers * per_layer * 1e-6


def mla_layer_s(w: Workload, hw: Hardware, era: str | None) -> float:
    """Per decode step, the fixed cost of a multi-head-latent-attention model's layers
    (DeepSeek-V2/V3/R1, Kimi K2) in the engine builds whose constant is not 0 (vLLM 0.7,
    SGLang 0.4): the absorbed-MLA path's extra small kernels and the DeepSeek MoE block's glue,
    which their measured batch-1 steps show and the byte and all-reduce terms do not
    (``decode_mla_layer_us``; 0 for today's builds and for other models)."""
    m = w.model
    if m.mla is None:
        return 0.0
    return m.num_layers * engine_value("decode_mla_layer_us", constants_key(w, hw), hw,
                                       era) * 1e-6


@dataclass(frozen=True)
class _DecodeRates:
    """What a decode step takes from the workload and the hardware alone, whatever the batch
    and context (computed once per configuration: a serving model asks for dozens of
    steps)."""

    engine: str
    era: str | None
    eta_bw: float
    peak: float
    eta_c: float
    precision: str
    t_moe: float
    t_mla: float  # mla_layer_s: a latent-attention model's layers, in t_fix
    t_fix: float
    dense_weights: tuple[float, str] | None  # streamed_weight_bytes of a dense model (any batch)
    linear_flops: float  # linear_flops_per_token
    kv_divisor: float  # kv_tp_divisor at the workload's tensor-parallel degree
    tp_link: Link  # the link a tensor-parallel all-reduce crosses
    hops_net: int  # _network_hops
    lookup_s_per_byte: float  # mxfp4_lookup_s_per_byte: ALU seconds per MXFP4 expert byte
    lattice: Lattice  # the file's lattice-codebook (IQ1-IQ3) tensors (none: no lookup term)
    lattice_ops: float  # decode_codebook_lookup_ops: FP32 FLOP-equivalents per such weight


@by_identity(identities=2)  # the same workload and hardware objects: the fastest hit
@by_settings()  # a copy of them (another batch, another job's copy): the same rates by value
def _decode_rates(w: Workload, hw: Hardware) -> _DecodeRates:
    m = w.model
    q = w.quant_format
    precision, _ = compute_precision(hw.gpu, q, w.engine_name)
    engine = constants_key(w, hw)
    platform = engine_platform_factor(engine, hw)
    era = engine_era(w)
    eta_bw = (engine_value("decode_bandwidth_efficiency", engine, hw, era) * platform
              * bandwidth_reach(hw))
    if q.weight_only:
        eta_bw *= per_key("weight_only_bandwidth_efficiency", q.name)
    path = kernel(engine, "decode", arch_key(hw.gpu), q, w.engine_version)
    if path is not None:
        eta_bw *= engine_value("decode_kernel_bandwidth_factor", path.efficiency, hw, era)
    peak, eta_c, precision = _matmul_rate(hw, q, engine, precision, platform, era,
                                          w.engine_version)
    t_moe = moe_layer_s(w, hw, era)
    # issue metal9: each layer's launches wait across the die-to-die link on a two-die GPU
    dies = layer_dispatch_factor(engine_value("decode_die_sync_factor", engine, hw, era), hw)
    t_moe *= dies
    t_mla = mla_layer_s(w, hw, era)
    t_fix = (decode_fixed_s(engine, hw, era)
             + m.num_layers * engine_value("decode_per_layer_us", engine, hw, era) * 1e-6
             * dies + t_moe + t_mla)
    dense = m.moe is None or not m.params.experts  # the bytes streamed do not move with batch
    return _DecodeRates(engine, era, eta_bw, peak, eta_c, precision, t_moe, t_mla, t_fix,
                        streamed_weight_bytes(w, 0) if dense else None,
                        linear_flops_per_token(m), kv_tp_divisor(m, w.tp_degree),
                        hw.link_over(w.tp_degree), _network_hops(w, hw),
                        mxfp4_lookup_s_per_byte(w, hw, engine, era),
                        *_lattice_terms(w, hw, engine, era))


def _lattice_terms(w: Workload, hw: Hardware, engine: str,
                   era: str | None) -> tuple[Lattice, float]:
    """The lattice-codebook tensors the decode kernels look up, and the lookup work per
    weight, where the backend's constant is not 0 (estimate/speed/codebook.py)."""
    ops = engine_value("decode_codebook_lookup_ops", engine, hw, era)
    if not ops:
        return Lattice(), 0.0
    from whichgpu.estimate.memory.weights import gguf_ftype

    lattice = lattice_of(w.model, gguf_ftype(w.quant_format, w.engine_name), w.imatrix)
    return lattice, ops if lattice.dense_weights or lattice.expert_weights else 0.0


# an MXFP4 block: 32 FP4 values and one E8M0 scale in 17 bytes (OCP MX v1.0)
MXFP4_WEIGHTS_PER_BYTE = 32 / 17


def has_mxfp4_experts(w: Workload) -> bool:
    """Whether this MoE model's routed experts run in MXFP4: a checkpoint shipped with MXFP4
    experts (gpt-oss) keeps them in every GGUF file type (models/gguf_recipe.py), and an
    MXFP4 file type writes them so. What decoding them costs is each engine's constant
    (``decode_mxfp4_lookup_ops``: 0 but for llama.cpp's Vulkan backend)."""
    m = w.model
    return (m.moe is not None and bool(m.params.experts)
            and (m.quantization == "mxfp4" or w.quant_format.name.startswith("mxfp4")))


def mxfp4_lookup_s_per_byte(w: Workload, hw: Hardware, engine: str, era: str | None) -> float:
    """ALU seconds per byte of MXFP4 expert weights that llama.cpp's matrix-vector kernels
    spend decoding them (each 4-bit value looked up in a 16-entry table, times its E8M0
    scale), on this card's FP32 vector rate; 0 where the experts are not MXFP4 or the
    backend's constant is 0. Experts are MXFP4 in every GGUF file of a checkpoint shipped
    with MXFP4 experts (gpt-oss), K-quants included (models/gguf_recipe.py)."""
    if not has_mxfp4_experts(w):
        return 0.0
    ops = engine_value("decode_mxfp4_lookup_ops", engine, hw, era)
    rate = (hw.gpu.tflops("fp32") or 0.0) * 1e12 * hw.compute_scale
    if not ops or not rate:
        return 0.0
    return ops * MXFP4_WEIGHTS_PER_BYTE / rate


def _network_hops(w: Workload, hw: Hardware) -> int:
    """Pipeline stage boundaries that cross servers: the stages of a job spread over several
    servers hand their activations over the network between servers (tensor-parallel groups
    stay within a server where they fit)."""
    if w.pp_degree <= 1 or hw.servers <= 1 or hw.fabric.kind != "network":
        return 0
    return min(w.pp_degree - 1, hw.servers - 1)


@by_settings()  # equal workloads but for their batch (the batch is an argument): the same step
def decode_step(w: Workload, hw: Hardware, batch: int, context: int) -> StepTime:
    """Seconds for one decode step of ``batch`` sequences at ``context`` tokens each."""
    m = w.model
    tp = w.tp_degree
    rates = _decode_rates(w, hw)
    engine, era, eta_bw = rates.engine, rates.era, rates.eta_bw
    weights, wdesc = rates.dense_weights or streamed_weight_bytes(w, batch)
    # the cache rules are the engine's (llama.cpp pads its cells on every backend), not its
    # constants key's ("llamacpp-metal")
    kv = kv_read_bytes(m, context, w.kv_bytes, w.engine_name) * batch
    kv_gpu = kv / rates.kv_divisor
    share = host_share(w, _touched_fraction(m, batch))
    t_host = t_switch = 0.0
    host_desc = ""
    if share is not None:  # llama.cpp with layers or experts in host RAM
        weights = share.gpu_weight_bytes
        kv_host = kv_gpu * (1 - share.kv_gpu_fraction)
        kv_gpu *= share.kv_gpu_fraction
        host = w.host_spec
        eta_host = speed_value("host_decode_bandwidth_efficiency")
        t_host = (share.host_weight_bytes + kv_host) / (host.bandwidth_bytes_per_s * eta_host)
        t_switch = share.switches * speed_value("llamacpp_offload_switch_us") * 1e-6
        host_desc = (f"({share.host_weight_bytes / 1e9:.2f} GB + KV {kv_host / 1e9:.3f} GB in "
                     f"host RAM) / ({host.bandwidth_bytes_per_s / 1e9:,.0f} GB/s {host.memory} "
                     f"x {eta_host:.2f}); {share.switches} CPU<->GPU switches")
        wdesc = f"on the GPU: {share.layout.describe()}"
    t_mem = (weights / tp + kv_gpu) / (hw.bandwidth * eta_bw)
    t_lookup = 0.0
    if rates.lookup_s_per_byte and share is None and not w.expert_parallel:
        # the MXFP4 experts' matrix-vector kernels take the longer of reading their bytes
        # and decoding them: on a card with little ALU per byte of bandwidth the table
        # lookups, not the memory, set their time
        experts = expert_bytes_streamed(w, batch) / tp
        t_lookup = max(0.0, experts * rates.lookup_s_per_byte
                       - experts / (hw.bandwidth * eta_bw))
        t_mem += t_lookup
    t_codebook = 0.0
    if rates.lattice_ops and share is None and not w.expert_parallel:
        # lattice-codebook (IQ1-IQ3) matrix-vector kernels: the longer of their read and
        # their grid lookups on the card's FP32 vector rate (estimate/speed/codebook.py)
        alu = (hw.gpu.tflops("fp32") or 0.0) * 1e12 * hw.compute_scale * tp
        t_codebook = lookup_extra_s(rates.lattice, _touched_fraction(m, batch),
                                    rates.lattice_ops, alu, hw.bandwidth * eta_bw * tp)
        t_mem += t_codebook
    flops = batch * (rates.linear_flops + attention_flops_per_token(m, context)) / tp
    peak, eta_c, precision = rates.peak, rates.eta_c, rates.precision
    t_comp = flops / (peak * eta_c)
    t_comm = 0.0
    tp_link = rates.tp_link  # the server's link, or the network when tp spans servers
    if tp > 1:
        t_comm = m.num_layers * 2 * tp_link.all_reduce_s(batch * m.hidden_size * 2, tp)
    hops_net = rates.hops_net
    if w.pp_degree > 1:
        t_comm += (w.pp_degree - 1 - hops_net) * hw.link.latency_s
        t_comm += hops_net * hw.fabric.send_s(batch * m.hidden_size * 2)
    if w.expert_parallel and w.dp_degree > 1 and m.moe:  # issue 30 (speed/expert_parallel.py)
        from whichgpu.estimate.speed.expert_parallel import ModelTerms, decode_share

        terms = ModelTerms(streamed_weight_bytes(w, 0)[0], streamed_weight_bytes(w, batch)[0],
                           linear_flops_per_token(m), attention_flops_per_token(m, context))
        ep = decode_share(w, hw, batch, context, kv / max(batch, 1), terms)
        weights, kv_gpu, flops, t_comm, wdesc = (ep.weight_bytes * tp, ep.kv_bytes, ep.flops,
                                                 ep.t_comm, ep.desc)
        t_mem = (weights / tp + kv_gpu) / (hw.bandwidth * eta_bw)
        t_comp = flops / (peak * eta_c)
    t_moe, t_fix = rates.t_moe, rates.t_fix
    parts = {"memory-bandwidth": t_mem, "compute": t_comp, "interconnect": t_comm,
             "fixed-overhead": t_fix, "host-memory": t_host + t_switch}

    def comps() -> tuple[Component, ...]:  # the words, made only when read
        return (
            Component("weights+kv read", t_mem,
                      f"({wdesc}: {weights / tp / 1e9:.2f} GB + KV {kv_gpu / 1e9:.3f} GB) / "
                      f"({hw.bandwidth / 1e9:,.0f} GB/s x {eta_bw:.2f})"
                      + (f" + {t_lookup * 1e3:.2f} ms decoding the MXFP4 experts' 4-bit "
                         "values beyond their read (table lookups on "
                         f"{hw.gpu.tflops('fp32') or 0:,.1f} FP32 TFLOPS)" if t_lookup else "")
                      + (f" + {t_codebook * 1e3:.2f} ms looking the IQ weights up in their "
                         "lattice codebooks beyond their read (on "
                         f"{hw.gpu.tflops('fp32') or 0:,.1f} FP32 TFLOPS)" if t_codebook else "")),
            Component("matmuls", t_comp, f"{flops / 1e12:.3f} TFLOP / ({peak / 1e12:,.0f} "
                                         f"TFLOPS {precision} x {eta_c:.2f})"),
            Component("tensor-parallel all-reduce" if w.pp_degree == 1 or tp > 1
                      else "layer-split hops", t_comm,
                      (f"{m.num_layers} layers x 2 all-reduces over {tp_link.kind}" if tp > 1
                       else "") + ("; " if tp > 1 and w.pp_degree > 1 else "")
                      + (f"layers split over {w.pp_degree} GPUs, one active at a time (weights "
                         f"read at one GPU's bandwidth): {w.pp_degree - 1} hop(s) over "
                         f"{hw.link.kind}" if w.pp_degree > 1 else "")
                      + (f", {hops_net} of them between servers" if hops_net else "")),
            Component("fixed per step", t_fix, f"{engine}"
                      + (f" ({era} builds)" if era else "")
                      + ": per-token and per-layer overheads"
                      + (f", {m.moe.moe_layers} MoE layers' routing and expert launches "
                         f"({t_moe * 1e3:.2f} ms)" if t_moe and m.moe else "")
                      + (f", {m.num_layers} latent-attention (MLA) layers' small kernels "
                         f"({rates.t_mla * 1e3:.2f} ms)" if rates.t_mla else "")),
            Component("host RAM read (CPU part)", t_host + t_switch, host_desc),
        )
    return StepTime(max(t_mem, t_comp) + t_comm + t_fix + t_host + t_switch, parts, comps)


def _touched_fraction(m: ModelSpec, tokens: int) -> float:
    """The share of a MoE layer's experts ``tokens`` tokens route to (1 for dense models)."""
    if m.moe is None or not m.moe.num_experts:
        return 1.0
    return expected_distinct_experts(m.moe.num_experts, m.moe.experts_per_token,
                                     tokens) / m.moe.num_experts


def mla_prefill_share(m: ModelSpec) -> float:
    """Prefill attention FLOPs of dense MLA in the serving engines' prefill form, as a share
    of ``attention_flops_per_token``'s (which counts ``head_dim`` for both QK and PV).

    vLLM, SGLang and TensorRT-LLM prefill MLA in its non-absorbed ("compute friendly") form:
    the latent is expanded to per-head keys and values and ordinary attention runs with QK
    head dim qk_nope + qk_rope (192 for DeepSeek-V3) and V head dim v_head_dim (128), where
    decode attends in the latent space (vLLM v1/attention/backends/mla/common.py, PR 13789;
    TensorRT-LLM tech blog 03). DeepSeek-V3.2's sparse attention prefills in the latent
    space, so it keeps the count it has."""
    mla = m.mla
    if mla is None or mla.index_topk or not m.head_dim:
        return 1.0
    return (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim) / (2 * m.head_dim)


# model_type of the Gated DeltaNet hybrids (models/config_parse.py: gated_deltanet), with the
# Qwen3.5 wrappers whose text_config carries it
GATED_DELTANET = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
                            "qwen3_5_moe_text"})
_SCAN_HEAD = 128 * 128  # state elements of one linear_attention_scan_us head (d = 128)


def linear_scan_s(m: ModelSpec, sequences: int, prompt: int, passes: int = 1,
                  tp: int = 1) -> float:
    """Seconds the Gated DeltaNet layers' chunked scan adds to a serving engine's prefill of
    ``sequences`` prompts of ``prompt`` tokens in ``passes`` forward passes.

    vLLM and SGLang run fla's chunked gated-delta-rule kernels, which walk a sequence's
    64-token chunks in order and parallelise over value heads and sequences only: a cost per
    call, per chunk and per head and chunk (linear_attention_scan_us, timed on a B200), not a
    share of the tensor peak. Heads are the layer's recurrent state over 128 x 128, split
    over ``tp`` ranks."""
    if m.architecture not in GATED_DELTANET or not m.layers:
        return 0.0
    c = speed_value("linear_attention_scan_us")
    chunks = -(-max(prompt, 1) // int(c["chunk_tokens"]))
    total = 0.0
    for layer in m.layers:
        if layer.attention != "linear":
            continue
        heads = (layer.state_fp32_elements or layer.state_elements) / _SCAN_HEAD / tp
        total += (passes * c["call"]
                  + chunks * (c["chunk"] + sequences * heads * c["head_chunk"]))
    return total * 1e-6


def _matmul_rate(hw: Hardware, q, engine: str, precision: str, platform: float,
                 era: str | None = None, version: EngineVersion | None = None
                 ) -> tuple[float, float, str]:
    """(peak FLOP/s, the share of it this engine's matmuls reach, the precision key): the
    kernel engine_kernels.toml names for this engine, architecture and format (llama.cpp's
    int8 MMQ tiles, FP4 tensor cores, Marlin's 16-bit dequantizing GEMMs), else the engine's
    prefill efficiency, less for weight-only formats (dequantization in the kernel) and for
    8/4-bit compute."""
    path = kernel(engine, "prefill", arch_key(hw.gpu), q, version)
    if path is not None and path.efficiency != "weight_only":
        key = path.peak if path.peak and hw.peak(path.peak) else precision
        eta = (engine_value("prefill_kernel_efficiency", path.efficiency, hw, era) * platform
               * path.speedup)
        return hw.peak(key) or hw.peak("fp16") or 1.0, eta, key
    if path is not None and path.efficiency == "weight_only":
        precision = path.peak if path.peak and hw.peak(path.peak) else precision
        eta = (engine_value("prefill_compute_efficiency", engine, hw, era) * platform
               * speed_value("weight_only_compute_efficiency")["default"]
               * per_key("weight_only_arch_factor", arch_key(hw.gpu)))
        return hw.peak(precision) or hw.peak("fp16") or 1.0, eta, precision
    eta = engine_value("prefill_compute_efficiency", engine, hw, era) * platform
    if q.weight_only:
        eta *= per_key("weight_only_compute_efficiency", q.name) * per_key(
            "weight_only_arch_factor", arch_key(hw.gpu))
    if precision in ("fp8", "fp4", "int8"):
        eta *= speed_value("fp8_compute_efficiency_factor")
    return hw.peak(precision) or hw.peak("fp16") or 1.0, eta, precision


@dataclass(frozen=True)
class _PrefillRates:
    """What a prefill takes from the workload, the hardware and the prompt alone, whatever
    the batch (computed once per configuration, like :class:`_DecodeRates`)."""

    engine: str
    era: str | None
    attn: float  # attention FLOPs per token, averaged over the prompt
    per_token: float  # linear + attention FLOPs per token
    peak: float
    eta: float  # with the width factor
    precision: str
    width_desc: str
    serving: bool  # the engine batches continuously
    chunk: int  # prefill_chunk_tokens
    bandwidth: float  # bytes/s the weights are read at
    t_layers: float  # per-layer dispatch, before a serving engine hides it
    t_fixed: float  # decode_fixed_s


@by_identity(identities=2)  # the same workload and hardware objects: the fastest hit
@by_settings()  # a copy of them (another batch, another job's copy): the same rates by value
def _prefill_rates(w: Workload, hw: Hardware, prompt: int) -> _PrefillRates:
    m = w.model
    q = w.quant_format
    precision, _ = compute_precision(hw.gpu, q, w.engine_name)
    engine = constants_key(w, hw)
    # causal attention: token t attends to t tokens, on average prompt/2
    samples = _samples(prompt)
    attn = sum(attention_flops_per_token(m, c) for c in samples) / len(samples)
    serving = has(w.engine_name, "continuous_batching")
    if serving:
        attn *= mla_prefill_share(m)
    platform = engine_platform_factor(engine, hw)
    era = engine_era(w)
    peak, eta, precision = _matmul_rate(hw, q, engine, precision, platform, era,
                                        w.engine_version)
    # narrow models keep a GPU less busy: the measured width curve of small_model_mfu, as for
    # training and diffusion transformers
    from whichgpu.estimate.speed.training import size_factor

    width = size_factor(m.hidden_size or 0)
    eta *= width
    width_desc = f"; hidden {m.hidden_size:,}: x{width:.2f} (small_model_mfu)" if width < 1 \
        else ""
    bandwidth = (hw.bandwidth * platform * bandwidth_reach(hw)
                 * engine_value("decode_bandwidth_efficiency", engine, hw, era))
    t_layers = m.num_layers * engine_value("prefill_per_layer_ms", engine, hw, era) * 1e-3
    return _PrefillRates(engine, era, attn, linear_flops_per_token(m) + attn, peak, eta,
                         precision, width_desc, serving, prefill_chunk_tokens(w), bandwidth,
                         t_layers, decode_fixed_s(engine, hw, era))


@by_settings()  # equal workloads but for their batch: the same prefill (estimate/memo.py)
def prefill_time(w: Workload, hw: Hardware, batch: int, prompt: int) -> StepTime:
    """Seconds to process ``batch`` prompts of ``prompt`` tokens (time to first token)."""
    m = w.model
    tp = w.tp_degree
    rates = _prefill_rates(w, hw, prompt)
    engine, era, attn, peak, eta, precision = (rates.engine, rates.era, rates.attn,
                                               rates.peak, rates.eta, rates.precision)
    tokens = batch * prompt
    expert_flops, moe_eff, moe_desc = _expert_prefill(w, hw, tokens, era)
    moe_desc += rates.width_desc
    flops = tokens * rates.per_token / tp
    t_comp = (flops - expert_flops / tp) / (peak * eta) \
        + expert_flops / tp / (peak * eta * moe_eff)
    # each micro-batch (llama.cpp's -ub, a serving engine's batched-token budget) is its own
    # forward pass: it reads every weight (of a MoE, the experts its tokens route to) again
    chunk = min(rates.chunk, max(tokens, 1))
    passes = -(-max(tokens, 1) // chunk)
    weights = streamed_weight_bytes(w, chunk)[0] * passes
    t_mem = weights / tp / rates.bandwidth
    t_comm = 0.0
    tp_link = hw.link_over(tp)
    if tp > 1:
        t_comm = m.num_layers * 2 * tp_link.all_reduce_s(tokens * m.hidden_size * 2, tp)
    hops_net = _network_hops(w, hw)
    if hops_net:  # each stage boundary between servers sends the prompt's activations once
        t_comm += hops_net * hw.fabric.send_s(tokens * m.hidden_size * 2)
    if w.expert_parallel and w.dp_degree > 1 and m.moe:  # issue 30 (speed/expert_parallel.py)
        from whichgpu.estimate.speed.expert_parallel import ModelTerms, prefill_share

        dense_s = (flops - expert_flops / tp) / (peak * eta)
        terms = ModelTerms(streamed_weight_bytes(w, 0)[0], streamed_weight_bytes(w, chunk)[0])
        t_comp, t_mem, t_comm = prefill_share(w, hw, batch, prompt, dense_s, t_comp - dense_s,
                                              t_mem, terms)
    # issue 28: Gated DeltaNet layers' chunked scan, latency-bound (linear_scan_s)
    t_scan = linear_scan_s(m, batch, prompt, passes, tp) if rates.serving else 0.0
    t_layers = rates.t_layers
    if rates.serving:
        # a serving engine's per-layer figure is its host's dispatch (aiconfigurator), and the
        # host launches a layer's kernels while the GPU runs the layers before it: paid where
        # it outlasts the GPU's work (short prompts), hidden otherwise (issue 28: a 1k-token
        # NVFP4 prefill on an RTX PRO 6000 measured 81.7 ms, less than 64 layers x 0.8 ms of
        # dispatch plus its matmuls). The others' small prior stays added (speed-notes.md).
        t_layers = max(t_layers - max(t_comp, t_mem) - t_scan, 0.0)
    t_fix = t_layers + rates.t_fixed
    t_copy, copy_desc = _offload_copies(w, hw, tokens, attn)
    parts = {"compute": t_comp + t_scan, "memory-bandwidth": t_mem, "interconnect": t_comm,
             "fixed-overhead": t_fix, "pcie": t_copy}

    def comps() -> tuple[Component, ...]:  # the words, made only when read
        return (
            Component("prefill matmuls + attention", t_comp,
                      f"{flops / 1e12:.2f} TFLOP / ({peak / 1e12:,.0f} TFLOPS {precision} x "
                      f"{eta:.2f})" + moe_desc),
            Component("linear-attention scan", t_scan,
                      "Gated DeltaNet chunked scan (fla kernels): a cost per call, per "
                      "64-token chunk and per head and chunk (linear_attention_scan_us)"),
            Component("weights read per micro-batch", t_mem,
                      f"{passes} pass(es) of up to {chunk:,} tokens: "
                      f"{weights / tp / 1e9:.2f} GB"),
            Component("tensor-parallel all-reduce", t_comm, f"over {tp_link.kind}"
                      + (f"; {hops_net} pipeline hop(s) between servers" if hops_net else "")),
            Component("dispatch", t_fix, f"{engine}: per-layer dispatch"
                      + (" beyond the GPU's work" if rates.serving else "")),
            Component("host weights over PCIe", t_copy, copy_desc),
        )
    return StepTime(max(t_comp, t_mem) + t_scan + t_comm + t_fix + t_copy, parts, comps)


def _expert_prefill(w: Workload, hw: Hardware, tokens: int, era: str | None
                    ) -> tuple[float, float, str]:
    """(routed-expert FLOPs of the prefill, the efficiency multiplier of those GEMMs, why).

    A micro-batch of U tokens sends U x k / E tokens to each expert: small GEMMs that keep a
    GPU less busy than one dense GEMM of U rows. Multiplier n / (n + n_half) with n those
    tokens per expert and n_half the engine's half-efficiency size (moe_expert_half_tokens).
    llama.cpp's micro-batch is -ub (512); the serving engines' is their batched-token budget.
    """
    m = w.model
    if m.moe is None or not m.moe.num_experts or not m.params.experts:
        return 0.0, 1.0, ""
    moe = m.moe
    per_token = 2 * m.params.experts * moe.experts_per_token / moe.num_experts
    chunk = prefill_chunk_tokens(w)
    n = max(1.0, min(chunk, tokens) * moe.experts_per_token / moe.num_experts)
    key = constants_key(w, hw)
    half = engine_value("moe_expert_half_tokens", key, hw, era) \
        * _expert_size_scale(w, hw, key, era)
    eff = n / (n + half)
    return tokens * per_token, eff, (f"; routed experts: {n:,.0f} tokens per expert per "
                                     f"{min(chunk, tokens):,}-token batch, x{eff:.2f} "
                                     f"(n / (n + {half:,.0f}))")


def expert_matrix_size(w: Workload) -> float:
    """Elements of one routed expert's matrix on one GPU: hidden size x the expert's width
    (its intermediate size over the tensor-parallel degree, which splits every expert)."""
    m = w.model
    width = m.moe.expert_intermediate_size if m.moe else 0
    return float(m.hidden_size or 0) * width / max(w.tp_degree, 1)


def _expert_size_scale(w: Workload, hw: Hardware, key: str, era: str | None) -> float:
    """How the half-efficiency size moves with the expert's size (issue 28): n_half x
    (S_ref / S)^a, S the expert matrix on one GPU, S_ref the size the engine's
    moe_expert_half_tokens was fitted at, a its moe_expert_size_exponent (0: no scaling).
    A grouped GEMM's per-expert tile work is about M tokens x the expert's size, so a larger
    expert fills its tiles at fewer tokens."""
    a = engine_value("moe_expert_size_exponent", key, hw, era)
    size = expert_matrix_size(w)
    if not a or size <= 0:
        return 1.0
    ref = engine_value("moe_expert_reference_size", key, hw, era)
    return float((ref / size) ** a)


def prefill_chunk_tokens(w: Workload) -> int:
    """Tokens per prefill forward pass: llama.cpp's physical batch (-ub), a serving engine's
    batched-token budget (vLLM's max_num_batched_tokens)."""
    if has(w.engine_name, "ggml_runtime"):
        return w.ubatch_tokens
    if w.engine_name == Engine.MLX:  # mlx-lm generate.py: prefill_step_size = 2048
        return 2048
    from whichgpu.estimate.constants import memory_value

    return int(memory_value("vllm_max_num_batched_tokens"))


def _offload_copies(w: Workload, hw: Hardware, tokens: int, attn_per_token: float
                    ) -> tuple[float, str]:
    """llama.cpp prefill with weights in host RAM: each micro-batch of 32 tokens or more
    copies them over PCIe to run on the GPU (op offload; only the experts it routes to);
    the attention of layers on the CPU runs on the CPU."""
    ubatch = w.ubatch_tokens
    per_ub = min(ubatch, max(tokens, 1))
    share = host_share(w, _touched_fraction(w.model, per_ub))
    if share is None:
        return 0.0, ""
    n_ub = -(-tokens // ubatch)
    host = w.host_spec
    cpu_layers = w.model.num_layers - sum(share.layout.layer_on_gpu)
    t_cpu_attn = (tokens * attn_per_token * cpu_layers / max(w.model.num_layers, 1)
                  / (speed_value("host_compute_tflops") * 1e12))
    if per_ub < OP_OFFLOAD_MIN_BATCH:  # too small to offload: the CPU runs those weights
        t = share.host_weight_bytes * n_ub / (host.bandwidth_bytes_per_s
                                              * speed_value("host_decode_bandwidth_efficiency"))
        return t + t_cpu_attn, (f"{n_ub} micro-batch(es) under {OP_OFFLOAD_MIN_BATCH} tokens: "
                                f"the CPU reads {share.host_weight_bytes / 1e9:.2f} GB each")
    link = str(hw.gpu.interconnect.host_link.value)
    # memory-mapped host weights (llama.cpp's default) copy from pageable memory; with
    # --no-mmap they sit in pinned CUDA host buffers
    pageable = speed_value("llamacpp_offload_copy_efficiency") if w.mmap else 1.0
    rate = per_key("host_offload_gb_s", link) * 1e9 * pageable
    t = n_ub * share.copy_bytes / rate
    return t + t_cpu_attn, (f"{n_ub} micro-batch(es) of up to {ubatch} tokens x "
                            f"{share.copy_bytes / 1e9:.2f} GB copied over {link} at "
                            f"{rate / 1e9:.1f} GB/s ("
                            + ("memory-mapped, pageable" if w.mmap else "--no-mmap, pinned")
                            + ")"
                            + (f"; attention of {cpu_layers} CPU layer(s) on the CPU"
                               if cpu_layers else ""))


def _samples(prompt: int) -> list[int]:
    """Context lengths at which to evaluate attention cost across a prompt (cheap integral)."""
    return [max(1, int(prompt * f)) for f in (0.125, 0.375, 0.625, 0.875)]
