"""ParaAttention's published context-parallel runs are scored, and as what.

validation/incoming/speed-2026.csv holds ParaAttention's FLUX.1-dev table on A100-SXM4-80GB
(1 GPU, ring 2 on 2 GPUs, Ulysses 2 x ring 2 on 4; eager and torch.compile) and the diffusers
ParaAttention guide's L20 baselines. ``para-attn`` is scored as SGLang Diffusion's
sequence-parallel layout, like xDiT and cache-dit; the model has no ring term, which the
compiled ring runs do not need.
"""

from __future__ import annotations

import pytest

from paths import ROOT
from whichgpu.estimate.validation import read_rows
from whichgpu.estimate.validation.rows import engine_of
from whichgpu.estimate.validation.speed import estimate_of, predict

INCOMING = ROOT / "validation/incoming/speed-2026.csv"


def _row(row_id: str) -> dict[str, str]:
    return next(r for r in read_rows(INCOMING) if r["id"] == row_id)


def test_para_attn_is_scored_as_the_sequence_parallel_layout() -> None:
    """The run's own split, Ulysses 2 x ring 2 (ring attention costed as its own split since
    session 5, no longer as Ulysses 4)."""
    row = _row("in-img-paraattn-flux-4xa100-ulysses2-ring2-compile")
    assert engine_of(row) == "sglang"
    w, _, est, _ = estimate_of(row)
    assert w.gpus == 4
    assert "ulysses=2 x ring=2" in est.components[0].formula


@pytest.mark.parametrize("row_id", ["in-img-paraattn-flux-1xa100-compile",
                                    "in-img-paraattn-flux-2xa100-ring2-compile",
                                    "in-img-paraattn-flux-4xa100-ulysses2-ring2-compile"])
def test_compiled_runs_are_near_the_published_times(row_id: str) -> None:
    row = _row(row_id)
    estimate = predict(row)[0]
    assert estimate is not None
    assert abs(estimate / float(row["value"]) - 1) < 0.15, (row_id, estimate)


def test_the_split_speeds_up_as_published() -> None:
    """4 A100s compiled against 1: 2.81x published (9.997 / 3.557 s)."""
    one = predict(_row("in-img-paraattn-flux-1xa100-compile"))[0]
    four = predict(_row("in-img-paraattn-flux-4xa100-ulysses2-ring2-compile"))[0]
    assert one and four
    assert abs((one / four) / (9.997 / 3.557) - 1) < 0.15


def test_flux_on_one_l20_per_the_diffusers_guide() -> None:
    row = _row("in-img-diffusersdoc-paraattn-flux-1xl20")
    estimate = predict(row)[0]
    assert estimate is not None
    assert abs(estimate / float(row["value"]) - 1) < 0.15, estimate
