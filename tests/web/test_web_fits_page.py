"""Issue 32 (and 31's "a web page for fits"): /fits answers "what runs on my card" as
``whichgpu fits`` and GET /api/v1/fits do, in English and French, linked from every page."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from browser_session import _reason

Q = {"gpu": "rtx-3060-12gb", "host_ram": "64GB"}


def _models(page_html: str) -> list[str]:
    table = re.search(r'<table class="fits-models".*?</table>', page_html, re.S)
    assert table, "no table of models"
    return re.findall(r'<tr data-model="([^"]+)"', table.group(0))


def test_the_page_lists_what_the_api_lists_in_its_order(web):
    api = web.get("/api/v1/fits", params=Q).json()
    page = web.get("/fits", params=Q)
    assert page.status_code == 200
    assert _models(page.text) == [m["model"] for m in api["models"]][:20]
    # the headline counts every model that runs, not only the 20 shown
    assert f"{len(api['models'])} models run on rtx-3060-12gb" in page.text
    # a model that runs only with llama.cpp's offload says so, with the RAM it takes
    offload = [m for m in api["models"][:20] if m["placement"] == "offload"]
    if offload:
        row = re.search(rf'<tr data-model="{re.escape(offload[0]["model"])}">.*?</tr>',
                        page.text, re.S).group(0)
        assert "of system RAM" in row and offload[0]["offload"]["flags"] in row
    every = web.get("/fits", params={**Q, "top": "0"}).text
    assert _models(every) == [m["model"] for m in api["models"]]


def test_sorting_and_a_card_known_by_its_memory(web):
    api = web.get("/api/v1/fits", params={"gpu": "16GB", "sort": "context"}).json()
    page = web.get("/fits", params={"gpu": "16GB", "sort": "context", "lang": "fr"}).text
    assert _models(page) == [m["model"] for m in api["models"]][:20]
    assert '<option value="context" selected>' in page
    text = html_lib.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "--gpu-spec" not in text  # the note names the page's control
    assert "Votre propre carte" in text
    assert re.search(r"\d[\u00a0\u202f ]\d{3}", text)  # 131 072 tokens, the French way


def test_the_page_is_in_the_navigation_and_says_bad_input_in_its_words(web):
    assert 'href="/fits"' in web.get("/gpus").text
    r = web.get("/fits", params={"gpu": "no-such-card-xyz"})
    assert r.status_code == 422
    assert 'role="alert"' in r.text and "no-such-card-xyz" in r.text
    r = web.get("/fits", params={"gpu": "rtx-4090", "context": "lots", "lang": "fr"})
    assert r.status_code == 422 and "Vérifiez la saisie" in r.text
    empty = web.get("/fits")
    assert empty.status_code == 200 and 'id="results"' not in empty.text


@pytest.mark.skipif(_reason is not None, reason=_reason or "")
def test_the_fits_page_in_a_browser(page):
    page.goto(page.base + "/")
    page.get_by_role("link", name="What runs on my card").click()
    page.get_by_label("Your card", exact=True).fill("rtx-3060-12gb")
    page.get_by_label("System RAM", exact=True).fill("64GB")
    page.get_by_role("button", name="Show what runs").click()
    page.wait_for_selector("table.fits-models")
    api = page.request.get(page.base + "/api/v1/fits?gpu=rtx-3060-12gb&host_ram=64GB").json()
    rows = page.locator("table.fits-models tbody tr")
    assert rows.first.get_attribute("data-model") == api["models"][0]["model"]
    assert rows.count() == min(20, len(api["models"]))
    where = "system RAM" if api["models"][0]["placement"] == "offload" else "on the GPU"
    assert where in rows.first.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
