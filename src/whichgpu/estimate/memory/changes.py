"""What would make a workload fit: the smallest changes that shrink it (a format, the KV
cache, the context, a training option, llama.cpp's offload on the target card, more or bigger
GPUs), each with its new total and the GPUs that then hold it.

Above ``fit.py`` (which GPUs hold the workload as it is) and the speed model: the offload
change says its decode rate."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from whichgpu.catalog.gpus import GPU, PRECISIONS, Catalog, default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate import memo
from whichgpu.estimate.diffusion_trainers import residency
from whichgpu.estimate.memo import by_identity
from whichgpu.estimate.memory import memory_need
from whichgpu.estimate.memory.fit import (
    COUNTS,
    describe_layout,
    fits,
    gpus_running,
    layout_for,
    memory_band,
    smallest_fits,
)
from whichgpu.estimate.memory.offload_plan import offload_plan
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.models.quant import get_quant
from whichgpu.units import GB
from whichgpu.vocabulary import Engine, Placement, SuggestionKind, Task


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
    est = memory_need(wc)
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


# suggestions' answers by value across answers (the workload's settings, the target GPU
# and the catalog by identity): a question that differs only in its amount of work asks
# the same changes for the same GPUs
_SUGGESTED = memo.Table(512)


def suggestions(w: Workload, target: GPU | None = None, *,
                catalog: Catalog | None = None) -> list[Change]:
    """The smallest single changes that shrink the workload, each with its new total.

    With ``target`` the question is "what makes it fit on this GPU"; without, the changes are
    listed with the GPUs each one makes sufficient.
    """
    catalog = catalog or default_catalog()
    if not memo.shared(w.model):  # a pasted config's model: its answer's own
        return _suggestions(w, target, catalog)
    try:
        key: Any = (id(w.model), memo.workload_settings(w), id(target), id(catalog))
        hit = _SUGGESTED.get(key)
    except TypeError:  # an unhashable setting: no memo
        key = hit = None
    if hit is not None and hit[0] is w.model and hit[1] is target and hit[2] is catalog:
        asked = hit[3]  # the equal workload they were worked out for: a change that keeps
        # the workload as asked (a bigger GPU) holds the caller's own object, as it would
        return [replace(c, workload=w) if c.workload is asked else c for c in hit[4]]
    out = _suggestions(w, target, catalog)
    if key is not None:
        _SUGGESTED.put(key, (w.model, target, catalog, w, tuple(out)))
    return out


def _suggestions(w: Workload, target: GPU | None, catalog: Catalog) -> list[Change]:
    """:func:`suggestions`, worked out (Change records are frozen: shared by the memo)."""
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
    # lazily: a memory answer asks for changes without loading the speed model
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
    base = memory_need(w).total_bytes
    out = []
    for c in _candidates(w):
        try:
            wc = w.with_(**c.changes)
            total = memory_need(wc).total_bytes
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
    base = memory_need(w).total_bytes
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
                total = memory_need(wc).total_bytes
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
    paired = _paired(w)
    if w.is_diffusion:  # a diffusion split may refuse a count: every pair asked everywhere
        found = [Change(words, wc, total, _fits_on(wc, target, catalog), SuggestionKind.PAIR,
                        settings) for words, wc, total, settings in paired]
        fitting = [c for c in found if _fits_one(c, target)]
        return sorted(fitting or found, key=lambda c: c.total_bytes)[:keep]
    # the same pairs, but only the ``keep`` shown are placed on every GPU x count: which
    # pairs fit one GPU needs only the need on one GPU (a pair's words list every GPU that
    # then holds it, ~8 memory estimates each; a batch that fits no GPU has a dozen pairs)
    one_gpu = [i for i, (_, wc, _, _) in enumerate(paired)
               if _fits_one_gpu(wc, target, catalog)]
    shown = sorted(one_gpu or list(range(len(paired))), key=lambda i: paired[i][2])[:keep]
    return [Change(words, wc, total, _fits_on(wc, target, catalog), SuggestionKind.PAIR,
                   settings) for words, wc, total, settings in (paired[i] for i in shown)]


def _fits_one_gpu(w: Workload, target: GPU | None, catalog: Catalog) -> bool:
    """Whether one GPU (the target, or a catalog GPU the engine runs on) holds ``w``: as
    ``_fits_one`` of its change, from the need on one GPU alone."""
    if target is not None:
        return bool(_fits_on(w, target, catalog, (1,)))
    need = _need(w, 1)
    if need is None:
        return False
    total, host_fits, layout_error = need
    kept = gpus_running(w, catalog)
    if layout_error is not None and kept:  # as smallest_fits raises it
        raise layout_error
    return host_fits and any(usable >= total for _, usable in kept)
