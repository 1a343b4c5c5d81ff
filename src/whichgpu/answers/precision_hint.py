"""What quantized diffusion weights buy on the engine that runs them (flaws8 5).

An eager diffusion pipeline computes FP8 (or INT8, FP4) weights at 16 bits: ComfyUI casts
them to the compute dtype per layer (comfy/ops.py manual cast) unless its fast FP8 matrix
multiply mode is on, and diffusers with torchao FP8 without compile took 1.96 s against 1.54 s
in bf16 for FLUX.1-schnell on an H100 PCIe (pollinations/flux-optimizations); the estimate
models this (estimate/speed/diffusion.py ``_precision``). Compiled, the same weights run FP8
matmuls on a card with FP8 tensor cores (torchao's Float8DynamicActivationFloat8WeightConfig,
fast accumulation by default). So ``speed flux.1-dev --gpu rtx-4070 --quant fp8`` says "bf16
compute", and this says why: the format saves memory, not matmul time, and the compiled
pipeline's estimate beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.messages import Field, Message, msg
from whichgpu.units import Duration

_SIXTEEN = ("bf16", "fp16")


@dataclass(frozen=True)
class CompiledPrecision:
    """The compiled pipeline's estimate of a diffusion job whose quantized weights the eager
    one computes at 16 bits."""

    quant: str
    precision: str  # what the eager pipeline computes at (bf16)
    compiled_precision: str  # what the compiled one computes at (fp8, fp8_acc16)
    time_key: str  # seconds_per_image / seconds_per_video
    now: Any  # units.Range of seconds per item, as answered
    compiled: Any  # units.Range of seconds per item, compiled

    def describe(self) -> Message:
        return msg("diffusion.quant_saves_memory", "{quant} weights save memory here, not "
                   "matmul time: the pipeline computes them at {precision} (eager diffusers "
                   "and ComfyUI cast each layer's weights up; measured no faster than "
                   "{precision}); compiled, with FP8 kernels ({flag}: torch.compile with "
                   "torchao's float8 matmuls, or ComfyUI's fast FP8 matrix-multiply mode), "
                   "about {time} ({low}-{high}) {per} at {compiled} instead of {now}",
                   quant=self.quant, precision=self.precision, flag=Field("compile"),
                   per=(msg("diffusion.per_video", "per video") if self.time_key.endswith(
                       "video") else msg("diffusion.per_image", "per image")),
                   time=Duration(self.compiled.typical), low=Duration(self.compiled.low),
                   high=Duration(self.compiled.high), compiled=self.compiled_precision,
                   now=Duration(self.now.typical))

    def to_json(self) -> dict[str, Any]:
        return {"quant": self.quant, "precision": self.precision,
                "compiled_precision": self.compiled_precision,
                self.time_key: self.now.to_json(),
                "compiled": {self.time_key: self.compiled.to_json()},
                "description": str(self.describe())}


def compiled_precision(w: Any, gpu: Any, count: int, estimate: Any, compiled: bool, *,
                       profile: Any = None) -> CompiledPrecision | None:
    """The compiled estimate of a diffusion job whose quantized weights compute at 16 bits
    as asked, when compiling makes it FP8 and faster (None otherwise)."""
    if (estimate is None or compiled or not w.is_diffusion or w.quant_format.is_16bit
            or str(estimate.precision) not in _SIXTEEN):
        return None
    key = next((k for k in estimate.times if k.startswith("seconds_per_")), None)
    if key is None:
        return None
    from whichgpu.errors import WhichGPUError
    from whichgpu.estimate.speed import estimate_speed

    try:
        other = estimate_speed(w, gpu, count, profile=profile, compile=True,
                               saturation=False)
    except WhichGPUError:
        return None
    if not str(other.precision).startswith("fp8") or key not in other.times or \
            other.times[key].typical >= estimate.times[key].typical:
        return None  # the note speaks of FP8 kernels only (INT8, FP4: not said here)
    return CompiledPrecision(w.quant_format.name, str(estimate.precision),
                             str(other.precision), key, estimate.times[key], other.times[key])
