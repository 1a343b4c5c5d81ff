"""A speed answer whose engine was picked by default says when another engine whichgpu models
is clearly faster on the card (flaws8 4): gpt-oss-120b on a DGX Spark defaults to vLLM (33.5
tok/s measured on vLLM 26.02, NVIDIA/dgx-spark-playbooks#79) while llama.cpp decodes it at
59.0 (benches/dgx-spark.md); both rows are in validation/speed.csv. "Clearly" is the default's
own range: the other engine's typical rate is above its high end."""

from __future__ import annotations

import pytest

from whichgpu.answers.engine_hint import reads_format
from whichgpu.answers.estimates import speed
from whichgpu.answers.requests import Speed
from whichgpu.models.quant import QuantFormat
from whichgpu.vocabulary import Engine

RATE = "decode_tokens_per_s_per_sequence"


def _fmt(name: str) -> QuantFormat:
    from whichgpu.estimate.workload import Workload
    from whichgpu.models.resolve import resolve_model

    return Workload(resolve_model("llama-3.1-8b"), quant=name).quant_format


def test_dgx_spark_says_llamacpp_decodes_gpt_oss_120b_faster(cli):
    r = cli("speed", "gpt-oss-120b", "--gpu", "dgx-spark", "--json")
    assert r.code == 0, r.err
    data = r.json()
    assert data["engine"] == "vllm"  # the default stays; the answer names the faster one
    faster = data["faster_engine"]
    assert faster["engine"] == "llamacpp" and faster["instead_of"] == "vllm"
    assert faster[RATE]["typical"] > data[RATE]["high"]  # above the default's whole range
    assert faster["default"][RATE] == data[RATE]
    assert faster["description"] in data["notes"]
    # the figure is the --engine llamacpp answer's own
    asked = cli("speed", "gpt-oss-120b", "--gpu", "dgx-spark", "--engine", "llamacpp", "--json")
    assert asked.json()[RATE] == faster[RATE]


def test_rest_says_it_too(web):
    got = web.get("/api/v1/speed?model=gpt-oss-120b&gpu=dgx-spark")
    assert got.status_code == 200, got.text
    assert got.json()["faster_engine"]["engine"] == "llamacpp"


@pytest.mark.parametrize("ask", [
    dict(model="gpt-oss-120b", gpu="dgx-spark", engine="vllm"),  # an engine named: as asked
    dict(model="gpt-oss-120b", gpu="dgx-spark", batch=8),  # not one stream
    dict(model="llama-3.1-8b", gpu="rtx-4090"),  # llama.cpp within vLLM's range
    # vLLM's CDNA 3 efficiency is fitted on its MI300X rows, llama.cpp's is not: no contest
    dict(model="llama-3.1-70b", gpu="mi300x"),
])
def test_no_faster_engine_where_none_is_clearly_faster(ask):
    got = speed(Speed(**ask))
    assert got.answer is not None and got.answer.estimate is not None
    assert got.faster is None
    assert "faster_engine" not in got.to_json()


def test_an_engine_is_compared_only_on_a_format_it_loads():
    assert reads_format(Engine.LLAMACPP, _fmt("q4_k_m"))
    assert reads_format(Engine.LLAMACPP, _fmt("bf16"))
    assert not reads_format(Engine.LLAMACPP, _fmt("fp8"))  # no GGUF file of FP8 or AWQ
    assert not reads_format(Engine.LLAMACPP, _fmt("awq"))
    assert reads_format(Engine.VLLM, _fmt("fp8")) and reads_format(Engine.VLLM, _fmt("awq"))
    assert not reads_format(Engine.VLLM, _fmt("q4_k_m"))  # a GGUF type picks llama.cpp
    assert not reads_format(Engine.EXLLAMAV2, _fmt("awq"))  # EXL2 only
    assert not reads_format(Engine.MLC, _fmt("bf16"))  # its own formats: not compared
