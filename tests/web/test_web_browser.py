"""End to end in a real browser: Playwright drives Debian's Chromium against ``whichgpu serve``
on 127.0.0.1. Screenshots go to artifacts/screenshots/ (the README's come from here).

Skipped, with the reason, where Chromium or Playwright is missing; ``.ci/run`` installs
Chromium and sets WHICHGPU_REQUIRE_BROWSER=1, so in CI a missing browser fails instead.
"""

from __future__ import annotations

import re

from browser_session import needs_browser
from paths import ROOT

SHOTS = ROOT / "artifacts" / "screenshots"
ARTICLE_CARDS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm")
pytestmark = needs_browser


def shot(tab, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_vram_selector_70b_4bit_8k_shows_the_s27_figure(page):
    page.goto(page.base + "/memory")
    page.get_by_label("Model", exact=True).fill("llama-3.1-70b")
    page.get_by_label("Weight format (quantization)").fill("q4_k_m")
    page.get_by_label("Context per sequence").fill("8k")
    page.get_by_role("button", name="Compute the memory").click()
    page.wait_for_selector("#results")
    weights = page.locator('tr[data-term="weights"] td').first.inner_text()
    assert 41 <= float(weights) <= 45  # S27: 70B in 4-bit ~ 43 GB + cache
    assert page.locator("svg.chart-bar:visible").count() == 1
    assert page.get_by_role("link", name="rtx-a6000").count() >= 1  # a 48 GB card holds it
    shot(page, "vram-selector")


def test_advisor_1000_flux_images_puts_the_4090_on_top_of_the_article_cards(page):
    page.goto(page.base + "/")
    page.get_by_label("Workload").select_option("image")
    page.get_by_label("Model", exact=True).fill("flux.1-dev")
    page.get_by_label("How much").fill("1000")
    page.get_by_label("Of what").select_option("images")
    page.get_by_text("More settings").click()
    page.get_by_label("Weight format", exact=True).fill("fp8")
    page.get_by_label("Prices").select_option("vramfarm-2026-11")
    page.get_by_label("Compare", exact=True).select_option(",".join(ARTICLE_CARDS))
    page.get_by_role("button", name="Find the GPU").click()
    page.wait_for_selector("table.options")
    first = page.locator("table.options tbody tr").first.get_attribute("data-gpu")
    assert first == "rtx-4090"  # S25: images -> the 4090 is far cheapest
    rows = page.locator("table.options tbody tr")
    gpus = {rows.nth(i).get_attribute("data-gpu") for i in range(rows.count())}
    assert gpus <= set(ARTICLE_CARDS)
    assert page.locator("svg.chart:visible circle.pt.best").count() == 1  # the Pareto chart
    assert "Excluded, and why" in page.content() or rows.count() >= 3
    shot(page, "advisor")


def test_switch_to_french_keeps_the_question(page):
    page.goto(page.base + "/?task=image&model=flux.1-dev&quant=fp8&amount=1000&unit=images"
              "&prices=vramfarm-2026-11")
    page.get_by_role("link", name="Français").click()
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == "fr"
    assert page.get_by_role("heading", name=re.compile("Quel GPU")).count() == 1
    verdict = page.locator(".verdict").inner_text()
    assert re.search(r"\d,\d\d[\u00a0\u202f ]€", verdict), verdict  # '3,89 €', not '€3.89'
    page.goto(page.base + "/gpus")  # the choice is remembered
    assert page.get_by_role("heading", name="Catalogue des GPU").count() == 1
    shot(page, "advisor-fr")


def test_rent_vs_buy_chart_marks_the_break_even_and_follows_the_inputs(page):
    page.goto(page.base + "/rent-or-buy?gpu=h100-sxm&purchase_price=25000USD&rent_price=3.15USD")
    chart = page.locator("#rent-chart svg:visible")  # one of its two layouts
    assert chart.count() == 1
    assert chart.locator("path.line.rent").count() == 1
    assert chart.locator("path.line.own").count() == 1
    assert chart.locator("text.marker-label").text_content().startswith("break-even")
    before = page.locator("#break-even-hours").inner_text()
    page.get_by_label("Electricity per kWh").fill("0.40USD")  # live update (S10: > $0.25/kWh)
    page.wait_for_function(
        "b => document.querySelector('#break-even-hours').innerText !== b", arg=before)
    assert page.locator("#rent-chart svg:visible").count() == 1
    shot(page, "rent-or-buy")


def test_catalog_sorts_in_the_browser_and_works_on_a_phone(page):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(page.base + "/gpus")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1  # wide tables scroll inside their region, not the page
    page.get_by_role("button", name="Memory").click()
    page.get_by_role("button", name="Memory").click()  # descending
    first = page.locator("#catalog-table tbody tr").first.get_attribute("data-gpu")
    assert first == "apple-m3-ultra"  # 512 GB unified (384 GiB for its GPU), then the MI355X
    page.get_by_label("Filter the table").fill("4090")
    visible = page.locator("#catalog-table tbody tr:visible")
    assert visible.count() == 1
    shot(page, "catalog-phone")


def test_keyboard_reaches_the_content_first(page):
    page.goto(page.base + "/memory")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.className")
    assert focused == "skip"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('main') !== null")


def test_pages_without_javascript(browser, server):
    """The forms work with scripts off: filling and submitting the VRAM selector's GET form
    reaches the result page. Its own context with scripts off, in the shared browser."""
    context = browser.new_context(java_script_enabled=False, locale="en-US")
    try:
        tab = context.new_page()
        tab.goto(server + "/memory")
        assert tab.evaluate("1 + 1") == 2  # evaluate works; page scripts do not
        assert "js" not in (tab.get_attribute("html", "class") or "")  # app.js did not run
        tab.fill("#f-model", "llama-3.1-70b")
        tab.fill("#f-quant", "q4_k_m")
        tab.fill("#f-context", "8k")
        tab.click("#memory-form button[type=submit]")
        tab.wait_for_load_state()
        assert "model=llama-3.1-70b" in tab.url
        weights = tab.locator('tr[data-term="weights"] td.num').first.inner_text()
        assert 41 <= float(weights) <= 45  # S27: ~43 GB for 70B in 4-bit
    finally:
        context.close()


def test_api_docs_load_from_local_assets(page):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page.base + "/docs")
    page.wait_for_selector(".opblock", timeout=15000)
    assert page.locator(".opblock").count() >= 12
    assert all(u.startswith(page.base) or u.startswith("data:") for u in requests), requests
