"""Issue 32, "words, not internals" (the sequel of tests/web/test_web_no_cli_flags.py, which
keeps flags off the pages): no page shows an answer's raw JSON key ("60.9
decode_tokens_per_s" in the own-card line) or an engine's internal kernel name ("Speed
second: memory-bandwidth-bound at mma_sync_int8"), in English or in French.

The forbidden words are not a hand-kept list: they are every key of the REST API's answer
to the same questions (the names with an underscore: plain words like "gpu" are words),
the speed units the answers carry (``rate.name``) and the engine's kernel peaks."""

from __future__ import annotations

import html
import re
import tomllib
from importlib import resources
from typing import Any

import pytest
from fastapi.testclient import TestClient

from whichgpu.estimate.speed.hardware import MMA_SYNC_INT8
from whichgpu.web import explain, words

# The trial's cases: a GGUF q4_k_m model (measured at the MMQ kernels' peak) with an own card
# described by its spec (the "Your card" line), and a serving question.
OWN_Q4 = ("task=inference&model=llama-3.1-8b&quant=q4_k_m&amount=1M&unit=tokens"
          "&gpu_spec=memory=12GB,bandwidth=360GB/s,fp16=25")
API_OWN_Q4 = ("task=inference&model=llama-3.1-8b&quant=q4_k_m&tokens=1M"
              "&gpu_spec=memory=12GB,bandwidth=360GB/s,fp16=25")
SERVE = "task=inference&model=llama-3.1-8b&requests_per_s=2"
PAGES = (f"/?{OWN_Q4}", f"/?{SERVE}", "/memory?model=llama-3.1-8b&quant=q4_k_m",
         "/cost", "/rent-or-buy?gpu=h100-sxm", "/prices?gpu=h100", "/gpus/rtx-4090")


@pytest.fixture(scope="module")
def client():
    from whichgpu.web.app import create_app

    return TestClient(create_app())


def _keys(data: Any, out: set[str]) -> set[str]:
    if isinstance(data, dict):
        for k, v in data.items():
            out.add(k)
            if k == "rate" and isinstance(v, dict) and isinstance(v.get("name"), str):
                out.add(v["name"])  # a speed's unit: "decode_tokens_per_s"
            _keys(v, out)
    elif isinstance(data, list):
        for v in data:
            _keys(v, out)
    return out


def _kernel_names() -> set[str]:
    data = tomllib.loads(resources.files("whichgpu.estimate").joinpath(
        "data/engine_kernels.toml").read_text())
    return {k["peak"] for k in data.get("kernel", ()) if "_" in k.get("peak", "")}


@pytest.fixture(scope="module")
def forbidden(client) -> set[str]:
    keys: set[str] = set()
    for q in (API_OWN_Q4, SERVE):
        res = client.get(f"/api/v1/recommend?{q}")
        assert res.status_code == 200, res.text[:300]
        _keys(res.json(), keys)
    internal = {k for k in keys | set(explain.RATES) if "_" in k}
    kernels = _kernel_names()
    assert MMA_SYNC_INT8 in kernels and "decode_tokens_per_s" in internal  # the trial's two
    return internal | kernels


def _visible_text(page: str) -> str:
    """What a reader sees: text nodes, the command-line and file previews left out (a
    ``<code>``/``<pre>`` block shows the CLI's or a file's own syntax on purpose)."""
    page = re.sub(r"<(script|style|code|pre)\b[^>]*>.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_no_page_shows_a_raw_key_or_a_kernel_name(client, forbidden, lang):
    shown: dict[str, list[str]] = {}
    for path in PAGES:
        res = client.get(f"{path}{'&' if '?' in path else '?'}lang={lang}")
        assert res.status_code == 200, (path, res.text[:300])
        text = _visible_text(res.text)
        hits = sorted(w for w in forbidden if re.search(rf"(?<![\w/=-]){re.escape(w)}(?!\w)",
                                                        text))
        if hits:
            shown[path] = hits
    assert shown == {}


def test_the_own_card_line_says_its_speed_in_words(client):
    """Was: "your-12gb: fits … · 60.9 decode_tokens_per_s"."""
    page = _visible_text(client.get(f"/?{OWN_Q4}&lang=en").text)
    line = re.search(r"your-12gb\s*:\s*fits[^\n]*", page)
    assert line and re.search(r"\d tokens/s", line.group(0)), line


@pytest.mark.parametrize("lang,said", [
    ("en", "int8 on the tensor cores"), ("fr", "int8 sur les cœurs tensoriels")])
def test_a_kernel_peak_is_said_in_the_pages_words(lang, said):
    from whichgpu.messages import msg
    from whichgpu.web.i18n import locale

    m = msg("explain.memory_speed", "Memory first: it needs {need:.1f} GB per GPU of "
            "{usable:.1f} GB ({spare:.1f} GB spare; {layout}). Speed second: {bound}-bound at "
            "{precision}, confidence {confidence}.", need=5.0, usable=12.0, spare=7.0,
            layout="single GPU", bound="memory-bandwidth", precision=MMA_SYNC_INT8,
            confidence="high")
    text = words.say_text(locale(lang), m).text
    assert said in text and MMA_SYNC_INT8 not in text, text
