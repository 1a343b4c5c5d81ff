"""Questions whose encoding was corrected from their sources' own words (issue 30, questions).

q-3090-qwen38-27b-w8a8-vllm-100k-fits: its reporter wrote 'INT8 weights + INT8 activations',
but the stack he ran (syv-ai/qwen38-27b-rtx3090) serves a W4A16 AutoRound body (run_quant.sh:
--scheme W4A16 --bits 4 --group_size 128; INT8_ACT=int8 is 'W4A8 Marlin'). Encoded as 8-bit,
the weights alone (27.4 GB) exceed the card and the question measures nothing but the label.
"""

from __future__ import annotations

import csv

from paths import ROOT
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.validation.rows import workload_of


def _question(qid: str) -> dict[str, str]:
    with open(ROOT / "validation/questions.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["id"] == qid:
                return row
    raise AssertionError(qid)


def test_the_3090_int8_question_is_the_4bit_checkpoint_the_stack_serves() -> None:
    row = _question("q-3090-qwen38-27b-w8a8-vllm-100k-fits")
    assert row["quant"] == "int4"
    weights = next(t for t in estimate_memory(workload_of(row)).terms if t.name == "weights")
    assert weights.bytes < 24e9  # 8-bit: 30 GB of weights on a 24 GB card
