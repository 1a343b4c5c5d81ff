"""Issue 32: a serving answer shows what binds each option (the KV cache's room, a replica's
throughput, the latency targets) as a picture with a table, from the same numbers as the
REST API, in English and French; the picture's text is readable and no label covers another
on a phone and a laptop."""

from __future__ import annotations

import re

import pytest

from browser_session import _reason

SERVE = {"task": "inference", "model": "llama-3.1-8b", "engine": "vllm", "requests_per_s": "20",
         "prompt_tokens": "1000", "output_tokens": "200", "ttft": "2s", "tpot": "50ms"}
PAGE = "/?" + "&".join(f"{k}={v}" for k, v in SERVE.items())


def _table(html: str) -> list[list[str]]:
    table = re.search(r'<table class="binds">.*?</table>', html, re.S)
    assert table, "no table of what binds"
    body = table.group(0).split("<tbody>")[1]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>",
                                                                    row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_the_shares_are_the_apis_numbers(web):
    api = web.get("/api/v1/recommend", params=SERVE).json()
    html = web.get("/", params=SERVE).text
    assert html.count('class="chart chart-binds chart-') == 2  # a laptop and a phone layout
    rows = _table(html)
    best = api["options"][0]
    kv = best["decode_batch"] / best["batch_limit"]
    ttft = best["ttft_s"]["typical"] / 2.0
    tpot = best["tpot_s"]["typical"] / 0.050
    shares = {"KV": kv, "throughput": best["utilisation"], "TTFT": ttft, "TPOT": tpot}
    expected = [f"{round(v * 100)}%" for v in shares.values()]
    assert rows[0][1:5] == expected, (rows[0], shares)
    binding = max(shares, key=lambda k: shares[k])
    words = {"KV": "memory for the KV cache", "throughput": "throughput",
             "TTFT": "time to first token target", "TPOT": "time per output token target"}
    assert rows[0][5].startswith(words[binding])
    assert len(rows) == min(8, len({o["gpu"] for o in api["options"]}))


def test_the_picture_in_french(web):
    html = web.get("/", params={**SERVE, "lang": "fr"}).text
    assert "Ce qui limite chaque option" in html
    rows = _table(html)
    assert all(re.fullmatch(r"\d+[\u00a0\u202f ]%|–", c) for c in rows[0][1:5]), rows[0]
    assert "time per output token" not in html


def test_no_picture_for_a_job_with_an_amount(web):
    html = web.get("/", params={"task": "inference", "model": "llama-3.1-8b",
                                "amount": "1M", "unit": "tokens"}).text
    assert "chart-binds" not in html


# the chart's text, its size on screen and its boxes (as tests/web/test_web_layout.py measures)
GEOMETRY = """() => {
  const svg = [...document.querySelectorAll('svg.chart-binds')]
    .find(s => s.getBoundingClientRect().width > 0);
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => {
    const b = t.getBoundingClientRect();
    return {text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale,
            box: [b.left, b.top, b.right, b.bottom]};
  });
}"""


@pytest.mark.skipif(_reason is not None, reason=_reason or "")
@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844},
                                      {"width": 1366, "height": 768}], ids=["phone", "laptop"])
def test_the_picture_is_readable_at_both_sizes(browser, server, viewport):
    tab = browser.new_page(viewport=viewport)
    tab.goto(server + PAGE + "&lang=fr")
    texts = tab.evaluate(GEOMETRY)
    tab.close()
    assert texts
    assert min(t["px"] for t in texts) >= 11, [t for t in texts if t["px"] < 11]
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            x = min(a["box"][2], b["box"][2]) - max(a["box"][0], b["box"][0])
            y = min(a["box"][3], b["box"][3]) - max(a["box"][1], b["box"][1])
            assert not (x > 1 and y > 1), (a["text"], b["text"])
