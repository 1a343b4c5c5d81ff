"""A serving recommendation at the checkpoint's 16-bit weights names FP8 on a card with FP8
tensor cores (flaws8 6): Llama-3.3-70B for 100 users x 20 tok/s answered 2 x MI300X at bf16
and never said FP8, which the 2026 serving recipes load (vLLM: half the weight memory, up to
1.6x the throughput, https://docs.vllm.ai/en/latest/features/quantization/fp8.html). The
default stays 16-bit; "what would change the answer" gives the same card's FP8 answer, which
is the recommender's own with the format named."""

from __future__ import annotations

ASK = ("recommend", "llama-3.3-70b", "--users", "100", "--tokens-per-s-each", "20", "--top",
       "1", "--json")


def test_the_fp8_line_is_the_cards_own_fp8_answer(cli):
    r = cli(*ASK)
    assert r.code == 0, r.err
    data = r.json()
    assert data["quant"] == "bf16"
    best = data["options"][0]
    said = [c for c in data["what_would_change"] if c.startswith("With FP8 weights")]
    assert len(said) == 1, data["what_would_change"]
    fp8 = cli(*ASK, "--quant", "fp8", "--only", best["gpu"]).json()["options"][0]
    line = said[0]
    assert f"${fp8['price_per_hour']['amount']:.2f} per hour" in line
    assert f"{fp8['rate']['typical']:,.1f} tokens/s per user" in line
    assert f"{best['rate']['typical']:,.1f} tokens/s per user at bf16" in line
    assert fp8["rate"]["typical"] > best["rate"]["typical"]  # FP8 reads half the bytes


def test_a_named_format_is_answered_as_asked(cli):
    r = cli(*ASK, "--quant", "bf16")
    assert r.code == 0, r.err
    assert not [c for c in r.json()["what_would_change"] if c.startswith("With FP8 weights")]
