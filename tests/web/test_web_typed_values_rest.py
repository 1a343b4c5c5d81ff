"""Values read as they validate (issue 35: ``8k``, ``10M``, ``96GB``, ``2s@p95``, ``1200/min``,
request lengths) are refused with the same one line by the REST API (422) and the command
line (exit 2), and a good one answers the same JSON on both."""

from __future__ import annotations

import pytest


def _cli_error(result) -> str:
    assert result.code == 2, result.err
    return result.err.strip().removeprefix("error: ")


@pytest.mark.parametrize("url,args", [
    ("/api/v1/memory?model=llama-3.1-8b&context=8q",
     ("memory", "llama-3.1-8b", "--context", "8q")),
    ("/api/v1/memory?model=llama-3.1-8b&host_ram=96",
     ("memory", "llama-3.1-8b", "--host-ram", "96")),
    ("/api/v1/recommend?model=llama-3.1-8b&tokens=lots",
     ("recommend", "llama-3.1-8b", "--tokens", "lots")),
    ("/api/v1/recommend?model=llama-3.1-8b&requests_per_s=20&ttft=2s@p97",
     ("recommend", "llama-3.1-8b", "--requests-per-s", "20", "--ttft", "2s@p97")),
    ("/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&requests_per_s=5&lengths=200:x",
     ("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--requests-per-s", "5", "--lengths",
      "200:x")),
])
def test_a_bad_value_is_the_same_line_on_rest_and_the_cli(web, cli, url, args):
    r = web.get(url)
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == _cli_error(cli(*args))


def test_a_count_written_two_ways_is_one_answer(web):
    """``8k`` in a query and 8192 in a JSON body are one context (k = 1,024 for tokens)."""
    text = web.get("/api/v1/memory?model=llama-3.1-8b&context=8k&host_ram=64GB")
    number = web.post("/api/v1/memory", json={"model": "llama-3.1-8b", "context": 8192,
                                              "host_ram": "64GB"})
    other = web.post("/api/v1/memory", json={"model": "llama-3.1-8b", "context": 8000,
                                             "host_ram": "64GB"})
    assert text.status_code == number.status_code == other.status_code == 200
    assert text.json() == number.json()
    assert other.json() != text.json()  # the context reaches the answer
