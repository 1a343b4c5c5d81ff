"""FP8 diffusion weights on an eager pipeline compute at bf16, and the answer says what that
means (flaws8 5): ``speed flux.1-dev --gpu rtx-4070 --quant fp8`` said "bf16 compute" and no
more. ComfyUI casts FP8 weights up per layer unless its fast FP8 matrix-multiply mode is on,
and diffusers + torchao FP8 without compile ran slower than bf16 (1.96 s vs 1.54 s,
pollinations/flux-optimizations): the format saves memory, not matmul time; compiled, the
same weights run FP8 matmuls on a card with FP8 tensor cores (Ada, Hopper), and the answer
gives that estimate beside its own."""

from __future__ import annotations

import pytest

from whichgpu.answers.estimates import speed
from whichgpu.answers.requests import Speed


def test_fp8_flux_on_ada_says_it_saves_memory_and_what_compiling_gives(cli):
    r = cli("speed", "flux.1-dev", "--gpu", "rtx-4070", "--quant", "fp8", "--json")
    assert r.code == 0, r.err
    data = r.json()
    assert data["precision"] == "bf16"  # eager: the weights are cast up per layer
    alt = data["compiled_alternative"]
    assert alt["quant"] == "fp8" and alt["precision"] == "bf16"
    assert alt["compiled_precision"].startswith("fp8")
    now, fast = alt["seconds_per_image"], alt["compiled"]["seconds_per_image"]
    assert now == data["seconds_per_image"]
    assert fast["typical"] < now["typical"]
    assert alt["description"] in data["notes"]
    assert "save memory here, not matmul time" in alt["description"]
    # the compiled figure is the --compile answer's own
    compiled = cli("speed", "flux.1-dev", "--gpu", "rtx-4070", "--quant", "fp8", "--compile",
                   "--json").json()
    assert compiled["seconds_per_image"] == fast
    assert compiled["precision"] == alt["compiled_precision"]


@pytest.mark.parametrize("ask", [
    dict(gpu="rtx-3090", quant="fp8"),  # Ampere: no FP8 tensor cores, compiled or not
    dict(gpu="rtx-4070", quant="fp8", compile=True),  # already compiled: FP8 kernels
    dict(gpu="rtx-4070", quant="bf16"),  # 16-bit weights: nothing to say
    dict(gpu="h100-sxm", quant="int8"),  # compiled INT8, not FP8: the note is FP8's
])
def test_nothing_to_say_where_compiling_brings_no_fp8_matmuls(ask):
    got = speed(Speed(model="flux.1-dev", **ask))
    assert got.answer is not None and got.answer.estimate is not None
    assert got.compiled is None
    assert "compiled_alternative" not in got.to_json()


def test_a_video_says_per_video():
    got = speed(Speed(model="wan-2.2-5b", gpu="rtx-4090", quant="fp8"))
    assert got.compiled is not None and "per video" in str(got.compiled.describe())
