"""Each serving row is estimated with the engine build it measured (serve28c, issue 28): the
speed model's engine eras (estimate/data/engine_kernels.toml) reach the serving validation as
they reach the speed validation. dstack's March 2025 DeepSeek-R1 runs on vLLM 0.7 and SGLang 0.4
decoded MLA layers far slower than today's builds (decode_mla_layer_us[vllm@0.7, sglang@0.4]);
estimated as today's builds, their TPOT at concurrency 8 came out 0.27-0.74x of measured."""

from __future__ import annotations

import pytest

from whichgpu.estimate.speed.kernels import era_of
from whichgpu.estimate.validation import serving as vs
from whichgpu.estimate.validation.rows import serving_build


def _row(engine: str, version: str, date: str) -> dict[str, str]:
    return {"engine": engine, "engine_version": version, "date": date}


@pytest.mark.parametrize(("engine", "version", "date", "era"), [
    ("vllm", "vLLM 0.7.4.dev181 (nightly)", "2025-03", "0.7"),
    ("sglang", "SGLang 0.4.2.post4 (ROCm 6.3)", "2025-03", "0.4"),
    # a named later release is not moved into the 0.4 era by a year-only date (June 2025)
    ("sglang", "SGLang 0.5.3", "2025", None),
    # a row naming no release is placed by its date, as the speed validation places it
    ("sglang", "SGLang (May 2025, PD disaggregation)", "2025-05-05", "0.4"),
    ("sglang", "SGLang 0.5.7", "2026-03-05", None),
])
def test_the_build_a_row_names(engine, version, date, era):
    build = serving_build(_row(engine, version, date), engine)
    assert (era_of(engine, build) if build else None) == era


def test_an_engine_without_eras_takes_todays_build():
    assert serving_build(_row("trtllm", "TensorRT-LLM 0.14.0", "2024"), "trtllm") is None


def _dstack_c8_tpot() -> list[tuple[dict[str, str], float]]:
    from whichgpu.estimate.validation import default_path, read_rows

    rows = [r for r in read_rows(default_path("serving"))
            if r["group"] in ("dstack-dsr1-h200-vllm-c8", "dstack-dsr1-mi300x-sglang-c8",
                              "dstack-dsr1-mi300x-vllm-c8") and r["metric"] == "tpot_ms_mean"]
    assert len(rows) == 3
    return [(r, vs.predict(r)[0] / float(r["value"])) for r in rows]


def test_early_2025_mla_decode_is_estimated_with_its_build():
    """Each of the three concurrency-8 TPOTs comes out at least 0.6x of measured (0.27-0.74x
    with today's builds), and the rows' case carries the build."""
    for row, ratio in _dstack_c8_tpot():
        case = vs.case_of(row)
        assert case.model.workload.engine_version is not None, row["id"]
        assert ratio > 0.6, (row["id"], ratio)
