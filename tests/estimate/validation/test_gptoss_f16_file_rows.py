"""gpt-oss rows measured on Unsloth's F16 GGUF are entered as that file (issue 30).

Unsloth's ``gpt-oss-*-F16.gguf`` keeps the experts in MXFP4 and writes every other tensor in
F16; ``mxfp4`` under llama.cpp is ggml-org's MXFP4_MOE file, whose other tensors are Q8_0.
Entered as ``mxfp4``, the Strix Halo decode rows read 1.1 GB a token too few and came out
-0.41 / -0.38 in log: the calibration half's hardest decode residuals after the 3090's
UD-IQ1_S row (validation/speed-notes.md, "The hard decode rows of the calibration half")."""

import csv
import re

import pytest

from whichgpu.estimate.memory.weights import llm_weight_bytes
from whichgpu.estimate.validation import default_path
from whichgpu.estimate.validation.speed import predict
from whichgpu.models import resolve_model
from whichgpu.models.quant import get_quant
from whichgpu.vocabulary import Engine

_F16_FILE = re.compile(r"gpt-oss-(20b|120b)-F16\.gguf", re.IGNORECASE)


def _rows() -> list[dict[str, str]]:
    with default_path("speed").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_rows_of_the_f16_file_say_fp16():
    rows = [r for r in _rows() if _F16_FILE.search(r["source_url"] + r["conditions"])]
    assert len(rows) >= 4  # the Strix Halo decode and prefill rows of both models
    assert {r["quant"] for r in rows} == {"fp16"}


@pytest.mark.parametrize(("model", "gib"), [("openai/gpt-oss-120b", 60.88)])
def test_the_f16_file_keeps_mxfp4_experts_and_sizes_as_published(model, gib):
    """Unsloth's F16 120b: 60.88 GiB of weights (ailocalcheck.com's listing of
    unsloth/gpt-oss-120b-GGUF); ggml-org's MXFP4_MOE file is about 2 GB smaller."""
    spec = resolve_model(model, offline=True)
    f16 = llm_weight_bytes(spec, get_quant("fp16"), "fp16", engine=Engine.LLAMACPP).total
    mxfp4 = llm_weight_bytes(spec, get_quant("mxfp4"), "mxfp4", engine=Engine.LLAMACPP).total
    assert f16 / 2**30 == pytest.approx(gib, rel=0.01)
    # experts still MXFP4: an all-F16 file of 117 B parameters would be over 230 GB
    assert 1.5e9 < f16 - mxfp4 < 2.5e9


def test_strix_halo_gptoss_decode_reads_the_f16_rest():
    """As the file they ran, the two launch-week rows are within 10 % (were 33-34 % slower
    than estimated); as ggml-org's file they would be 30 % off again."""
    rows = {r["id"]: r for r in _rows()}
    for rid in ("dec-lhl-strix-gptoss20b-vk-tg128", "dec-lhl-strix-gptoss120b-vk-tg128"):
        row = rows[rid]
        as_run, _, _ = predict(row)
        as_mxfp4, _, _ = predict({**row, "quant": "mxfp4"})
        measured = float(row["value"])
        assert as_run and as_mxfp4
        assert abs(as_run / measured - 1) < 0.10
        assert as_mxfp4 / measured > 1.3


def test_the_f16_file_rows_are_under_the_bandwidth_ceiling():
    """The ceiling's lower bound on bytes counts the experts at MXFP4 in any gpt-oss file: at
    16 bits for every active weight the 47.1 t/s 20b row would need 340 GB/s of a 256 GB/s
    Strix Halo and be left out as impossible."""
    from whichgpu.estimate.validation.ceilings import ceiling_reason

    rows = {r["id"]: r for r in _rows()}
    for rid in ("dec-lhl-strix-gptoss20b-vk-tg128", "dec-lhl-strix-gptoss120b-vk-tg128"):
        assert ceiling_reason(rows[rid]) is None
        # the same rate a thousand times over is still caught
        assert ceiling_reason({**rows[rid], "value": "47100"}) is not None
