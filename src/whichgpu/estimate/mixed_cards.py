"""One model over different cards in one machine (a 5090 with a 3090): the split, the memory
on each card and the speed of the mix.

llama.cpp (``--split-mode layer``, its default) gives each card a run of whole layers. With no
``--tensor-split`` it splits in proportion to each device's free memory at load
(src/llama-model.cpp ``load_tensors``: ``splits[i] = free`` of each device, normalised to
cumulative fractions; layer ``il`` of the ``n_layer + 1`` slots, the output head last, goes
to the first device whose cumulative fraction exceeds ``il / (n_layer + 1)``). One token passes
the cards in turn, so its time is the sum over the cards of their layers' bytes at that card's
bandwidth, plus a hop per card boundary: the slow card's share weighs by its own bandwidth.
``--split-mode row`` splits each matrix by rows over the cards (read at once); the KV cache
and the small tensors stay on the main card, and each layer synchronises the cards.

vLLM, SGLang and TensorRT-LLM split by tensor parallelism: every card holds an equal shard,
so the smallest card bounds the memory of each and the slowest card the speed (the
all-reduces wait for it: noonghunna/club-3090 BENCHMARKS.md, a 5090 + 3090 Ti at TP=2 on
stock vLLM decodes like a pair of 3090s, "the tensor-parallel barrier runs at the slower
card's rate"). Different memory sizes run with equal shards (the smaller card runs out first:
vllm-project/vllm#10204); uneven tensor parallelism exists only in community forks (shvllm,
htsglang: club-3090#707, #845), not estimated here; vLLM's own uneven way is pipeline
parallelism with ``VLLM_PP_LAYER_PARTITION`` (vllm/envs.py), not estimated either. Cards of
different platforms (CUDA with ROCm) cannot form one group and are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from whichgpu.catalog.gpus import GPU
from whichgpu.engines import module
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Range
from whichgpu.vocabulary import Engine, SplitMode

SOURCE = ("https://github.com/ggml-org/llama.cpp/blob/master/src/llama-model.cpp "
          "(load_tensors: splits by free device memory, layer_gpu = upper_bound)")
#: an engine module's ``tp_launch``: (tensor-parallel degree, pipeline degree) -> the command
#: line that serves one model over cards of different sizes in equal shards
TpLaunch = Callable[[int, int], str]
#: an engine module's ``uneven_cards``: the engine's own way to use uneven cards, not estimated
UnevenCards = Callable[[], Message]
#: llama.cpp copies the hidden state between devices in f32 (ggml_backend_sched copies)
HOP_BYTES_PER_ELEMENT = 4
#: row split: synchronisations per layer (the attention and MLP outputs gathered on the main
#: card), a prior like the two all-reduces per layer of tensor parallelism (Megatron-LM)
ROW_SYNCS_PER_LAYER = 2
#: a split other than llama.cpp's own is suggested when it decodes this much faster (below
#: it, the estimate's own spread says nothing)
MIN_GAIN = 0.03


def splits_uneven(engine: Engine) -> bool:
    """Whether ``engine`` spreads one model's layers over cards of different sizes in any
    proportion (its module's SPLITS_UNEVEN_CARDS: llama.cpp)."""
    return bool(getattr(module(engine), "SPLITS_UNEVEN_CARDS", False))


def tensor_parallel(engine: Engine) -> bool:
    """Whether ``engine`` serves one model over cards of different sizes in equal
    tensor-parallel shards (its module's ``tp_launch``: vLLM, SGLang, TensorRT-LLM)."""
    return getattr(module(engine), "tp_launch", None) is not None


@dataclass(frozen=True)
class CardLoad:
    """What one card of the machine holds."""

    index: int  # the device number (CUDA0 ...), in the order given
    gpu: GPU
    layers: int  # layer slots on the card (the output head counts as one); TP: all
    weight_bytes: int
    kv_bytes: int
    other_bytes: int  # compute buffer and runtime, per card
    band: float  # the memory estimate's uncertainty (fraction)

    @property
    def need_bytes(self) -> int:
        return self.weight_bytes + self.kv_bytes + self.other_bytes

    @property
    def headroom_bytes(self) -> int:
        return self.gpu.usable_memory_bytes - self.need_bytes

    @property
    def fits(self) -> bool:
        return self.headroom_bytes >= 0

    @property
    def verdict(self) -> str:
        from whichgpu.estimate.memory.fit import verdict

        return verdict(self.need_bytes, self.gpu.usable_memory_bytes, self.band)

    def to_json(self) -> dict[str, Any]:
        return {"device": self.index, "gpu": self.gpu.id, "layers": self.layers,
                "weight_bytes": self.weight_bytes, "kv_cache_bytes": self.kv_bytes,
                "other_bytes": self.other_bytes, "need_bytes": self.need_bytes,
                "usable_bytes": self.gpu.usable_memory_bytes,
                "headroom_bytes": self.headroom_bytes, "fits": self.fits,
                "verdict": self.verdict}


@dataclass(frozen=True)
class MixedSpeed:
    """Decode and prefill of the mix, low / typical / high, and where a token's time goes."""

    decode_tokens_per_s: Range  # all sequences together
    decode_tokens_per_s_per_sequence: Range
    prefill_tokens_per_s: Range
    time_share: tuple[float, ...]  # per card: its share of one token's time (typical)
    byte_share: tuple[float, ...]  # per card: its share of the bytes read per token
    hop_s: float  # per token step, all card boundaries together
    link: str
    bound_by: str  # the slowest card type (lowest rate with the whole model on it)
    single_card: dict[str, Range]  # each card type's own decode rate, the model whole on it

    def to_json(self) -> dict[str, Any]:
        return {"decode_tokens_per_s": self.decode_tokens_per_s.to_json(),
                "decode_tokens_per_s_per_sequence":
                    self.decode_tokens_per_s_per_sequence.to_json(),
                "prefill_tokens_per_s": self.prefill_tokens_per_s.to_json(),
                "time_share": [round(s, 4) for s in self.time_share],
                "byte_share": [round(s, 4) for s in self.byte_share],
                "hop_s": self.hop_s, "link": self.link, "bound_by": self.bound_by,
                "single_card_decode_tokens_per_s_per_sequence":
                    {k: v.to_json() for k, v in self.single_card.items()}}


@dataclass(frozen=True)
class MixedPlan:
    """One way to run the model over the cards: the method, each card's load, the flags."""

    engine: Engine
    method: str  # "layer", "row" or "tensor-parallel"
    cards: tuple[CardLoad, ...]
    split: str  # "default" (llama.cpp's own), "given", "suggested" or "equal" (TP)
    tensor_split: tuple[int, ...] | None  # llama.cpp --tensor-split values
    launch: str
    speed: MixedSpeed | None = None
    notes: tuple[Message, ...] = field(default_factory=tuple)

    @property
    def fits(self) -> bool:
        return all(c.fits for c in self.cards)

    def describe(self) -> Message:
        if self.method == "tensor-parallel":
            return msg("mixed.method.tp", "tensor parallel over {n} cards: equal shards, the "
                       "smallest card bounds the memory of each and the slowest the speed",
                       n=len(self.cards))
        per = ", ".join(f"{c.layers} on {c.gpu.id}" for c in self.cards)
        if self.method == SplitMode.ROW:
            return msg("mixed.method.row", "each matrix split by rows ({split}); the KV cache "
                       "on the main card", split=per)
        return msg("mixed.method.layer", "whole layers per card: {split} (the output head "
                   "counts as one)", split=per)

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "method": self.method, "split": self.split,
                "tensor_split": list(self.tensor_split) if self.tensor_split else None,
                "fits": self.fits, "description": self.describe(),
                "cards": [c.to_json() for c in self.cards], "launch": self.launch,
                "speed": self.speed.to_json() if self.speed else None,
                "notes": list(self.notes)}


@dataclass(frozen=True)
class MixedCards:
    """The answer for a machine of different cards: the plan (llama.cpp's split, or equal
    tensor-parallel shards) and, for llama.cpp, the other split worth knowing."""

    cards: tuple[GPU, ...]
    plan: MixedPlan
    #: the other split worth knowing: a faster one that fits (``split`` "suggested"), or
    #: llama.cpp's own when it does not fit and the plan is the suggested one ("default")
    other: MixedPlan | None = None
    assumptions: tuple[Message, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"cards": [g.id for g in self.cards], "plan": self.plan.to_json(),
                "other_split": self.other.to_json() if self.other else None,
                "assumptions": list(self.assumptions), "source": SOURCE}


# ------------------------------------------------------------------ checks


def _distinct(cards: tuple[GPU, ...]) -> list[GPU]:
    """Each card type once, in the order given."""
    return list({g.id: g for g in cards}.values())


def check_mix(w: Workload, cards: tuple[GPU, ...]) -> None:
    """Refuse, with the reason, what the engine cannot run over these cards."""
    from whichgpu.catalog.gpus import default_catalog

    if w.is_training or w.is_diffusion:
        raise InputError(msg("mixed.task", "different cards in one machine are answered for "
                             "LLM inference (the split of one model over the cards); "
                             "{task} is not", task=w.task))
    if w.speculative is not None or w.lora_adapters:
        raise InputError(msg("mixed.not_with", "{a} and {b} are not estimated over several "
                             "different cards: ask the machine without them, or one card with "
                             "them", a=Field("speculative"), b=Field("lora_adapters")))
    if any(g.unified_memory for g in cards):
        unified = next(g for g in cards if g.unified_memory)
        raise InputError(msg("mixed.unified", "{gpu} shares its memory with the CPU: it is "
                             "not a card beside others in one machine", gpu=unified.id))
    engine = w.engine_name
    if not splits_uneven(engine) and not tensor_parallel(engine):
        raise InputError(msg("mixed.engine", "{engine} over different cards is not estimated: "
                             "llama.cpp splits by layers in any proportion, vLLM and SGLang "
                             "by equal tensor-parallel shards ({flag})", engine=engine,
                             flag=Field("engine")))
    catalog = default_catalog()
    for g in _distinct(cards):
        why = catalog.engine_problem(g, engine)
        if why is not None:
            raise InputError(msg("mixed.engine_card", "{gpu}: {why}", gpu=g.id, why=why))
    if tensor_parallel(engine):
        platforms = {str(g.platform.value) for g in cards}
        if len(platforms) > 1:
            raise InputError(msg("mixed.tp_platform", "{engine} cannot run one tensor-parallel "
                                 "group over {platforms}: every card must run the same software "
                                 "stack; llama.cpp's Vulkan backend drives both",
                                 engine=engine, platforms=" and ".join(sorted(platforms))))


# ------------------------------------------------------------------ llama.cpp


def layer_counts(fractions: list[float], slots: int) -> tuple[int, ...]:
    """llama.cpp's layer assignment: slot ``il`` goes to the first device whose cumulative
    normalised split exceeds ``il / slots`` (std::upper_bound)."""
    total = sum(fractions)
    cum, run = [], 0.0
    for f in fractions:
        run += f
        cum.append(run / total)
    counts = [0] * len(fractions)
    for il in range(slots):
        x = il / slots
        j = next((k for k, c in enumerate(cum) if c > x), len(cum) - 1)
        counts[j] += 1
    return tuple(counts)


@dataclass(frozen=True)
class _Layers:
    """Per layer slot: the bytes llama.cpp places with it (weights, KV) and the per-card
    rest, from the single-GPU memory estimate."""

    weights: tuple[int, ...]  # n_layer + 1 slots; the last is the output head and norms
    kv: tuple[int, ...]
    other: int  # per card: compute buffer, runtime
    band: float


def _layers(w: Workload) -> _Layers:
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import memory_band
    from whichgpu.estimate.memory.placement import placement
    from whichgpu.estimate.memory.weights import workload_weight_bytes

    one = w.with_(gpus=1, tp=None, pp=1)
    est = estimate_memory(one)
    terms = {t.name: t.bytes for t in est.terms}
    n = one.model.num_layers
    lay = placement(one, workload_weight_bytes(one))
    per_layer = [lay.dense_gpu[i] + lay.experts_gpu[i] for i in range(n)]
    head = max(0, lay.gpu_bytes - sum(per_layer))  # output head, norms: the last slot
    kv_total = terms.get("kv_cache", 0)
    on_gpu = [i for i in range(n) if lay.layer_on_gpu[i]]
    kv = [kv_total // len(on_gpu) if i in on_gpu else 0 for i in range(n)] if on_gpu else [0] * n
    other = sum(b for k, b in terms.items() if k not in ("weights", "kv_cache"))
    # with -ngl below every layer, llama.cpp splits only the slots on the GPUs (the last ones)
    start = n + 1 - lay.gpu_layers  # i_gpu_start
    weights = (tuple(per_layer) + (head,))[start:]
    return _Layers(weights, (tuple(kv) + (0,))[start:], other, memory_band(one))


def _layer_loads(cards: tuple[GPU, ...], counts: tuple[int, ...], lay: _Layers
                 ) -> tuple[CardLoad, ...]:
    out, start = [], 0
    for i, (g, c) in enumerate(zip(cards, counts, strict=True)):
        end = start + c
        out.append(CardLoad(i, g, c, sum(lay.weights[start:end]), sum(lay.kv[start:end]),
                            lay.other, lay.band))
        start = end
    return tuple(out)


def _row_loads(cards: tuple[GPU, ...], fractions: list[float], lay: _Layers
               ) -> tuple[CardLoad, ...]:
    total_w = sum(lay.weights)
    share = [f / sum(fractions) for f in fractions]
    slots = len(lay.weights)
    return tuple(CardLoad(i, g, slots, int(total_w * s), sum(lay.kv) if i == 0 else 0,
                          lay.other, lay.band) for i, (g, s) in enumerate(zip(cards, share,
                                                                                strict=True)))


def _fits(cards: tuple[GPU, ...], counts: list[int], lay: _Layers, margin: float) -> bool:
    return all(c.need_bytes <= c.gpu.usable_memory_bytes * (1 - margin)
               for c in _layer_loads(cards, tuple(counts), lay))


def _token_cost(cards: tuple[GPU, ...], counts: list[int], lay: _Layers) -> float:
    """Seconds-per-byte weighted bytes of one token: the sum over the cards of the bytes each
    reads at its bandwidth (what the layer split's decode time is proportional to)."""
    return sum((c.weight_bytes + c.kv_bytes) / max(c.gpu.bandwidth_bytes_per_s, 1.0)
               for c in _layer_loads(cards, tuple(counts), lay))


def _greedy(cards: tuple[GPU, ...], lay: _Layers, margin: float) -> list[int] | None:
    """The cards with the most bandwidth take as many slots as an average slot lets them
    hold; then a slot moves off any card the exact bytes overflow."""
    slots = len(lay.weights)
    counts = [0] * len(cards)
    left = slots
    per = (sum(lay.weights) + sum(lay.kv)) / slots
    for i in sorted(range(len(cards)), key=lambda i: -cards[i].bandwidth_bytes_per_s):
        room = cards[i].usable_memory_bytes * (1 - margin) - lay.other
        take = int(max(0, min(left, room // per))) if per else left
        counts[i], left = take, left - take
    if left:
        return None
    for _ in range(slots * len(cards)):
        loads = _layer_loads(cards, tuple(counts), lay)
        over = [c for c in loads if c.need_bytes > c.gpu.usable_memory_bytes * (1 - margin)]
        if not over:
            return counts
        src = over[0].index
        spare = [c.index for c in loads if c.index != src and c.headroom_bytes
                 - c.gpu.usable_memory_bytes * margin > per and counts[src] > 0]
        if not spare:
            return None
        dst = max(spare, key=lambda i: cards[i].bandwidth_bytes_per_s)
        counts[src] -= 1
        counts[dst] += 1
    return None


def _climb(cards: tuple[GPU, ...], counts: list[int], lay: _Layers, margin: float
           ) -> list[int]:
    """Move one slot at a time between any two cards (those between keep their counts and
    shift by one) while it still fits and each token reads faster; stops at a split no such
    move improves."""
    best, cost = list(counts), _token_cost(cards, counts, lay)
    improved = True
    while improved:
        improved = False
        for i in range(len(cards)):
            for j in range(len(cards)):
                if i == j or best[j] == 0:
                    continue
                trial = list(best)
                trial[i] += 1
                trial[j] -= 1
                if not _fits(cards, trial, lay, margin):
                    continue
                c = _token_cost(cards, trial, lay)
                if c < cost * (1 - 1e-12):
                    best, cost, improved = trial, c, True
    return best


def suggested_counts(cards: tuple[GPU, ...], lay: _Layers) -> tuple[int, ...] | None:
    """Layer slots per card for the fastest layer split that fits (each token's time is the
    sum of each card's bytes over its bandwidth), keeping the estimate's margin on every card
    where it can; None when no split fits. From llama.cpp's own split when it fits, else from
    a greedy fill, slots move toward the faster cards while every card still holds its share."""
    slots = len(lay.weights)
    default = list(layer_counts([float(g.usable_memory_bytes) for g in cards], slots))
    for margin in (lay.band, 0.0):
        start = default if _fits(cards, default, lay, margin) else _greedy(cards, lay, margin)
        if start is not None and _fits(cards, start, lay, margin):
            return tuple(_climb(cards, start, lay, margin))
    return None


def _launch(w: Workload, mode: str, ts: tuple[int, ...] | None) -> str:
    from whichgpu.estimate.memory.placement import flags_of

    parts = ["llama-server -m MODEL.gguf", flags_of(w), f"--split-mode {mode}"]
    if ts:
        parts.append("--tensor-split " + ",".join(str(t) for t in ts))
    parts.append(f"-c {w.seq_len * max(1, w.batch)}" + (f" -np {w.batch}" if w.batch > 1
                                                         else ""))
    return " ".join(p for p in parts if p)


def llamacpp_plans(w: Workload, cards: tuple[GPU, ...], mode: SplitMode = SplitMode.LAYER,
                   tensor_split: tuple[float, ...] | None = None
                   ) -> tuple[MixedPlan, MixedPlan | None]:
    """(llama.cpp's split: the one given, else its own by free memory; the fastest split
    that fits, when that is another, else None)."""
    lay = _layers(w)
    slots = len(lay.weights)
    if not slots:
        raise InputError(msg("mixed.no_gpu_layers", "with {field} 0 no layer is on a card: "
                             "there is nothing to split", field=Field("gpu_layers")))
    free = [float(g.usable_memory_bytes) for g in cards]

    def plan(fractions: list[float], split: str, ts: tuple[Any, ...] | None) -> MixedPlan:
        if mode == SplitMode.ROW:
            loads = _row_loads(cards, fractions, lay)
        else:
            loads = _layer_loads(cards, layer_counts(fractions, slots), lay)
        return MixedPlan(Engine.LLAMACPP, str(mode), loads, split, ts, _launch(w, mode, ts))

    if tensor_split is not None:
        if len(tensor_split) != len(cards):
            raise InputError(msg("mixed.ts_count", "{field} has {n} values for {cards} cards: "
                                 "give one per card, in the cards' order",
                                 field=Field("tensor_split"), n=len(tensor_split),
                                 cards=len(cards)))
        ts = tuple(int(t) if float(t).is_integer() else t for t in tensor_split)
        return plan(list(tensor_split), "given", ts), None
    default = plan(free, "default", None)
    if mode == SplitMode.ROW:
        return default, None
    counts = suggested_counts(cards, lay)
    if counts is None or counts == layer_counts(free, slots):
        return default, None
    return default, plan([float(c) for c in counts], "suggested", counts)


# ------------------------------------------------------------------ speed


def _per_card_speed(w: Workload, cards: tuple[GPU, ...], count: int, profile: Any
                    ) -> dict[str, Any]:
    """Each distinct card's own estimate for the workload (``count`` of it), fit unchecked."""
    from whichgpu.estimate.speed import estimate_speed

    return {g.id: estimate_speed(w, g, count, profile=profile, check_fit=False,
                                 saturation=False) for g in _distinct(cards)}


def _levels(r: Range) -> tuple[float, float, float]:
    return r.low, r.typical, r.high


def layer_speed(w: Workload, plan: MixedPlan, profile: Any = None) -> MixedSpeed:
    """Layer split: per token, the sum over the cards of their share of the bytes at that
    card's own rate, plus a hop per card boundary; row split: the cards read at once (the
    slowest share bounds it) plus synchronisations per layer."""
    from whichgpu.estimate.speed.hardware import link_for

    one = w.with_(gpus=1, tp=None, pp=1)
    cards = tuple(c.gpu for c in plan.cards)
    per = _per_card_speed(one, cards, 1, profile)
    first = next(iter(per.values()))
    prompt = int(first.scalars["prompt_tokens"])
    batch = one.batch
    loads = plan.cards
    streamed = [c.weight_bytes + c.kv_bytes for c in loads]
    total = sum(streamed) or 1
    shares = [s / total for s in streamed]
    links = [link_for(g, 2) for g in cards]
    link = min(links, key=lambda lk: lk.one_way_bytes_per_s * lk.efficiency)
    latency = max(lk.latency_s for lk in links)
    bw = link.one_way_bytes_per_s * link.efficiency
    hidden = one.model.hidden_size
    boundaries = len(cards) - 1
    if plan.method == SplitMode.ROW:
        syncs = one.model.num_layers * ROW_SYNCS_PER_LAYER
        hop = syncs * (latency + batch * hidden * HOP_BYTES_PER_ELEMENT / bw)
        hop_pre = syncs * (latency + batch * prompt * hidden * HOP_BYTES_PER_ELEMENT / bw)
    else:
        hop = boundaries * (latency + batch * hidden * HOP_BYTES_PER_ELEMENT / bw)
        hop_pre = boundaries * (latency + batch * prompt * hidden * HOP_BYTES_PER_ELEMENT / bw)
    dec, seq, pre = [], [], []
    parts_typical: list[float] = []
    for level in range(3):
        step_parts = [s / _levels(per[g.id].rates["decode_tokens_per_s_per_sequence"])[level]
                      for s, g in zip(shares, cards, strict=True)]
        pre_parts = [s * batch * prompt / _levels(per[g.id].rates["prefill_tokens_per_s"])[level]
                     for s, g in zip(shares, cards, strict=True)]
        if plan.method == SplitMode.ROW:
            step, pre_s = max(step_parts) + hop, max(pre_parts) + hop_pre
        else:
            step, pre_s = sum(step_parts) + hop, sum(pre_parts) + hop_pre
        if level == 1:
            parts_typical = step_parts
        seq.append(1 / step)
        dec.append(batch / step)
        pre.append(batch * prompt / pre_s)
    spent = sum(parts_typical) or 1
    time_share = tuple(p / spent for p in parts_typical)
    bound = min(per, key=lambda k: per[k].rates["decode_tokens_per_s_per_sequence"].typical)
    return MixedSpeed(Range(*dec), Range(*seq), Range(*pre), time_share, tuple(shares),
                      hop, link.kind, bound,
                      {k: v.rates["decode_tokens_per_s_per_sequence"] for k, v in per.items()})


def tp_speed(w: Workload, cards: tuple[GPU, ...], profile: Any = None) -> MixedSpeed:
    """Tensor parallel over the cards: each step waits for the slowest, so the mix runs at the
    slowest card type's rate as if every card were that one."""
    n = len(cards)
    per = _per_card_speed(w, cards, n, profile)

    def slowest(key: str) -> Range:
        rs = [e.rates[key] for e in per.values()]
        return Range(min(r.low for r in rs), min(r.typical for r in rs),
                     min(r.high for r in rs))

    dec = slowest("decode_tokens_per_s")
    bound = min(per, key=lambda k: per[k].rates["decode_tokens_per_s"].typical)
    link = str(per[bound].scalars.get("link", "pcie"))
    return MixedSpeed(dec, slowest("decode_tokens_per_s_per_sequence"),
                      slowest("prefill_tokens_per_s"),
                      tuple(1 / n for _ in cards), tuple(1 / n for _ in cards), 0.0, link,
                      bound,
                      {k: v.rates["decode_tokens_per_s_per_sequence"] for k, v in per.items()})


# ------------------------------------------------------------------ tensor parallel


def tp_plan(w: Workload, cards: tuple[GPU, ...]) -> MixedPlan:
    """Equal shards on every card: the per-card need of the tp layout, checked on each card
    (the smallest decides)."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import layout_for, memory_band

    n = len(cards)
    wl = layout_for(w.with_(gpus=1, tp=None, pp=1), n)
    est = estimate_memory(wl)
    terms = {t.name: t.bytes for t in est.terms}
    weights, kv = terms.get("weights", 0), terms.get("kv_cache", 0)
    other = est.total_bytes - weights - kv
    band = memory_band(wl)
    loads = tuple(CardLoad(i, g, wl.model.num_layers, weights, kv, other, band)
                  for i, g in enumerate(cards))
    engine = wl.engine_name
    code = module(engine)  # the engine's own command line and notes (engines/<engine>.py)
    tp_launch: TpLaunch | None = getattr(code, "tp_launch", None)
    launch = (tp_launch(wl.tp_degree, wl.pp_degree) if tp_launch is not None
              else f"{engine} --tp {wl.tp_degree}")
    notes = [msg("mixed.tp_smallest", "equal shards: {gpu} ({usable:.1f} GB usable) bounds the "
                 "memory of every card; the memory the larger cards have beyond it goes unused",
                 gpu=min(cards, key=lambda g: g.usable_memory_bytes).id,
                 usable=min(g.usable_memory_bytes for g in cards) / 1e9)]
    if len({str(g.architecture.value) for g in cards}) > 1:
        notes.append(msg("mixed.tp_archs", "cards of different architectures in one "
                         "tensor-parallel group run each step at the slower card's pace, with "
                         "the kernels and formats every card supports"))
    uneven: UnevenCards | None = getattr(code, "uneven_cards", None)
    if uneven is not None:
        notes.append(uneven())
    return MixedPlan(engine, "tensor-parallel", loads, "equal", None, launch,
                     notes=tuple(notes))


# ------------------------------------------------------------------ the answer


def mixed_cards(w: Workload, cards: tuple[GPU, ...], *, split_mode: SplitMode | None = None,
                tensor_split: tuple[float, ...] | None = None, speed: bool = True,
                profile: Any = None) -> MixedCards:
    """The split of ``w`` over ``cards`` (in device order), each card's memory and, with
    ``speed``, the speed of the mix."""
    from dataclasses import replace

    check_mix(w, cards)
    assumptions: list[Message] = []
    if splits_uneven(w.engine_name):
        mode = split_mode or SplitMode.LAYER
        plan, other = llamacpp_plans(w, cards, mode, tensor_split)
        if len({str(g.platform.value) for g in cards}) > 1:
            assumptions.append(msg("mixed.llamacpp_platforms", "cards of different vendors in "
                                   "one llama.cpp process need a backend that drives them all "
                                   "(Vulkan), or one server per backend joined over RPC; the "
                                   "speed is estimated for each card's own backend"))
        assumptions.append(msg("mixed.free_memory", "llama.cpp's default split is by each "
                               "card's free memory at load, taken as its usable memory; the "
                               "output head goes with the last card"))
        if other is not None and not plan.fits:
            plan, other = other, plan  # llama.cpp's own does not fit: the one that does
        elif other is not None and not speed:
            other = None  # memory: the split llama.cpp makes; speed says whether another wins
        if speed and plan.fits:
            plan = replace(plan, speed=layer_speed(w, plan, profile))
        if speed and other is not None and other.fits:
            other = replace(other, speed=layer_speed(w, other, profile))
            assert plan.speed is not None and other.speed is not None
            gain = (other.speed.decode_tokens_per_s.typical
                    / plan.speed.decode_tokens_per_s.typical)
            if gain < 1 + MIN_GAIN:
                other = None  # not worth a flag
        if mode == SplitMode.ROW:
            assumptions.append(msg("mixed.row_rough", "row split: the matrices read on every "
                                   "card at once, {n} synchronisations per layer; a rough model "
                                   "with no published mixed-card row measurement behind it",
                                   n=ROW_SYNCS_PER_LAYER))
        else:
            assumptions.append(msg("mixed.layer_sum", "layer split: one token passes the cards "
                                   "in turn, so its time is the sum of each card's layers at "
                                   "that card's speed, plus a hop per card boundary; long "
                                   "prompts overlap across cards (llama.cpp's pipeline "
                                   "parallelism), so prefill may be faster than said"))
    else:
        if split_mode is not None or tensor_split is not None:
            raise InputError(msg("mixed.ts_llamacpp", "{a} and {b} are llama.cpp's; {engine} "
                                 "splits by equal tensor-parallel shards",
                                 a=Field("split_mode"), b=Field("tensor_split"),
                                 engine=w.engine_name))
        plan, other = tp_plan(w, cards), None
        if speed and plan.fits:
            plan = replace(plan, speed=tp_speed(w, cards, profile))
    return MixedCards(cards, plan, other, tuple(assumptions))
