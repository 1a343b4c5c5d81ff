"""Issue 32: the VRAM selector with your card says how fast the model runs on it and the
longest context that fits, the numbers ``whichgpu fits`` gives for the same format."""

from __future__ import annotations

import re


def test_the_card_line_has_the_fits_speed_and_longest_context(web):
    row = web.get("/api/v1/fits", params={"gpu": "rtx-3060-12gb",
                                          "models": "llama-3.1-8b"}).json()["models"][0]
    page = web.get("/memory", params={"model": "llama-3.1-8b", "quant": row["quant"],
                                      "context": "4k", "gpu": "rtx-3060-12gb"}).text
    line = re.search(r'<p class="verdict-line ok" id="card-speed">(.*?)</p>', page, re.S)
    assert line, "no speed and longest context for the card"
    d = row["decode_tokens_per_s"]
    assert f"about {round(d['typical'])} tokens/s per sequence" in line.group(1)
    assert f"({round(d['low'])} to {round(d['high'])})" in line.group(1)
    assert f"{row['longest_context_tokens']:,} tokens per sequence" in line.group(1)
    fr = web.get("/memory", params={"model": "llama-3.1-8b", "quant": row["quant"],
                                    "context": "4k", "gpu": "rtx-3060-12gb", "lang": "fr"}).text
    assert re.search(r"Le plus long contexte qui tient : \d+[\u00a0\u202f ]\d{3} tokens", fr)


def test_no_card_line_where_it_does_not_fit_or_is_not_inference(web):
    big = web.get("/memory", params={"model": "llama-3.1-70b", "gpu": "rtx-3060-12gb"}).text
    assert 'id="card-speed"' not in big
    lora = web.get("/memory", params={"model": "llama-3.1-8b", "task": "lora",
                                      "gpu": "h100-sxm"}).text
    assert 'id="card-speed"' not in lora
