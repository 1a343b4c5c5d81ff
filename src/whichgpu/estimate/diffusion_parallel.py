"""How a diffusion job uses several GPUs, and what an engine does on a card too small for it.

Layouts (the product of the degrees is the GPU count, as SGLang Diffusion composes them:
``num_gpus = cfg_parallel x tp x sp``, https://docs.sglang.io/docs/sglang-diffusion/parallelism):

- **replicas**: one whole pipeline per GPU, one image each (diffusers and ComfyUI by default);
  no memory saved per GPU.
- **tensor parallel** (``tp``): the DiT's linear weights and attention heads split over the
  GPUs, two all-reduces of the activations per block (SGLang ``--tp-size``). Weights and
  activations per GPU shrink.
- **sequence parallel** (``sp``, Ulysses): the tokens split over the GPUs, an all-to-all of
  Q, K, V and the attention output per attention layer (SGLang ``--ulysses-degree``, xDiT USP,
  diffusers ``ContextParallelConfig``); activations per GPU shrink, weights are replicated.
  Part of ``sp`` may be **ring attention** (``ring``, xDiT's and ParaAttention's ring degree,
  ``sp = ulysses x ring``): each GPU keeps its tokens' queries and passes its K/V block round
  the ring, one exchange per ring step overlapped with the attention of the block in hand
  (zhuzilin/ring-flash-attention ``ring_flash_attn_forward``, used by xDiT through yunchang).
- **CFG parallel** (``cfg``): the conditional and unconditional passes on different GPUs, one
  all-gather of the prediction per step (xDiT docs/methods/cfg_parallel.md: "when using CFG,
  CFG Parallel must be used"); weights replicated.

diffusers' video pipelines keep their earlier model: context parallelism over every GPU at a
measured efficiency (``sequence_parallel_efficiency``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from whichgpu.engines import has, module
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Message, msg
from whichgpu.vocabulary import Engine, Task

PARALLEL_SOURCE = ("https://docs.sglang.io/docs/sglang-diffusion/parallelism; "
                   "https://github.com/xdit-project/xDiT/blob/main/docs/methods/cfg_parallel.md")
ENCODER_PARALLEL_SOURCE = "https://docs.sglang.io/docs/sglang-diffusion/encoder_parallel"
# ComfyUI's default (NORMAL_VRAM) model management: load_models_gpu unloads idle models and,
# when a model still does not fit, loads only lowvram_model_memory = free memory - the
# inference reserve of its weights and casts the rest in from CPU memory layer by layer
COMFY_SOURCE = ("https://github.com/comfyanonymous/ComfyUI (comfy/model_management.py "
                "load_models_gpu, lowvram_model_memory); "
                "https://www.mintlify.com/Comfy-Org/ComfyUI/guides/performance-optimization "
                "(NORMAL_VRAM, the default: moves models between RAM and VRAM as needed)")
DIFFUSERS_OFFLOAD_SOURCE = ("https://huggingface.co/docs/diffusers/main/en/optimization/memory "
                            "(enable_model_cpu_offload, enable_sequential_cpu_offload: opt-in)")
# The engine a multi-GPU diffusion job is moved to when one pipeline per GPU does not fit and
# the user named no engine: it splits a DiT's weights (--tp-size).
SPLITTING_ENGINE = Engine.SGLANG


class DiffusionSplit(StrEnum):
    """The ways a diffusion job spreads over GPUs."""

    REPLICAS = "replicas"
    TENSOR = "tensor"
    SEQUENCE = "sequence"
    CFG = "cfg"


@dataclass(frozen=True)
class DiffusionLayout:
    """Degrees of one diffusion job: tp x sp x cfg GPUs per pipeline, ``replicas`` pipelines."""

    tp: int = 1
    sp: int = 1
    cfg: int = 1
    replicas: int = 1
    ring: int = 1  # of sp: the ring-attention degree (sp = ulysses x ring)
    measured_context_parallel: bool = False  # diffusers video: the efficiency constant

    @property
    def per_pipeline(self) -> int:
        return self.tp * self.sp * self.cfg

    @property
    def ulysses(self) -> int:
        """The Ulysses (all-to-all) part of the sequence-parallel degree."""
        return self.sp // self.ring

    @property
    def splits(self) -> tuple[DiffusionSplit, ...]:
        out = [DiffusionSplit.REPLICAS] if self.replicas > 1 else []
        out += [s for s, n in ((DiffusionSplit.TENSOR, self.tp), (DiffusionSplit.SEQUENCE,
                                                                   self.sp),
                                (DiffusionSplit.CFG, self.cfg)) if n > 1]
        return tuple(out)

    def describe(self) -> str:
        if self.replicas > 1 and self.per_pipeline == 1:
            return f"one pipeline per GPU ({self.replicas} at a time)"
        parts = [f"{k}={v}" for k, v in (("tp", self.tp), ("ulysses", self.ulysses),
                                         ("ring", self.ring), ("cfg", self.cfg)) if v > 1]
        return " x ".join(parts) or "single GPU"

    def to_json(self) -> dict[str, int]:
        out = {"tp": self.tp, "sp": self.sp, "cfg": self.cfg, "replicas": self.replicas}
        if self.ring > 1:  # of sp; absent when the split is Ulysses only
            out["ring"] = self.ring
        return out


def splits_dit(engine: Engine) -> bool:
    """Whether the engine splits one pipeline over GPUs (engines.toml ``dit_parallel``)."""
    return has(engine, "dit_parallel")


def diffusion_layout(w: Workload) -> DiffusionLayout:
    """The layout of ``w`` over its ``gpus``: the engine's way, ``tp`` as the user set it."""
    n = max(w.gpus, 1)
    tp = w.tp or 1
    ring = max(w.ring_degree, 1)
    if n % tp:
        raise InputError(msg("diffusion.tp_divides", "{field} must divide the {n} GPUs",
                             field=Field("tp", tp), n=n))
    if not splits_dit(w.engine_name):
        if tp > 1:
            raise InputError(msg("diffusion.tp_engine", "{engine} runs one pipeline per GPU "
                                 "and does not split a diffusion model's weights; use "
                                 "{flag}", engine=w.engine_name,
                                 flag=Field("engine", str(SPLITTING_ENGINE))))
        if ring > 1:
            raise InputError(msg("diffusion.ring_engine", "{engine} does not split a "
                                 "diffusion model's tokens by ring attention; use {flag}",
                                 engine=w.engine_name, flag=Field("engine", str(SPLITTING_ENGINE))))
        # diffusers splits one video's tokens over the GPUs (context parallelism); an engine
        # whose instance runs on one device (engines/comfyui.py ONE_DEVICE) runs one instance,
        # one video, per GPU
        if n > 1 and w.task == Task.VIDEO and not getattr(module(w.engine_name), "ONE_DEVICE",
                                                          False):
            return DiffusionLayout(sp=n, measured_context_parallel=True)
        return DiffusionLayout(replicas=n)
    rest = n // tp
    cfg = 2 if w.cfg_passes == 2 and rest % 2 == 0 and w.task != Task.IMAGE_LORA else 1
    sp = rest // cfg
    if sp % ring:
        raise InputError(msg("diffusion.ring_divides", "a ring-attention degree of {ring} "
                             "must divide the {n} GPUs that split the tokens (those left "
                             "over by tensor and CFG parallelism)", ring=ring, n=sp))
    return DiffusionLayout(tp=tp, sp=sp, cfg=cfg, ring=ring)


# fix9 (audit 8, defect 5): a layout asked of the default engine that only a DiT-splitting
# engine runs is run by that engine, and the answer says so (it was refused); xDiT:
# https://github.com/xdit-project/xDiT (USP = Ulysses x ring, docs/performance)


def engine_for_layout(w: Workload) -> tuple[Workload, Message | None]:
    """``w`` under the engine that runs its layout when no engine was named and the default
    one does not split a diffusion model (a ring-attention or tensor-parallel degree asked):
    SGLang, with the sentence that says so and names xDiT's USP, the same split, whose
    published tables calibrate its communication cost (speed_constants.toml); else ``w``."""
    if (not w.is_diffusion or w.engine is not None or splits_dit(w.engine_name)
            or (w.ring_degree <= 1 and (w.tp or 1) <= 1)):
        return w, None
    moved = w.with_(engine=SPLITTING_ENGINE)
    try:
        layout = diffusion_layout(moved)
    except InputError:  # a degree that does not divide the GPUs: refused as asked
        return w, None
    return moved, msg("diffusion.layout_engine", "{default}, the default engine, does not "
                      "split a diffusion model over GPUs this way ({layout}): estimated with "
                      "{engine}, which does ({flag}); xDiT runs the same split (USP, Ulysses x "
                      "ring), whose published runs calibrate this split's communication cost",
                      default=w.engine_name, layout=layout.describe(),
                      engine=SPLITTING_ENGINE, flag=Field("engine", str(SPLITTING_ENGINE)))


def with_gpus(w: Workload, count: int) -> Workload:
    """``w`` over ``count`` GPUs (the memory answer's table of GPU counts): the ring degree
    kept where it divides the GPUs that split the tokens at that count, else Ulysses only."""
    out = w.with_(gpus=count)
    if w.ring_degree > 1:
        try:
            diffusion_layout(out)
        except InputError:
            return out.with_(ring_degree=1)
    return out


def all_to_all_s(link, nbytes: float, n: int) -> float:
    """All-to-all of a ``nbytes`` local tensor over ``n`` GPUs: each GPU sends (n-1)/n of it."""
    if n <= 1 or nbytes <= 0:
        return 0.0
    return (n - 1) / n * nbytes / (link.one_way_bytes_per_s * link.efficiency) + link.latency_s


def tries(wl: Workload, asked: Workload, gpu=None, *, streamed: bool = True,
          ) -> list[Workload]:
    """What users run when the job as asked does not fit, cheapest slowdown first: over
    several GPUs, the DiT split by tensor parallelism (SGLang when no engine was named);
    then the engine's offload: model CPU offload (diffusers ``enable_model_cpu_offload``;
    ComfyUI's model management does it by itself), tiled VAE decode, and last the weights
    streamed in (diffusers ``enable_sequential_cpu_offload``; ComfyUI loads the model partly,
    "lowvram", and streams the rest; ``streamed=False`` leaves diffusers' out: the
    recommender does not price host RAM for it, and only ComfyUI does it unasked). A LoRA
    training job gets none of these."""
    if not wl.is_diffusion or wl.task == Task.IMAGE_LORA:
        return []
    out: list[Workload] = []
    if wl.gpus > 1 and asked.tp is None and (asked.engine is None or splits_dit(asked.engine)):
        engine = wl.engine_name if splits_dit(wl.engine_name) else SPLITTING_ENGINE
        runs = gpu is None or _runs(gpu, engine)
        d = wl.diffusion_spec
        heads = d.component(d.denoiser).num_heads or 0
        if runs:  # TP splits the attention heads: a degree that divides them (and leaves
            # the ring degree asked its GPUs)
            out += [t for t in (wl.with_(engine=engine, tp=t) for t in range(2, wl.gpus + 1)
                                if wl.gpus % t == 0 and (not heads or heads % t == 0))
                    if _lays_out(t)]
    if asked.offload == "none":
        base = wl.with_(offload="model") if wl.offload == "none" else wl
        out.append(base)
        if not asked.vae_tiling:
            base = base.with_(vae_tiling=True)
            out.append(base)
        # an engine that can stream the weights in: diffusers' sequential offload is the
        # user's choice, and asks for host RAM the recommender does not price (streamed=False
        # leaves it out); ComfyUI does it by itself, unasked (engines/comfyui.py)
        if has(wl.engine_name, "streams_weights") and (
                streamed or getattr(module(wl.engine_name), "STREAMS_UNASKED", False)):
            out.append(base.with_(offload="sequential"))
    elif not asked.vae_tiling:
        out.append(wl.with_(vae_tiling=True))
    return out


def _lays_out(w: Workload) -> bool:
    """Whether ``w``'s degrees make a layout (a ring degree asked divides the GPUs that tensor
    and CFG parallelism leave to the tokens)."""
    try:
        diffusion_layout(w)
    except InputError:
        return False
    return True


def _runs(gpu, engine: Engine) -> bool:
    from whichgpu.catalog.gpus import default_catalog

    return default_catalog().engine_problem(gpu, engine) is None


#: an engine module's ``fit_note``: (the offload it runs, bytes the job needs as asked, whether
#: it tiles a VAE decode that was not asked tiled) -> what it does to fit, in its words (None:
#: the generic sentence)
FitNote = Callable[[str, int, bool], "Message | None"]


def adapted_note(t: Workload, asked: Workload, need: int, have: int | None = None) -> Message:
    """What the engine does to fit: named, with the memory the job as asked would need and
    (``have``, given for a tensor-parallel split) what the plan it runs instead needs."""
    if t.tp and not asked.tp:
        assert have is not None, "a split's note says the split's own memory"
        return msg("diffusion.fit.tp.plan", "the weights split over {n} GPUs by tensor "
                   "parallelism ({engine}, {flag}): {have:.1f} GB per GPU; a whole pipeline "
                   "on each GPU would need {need:.1f} GB per GPU", need=need / 1e9,
                   have=have / 1e9, n=t.tp, engine=t.engine_name, flag=Field("tp", t.tp))
    own: FitNote | None = getattr(module(t.engine_name), "fit_note", None)
    note = (own(t.offload, need, t.vae_tiling and not asked.vae_tiling)
            if own is not None else None)
    if note is not None:  # the engine's own way (engines/comfyui.py, engines/sglang.py)
        return note
    if t.offload == "sequential":
        return msg("diffusion.fit.sequential", "{need:.1f} GB needed whole: diffusers needs "
                   "sequential CPU offload here (enable_sequential_cpu_offload, {flag}); "
                   "weights cross PCIe every step", need=need / 1e9,
                   flag=Field("offload", "sequential"))
    return msg("diffusion.fit.model", "{need:.1f} GB needed with the whole pipeline on the "
               "GPU: diffusers needs model CPU offload here (enable_model_cpu_offload, {flag}); "
               "each component crosses PCIe once per image", need=need / 1e9,
               flag=Field("offload", "model"))
