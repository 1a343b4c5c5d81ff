"""Issue 32: a family word typed as the weight format ('4bit', 'gguf', '8-bit') gets the
formats it stands for, on the page in its language (was: '4bit' suggested mlx-4bit, mlx-8bit
and int8; 'gguf' got no suggestion)."""

from __future__ import annotations

import html
import re

import pytest


def _error(page: str) -> str:
    box = re.search(r'<div class="error" role="alert".*?</div>', page, re.S)
    assert box, "no error box"
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", box.group(0))))


@pytest.mark.parametrize(("typed", "named"), [("4bit", ("awq", "q4_k_m", "nf4")),
                                              ("gguf", ("q4_k_m", "q8_0")),
                                              ("8-bit", ("fp8", "q8_0"))])
def test_a_family_word_names_its_formats(web, typed, named):
    r = web.get("/memory", params={"model": "llama-3.1-8b", "quant": typed})
    assert r.status_code == 422
    said = _error(r.text)
    assert all(n in said for n in named), said
    fr = _error(web.get("/memory", params={"model": "llama-3.1-8b", "quant": typed,
                                           "lang": "fr"}).text)
    assert "formats" in fr and all(n in fr for n in named), fr


def test_the_command_line_says_it_too(cli):
    out = cli("memory", "llama-3.1-8b", "--quant", "4bit")
    assert out.code == 2 and "awq or gptq" in out.err
