"""Which GPUs hold a workload, with what headroom, and what would make it fit.

A configuration fits when the estimated peak per GPU is at most the GPU's usable memory (what
nvidia-smi reports), the engine's own reserve and a fragmentation margin already included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from whichgpu.catalog.gpus import GPU, PRECISIONS, Catalog, default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate.constants import memory_constant
from whichgpu.estimate.memo import Table, by_identity
from whichgpu.estimate.memory import MemoryEstimate, estimate_memory
from whichgpu.estimate.workload import LAYER_SPLIT_ENGINES, Workload, tp_problem
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.models.quant import get_quant
from whichgpu.units import GB
from whichgpu.vocabulary import Engine, Placement, SuggestionKind, Task

# Every count one server holds, not only powers of two (3 x RTX 3090 is a common build): a
# layer split takes any count; tensor parallelism takes the counts that divide the heads, and
# layout_for puts the rest of a count in pipeline stages (tp x pp).
SERVER_COUNT = 8
COUNTS = tuple(range(1, SERVER_COUNT + 1))


def counts_for(w: Workload, upto: int = SERVER_COUNT) -> tuple[int, ...]:
    """The GPU counts from 1 to ``upto`` that this workload's layout allows."""
    out = []
    for count in range(1, upto + 1):
        try:
            layout_for(w, count)
        except InputError:
            continue
        out.append(count)
    return tuple(out)


Verdict = Literal["fits", "borderline", "does not fit"]


def memory_band(w: Workload) -> float:
    """The estimate's own uncertainty as a fraction: within it of a card's usable memory, a
    fit verdict could go either way ("borderline"). Per task group, from the memory
    validation rows (``memory_uncertainty``, written by make calibrate)."""
    group = "training" if w.is_training else "diffusion" if w.is_diffusion else "inference"
    return float(memory_constant("memory_uncertainty").value[group])


def verdict(need: int, usable: int, band: float, host_ok: bool = True) -> Verdict:
    """fits / borderline / does not fit: borderline when the need is within ``band`` of the
    usable memory on either side (a host RAM shortfall is a plain miss)."""
    if not host_ok:
        return "does not fit"
    if abs(usable - need) <= band * usable:
        return "borderline"
    return "fits" if need <= usable else "does not fit"


@dataclass(frozen=True)
class Fit:
    gpu: GPU
    count: int
    per_gpu_bytes: int
    headroom_bytes: int  # usable - needed (negative when it does not fit)
    layout: str
    band: float = 0.0  # the estimate's uncertainty (fraction), see memory_band
    host_bytes: int = 0  # what the job keeps in host RAM (llama.cpp offload)
    host_ok: bool = True  # the host RAM holds it

    @property
    def fits(self) -> bool:
        return self.headroom_bytes >= 0 and self.host_ok

    @property
    def verdict(self) -> Verdict:
        return verdict(self.per_gpu_bytes, self.gpu.usable_memory_bytes, self.band,
                       self.host_ok)

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu.id, "count": self.count, "per_gpu_bytes": self.per_gpu_bytes,
                "usable_bytes": self.gpu.usable_memory_bytes,
                "headroom_bytes": self.headroom_bytes, "fits": self.fits,
                "verdict": self.verdict, "uncertainty": self.band, "layout": self.layout,
                "host_bytes": self.host_bytes, "host_fits": self.host_ok}


def layout_for(w: Workload, count: int, gpu: GPU | None = None) -> Workload:
    """The workload spread over ``count`` GPUs the usual way for its task.

    Inference: tensor parallel over all of them. Training: data parallel with ZeRO-3/FSDP.
    Diffusion: one pipeline per GPU (no memory saving). A layout the user set is kept.
    """
    if count == w.gpus:
        return w
    if w.is_training:
        return w.with_(gpus=count, tp=None, pp=1)
    if w.is_diffusion:  # issue 29: a ring degree only where it divides that count
        from whichgpu.estimate.diffusion_parallel import with_gpus

        return with_gpus(w, count)
    if w.expert_parallel and not w.tp:  # issue 30: tp=1 x dp=count, the experts over all
        return w.with_(gpus=count, pp=1)
    if w.engine_name in LAYER_SPLIT_ENGINES and not w.tp:
        return w.with_(gpus=count, pp=1)  # layer split over every GPU (see pp_degree)
    tp = count
    if tp_problem(w.model, tp):  # TP must split the heads: the rest in pipeline stages
        tp = max(t for t in range(1, count + 1) if count % t == 0
                 and tp_problem(w.model, t) is None)
        return w.with_(gpus=count, tp=tp, pp=count // tp)
    return w.with_(gpus=count, tp=tp, pp=1)


def describe_layout(w: Workload) -> Message:
    """How the GPUs of one job are used: 'single GPU', 'tp=4', 'dp=64 ZeRO-3', 'tp=2 pp=2'."""
    if w.gpus == 1:
        return msg("layout.single", "single GPU")
    if w.is_training:
        parts = []
        if w.tp_degree > 1:
            parts.append(f"tp={w.tp_degree}")
        if w.pp_degree > 1:
            parts.append(f"pp={w.pp_degree}")
        parts.append(f"dp={w.dp_degree}" + (f" ZeRO-{w.zero_stage}" if w.zero_stage else ""))
        return msg("layout.training", "{layout}", layout=" ".join(parts))
    if w.is_diffusion:
        from whichgpu.estimate.diffusion_parallel import diffusion_layout

        lay = diffusion_layout(w) if w.task != Task.IMAGE_LORA else None
        if lay is not None and lay.replicas == 1:  # one pipeline split over the GPUs
            return msg("layout.parallel", "{layout}", layout=lay.describe())
        return msg("layout.pipelines", "{n} independent pipelines", n=w.gpus)
    if w.expert_parallel and w.dp_degree > 1:  # issue 30
        return msg("layout.expert_parallel", "tp={tp} x dp={dp}, experts over all {n} GPUs",
                   tp=w.tp_degree, dp=w.dp_degree, n=w.gpus)
    return msg("layout.parallel", "{layout}", layout=f"tp={w.tp_degree}" + (
        f" pp={w.pp_degree}" if w.pp_degree > 1 else ""))


def fits(w: Workload, *, catalog: Catalog | None = None, counts=COUNTS,
         gpus: list[GPU] | None = None) -> list[Fit]:
    """Every catalog GPU x count, fitting ones first (fewest GPUs, then least memory)."""
    catalog = catalog or default_catalog()
    out: list[Fit] = []
    cache: dict[int, MemoryEstimate] = {}
    for count in counts:
        try:
            wc = layout_for(w, count)
        except InputError:
            continue
        est = cache.setdefault(count, estimate_memory(wc))
        band = memory_band(wc)
        # the same for every GPU at this count: worked out once (at the first GPU kept)
        total, layout = est.total_bytes, None
        host_total, host_fits = est.host_total_bytes, est.host_fits
        for g in gpus or catalog.gpus:
            if w.engine is not None and catalog.engine_problem(g, w.engine):
                continue  # the engine the user named does not run there
            if layout is None:
                layout = describe_layout(wc)
            out.append(Fit(g, count, total, g.usable_memory_bytes - total, layout, band,
                           host_total, host_fits))
    return sorted(out, key=lambda f: (not f.fits, f.count, f.gpu.usable_memory_bytes))


def smallest_fits(w: Workload, catalog: Catalog | None = None) -> list[Fit]:
    """For each GPU, the fewest GPUs that hold the workload (GPUs that never fit left out)."""
    return list(_smallest_fits(w, catalog or default_catalog()))


@by_identity(size=256, identities=2)  # the same workload asked "what fits" for each GPU
def _smallest_fits(w: Workload, catalog: Catalog) -> tuple[Fit, ...]:
    best: dict[str, Fit] = {}
    for f in fits(w, catalog=catalog):
        if f.fits and f.gpu.id not in best:
            best[f.gpu.id] = f
    return tuple(sorted(best.values(), key=lambda f: (f.count, f.gpu.usable_memory_bytes)))


# ------------------------------------------------------------------ what would make it fit

@dataclass(frozen=True)
class Change:
    """One change to the workload and its effect: what it is (``kind``, and the request
    fields it sets, ``settings``), in words (``description``), what the job then needs and
    the GPUs that then hold it."""

    description: Message
    workload: Workload
    total_bytes: int
    fits_on: tuple[Placement, ...]  # the GPU sizes that now hold it
    kind: SuggestionKind = SuggestionKind.QUANT
    settings: tuple[tuple[str, Any], ...] = ()  # (request field, value)

    def to_json(self) -> dict[str, Any]:
        return {"change": self.description, "total_bytes": self.total_bytes,
                "total_gb": round(self.total_bytes / GB, 2), "fits_on": list(self.fits_on),
                "kind": self.kind, "settings": dict(self.settings),
                "message": self.description.to_json()}


def _fits_on(w: Workload, target: GPU | None, catalog: Catalog,
             counts: tuple[int, ...] = COUNTS) -> tuple[Placement, ...]:
    if target is not None:
        # as fits(w, counts=(count,), gpus=[target]) for each count, the same errors and the
        # same first fit; the need on ``count`` GPUs is asked once for every target (_need)
        refused = w.engine is not None and catalog.engine_problem(target, w.engine)
        usable = target.usable_memory_bytes
        for count in counts:
            need = _need(w, count)
            if need is None or refused:
                continue
            total, host_fits, layout_error = need
            if layout_error is not None:
                raise layout_error
            if total <= usable and host_fits:
                return (Placement(target.id, count),)
        return ()
    return tuple(Placement(f.gpu.id, f.count)
                 for f in smallest_fits(w, catalog))  # all of them: displays say "and N more"


@by_identity(size=1024)  # each changed workload, asked for each target GPU
def _need(w: Workload, count: int) -> tuple[int, bool, InputError | None] | None:
    """What ``w`` needs per GPU on ``count`` GPUs, whether host RAM holds it, and the error
    fits() raises for a GPU the engine runs on (a diffusion split the GPUs refuse); None: no
    such layout. What fits() compares with each GPU's usable memory."""
    try:
        wc = layout_for(w, count)
    except InputError:
        return None
    est = estimate_memory(wc)
    memory_band(wc)
    try:
        describe_layout(wc)
    except InputError as exc:
        return est.total_bytes, est.host_fits, exc.with_traceback(None)
    return est.total_bytes, est.host_fits, None


@dataclass(frozen=True)
class _Candidate:
    """A change to try: its words, its kind, and the Workload settings it changes."""

    description: Message
    kind: SuggestionKind
    changes: dict[str, Any]

    @property
    def settings(self) -> tuple[tuple[str, Any], ...]:
        """The request fields the change sets (a Workload setting has its field's name)."""
        return tuple((k, v) for k, v in self.changes.items() if k != "engine" or v)


def suggestions(w: Workload, target: GPU | None = None, *,
                catalog: Catalog | None = None) -> list[Change]:
    """The smallest single changes that shrink the workload, each with its new total.

    With ``target`` the question is "what makes it fit on this GPU"; without, the changes are
    listed with the GPUs each one makes sufficient.
    """
    catalog = catalog or default_catalog()
    base, singles = _singles(w)
    out = [Change(c.description, wc, total, _fits_on(wc, target, catalog), c.kind, c.settings)
           for c, wc, total in singles]
    if target is not None:
        plan = _offload_change(w, target)
        if plan is not None:
            out.append(plan)
    if not any(_fits_one(c, target) for c in out):
        out += _pairs(w, target, catalog)
    # more GPUs / a bigger GPU
    if target is not None:
        for count in COUNTS[1:]:
            if not _fits_on(w, target, catalog, (count,)):
                continue  # the need on count GPUs, asked once for every target (_need)
            f = fits(w, catalog=catalog, counts=(count,), gpus=[target])
            if f and f[0].fits:
                out.append(Change(msg("change.more_gpus.target", "{where} ({layout})",
                                      where=Placement(target.id, count), layout=f[0].layout),
                                  layout_for(w, count), f[0].per_gpu_bytes,
                                  (Placement(target.id, count),), SuggestionKind.MORE_GPUS))
                break
        bigger = [f for f in smallest_fits(w, catalog) if f.count == 1
                  and is_bigger_of_its_kind(f.gpu, target, w)]
        if bigger:
            g = bigger[0].gpu
            kept = needed_precisions(w, target)
            said = dict(gpu=g.id, memory=g.usable_memory_bytes / GB)
            words = (msg("change.bigger_gpu.same_kind", "a bigger GPU of the same kind: {gpu} "
                         "({memory:.0f} GB usable, with {precision})",
                         precision=Join(kept, " and "), **said) if kept else
                     msg("change.bigger_gpu.same_kind.plain", "a bigger GPU of the same kind: "
                         "{gpu} ({memory:.0f} GB usable)", **said))
            out.append(Change(words, w, base, (Placement(g.id),), SuggestionKind.BIGGER_GPU))
    # what fits the card the user has comes first (one card with llama.cpp offload before
    # four of them), then the smallest
    return sorted(out, key=lambda c: (not _fits_one(c, target), c.total_bytes))


#: a card's class, from its form factor: "a bigger GPU" stays in its class or the next one up
#: (a gaming card -> a workstation or PCIe data-centre card -> an SXM/OAM board); unified
#: memory machines (DGX Spark, Apple) are their own class
_CLASS = {"consumer": 0, "pcie": 1, "nvl": 2, "sxm": 2, "oam": 2, "superchip": 2}


def needed_precisions(w: Workload, target: GPU) -> list[str]:
    """The precisions the job computes in that ``target`` has (bf16 for 16-bit or
    weight-only formats, fp8 for fp8 weights ...): a bigger card must have them too."""
    wanted = {w.quant_format.compute_precision("bf16"), "bf16"}
    return sorted(p for p in wanted if p in PRECISIONS and target.supports(p))


def is_bigger_of_its_kind(g: GPU, target: GPU, w: Workload) -> bool:
    """``g`` is 'a bigger GPU' than ``target`` for ``w``: more usable memory, the same
    software platform, every precision the job uses on ``target``, and the same class or the
    next (a T4, an MI210 or a DGX Spark is no bigger H100)."""
    if g.id == target.id or g.usable_memory_bytes <= target.usable_memory_bytes:
        return False
    if g.platform.value != target.platform.value:
        return False
    if not all(g.supports(p) for p in needed_precisions(w, target)):
        return False
    mine, theirs = _CLASS.get(target.form_factor), _CLASS.get(g.form_factor)
    if mine is None or theirs is None:  # unified memory: only its own kind
        return g.form_factor == target.form_factor
    return mine <= theirs <= mine + 1


def _diffusion_candidates(w: Workload) -> list[_Candidate]:
    """Diffusion changes beyond the formats: a LoRA run's cached embeddings and block swap
    (estimate/diffusion_trainers.py); over several GPUs, the diffusion model split by tensor
    parallelism (SGLang Diffusion's --tp-size, estimate/diffusion_parallel.py)."""
    out: list[_Candidate] = []
    d = w.diffusion_spec
    den = d.component(d.denoiser)
    if w.task == Task.IMAGE_LORA:
        from whichgpu.estimate.diffusion_trainers import residency

        res = residency(w.diffusion_trainer, w.cache_embeddings)
        if res.text_encoders or res.vae:
            out.append(_Candidate(msg("change.cache_embeddings", "text embeddings and latents "
                                      "cached before training ({flag})",
                                      flag=Field("cache_embeddings")),
                                  SuggestionKind.OFFLOAD, {"cache_embeddings": True}))
        if not w.blocks_to_swap and den.num_layers > 2:
            n = den.num_layers // 2
            out.append(_Candidate(msg("change.block_swap", "{n} of the diffusion model's "
                                      "blocks in system RAM ({flag})", n=n,
                                      flag=Field("blocks_to_swap", n)),
                                  SuggestionKind.HOST_OFFLOAD, {"blocks_to_swap": n}))
    elif w.gpus > 1 and not w.tp:
        heads = den.num_heads or 0
        tps = [t for t in range(2, w.gpus + 1)
               if w.gpus % t == 0 and (not heads or heads % t == 0)]
        if tps:
            out.append(_Candidate(msg("change.diffusion_tp", "the diffusion model split over "
                                      "{n} GPUs by tensor parallelism under {engine} ({flags})",
                                      n=tps[-1], engine="SGLang",
                                      flags=Join((Field("engine", "sglang"),
                                                  Field("tp", tps[-1])), " and ")),
                                  SuggestionKind.PARALLEL,
                                  {"engine": "sglang", "tp": tps[-1]}))
    return out


def _candidates(w: Workload) -> list[_Candidate]:
    """The single changes worth trying for this workload, each with its words."""
    out: list[_Candidate] = []
    q = w.quant_format
    if w.is_diffusion:
        if q.linear_bits > 8:
            out.append(_Candidate(msg("change.quant", "{quant} weights ({flag})", quant="fp8",
                                      flag=Field("quant", "fp8")), SuggestionKind.QUANT,
                                  {"quant": "fp8"}))
        if w.offload == "none":
            out.append(_Candidate(msg("change.offload_model", "offload idle components to the "
                                      "CPU ({flag})", flag=Field("offload", "model")),
                                  SuggestionKind.OFFLOAD, {"offload": "model"}))
        if not w.vae_tiling:
            out.append(_Candidate(msg("change.vae_tiling", "tiled VAE decode ({flag})",
                                      flag=Field("vae_tiling")), SuggestionKind.VAE_TILING,
                                  {"vae_tiling": True}))
        if w.batch > 1:
            out.append(_Candidate(msg("change.batch_1", "batch 1"), SuggestionKind.BATCH,
                                  {"batch": 1}))
        out += _diffusion_candidates(w)
    elif w.is_training:
        if not w.uses_checkpointing:
            out.append(_Candidate(msg("change.checkpointing", "gradient checkpointing ({flag})",
                                      flag=Field("gradient_checkpointing")),
                                  SuggestionKind.CHECKPOINTING,
                                  {"gradient_checkpointing": True}))
        if w.task in (Task.FULL_FT, Task.PRETRAIN):
            out.append(_Candidate(msg("change.lora", "LoRA instead of full fine-tuning "
                                      "({flag})", flag=Field("task", "lora")),
                                  SuggestionKind.TASK, {"task": "lora"}))
            if w.optimizer == "adamw":
                out.append(_Candidate(msg("change.adamw_8bit", "8-bit AdamW ({flag})",
                                          flag=Field("optimizer", "adamw-8bit")),
                                      SuggestionKind.OPTIMIZER, {"optimizer": "adamw-8bit"}))
        if w.task == Task.LORA:
            out.append(_Candidate(msg("change.qlora", "QLoRA on a 4-bit base ({flag})",
                                      flag=Field("task", "qlora")), SuggestionKind.TASK,
                                  {"task": "qlora", "quant": None}))
        if not w.fused_loss:
            out.append(_Candidate(msg("change.fused_loss", "fused cross-entropy ({flag})",
                                      flag=Field("fused_loss")), SuggestionKind.LOSS,
                                  {"fused_loss": True}))
        if w.batch > 1:
            out.append(_Candidate(msg("change.micro_batch_1", "micro-batch 1 (with gradient "
                                      "accumulation)"), SuggestionKind.BATCH, {"batch": 1}))
        if w.seq_len > 512:
            out.append(_Candidate(msg("change.sequence", "sequence length {n:,}",
                                      n=w.seq_len // 2), SuggestionKind.CONTEXT,
                                  {"context": w.seq_len // 2}))
    else:
        # smaller weights in the engine's own formats: GGUF file types under llama.cpp,
        # FP8 / AWQ for the serving engines (and a GGUF under llama.cpp as the alternative)
        names = (("q4_k_m", "q3_k_m", "q2_k") if w.engine_name == Engine.LLAMACPP
                 else ("fp8", "awq", "q4_k_m"))
        for name in names:
            fmt_bits = get_quant(name).linear_bits
            if fmt_bits < q.linear_bits:
                engine = "llamacpp" if name.startswith("q") else w.engine
                if engine == Engine.LLAMACPP and w.engine_name != Engine.LLAMACPP:
                    # a GGUF runs under llama.cpp: the change switches the engine, and says so
                    words = msg("change.quant.engine", "{quant} weights under {engine} "
                                "instead of {was} ({flags}): another engine, with its own "
                                "speed", quant=name, engine="llama.cpp", was=w.engine_name,
                                flags=Join((Field("quant", name), Field("engine", engine)),
                                           " and "))
                else:
                    words = msg("change.quant", "{quant} weights ({flag})", quant=name,
                                flag=Field("quant", name))
                out.append(_Candidate(words, SuggestionKind.QUANT,
                                      {"quant": name, "engine": engine}))
        if w.kv_bytes > 1:
            out.append(_Candidate(msg("change.kv_fp8", "fp8 KV cache ({flag})",
                                      flag=Field("kv_dtype", "fp8")), SuggestionKind.KV_DTYPE,
                                  {"kv_dtype": "fp8"}))
        if w.seq_len > 2048:
            out.append(_Candidate(msg("change.context", "context {n:,} tokens",
                                      n=w.seq_len // 2), SuggestionKind.CONTEXT,
                                  {"context": w.seq_len // 2}))
        if w.batch > 1:
            n = max(1, w.batch // 2)
            out.append(_Candidate(msg("change.concurrency", "{n} concurrent sequences", n=n),
                                  SuggestionKind.BATCH, {"batch": n}))
    return out


def _offload_change(w: Workload, target: GPU) -> Change | None:
    """llama.cpp's offload layout on one ``target`` (see offload_plan), as a change."""
    from whichgpu.estimate.memory.offload_plan import offload_plan
    from whichgpu.estimate.speed import estimate_speed

    plan = offload_plan(w, target, w.gpus)
    if plan is None:
        return None
    rate: Message | str = ""
    try:
        est = estimate_speed(plan.workload, target, plan.count, check_fit=False,
                             saturation=False)
        rate = msg("change.offload.rate", ", about {rate:,.0f} tokens/s",
                   rate=est.rates["decode_tokens_per_s_per_sequence"].typical)
    except InputError:
        pass
    text = msg("change.offload", "{plan}{rate}", plan=plan.describe(), rate=rate)
    fits_on = (Placement(target.id, plan.count),) if plan.host_ok else ()
    return Change(text, plan.workload, plan.memory.total_bytes, fits_on,
                  SuggestionKind.HOST_OFFLOAD, plan.settings())


def _fits_one(c: Change, target: GPU | None) -> bool:
    """Whether a change makes the job fit one GPU (the target, or any catalog GPU)."""
    if target is not None:
        return target.id in (p.gpu for p in c.fits_on if p.count == 1)
    return any(p.count == 1 for p in c.fits_on)


@by_identity(size=64)  # the same workload asked "what makes it fit" for each target GPU
def _singles(w: Workload) -> tuple[int, tuple[tuple[_Candidate, Workload, int], ...]]:
    """What does not depend on the target GPU: the workload's total and each single change
    that shrinks it (the candidate, the changed workload, its total), in candidate order."""
    base = estimate_memory(w).total_bytes
    out = []
    for c in _candidates(w):
        try:
            wc = w.with_(**c.changes)
            total = estimate_memory(wc).total_bytes
        except InputError:
            continue
        if total < base:
            out.append((c, wc, total))
    return base, tuple(out)


@by_identity(size=64)
def _paired(w: Workload) -> tuple[tuple[Message, Workload, int, tuple[tuple[str, Any], ...]],
                                  ...]:
    """Every pair of the single changes that do not touch the same setting and shrink the
    workload, in order (the description, the changed workload, its total, its settings):
    the same for every target GPU."""
    base = estimate_memory(w).total_bytes
    candidates = _candidates(w)
    found = []
    for i, one in enumerate(candidates):
        for two in candidates[i + 1:]:
            c1, c2 = one.changes, two.changes
            if set(c1) & set(c2) - {"engine"}:
                continue
            merged = {**c1, **c2}
            if "engine" in c1 and "engine" in c2 and c1["engine"] != c2["engine"]:
                continue
            try:
                wc = w.with_(**merged)
                total = estimate_memory(wc).total_bytes
            except InputError:
                continue
            if total < base:
                found.append((msg("change.pair", "{one} + {two}", one=one.description,
                                  two=two.description), wc, total,
                              (*one.settings, *two.settings)))
    return tuple(found)


def _pairs(w: Workload, target: GPU | None, catalog: Catalog, keep: int = 4) -> list[Change]:
    """Two changes together, when no single change is enough (greedy: every pair of the
    single changes that do not touch the same setting), smallest first."""
    found = [Change(words, wc, total, _fits_on(wc, target, catalog), SuggestionKind.PAIR,
                    settings) for words, wc, total, settings in _paired(w)]
    fitting = [c for c in found if _fits_one(c, target)]
    return sorted(fitting or found, key=lambda c: c.total_bytes)[:keep]


# ------------------------------------------------------------------ serving capacity

# (workload, count) -> {batch: (bytes per GPU, host RAM holds it)}: the memory at a batch
# does not depend on the GPU, and a recommendation searches the same workloads on every GPU
_AT_BATCH = Table(256)


def max_concurrency(w: Workload, gpu: GPU, count: int = 1, limit: int = 4096) -> int:
    """How many sequences of ``w.seq_len`` tokens fit at once on ``count`` x ``gpu``."""
    try:
        key = (w, count)
        probes = _AT_BATCH.get(key)
    except TypeError:  # an unhashable setting: no memo
        return _search(lambda n: layout_for(w.with_(batch=n), count), gpu, 1, limit)
    if probes is None:
        probes = _AT_BATCH.put(key, {})
    usable = gpu.usable_memory_bytes

    def ok(n: int) -> bool:
        hit = probes.get(n)
        if hit is None:
            est = estimate_memory(layout_for(w.with_(batch=n), count))
            hit = probes[n] = (est.total_bytes, est.host_fits)
        return hit[0] <= usable and hit[1]

    return _bisect(ok, lo=1, hi=limit)


def max_context(w: Workload, gpu: GPU, count: int = 1) -> int:
    """The longest context per sequence at ``w.batch`` concurrent sequences."""
    cap = max(w.model.max_context, 1) if w.model.max_context else 1 << 21
    return _search(lambda n: layout_for(w.with_(context=n), count), gpu, 1, cap)


def _search(make, gpu: GPU, lo: int, hi: int) -> int:
    """The largest n in [lo, hi] whose workload fits (0 if even lo does not)."""
    usable = gpu.usable_memory_bytes

    def ok(n: int) -> bool:
        est = estimate_memory(make(n))
        return est.total_bytes <= usable and est.host_fits

    return _bisect(ok, lo, hi)


def _bisect(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest n in [lo, hi] with ok(n), ok being monotone (0 if not even ok(lo))."""
    if not ok(lo):
        return 0
    if ok(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
