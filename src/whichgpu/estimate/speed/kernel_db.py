"""Optional measured-kernel step times from aiconfigurator-core (issue 28).

NVIDIA's ``aiconfigurator-core`` (Apache-2.0, PyPI, ``pip install 'whichgpu[kernels]'``)
ships per-kernel latencies measured on H100, H200, B200, B300, GB200, GB300 and RTX PRO 6000
Server (and A100 for older engine versions) under TensorRT-LLM, vLLM and SGLang, and composes
them into the time of one engine step. Where it covers a serving replica (GPU, engine, model,
precision, a tensor- or expert-parallel layout without pipeline stages) and the user opts in
(``WHICHGPU_KERNEL_DB=1`` or :func:`use_kernel_db`), the serving model takes its step times
from it; everything else
keeps whichgpu's own model. Nothing here is imported unless asked: without the package, or
without the opt-in, every answer is the one whichgpu's model gives.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

# the switch lives apart so that asking it loads nothing here; said again for this module's callers
from whichgpu.estimate.speed.opt_in import ENV as ENV
from whichgpu.estimate.speed.opt_in import opted_in as opted_in
from whichgpu.estimate.speed.opt_in import use_kernel_db as use_kernel_db
from whichgpu.estimate.speed.serving_steps import StepModel
from whichgpu.estimate.workload import Workload

PACKAGE = "aiconfigurator-core"
MODULE = "aiconfigurator_core"


class StepPath(StrEnum):
    """Which model answered a replica's step times."""

    MEASURED = "measured"
    MODEL = "model"


MODEL_LABEL = "whichgpu's model"

# whichgpu GPU id -> aiconfigurator system name (systems/*.yaml of the package)
SYSTEMS = {
    "h100-sxm": "h100_sxm", "h200-sxm": "h200_sxm", "b200": "b200_sxm", "b300": "b300_sxm",
    "gb200": "gb200", "gb300": "gb300", "rtx-pro-6000-server": "rtx_pro_6000_server",
    "a100-80gb-sxm": "a100_sxm",
}
# whichgpu engine -> aiconfigurator backend
BACKENDS = {"vllm": "vllm", "sglang": "sglang", "trtllm": "trtllm"}
# whichgpu model id -> the Hub id whose config the package ships (model_configs/); an id not
# listed is looked up as itself
MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Meta-Llama-3.1-8B",
    "meta-llama/Llama-3.1-8B": "meta-llama/Meta-Llama-3.1-8B",
    "meta-llama/Meta-Llama-3.1-8B-Instruct": "meta-llama/Meta-Llama-3.1-8B",
    "meta-llama/Llama-3.1-70B-Instruct": "meta-llama/Meta-Llama-3.1-70B",
    "meta-llama/Llama-3.1-70B": "meta-llama/Meta-Llama-3.1-70B",
    "meta-llama/Llama-3.3-70B-Instruct": "meta-llama/Meta-Llama-3.1-70B",  # same shapes
    "meta-llama/Llama-3.1-405B-Instruct": "meta-llama/Meta-Llama-3.1-405B",
    "meta-llama/Llama-3.1-405B": "meta-llama/Meta-Llama-3.1-405B",
}
# whichgpu weight precision -> aiconfigurator GEMM quant mode (16-bit: bf16 tables for both)
GEMM = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8", "nvfp4": "nvfp4"}
KV = {"f16": "bfloat16", "fp16": "bfloat16", "bf16": "bfloat16", "fp8": "fp8"}

def installed() -> bool:
    """Whether aiconfigurator-core can be imported (the ``[kernels]`` extra)."""
    import sys
    from importlib.util import find_spec

    if MODULE in sys.modules:
        return sys.modules[MODULE] is not None
    try:
        return find_spec(MODULE) is not None
    except (ImportError, ValueError):
        return False


@contextlib.contextmanager
def as_asked(on: bool | None) -> Iterator[None]:
    """A request's choice (``--kernel-db`` / ``--no-kernel-db``, REST ``kernel_db``) within
    the block; None leaves it to WHICHGPU_KERNEL_DB. Asking for the measured kernels without
    the package installed is the user's mistake, said in one line (InputError)."""
    if on is None:
        yield
        return
    if on and not installed():
        from whichgpu.errors import InputError
        from whichgpu.messages import msg

        raise InputError(msg("kernel_db.not_installed", "measured kernels need the optional "
                             "package {package}, which is not installed here: install the "
                             "extra whichgpu[kernels]", package=PACKAGE))
    with use_kernel_db(on):
        yield


def version() -> str | None:
    """The installed aiconfigurator-core version, or None when it is not installed."""
    from importlib import metadata  # only where the kernels answer (~20 ms of every start)

    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def measured_label(ver: str | None = None) -> str:
    return f"{PACKAGE} {ver or version() or '?'} measured kernels"


@dataclass(frozen=True)
class Coverage:
    """What the package is asked for a replica: system, backend, model, precisions, TP."""

    system: str
    backend: str
    model: str
    gemm: str | None  # None: the checkpoint's own (the package reads it from its config)
    kv: str
    tp: int
    moe_tp: int | None = None  # MoE: experts split by TP, or spread by expert parallelism
    moe_ep: int | None = None
    moe_quant: str | None = None


def coverage(w: Workload, gpu_id: str) -> Coverage | str:
    """The package's coordinates for a replica, or why it is not covered (one line)."""
    system = SYSTEMS.get(gpu_id)
    if system is None:
        return f"no measured kernels for {gpu_id}"
    backend = BACKENDS.get(w.engine_name)
    if backend is None:
        return f"no measured kernels for the {w.engine_name} engine"
    if w.pp_degree > 1:
        return "pipeline-parallel layouts are not mapped to the kernel database"
    quant = w.quant_name.lower()
    gemm = GEMM.get(quant)
    native = quant == (w.model.quantization or "").lower() == "mxfp4"  # gpt-oss as shipped
    if gemm is None and not native:
        return f"no measured kernels for {w.quant_name} weights"
    kv = KV.get(w.kv_dtype.lower())
    if kv is None:
        return f"no measured kernels for a {w.kv_dtype} KV cache"
    hub = w.model.hub_id or w.model.id
    tp = w.tp_degree
    if w.model.moe is None:
        return Coverage(system, backend, MODELS.get(hub, hub), gemm, kv, tp)
    ep = w.expert_parallel
    return Coverage(system, backend, MODELS.get(hub, hub), gemm, kv, tp,
                    moe_tp=1 if ep else tp, moe_ep=tp if ep else 1, moe_quant=gemm)


def _ships_config(model: str) -> bool:
    """Whether the package ships ``model``'s config (it would fetch others from the Hub)."""
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec(MODULE)
    if spec is None or not spec.submodule_search_locations:
        return False
    name = model.replace("/", "--") + "_config.json"
    return any((Path(d) / "model_configs" / name).is_file()
               for d in spec.submodule_search_locations)


@lru_cache(maxsize=32)  # ~1 CPU s to compile one; a long-running service keeps the last 32
def _engine(c: Coverage) -> Any | str:
    """The package's compiled engine for ``c``, or why it could not be built."""
    try:
        from aiconfigurator_core.sdk.engine import EngineHandle
    except ImportError:
        return f"{PACKAGE} is not installed"
    if not _ships_config(c.model):
        return f"{PACKAGE} ships no config for {c.model}"
    # the package warns on stderr about each lower-fidelity table it loads: not the user's
    # business in an answer (the validation script measures the result). logging imported
    # here: only an opted-in question gets this far (1.6 ms of every recommend's start)
    import logging

    log = logging.getLogger(MODULE)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        moe = ({} if c.moe_tp is None else
               {"moe_tp_size": c.moe_tp, "moe_ep_size": c.moe_ep, "moe_quant_mode": c.moe_quant})
        return EngineHandle.compile(c.model, c.system, c.backend, tp_size=c.tp,
                                    gemm_quant_mode=c.gemm, kvcache_quant_mode=c.kv, **moe)
    except Exception as exc:  # the package's own errors: unknown model, missing tables
        return f"{PACKAGE} does not cover it ({_first_line(exc)})"
    finally:
        log.setLevel(level)


class KernelSteps(StepModel):
    """Step times from the measured-kernel database; request dispatch from whichgpu's model.

    A step's GPU time is the package's mixed (or decode-only) step at the replica's prompt
    and output lengths; fractional decode batches are interpolated between the integers on
    either side. The engine's CPU cost per running sequence (``serving_step_per_sequence_us``,
    fitted per engine) is added as in whichgpu's model: measured kernels do not see it, and
    on validation/serving.csv leaving it out doubled vLLM's throughput error on H100 (13 %
    -> 34 % median over 3 rows)."""

    path = StepPath.MEASURED

    def __init__(self, w: Workload, hw: Any, prompt: int, output: int, engine: Any,
                 label: str) -> None:
        super().__init__(w, hw, prompt, output)
        self.engine, self.label = engine, label
        self._ms: dict[tuple[int, int], float | None] = {}
        self.gaps: set[tuple[int, int]] = set()  # step shapes the tables do not reach

    def _step_ms(self, decodes: int, prompt_tokens: int) -> float | None:
        key = (decodes, prompt_tokens)
        if key in self._ms:
            return self._ms[key]
        hit: float | None
        try:
            if prompt_tokens > 0:
                hit = float(self.engine.mixed_step_latency(prompt_tokens, decodes, self.prompt,
                                                           self.output))
            else:
                hit = float(self.engine.decode_step_latency(max(decodes, 1), self.prompt,
                                                            self.output))
        except Exception:  # a shape past the package's tables: whichgpu's model times it
            hit = None
            self.gaps.add(key)
        self._ms[key] = hit
        return hit

    def mixed(self, decodes: float, prompt_tokens: float) -> float:
        d = max(decodes, 0.0)
        p = max(math.ceil(prompt_tokens), 0)
        lo = math.floor(d)
        a = self._step_ms(lo, p)
        z = a if d == lo else self._step_ms(lo + 1, p)
        if a is None or z is None:  # whichgpu's model (its mixed_many, not this class's)
            return super().mixed_many(decodes, (prompt_tokens,))[0]
        return (a + (z - a) * (d - lo)) * 1e-3 + self.per_sequence_s * d

    def mixed_many(self, decodes: float, prompts: Sequence[float]) -> list[float]:
        return [self.mixed(decodes, p) for p in prompts]


def _probe(engine: Any, prompt: int, output: int) -> str:
    """'' when the package times this replica's steps (a decode step, a prompt alone, a
    prompt beside decodes), else why not: some tables are only loaded when first queried."""
    try:
        engine.decode_step_latency(1, prompt, output)
        engine.mixed_step_latency(prompt, 0, prompt, output)
        engine.mixed_step_latency(prompt, 1, prompt, output)
    except Exception as exc:  # the package's PerfDataNotAvailableError and kin
        return f"{PACKAGE} does not cover it ({_first_line(exc)})"
    return ""


def _first_line(exc: Exception) -> str:
    """The package's error, first line, without the install paths it names."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return re.sub(r"\s+(at|from)\s+/\S+", "", first)[:160]


def step_model(w: Workload, hw: Any, gpu_id: str, prompt: int, output: int) -> StepModel:
    """The replica's step model: measured kernels where opted in and covered, else whichgpu's.

    The returned model's ``path`` and ``label`` say which answered (``why`` says why the
    measured path did not, when asked for)."""
    why = ""
    if opted_in():
        c = coverage(w, gpu_id)
        if isinstance(c, Coverage):
            engine = _engine(c)
            if not isinstance(engine, str):
                why = _probe(engine, prompt, output)
                if not why:
                    return KernelSteps(w, hw, prompt, output, engine, measured_label())
            else:
                why = engine
        else:
            why = c
    sm = StepModel(w, hw, prompt, output)
    sm.why = why
    return sm


def step_notes(steps: StepModel) -> list[str]:
    """What an answer says about its step times: nothing unless the measured kernels were
    asked for (answers stay identical), else which path answered and, if whichgpu's, why."""
    if steps.path == StepPath.MEASURED:
        gaps = len(getattr(steps, "gaps", ()))
        return [f"step times: {steps.label} (GPU kernels measured by NVIDIA for this GPU, "
                "engine and model; request dispatch from whichgpu's model"
                + (f"; {gaps} step shape(s) past its tables from whichgpu's model" if gaps
                   else "") + ")"]
    if steps.why:
        return [f"step times: {MODEL_LABEL} (measured kernels asked for, but {steps.why})"]
    return []
