"""Reading benchmark result files into runs: llama-bench JSON and CSV, vLLM and SGLang serving
benchmarks, whichgpu bench, the runs CSV (recorded files in tests/data/runs/, see its
README for where each layout comes from)."""

from __future__ import annotations

import json

import pytest

from paths import DATA
from whichgpu.catalog.runs.formats import llama_quant, read_runs, read_text
from whichgpu.catalog.runs.record import RunFormat
from whichgpu.errors import InputError

DATA = DATA / "runs"


def fields(name: str) -> list[dict]:
    return [d.fields for d in read_runs(DATA / name).drafts]


def test_llama_bench_json_gives_a_prefill_and_a_decode_run_per_test():
    reading = read_runs(DATA / "llama-bench-rtx4090.json")
    assert reading.format is RunFormat.LLAMA_BENCH_JSON and reading.skipped == []
    pp, tg = (d.fields for d in reading.drafts)
    raw = json.loads((DATA / "llama-bench-rtx4090.json").read_text())
    assert (pp["metric"], pp["value"], pp["prompt_tokens"], pp["spread"]) == (
        "prefill_tokens_per_s", raw[0]["avg_ts"], 512, raw[0]["stddev_ts"])
    assert (tg["metric"], tg["value"], tg["output_tokens"]) == (
        "decode_tokens_per_s", raw[1]["avg_ts"], 128)
    for f in (pp, tg):
        assert f["gpu"] == "NVIDIA GeForce RTX 4090" and f["gpu_count"] == 1
        assert (f["engine"], f["engine_version"]) == ("llamacpp", "b6153")
        assert (f["model"], f["precision"]) == ("Meta-Llama-3.1-8B-Instruct", "q4_k_m")


def test_llama_bench_csv_reads_the_same_fields_and_leaves_out_a_mixed_pg_test():
    reading = read_runs(DATA / "llama-bench-rtx4090.csv")
    assert reading.format is RunFormat.LLAMA_BENCH_CSV
    assert [d.fields["metric"] for d in reading.drafts] == ["prefill_tokens_per_s",
                                                           "decode_tokens_per_s"]
    assert float(reading.drafts[1].fields["value"]) == 150.87
    assert len(reading.skipped) == 1 and "pp512+tg128" in reading.skipped[0]


@pytest.mark.parametrize(("model_type", "filename", "quant"), [
    ("llama 8B Q4_K - Medium", None, "q4_k_m"), ("qwen2 7B Q8_0", None, "q8_0"),
    ("llama 70B Q5_K - Small", None, "q5_k_s"), ("gemma3 27B BF16", None, "bf16"),
    ("llama 8B IQ4_XS - 4.25 bpw", None, "iq4_xs"),
    (None, "/m/Qwen2.5-7B-Instruct-Q6_K.gguf", "q6_k"), ("", "x.gguf", None)])
def test_llama_bench_quantization_names(model_type, filename, quant):
    assert llama_quant(model_type, filename) == quant


def test_vllm_result_is_one_serving_run_at_its_concurrency_and_mean_lengths():
    (f,) = fields("vllm-bench-serve-h100.json")
    raw = json.loads((DATA / "vllm-bench-serve-h100.json").read_text())
    assert f["engine"] == "vllm" and f["model"] == raw["model_id"] and "gpu" not in f
    assert (f["metric"], f["value"], f["batch"]) == ("output_tokens_per_s",
                                                     raw["output_throughput"], 32)
    assert f["prompt_tokens"] == raw["total_input_tokens"] // raw["completed"] == 1024
    assert f["output_tokens"] == 128 and f["date"] == "2026-11-28T15:30:12"


def test_sglang_jsonl_names_no_model_and_its_infinite_rate_means_all_at_once():
    (f,) = fields("sglang-bench-serving-h100.jsonl")
    assert (f["engine"], f["model"], f["batch"], f["value"]) == ("sglang", None, 64, 4391.1)
    assert (f["prompt_tokens"], f["output_tokens"]) == (1024, 256)


def test_a_paced_serving_benchmark_without_a_concurrency_cap_is_refused_naming_the_field():
    raw = json.loads((DATA / "vllm-bench-serve-h100.json").read_text())
    raw.update(max_concurrency=None, request_rate=4.0)
    with pytest.raises(InputError, match="field 'max_concurrency'"):
        read_text(json.dumps(raw), "paced.json")


def test_whichgpu_bench_keeps_its_inference_speeds_only():
    reading = read_runs(DATA / "whichgpu-bench-l4.json")
    assert [(d.fields["metric"], d.fields["value"]) for d in reading.drafts] == [
        ("prefill_tokens_per_s", 2480.5), ("decode_tokens_per_s", 13.9)]
    assert reading.drafts[0].fields["engine"] == "transformers"
    assert "peak_memory_bytes" in reading.skipped[0]


def test_the_runs_csv_and_its_refusals():
    rows = fields("runs.csv")
    assert [(r["gpu"], r["metric"], r["value"]) for r in rows] == [
        ("rtx-4090", "decode_tokens_per_s", "161.2"), ("h100-sxm", "output_tokens_per_s", "2050")]
    with pytest.raises(InputError, match="unknown column"):
        read_text("gpu,metric,value,colour\nl4,decode_tokens_per_s,3,red\n", "x.csv")
    with pytest.raises(InputError, match="field 'unit'"):
        read_text("gpu,metric,value,unit\nl4,decode_tokens_per_s,3,ms\n", "x.csv")


def test_a_file_no_tool_wrote_is_refused():
    with pytest.raises(InputError, match="not a results file"):
        read_text('{"hello": 1}', "x.json")
