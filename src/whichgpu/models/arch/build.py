"""Building blocks shared by the config.json parsers: parameter accounting by component, what a
parser returns, and the readers every decoder needs (dimensions, layer kinds, MoE layout).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from whichgpu.errors import DataError
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import AttentionKind, LayerSpec, LinearGroup, MLASpec, MoESpec

PARTS = ("embedding", "attention", "mlp", "experts", "shared_experts", "router", "lm_head",
         "norms", "other")


@dataclass
class Build:
    """Accumulates linears and parameter counts by component."""

    groups: list[LinearGroup] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PARTS, 0))

    def linear(self, name: str, fin: int, fout: int, count: int, part: str, *,
               bias: bool = False, expert: bool = False, lora: bool = True) -> None:
        if count <= 0:
            return
        if lora:
            self.groups.append(LinearGroup(name, fin, fout, count, expert=expert, bias=bias))
        self.counts[part] += (fin * fout + (fout if bias else 0)) * count

    def add(self, part: str, n: int) -> None:
        self.counts[part] += n

    def swiglu(self, h: int, inter: int, count: int, part: str, *, expert: bool = False,
               bias: bool = False) -> None:
        """gate_proj, up_proj and down_proj of ``count`` gated MLPs (SwiGLU)."""
        self.linear("gate_proj", h, inter, count, part, expert=expert, bias=bias)
        self.linear("up_proj", h, inter, count, part, expert=expert, bias=bias)
        self.linear("down_proj", inter, h, count, part, expert=expert, bias=bias)


@dataclass
class Arch:
    """What a parser found; turned into a ModelSpec by ``parse_config``."""

    b: Build
    num_layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool
    max_ctx: int
    layers: list[LayerSpec]
    gated: bool = True
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    notes: list[str] = field(default_factory=list)
    architecture: str = ""
    mtp_params: int = 0  # multi-token-prediction layers in the checkpoint, not in the counts
    vision_params: int = 0  # vision tower + projector, counted in 'other'

    def add_vision(self, params: int, what: str, per: str = "image") -> None:
        """A tower (vision, or audio with ``per="audio clip"``): in 'other', not active."""
        self.b.add("other", params)
        self.vision_params += params
        self.notes.append(f"includes {what} ({params / 1e6:,.0f}M parameters, in 'other'; "
                          f"not in the active count: it runs once per {per}, not per token)")


def embed_and_head(b: Build, vocab: int, hidden: int, tied: bool) -> None:
    b.add("embedding", vocab * hidden)
    if not tied:
        b.add("lm_head", vocab * hidden)


def decoder_dims(r: ConfigReader) -> tuple[int, int, int, int]:
    """hidden size, layers, attention heads and KV heads (which must share them evenly)."""
    h = r.int("hidden_size", limit="hidden")
    n = r.int("num_hidden_layers", limit="layers")
    a = r.int("num_attention_heads", limit="heads")
    k = r.int("num_key_value_heads", default=a, limit="heads")
    if a % k:
        raise DataError(r.origin, f"{a} attention heads cannot be shared by {k} KV heads",
                        field=r.prefix + "num_key_value_heads")
    return h, n, a, k


def head_dim_of(r: ConfigReader, h: int, a: int, default: int = 0) -> int:
    """``head_dim`` when given, else ``default``, else hidden/heads (which must divide)."""
    d = r.int("head_dim", default=default, limit="hidden") or 0
    if d:
        return d
    if h % a:
        raise DataError(r.origin, f"hidden_size {h} is not a multiple of {a} heads; give "
                        "head_dim", field=r.prefix + "head_dim")
    return h // a


def attention_kinds(r: ConfigReader, n_layers: int, rule: Callable[[int], bool],
                    window: int | None, *, linear_ok: bool = False
                    ) -> list[tuple[AttentionKind, int | None]]:
    """(kind, window) per layer: ``layer_types`` when the config has it, else ``rule``.

    Linear-attention / SSM layer types are accepted only by parsers that know their state
    shapes (``linear_ok``); elsewhere they are refused rather than counted as stateless.
    """
    types = r.str_list("layer_types")
    if types is not None:
        if len(types) != n_layers:
            raise DataError(r.origin, f"has {len(types)} entries, expected one per layer "
                            f"({n_layers})", field=r.prefix + "layer_types")
        out: list[tuple[AttentionKind, int | None]] = []
        for t in types:
            if t in ("full_attention", "global", "attention"):
                out.append(("full", None))
            elif t in ("sliding_attention", "local", "chunked_attention"):
                if window is None:
                    raise DataError(r.origin, "layer_types has sliding layers but no window is "
                                    "given", field=r.prefix + "sliding_window")
                out.append(("chunked" if t == "chunked_attention" else "sliding", window))
            elif t in ("linear_attention", "mamba", "recurrent"):
                if not linear_ok:
                    raise DataError(r.origin, f"layer type {t!r}: the recurrent state of this "
                                    "architecture is not modelled here; its memory would be "
                                    "wrong", field=r.prefix + "layer_types")
                out.append(("linear", None))
            else:
                raise DataError(r.origin, f"unknown layer type {t!r}",
                                field=r.prefix + "layer_types")
        return out
    return [("sliding", window) if window and rule(i) else ("full", None)
            for i in range(n_layers)]


def gqa_attention(b: Build, h: int, a: int, k: int, d: int, count: int, *,
                  qkv_bias: bool = False, o_bias: bool = False, qk_norm: str | None = None,
                  q_gate: bool = False) -> None:
    """q/k/v/o projections of ``count`` grouped-query attention layers.

    ``qk_norm``: "head" (an RMSNorm of head_dim on q and k: Qwen3, GLM-4.5, Hunyuan), "layer"
    (over all heads at once: MiniMax-M2) or None. ``q_gate``: q_proj also yields a sigmoid
    output gate per head (Qwen3-Next, Qwen3.5).
    """
    b.linear("q_proj", h, a * d * (2 if q_gate else 1), count, "attention", bias=qkv_bias)
    b.linear("k_proj", h, k * d, count, "attention", bias=qkv_bias)
    b.linear("v_proj", h, k * d, count, "attention", bias=qkv_bias)
    b.linear("o_proj", a * d, h, count, "attention", bias=o_bias)
    if qk_norm == "head":
        b.add("norms", 2 * d * count)
    elif qk_norm == "layer":
        b.add("norms", (a + k) * d * count)


def check_top_k(r: ConfigReader, top: int, experts: int, name: str) -> None:
    if top > experts:
        raise DataError(r.origin, f"{top} experts per token but only {experts} experts",
                        field=r.prefix + name)


def mamba2_shapes(r: ConfigReader, h: int, *, heads: str, head_dim: str, state: str,
                  groups: str, conv: str, expand: str | None,
                  defaults: dict[str, int]) -> tuple[int, int, int, int, int, int]:
    """(d_inner, n_heads, d_state, n_groups, conv kernel, conv channels) of a Mamba-2 mixer."""
    nh = r.int(heads, default=defaults.get(heads, 128), limit="heads")
    dh = r.int(head_dim, default=defaults.get(head_dim, 64), limit="hidden")
    ds = r.int(state, default=defaults.get(state, 128), limit="hidden")
    g = r.int(groups, default=defaults.get(groups, 1), limit="heads")
    kern = r.int(conv, default=defaults.get(conv, 4), limit="layers")
    inner = nh * dh
    if expand:
        ex = r.int(expand, default=defaults.get(expand, 2), limit="heads")
        if ex * h != inner and expand in r.data:
            raise DataError(r.origin, f"{nh} heads x {dh} = {inner} is not {ex} x hidden "
                            f"{h}", field=r.prefix + heads)
    if nh % g:
        raise DataError(r.origin, f"{nh} Mamba heads cannot be split into {g} groups",
                        field=r.prefix + groups)
    return inner, nh, ds, g, kern, inner + 2 * g * ds


def mamba2_mixer(b: Build, h: int, count: int, shapes: tuple[int, int, int, int, int, int], *,
                 proj_bias: bool, conv_bias: bool) -> tuple[int, int]:
    """Count ``count`` Mamba-2 mixers (transformers' Mamba2Mixer / NemotronH / GraniteMoeHybrid):
    in_proj (hidden -> z, x, B, C, dt), a depthwise conv1d over x, B and C, dt_bias, A_log and D
    per head, a gated RMSNorm over d_inner, out_proj. Returns the state per sequence and layer
    as (elements, of which the SSM state): conv channels x (kernel - 1) + heads x head_dim x
    d_state (vLLM's Mamba-2 state shapes).
    """
    inner, nh, ds, g, kern, conv_dim = shapes
    b.linear("in_proj", h, 2 * inner + 2 * g * ds + nh, count, "attention", bias=proj_bias)
    # conv1d, dt_bias, A_log, D: not linears (kept 16/32-bit by quantizers), so in 'other'
    b.add("other", (conv_dim * kern + (conv_dim if conv_bias else 0) + 3 * nh) * count)
    b.add("norms", inner * count)
    b.linear("out_proj", inner, h, count, "attention", bias=proj_bias)
    ssm = nh * (inner // nh) * ds
    return conv_dim * (kern - 1) + ssm, ssm
