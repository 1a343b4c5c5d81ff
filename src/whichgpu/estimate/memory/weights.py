"""Weight bytes: exact from the checkpoint when known, else from the spec and the format."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from whichgpu.engines import module
from whichgpu.estimate.memo import Table, by_identity
from whichgpu.messages import Join, Message, msg
from whichgpu.models.gguf_recipe import is_gguf_ftype
from whichgpu.models.quant import QuantFormat
from whichgpu.models.spec import ComponentSpec, ModelSpec
from whichgpu.vocabulary import Engine

_DTYPE_BITS = {"bf16": 16, "fp16": 16, "float16": 16, "bfloat16": 16, "fp32": 32, "float32": 32,
               "fp8": 8}


@dataclass(frozen=True)
class TensorBytes:
    """One weight tensor as llama.cpp names it (``blk.3.ffn_up_exps``) and its bytes; the
    norms, biases and routers of a layer are folded into ``blk.N.attn_norm``."""

    name: str
    layer: int | None  # None: token_embd, output
    bytes: int
    expert: bool = False  # a layer's routed experts


@dataclass(frozen=True)
class WeightBytes:
    total: int
    embedding: int  # token embedding table (looked up, not streamed per token)
    lm_head: int
    exact: bool  # from checkpoint bytes rather than from counts x bits
    formula: str  # a Message: how the bytes were counted
    experts: int = 0  # routed-expert tensors (what MoE expert offload moves to host memory)
    # routed-expert bytes of each decoder layer (zeros for dense layers), and every other
    # byte of each layer (attention, dense MLP, shared experts, norms, router, biases);
    # total = embedding + lm_head + sum(layer_experts) + sum(layer_other) + rest
    layer_experts: tuple[int, ...] = ()
    layer_other: tuple[int, ...] = ()
    mix: str = ""  # GGUF: the ggml types and their shares of the bytes
    source: str = ""
    tensors: tuple[TensorBytes, ...] = ()  # per tensor (llama.cpp names), summing to total
    towers: int = 0  # vision/audio tower bytes inside total (never read for a text token)

    @property
    def outside_layers(self) -> int:
        """Bytes not in any decoder layer: embedding, output head, final norm."""
        return max(0, self.total - sum(self.layer_experts) - sum(self.layer_other))

    def scaled(self, total: int, formula: str, source: str) -> WeightBytes:
        """The same layout scaled to an exact total (a checkpoint's real bytes)."""
        f = total / max(self.total, 1)
        return WeightBytes(total, int(self.embedding * f), int(self.lm_head * f), True, formula,
                           int(self.experts * f), tuple(int(b * f) for b in self.layer_experts),
                           tuple(int(b * f) for b in self.layer_other), self.mix, source,
                           tuple(replace(t, bytes=int(t.bytes * f)) for t in self.tensors),
                           int(self.towers * f))


def native_bits(model: ModelSpec) -> int:
    return _DTYPE_BITS.get(model.native_dtype, 16)


def uses_checkpoint_bytes(model: ModelSpec, quant_name: str, requested: str | None) -> bool:
    """Exact checkpoint bytes apply when the user runs the checkpoint as it is stored."""
    ck = model.checkpoint
    if ck is None or not ck.total_bytes:
        return False
    if requested is None:
        return True
    stored = (model.quantization or model.native_dtype or "").lower()
    return requested.lower() == stored or requested.lower() == quant_name.lower() == stored


def gguf_ftype(quant: QuantFormat, engine: str | None) -> str | None:
    """The llama.cpp file type whose per-tensor recipe sizes these weights, if any.

    GGUF formats are file types; MXFP4 under llama.cpp is the MXFP4_MOE file ggml-org
    publishes for gpt-oss (experts MXFP4, every other tensor Q8_0)."""
    name = quant.name
    # the engine's own GGUF files (engines/llamacpp.py): its plain dtypes, its MXFP4_MOE
    own: GgufFileType | None = getattr(module(engine), "gguf_file_type", None)
    if name in ("fp16", "bf16", "fp32", "f32"):  # plain dtypes: GGUF only under such an engine
        return own(name) if own is not None else None
    if is_gguf_ftype(name):
        return name
    return own(name) if own is not None else None


#: an engine module's ``gguf_file_type``: a format's name -> the GGUF file type its weights
#: are under that engine (None: not a GGUF file)
GgufFileType = Callable[[str], "str | None"]


# (model, format, requested quant, engine, importance matrix) -> (model, WeightBytes): the
# copies of a workload (per batch, count, GPU, offload plan) share their weights' bytes
_WEIGHTS = Table(256)


@by_identity()
def workload_weight_bytes(w) -> WeightBytes:
    """:func:`llm_weight_bytes` for a Workload (its format, engine and importance matrix),
    memoized by those values (the model by identity)."""
    model = w.model
    key = (id(model), w.quant_name, w.quant, w.engine_name, w.imatrix)
    hit = _WEIGHTS.get(key)
    if hit is not None and hit[0] is model:
        held: WeightBytes = hit[1]
        return held
    value = llm_weight_bytes(model, w.quant_format, w.quant, engine=w.engine_name,
                             imatrix=w.imatrix)
    _WEIGHTS.put(key, (model, value))
    return value


def llm_weight_bytes(model: ModelSpec, quant: QuantFormat, requested: str | None, *,
                     use_checkpoint: bool = True, engine: Engine | None = None,
                     imatrix: bool | None = None) -> WeightBytes:
    """Bytes of a decoder's weights in ``quant``, with how they sit in the layers.

    A GGUF file type is sized tensor by tensor with llama.cpp's quantization rules
    (models/gguf_recipe.py); other formats by parameter kind at the format's bits
    (embeddings/LM head at the format's own bits). Exact checkpoint bytes are used when the
    checkpoint runs as stored (``use_checkpoint``), spread over the layers as computed.
    """
    ftype = gguf_ftype(quant, engine)
    computed = _computed(model, quant, ftype, imatrix)
    if use_checkpoint and uses_checkpoint_bytes(model, quant.name, requested):
        ck = model.checkpoint
        assert ck is not None  # uses_checkpoint_bytes is False without one
        return _exact(computed, ck.total_bytes, ck.embedding_bytes, ck.lm_head_bytes,
                      msg("formula.checkpoint", "exact checkpoint bytes ({source})",
                          source=ck.source), ck.source)
    return computed


def _exact(computed: WeightBytes, total: int, embedding: int, lm_head: int, formula: str,
           source: str) -> WeightBytes:
    """The computed layout made to add up to a checkpoint's exact bytes: its exact embedding
    and head where the checkpoint gives them, the layers scaled to the rest."""
    emb = embedding or computed.embedding
    head = lm_head or computed.lm_head
    rest = max(total - emb - head, 0)
    inner = max(computed.total - computed.embedding - computed.lm_head, 1)
    f = rest / inner

    def size(t: TensorBytes) -> int:
        if t.name == "token_embd":
            return emb
        if t.name == "output":
            return head
        return int(t.bytes * f)

    return WeightBytes(total, emb, head, True, formula, int(computed.experts * f),
                       tuple(int(b * f) for b in computed.layer_experts),
                       tuple(int(b * f) for b in computed.layer_other), computed.mix, source,
                       tuple(replace(t, bytes=size(t)) for t in computed.tensors),
                       int(computed.towers * f))


_CACHE: dict[tuple, tuple[ModelSpec, QuantFormat, WeightBytes]] = {}
_CACHE_SIZE = 256
#: Layouts of models that nothing else keeps (a pasted config: one answer's own model). At the
#: model bounds (1,024 layers) one layout holds ~3 MB of tensors, so 256 of them held ~0.8 GB
#: per web worker (issue 36); a few suffice for the repeated asks of one estimate.
_OWN: dict[tuple, tuple[ModelSpec, QuantFormat, WeightBytes]] = {}
_OWN_SIZE = 8
_SHARED_SOURCES = ("preset:", "hub:")  # specs a preset or the Hub cache keeps anyway


def _computed(model: ModelSpec, quant: QuantFormat, ftype: str | None,
              imatrix: bool | None = None) -> WeightBytes:
    """The computed layout, memoised per (model object, format): a recipe walks every tensor
    and the speed model asks for it several times per estimate."""
    key = (id(model), id(quant), quant.name, ftype, imatrix)
    shared = str(model.source).startswith(_SHARED_SOURCES)
    cache, size = (_CACHE, _CACHE_SIZE) if shared else (_OWN, _OWN_SIZE)
    hit = cache.get(key)
    if hit is not None and hit[0] is model and hit[1] is quant:
        return hit[2]
    out = (_recipe_bytes(model, ftype, imatrix) if ftype and model.linears and model.num_layers
           else _format_bytes(model, quant))
    while len(cache) >= size:
        cache.pop(next(iter(cache)), None)
    cache[key] = (model, quant, out)
    return out


def _recipe_bytes(model: ModelSpec, ftype: str, imatrix: bool | None = None) -> WeightBytes:
    from whichgpu.models.gguf_recipe import RECIPE_SOURCE, recipe

    r = recipe(model, ftype, imatrix=imatrix)
    n = model.num_layers
    experts = r.expert_bytes_by_layer(n)
    plain_per_layer = r.plain_bytes / max(n, 1)
    other = tuple(int(b + plain_per_layer) for b in r.layer_bytes(n))
    emb = r.bytes_where(category="token_embd")
    head = r.bytes_where(category="output")
    formula = msg("formula.recipe", "llama.cpp {ftype} recipe, tensor by tensor ({mix}); norms, "
                  "routers and biases F32{imatrix}{notes}", ftype=ftype.upper(), mix=r.mix(),
                  imatrix=msg("formula.recipe.imatrix", " (with an importance matrix)")
                  if r.imatrix else "",
                  notes=Join(("",) + tuple(r.notes), "; ") if r.notes else "")
    tensors = [TensorBytes(t.tensor.name, t.tensor.layer, int(t.bytes), t.tensor.expert)
               for t in r.tensors]
    tensors += [TensorBytes(f"blk.{i}.attn_norm", i, int(plain_per_layer)) for i in range(n)]
    return WeightBytes(int(r.total_bytes), int(emb), int(head), False, formula,
                       sum(experts), experts, other, r.mix(), RECIPE_SOURCE, tuple(tensors))


def _format_bytes(model: ModelSpec, quant: QuantFormat) -> WeightBytes:
    p = model.params
    other_bits = native_bits(model) if quant.linear_bits >= 16 else 16
    norm_bits = quant.norm_bits or other_bits
    router_bits = quant.router_bits or quant.norm_bits or other_bits
    experts_only = quant.expert_only and p.experts > 0
    if experts_only:
        quantized = p.experts
        plain = p.attention + p.mlp + p.shared_experts
    else:  # a dense model in an experts-only format (MXFP4): every linear takes the format
        quantized = p.attention + p.mlp + p.experts + p.shared_experts
        plain = 0
    emb = p.embedding * quant.embedding_bits / 8
    head = p.lm_head * quant.lm_head_bits / 8
    expert_bytes = p.experts * quant.linear_bits / 8
    total = (quantized * quant.linear_bits / 8 + plain * other_bits / 8 + emb + head
             + p.norms * norm_bits / 8 + p.router * router_bits / 8 + p.other * other_bits / 8)
    parts: list[Message] = [msg("formula.linear", "linear params x {bits:g} bits",
                                bits=quant.linear_bits)]
    if experts_only:
        parts.append(msg("formula.experts_only", " (experts only; other linears {bits} bits)",
                         bits=other_bits))
    if quant.expert_only and not experts_only:
        parts.append(msg("formula.no_experts", " (all linears: the model has no experts)"))
    parts.append(msg("formula.embedding", " + embedding x {bits:g} bits",
                     bits=quant.embedding_bits))
    parts.append(msg("formula.lm_head", " + lm_head x {bits:g} bits", bits=quant.lm_head_bits)
                 if p.lm_head else msg("formula.tied", " (tied lm_head)"))
    parts.append(msg("formula.norms", " + norms x {bits:g} bits", bits=norm_bits))
    if p.router:
        parts.append(msg("formula.router", " + router x {bits:g} bits", bits=router_bits))
    if p.other:
        parts.append(msg("formula.other", " + other x {bits} bits", bits=other_bits))
    formula = msg("formula.format", "{parts}", parts=Join(parts, ""))
    layer_experts, layer_other = _spread(model, total - emb - head - p.other * other_bits / 8,
                                         expert_bytes)
    return WeightBytes(int(total), int(emb), int(head), False, formula, int(expert_bytes),
                       layer_experts, layer_other, "", quant.source,
                       _synthetic_tensors(emb, head, layer_experts, layer_other,
                                          total - emb - head - sum(layer_experts)
                                          - sum(layer_other)),
                       int(model.vision_params * other_bits / 8))


def _synthetic_tensors(emb: float, head: float, experts: tuple[int, ...],
                       other: tuple[int, ...], rest: float) -> tuple[TensorBytes, ...]:
    """llama.cpp-named tensors for a layout known only per layer: a layer's routed experts
    as gate, up and down thirds, its other weights as one tensor."""
    out = [TensorBytes("token_embd", None, int(emb))] if emb else []
    for i, (e, o) in enumerate(zip(experts, other, strict=True)):
        out.append(TensorBytes(f"blk.{i}.attn", i, int(o)))
        if e:
            out += [TensorBytes(f"blk.{i}.ffn_{part}_exps", i, int(e / 3), True)
                    for part in ("gate", "up", "down")]
    if head:
        out.append(TensorBytes("output", None, int(head)))
    if rest > 0:
        out.append(TensorBytes("other", None, int(rest)))
    return tuple(out)


def _spread(model: ModelSpec, in_layers: float, experts: float
            ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Layer bytes without a per-tensor recipe: experts evenly over the MoE layers, the rest
    evenly over all layers."""
    n = model.num_layers
    if n <= 0:
        return (), ()
    moe = model.moe
    moe_layers = set()
    if moe is not None and experts:
        first = moe.dense_layers or max(0, n - (moe.moe_layers or n))
        moe_layers = set(range(first, n))
    per_expert_layer = experts / max(len(moe_layers), 1)
    rest = (in_layers - experts) / n
    return (tuple(int(per_expert_layer) if i in moe_layers else 0 for i in range(n)),
            tuple(int(rest) for _ in range(n)))


DENOISERS = ("unet", "dit", "mmdit", "transformer")
LARGE_TEXT_ENCODERS = ("t5", "llm")


def component_quantized(c: ComponentSpec, quant: QuantFormat, scope: str = "denoiser") -> bool:
    """Whether --quant applies to a pipeline component.

    A plain dtype (fp32, fp16, bf16) applies to the whole pipeline, as ``torch_dtype`` does.
    A quantization applies to the denoiser (diffusers ``quantization_config`` on the
    transformer), and with scope 'all' also to the large text encoders (T5, LLM encoders).
    """
    if quant.name in ("fp32", "fp16", "bf16"):
        return True
    if c.kind in DENOISERS:
        return True
    return scope == "all" and c.kind in LARGE_TEXT_ENCODERS


def component_dtype(c: ComponentSpec, quant: QuantFormat, requested: str | None,
                    scope: str = "denoiser", *, pipeline_dtype: str = "bf16",
                    vae_dtype: str | None = None) -> str:
    """The format a pipeline component runs in.

    Without --quant every component runs at the pipeline's dtype (diffusers' ``torch_dtype``
    applies to all of them), except a VAE the usage example loads apart (Wan: float32). A plain
    dtype (--quant fp16) is a new torch_dtype; a quantization applies to the denoiser (and, with
    scope 'all', to the large text encoders).
    """
    if c.kind == "vae" and vae_dtype and (requested is None or quant.name in ("fp16", "bf16")):
        return vae_dtype
    if requested is not None and component_quantized(c, quant, scope):
        return quant.name
    return pipeline_dtype


def component_bytes(c: ComponentSpec, quant: QuantFormat, requested: str | None,
                    scope: str = "denoiser", *, pipeline_dtype: str | None = None,
                    vae_dtype: str | None = None) -> int:
    """Bytes of one pipeline component: exact checkpoint bytes if it runs as stored, else
    params x bits of the format it runs in (see :func:`component_dtype`)."""
    from whichgpu.models.quant import get_quant

    pipe = pipeline_dtype or c.native_dtype
    fmt = component_dtype(c, quant, requested, scope, pipeline_dtype=pipe, vae_dtype=vae_dtype)
    if c.checkpoint_bytes and fmt == c.native_dtype:
        return int(c.checkpoint_bytes)
    bits = quant.linear_bits if fmt == quant.name else _DTYPE_BITS.get(fmt) or \
        get_quant(fmt).linear_bits
    return int(c.params * bits / 8)
