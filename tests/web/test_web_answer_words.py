"""Issue 17, items 3 and 4 on the advisor page: answers in words and units, one value where a
range has none, verdicts that allow a tie, warnings with the change that helps, results grouped
per GPU with the other counts folded and the GPUs without an offer in one line."""

from __future__ import annotations

import html
import re
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from whichgpu.units import Money
from whichgpu.web import explain

FLUX = ("/?task=image&model=flux.1-dev&quant=fp8&amount=1000&unit=images"
        "&prices=vramfarm-2026-11")


@pytest.fixture
def client():
    from whichgpu.web.app import create_app

    return TestClient(create_app())


def _text(page: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _main_rows(page: str) -> list[str]:
    table = re.search(r'<table class="options" data-sortable>.*?</table>', page, re.S).group(0)
    return re.findall(r'<tr(?: class="best")? data-gpu="([^"]+)"', table)


def test_one_row_per_gpu_with_the_other_counts_folded(client):
    """Was: 8 of 10 FLUX rows were the same A100 at 1 to 8 cards."""
    page = client.get(FLUX).text
    rows = _main_rows(page)
    assert len(rows) == len(set(rows)) >= 3
    folded = re.search(r'<details class="other-counts">.*?</details>', page, re.S)
    assert folded and re.search(r"\d+ other GPU counts of these cards", folded.group(0))
    api = client.get("/api/v1/recommend?task=image&model=flux.1-dev&quant=fp8&images=1000"
                     "&prices=vramfarm-2026-11&top=0").json()
    opts = api["options"]
    assert len(rows) == len({o["gpu"] for o in opts})  # every GPU, once
    assert rows[0] == opts[0]["gpu"]  # the first row is still the answer


def test_gpus_without_an_offer_are_one_line_that_opens(client):
    """Was: about 19 'no offer' rows after every answer."""
    page = client.get(FLUX).text
    excluded = re.search(r'<table class="excluded">.*?</table>', page, re.S)
    assert excluded is None or "no offer" not in excluded.group(0)
    line = re.search(r'<details class="no-offer">\s*<summary>(.*?)</summary>(.*?)</details>',
                     page, re.S)
    n = int(re.match(r"(\d+) GPUs would run it but have no offer", line.group(1)).group(1))
    assert n == len(re.findall(r'<a href="/gpus/', line.group(2)))


@pytest.mark.parametrize("path", [FLUX, "/?task=inference&model=llama-3.1-8b&amount=1M",
                                  "/?task=lora&model=llama-3.1-8b&amount=2000"])
def test_no_range_repeats_one_value_and_no_rate_is_an_internal_name(client, path):
    """Was: '$0.72 – $0.72' and '34 decode_tokens_per_s'."""
    text = _text(client.get(path).text)
    assert not re.search(r"(\S+\d) – \1(?!\d)", text), re.search(r"(\S+\d) – \1", text)
    assert not re.search(r"\d (?:\w+_)+per_\w+", text)


def test_every_rate_the_engine_names_has_words():
    from whichgpu.advise import evaluate

    source = open(evaluate.__file__, encoding="utf-8").read()
    named = set(re.findall(r'rate_name(?:, rate)? = "(\w+)"', source)) | set(evaluate._WORK_RATES)
    assert len(named) >= 6 and named - set(explain.RATES) == set()


def _advice(rent: float, own: float, decision: str):
    return SimpleNamespace(rent_cost=Money(rent, "USD"), own_cost=Money(own, "USD"),
                           decision=decision)


def test_a_saving_inside_the_near_tie_margin_is_about_even():
    """Was: 'Buy — saves $432 over 36 months' (1.4 %) as a clear verdict."""
    assert explain.rent_or_buy_verdict(_advice(30_000, 29_568, "buy")) == "even"
    assert explain.rent_or_buy_verdict(_advice(30_000, 25_000, "buy")) == "buy"
    assert explain.rent_or_buy_verdict(_advice(20_000, 30_000, "rent")) == "rent"


def test_an_absurd_run_says_what_would_help(client):
    """Was: '31,147 days for $68,892,252' with no word."""
    text = _text(client.get("/?task=pretrain&model=llama-3.1-70b&amount=15T&max_gpus=8").text)
    warning = re.search(r"This would run for [^.]*\.", text).group(0)
    assert "“At most this many GPUs” is 8" in warning and "set a deadline" in warning
    calm = _text(client.get("/?task=inference&model=llama-3.1-8b&amount=1M").text)
    assert "This would run for" not in calm


def test_the_context_note_says_each_sequence_holds_it(client):
    """Was: a context of 32k made 1M tokens cost about 30 times more, without a word."""
    with_ctx = _text(client.get("/?task=inference&model=llama-3.1-8b&amount=1M"
                                "&context=32k").text)
    assert "Each sequence is assumed to hold the whole context you set (32k tokens)" in with_ctx
    without = _text(client.get("/?task=inference&model=llama-3.1-8b&amount=1M").text)
    assert "Each sequence is assumed" not in without


def test_rent_or_buy_prices_every_gpu_of_the_answer(client):
    """Was: the advisor's rent or buy priced one GPU when the answer was two. (A deadline
    makes the answer several GPUs: 1,000 images on one card cost the least but take 6 h.)"""
    page = client.get(FLUX + "&only=rtx-4090,a100-80gb-sxm,h100-sxm&hours_per_month=100"
                      "&horizon_months=12&deadline=2h").text
    text = _text(page)
    best = _main_rows(page)[0]
    n = int(re.search(r'<p class="big">(\d+) × ', page).group(1))
    assert n > 1 and best == "rtx-4090"
    m = re.search(r"For the (\d+) GPUs of the answer: renting \D([\d,]+), owning \D([\d,]+) "
                  r"\(each GPU: \D([\d,]+) against \D([\d,]+)\)", text)
    assert m and int(m.group(1)) == n
    rent, own, rent1, own1 = (int(g.replace(",", "")) for g in m.groups()[1:])
    assert abs(rent - n * rent1) <= n and abs(own - n * own1) <= n  # rounding to $1 each


def test_a_tiny_budget_blames_the_price_of_a_size_that_runs(client):
    """Was: with a $0.01/h budget the closest miss was 'gb200, fits, but has no offer', never
    the configuration that runs at a price above the budget."""
    api = client.get("/api/v1/recommend?model=llama-3.1-70b&tokens=1M"
                     "&max_price_per_hour=0.01USD").json()
    kinds = {e["kind"] for e in api["excluded"]}
    assert {"price", "offer"} <= kinds
    text = _text(client.get("/?task=inference&model=llama-3.1-70b&amount=1M"
                            "&max_price_per_hour=0.01USD").text)
    closest = re.search(r"Closest: (.*?)\.(?: |$)", text).group(1)
    assert "over budget per hour" in closest and "no offer" not in closest, closest


def test_a_list_cut_short_says_how_many_more_and_shows_them(client):
    """Was: lists stopped silently (the 'GPUs that hold it' at 20)."""
    q = "/?task=inference&model=llama-3.1-8b&amount=1M"
    api = client.get("/api/v1/recommend?model=llama-3.1-8b&tokens=1M&top=0").json()
    gpus = len({o["gpu"] for o in api["options"]})
    page = client.get(q).text
    shown = len(_main_rows(page))
    assert shown < gpus
    more = re.search(r'<a href="([^"]+)">and (\d+) more GPUs that can run it', page)
    assert int(more.group(2)) == gpus - shown
    assert len(_main_rows(client.get("/" + html.unescape(more.group(1))).text)) == gpus
    memory = client.get("/memory?model=llama-3.1-70b&quant=bf16&context=8k").text
    fits = client.get("/api/v1/memory?model=llama-3.1-70b&quant=bf16&context=8k").json()
    rows = re.findall(r'<tr data-gpu="[^"]+" data-count="\d+">', memory)
    held = fits["gpus_that_fit"]
    assert len(held) > 20 and len(rows) == len(held)  # every one on the page


SERVING = "/?task=inference&model=llama-3.1-8b&requests_per_s=20&spot=true"


def test_serving_table_is_one_row_per_gpu_with_the_others_folded(client):
    """Was: the requests-per-second table listed each GPU once per pricing (spot and
    on-demand), unlike the other result tables."""
    page = client.get(SERVING).text
    table = re.search(r'<table class="options serving" data-sortable>.*?</table>', page,
                      re.S).group(0)
    rows = re.findall(r'<tr(?: class="best")? data-gpu="([^"]+)"', table)
    api = client.get("/api/v1/recommend?task=inference&model=llama-3.1-8b&requests_per_s=20"
                     "&spot=true&top=0").json()
    gpus = [o["gpu"] for o in api["options"]]
    assert len(gpus) > len(set(gpus)), "the question no longer has two options on one GPU"
    assert len(rows) == len(set(rows)) >= 3
    assert rows == list(dict.fromkeys(gpus))[:len(rows)]  # rank order, the answer first
    folded = re.search(r'<details class="other-counts">.*?</details>', page, re.S).group(0)
    n = int(re.search(r"(\d+) other options? on these cards", folded).group(1))
    assert n == len(re.findall(r"<tr data-gpu=", folded)) >= 1
    assert set(re.findall(r'<tr data-gpu="([^"]+)"', folded)) <= set(rows)
