"""A serving step's KV read is not hidden under its matmuls (issue 28, serving max
throughput): attention reads the KV cache in its own kernels, one after another with each
layer's GEMMs, so a decode step costs the KV read plus the GEMMs' time (weights read or
matmuls, the longer), not the larger of the two. Seen in the held-out residuals (large-batch
TensorRT-LLM 0.17 runs over-predicted) and checked on the calibration rows, where the constants
are fitted: calibration max-throughput error 16.6 -> 13.5 % (leave one source out 20.6 ->
19.4 %); held out, 10.3 -> 8.3 % (72 rows). The cost: calibration TPOT 18.0 -> 21.2 %
(TensorRT-LLM 0.14's ITL at saturating rates)."""

from __future__ import annotations

import math
import statistics

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def _steps():
    w = Workload(resolve_model("llama-3.1-70b"), engine="trtllm", quant="fp16", gpus=4, tp=4,
                 prompt_tokens=1000, output_tokens=1000)
    return ServingModel(w, get_gpu("a100-80gb-sxm"), lengths="mean").steps


def test_a_compute_bound_step_still_pays_its_kv_read():
    """Llama 3.1 70B in 16 bits on 4 x A100 at 279 running sequences (TensorRT-LLM 0.17's
    KV-capacity batch for 1000/1000 tokens): the matmuls outlast the weights read, and the
    step is KV read + matmuls (+ the all-reduce, the fixed cost and the per-sequence cost)."""
    s = _steps()
    batch = 279.0
    kv, comp, fix, other = s.decode_terms(batch)
    weights = s._weights_read(math.ceil(batch))
    assert comp > weights and kv > 0.25 * comp  # a step where the two used to overlap
    comm = s.comm_fixed + s.comm_per_token * batch
    rest = comm + fix + other + s.per_sequence_s * batch
    assert s.decode(batch) == pytest.approx(kv + comp + rest, rel=1e-9)
    assert s.decode(batch) > max(kv + weights, comp) + rest + 0.2 * kv


def _median_error(split: str) -> float:
    from whichgpu.estimate.validation import default_path, read_rows
    from whichgpu.estimate.validation import serving as vs

    rows = read_rows(default_path("serving"))
    errs = [abs(o.error) for o in vs.evaluate_rows(rows)
            if o.split == split and o.category == "throughput" and o.error is not None]
    return statistics.median(errs)


def test_max_throughput_errors_stay_where_the_kv_read_put_them():
    """Calibration throughput 13.5 % and held-out 8.3 % with the KV read outside the matmuls
    (16.6 % and 10.3 % when it hid under them): fails if it goes back.

    Ratchet moved once, on purpose (2026-12-07, serve28): the expert GEMM size term and the
    MoE prefill's fixed expert cost once per forward pass were chosen on calibration rows and
    leave-one-source-out (calibration 13.3 -> 11.9 %, leave one source out 20.8 -> 17.4 %); the
    refit of vLLM's per-sequence MoE step cost (10 -> 40 us) moved the held-out rows of one
    source (InferenceX #828, gpt-oss-120b on H100) the other way: held out 8.7 -> 10.2 %. The
    holdout is never used to choose, so the bound records where it stands; the calibration
    bound is tightened to what the mechanisms reached."""
    assert _median_error("calibration") < 0.125
    assert _median_error("holdout") < 0.105
