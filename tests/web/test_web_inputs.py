"""Issue 17, items 1 and 2 without a browser: each number input carries its request field's own
bounds (decimals where the field is a float), and what the bounds refuse is refused by the
server too, in the page's words (no CLI flag)."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from whichgpu.answers import requests as r
from whichgpu.web.input_bounds import number_attrs


@pytest.fixture
def client():
    from whichgpu.web.app import create_app

    return TestClient(create_app())


def _inputs(page: str) -> dict[str, dict[str, str]]:
    out = {}
    for tag in re.findall(r"<input\b[^>]*>", page):
        attrs = dict(re.findall(r'([a-z-]+)="([^"]*)"', tag))
        if "name" in attrs:
            out[attrs["name"]] = attrs
    return out


def _error(page: str) -> str:
    found = re.search(r'id="error".*?<p>(.*?)</p>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1))) if found else ""


@pytest.mark.parametrize(("path", "model", "names"), [
    ("/rent-or-buy", r.Tco, ("hours_per_month", "years", "tdp", "load_factor", "pue")),
    ("/memory", r.Memory, ("batch",)),
    ("/?unit=users", r.Recommend, ("tokens_per_s_each",)),
])
def test_number_inputs_carry_their_fields_bounds_unescaped(client, path, model, names):
    """Was: step="&#34;any&#34;" (the template escaped its own attributes)."""
    page = client.get(path).text
    assert "&#34;" not in "".join(re.findall(r"<input\b[^>]*>", page))
    inputs = _inputs(page)
    for name in names:
        got = inputs[name]
        want = dict(re.findall(r'([a-z]+)="([^"]*)"', number_attrs(model, name)))
        assert {k: got.get(k) for k in want} == want, name
        kind = model.model_fields[name].annotation
        assert got["step"] == ("1" if int in getattr(kind, "__args__", (kind,)) else "any")


def test_pue_load_and_years_take_decimals(client):
    page = client.get("/rent-or-buy?gpu=h100-sxm&pue=1.3&load_factor=0.7&years=2.5").text
    assert _error(page) == ""
    assert _inputs(page)["pue"]["value"] == "1.3"


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("query", ["hours_per_month=-5", "years=-1", "pue=0.5", "tdp=-3"])
def test_what_the_bounds_refuse_the_server_refuses_without_a_cli_flag(client, lang, query):
    res = client.get(f"/rent-or-buy?gpu=h100-sxm&{query}&lang={lang}")
    assert res.status_code == 422
    reason = _error(res.text)
    assert reason and "--" not in reason, reason


def test_a_negative_budget_is_refused_in_the_pages_words(client):
    """Was: "amount '-2' needs a currency, e.g. -2USD" (the CLI's money parser)."""
    res = client.get("/?model=llama-3.1-8b&amount=1M&max_price_per_hour=-2")
    assert res.status_code == 422
    assert _error(res.text) == "the hourly budget must be more than 0, got -2"


def test_negative_hours_on_the_advisor_leave_rent_or_buy_out_and_say_why(client):
    page = client.get("/?model=llama-3.1-8b&amount=1M&hours_per_month=-5"
                      "&horizon_months=12").text
    assert "the hours of use per month must be more than 0" in html.unescape(page)
    assert "Rent or buy (questions 4 and 5)" not in page
    ok = client.get("/?model=llama-3.1-8b&amount=1M&hours_per_month=100.5"
                    "&horizon_months=2.5").text
    assert "Rent or buy (questions 4 and 5)" in ok  # decimals answer


@pytest.mark.parametrize(("task", "unit", "field"), [
    ("image", "images", "images"), ("lora", "steps", "steps"),
    ("pretrain", "train_tokens", "train_tokens"), ("inference", "users", "users")])
def test_a_stale_unit_is_read_in_the_workloads_own(client, task, unit, field):
    """Was: choosing image generation left "Of what" at tokens, and 1,000 images failed with
    a sentence about --tokens. A form submitted with the old unit now counts the task's."""
    model = "flux.1-dev" if task == "image" else "llama-3.1-8b"
    stale = "tokens" if task != "inference" else "users"
    extra = "&tokens_per_s_each=20" if unit == "users" else ""
    page = client.get(f"/?task={task}&model={model}&amount=1000&unit={stale}{extra}").text
    assert _error(page) == "", _error(page)
    chosen = re.search(r'<select id="f-unit".*?</select>', page, re.S).group(0)
    assert re.search(rf'<option value="{unit}"[^>]*selected', chosen)
    offered = re.findall(r'<option value="(\w+)"(?![^>]*hidden)', chosen)
    assert field in offered and all(u in r.Recommend.model_fields for u in offered)
