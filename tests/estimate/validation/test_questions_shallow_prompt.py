"""A decode benchmark at a short prompt in a long allocated window decodes at the prompt's
depth, not the window's (issue 30: the Qwen3.8-27B llama-server runs, whose source measured the
same speed at 128K and 256K allocated)."""

from __future__ import annotations

import pytest

from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation import speed as validation_speed

_ROW = {"model": "qwen3.8-27b", "task": "inference", "quant": "q6_k", "engine": "llamacpp",
        "gpu": "rtx-5090", "gpu_count": "1", "tp": "1", "batch": "1", "output_tokens": "256",
        "kv_dtype": "q4_0", "metric": "decode_tokens_per_s", "category": "decode"}


def _decode(**kw: str) -> float:
    value, _, _ = validation_speed.predict({**_ROW, **kw})
    assert value is not None
    return value


def test_the_allocated_window_does_not_slow_a_short_prompt():
    # the source's pair: 61.9 tok/s at 128K allocated, 62.0 at 256K, same card and file
    at_128k = _decode(context="131072", prompt_tokens="256")
    at_256k = _decode(context="262144", prompt_tokens="256")
    assert at_256k == pytest.approx(at_128k, rel=0.01)
    # a prompt that fills the window does decode slower (the KV read grows with depth)
    assert _decode(context="262144") < 0.9 * at_256k


def test_the_probe_rows_are_encoded_at_the_benchmarks_prompt_depth():
    rows = [r for r in read_rows(default_path("questions"))
            if "sudoingX/qwen38-mtp" in r["source_url"] and r["kind"] == "decode_speed"]
    assert len(rows) >= 10
    for r in rows:
        assert 0 < int(r["prompt_tokens"]) <= 2048 < int(r["context"]), r["id"]
        assert "probe.py" in r["note"], r["id"]
