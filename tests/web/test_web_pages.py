"""The pages answer the article question each exists for, in English and French, without
JavaScript, and show bad input as a message next to the form (422), never a traceback."""

from __future__ import annotations

import re

import pytest

from whichgpu.cost.ownership import MONEY_CAPS_USD

PAGES = ["/", "/memory", "/gpus", "/gpus/rtx-4090", "/cost", "/rent-or-buy", "/prices"]
FLUX = "/?task=image&model=flux.1-dev&quant=fp8&amount=1000&unit=images&prices=vramfarm-2026-11"
S27 = "/memory?model=llama-3.1-70b&quant=q4_k_m&context=8k"


def rows(html: str, table_class: str) -> list[str]:
    """The data-gpu of each row of a table, in order."""
    table = re.search(rf'<table[^>]*class="{table_class}".*?</table>', html, re.S).group(0)
    return re.findall(r'<tr[^>]*data-gpu="([^"]+)"', table)


@pytest.mark.parametrize("url", PAGES)
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_every_page_renders_in_both_languages(web, url, lang):
    r = web.get(url, params={"lang": lang})
    assert r.status_code == 200, r.text[:500]
    assert f'<html lang="{lang}">' in r.text
    assert "Traceback" not in r.text
    assert r.headers["content-security-policy"].startswith("default-src 'self'")


@pytest.mark.parametrize("url", PAGES)
def test_every_asset_is_local(web, url):
    html = web.get(url).text
    for attr in re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="([^"]+)"', html):
        assert attr.startswith("/"), attr
    for asset in ("/static/style.css", "/static/app.js", "/static/favicon.svg"):
        assert web.get(asset).status_code == 200


def test_language_from_accept_language_then_cookie(web):
    assert '<html lang="fr">' in web.get("/", headers={"accept-language": "fr-FR,fr;q=0.9"}).text
    assert '<html lang="en">' in web.get("/", headers={"accept-language": "de, en;q=0.5"}).text
    web.get("/?lang=fr")  # the switch sets a cookie
    assert '<html lang="fr">' in web.get("/gpus").text
    assert "Catalogue des GPU" in web.get("/gpus").text


def test_the_switch_keeps_the_question(web):
    html = web.get(S27).text
    link = re.search(r'<a href="([^"]+)" hreflang="fr"', html).group(1).replace("&amp;", "&")
    assert "model=llama-3.1-70b" in link and "lang=fr" in link


def test_vram_selector_shows_the_s27_figure(web):
    html = web.get(S27).text
    weights = re.search(r'<tr data-term="weights"><th scope="row">Weights</th>'
                        r'<td class="num">([\d.]+)</td>', html)
    assert 41 <= float(weights.group(1)) <= 45  # S27: 70B 4-bit ~43 GB + cache
    assert "KV cache" in html and "<svg" in html
    assert "rtx-a6000" in html  # a 48 GB card holds it (S27)


def test_vram_selector_in_french_uses_french_numbers_and_units(web):
    html = web.get(S27 + "&lang=fr").text
    assert "Sélecteur de VRAM" in html
    assert re.search(r"4[0-9],[0-9]\u00a0Go", html)  # '43,0 Go'
    assert "Poids" in html


def test_vram_selector_says_what_would_make_it_fit(web):
    html = web.get(S27 + "&gpu=rtx-4090").text
    assert "Does not fit on rtx-4090" in html
    assert "What would make it fit" in html


def test_vram_selector_accepts_a_pasted_config(web):
    config = ('{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, '
              '"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, '
              '"vocab_size": 128256, "max_position_embeddings": 131072}')
    r = web.post("/memory", data={"config": config, "context": "8k"})
    assert r.status_code == 200
    assert "per GPU" in r.text and "GPUs that hold it" in r.text


def test_vram_selector_bad_config_is_a_message(web):
    r = web.post("/memory", data={"config": "{not json"})
    assert r.status_code == 422
    assert "not valid JSON" in r.text
    assert "{not json" in r.text  # the text is kept for correcting


def test_advisor_flux_4090_ranks_above_a100_and_h100(web):
    html = web.get(FLUX).text
    order = [g for g in rows(html, "options") if g in ("rtx-4090", "a100-80gb-sxm", "h100-sxm")]
    assert order and order[0] == "rtx-4090"  # S25
    only = web.get(FLUX + "&only=rtx-4090,a100-80gb-sxm,h100-sxm").text
    assert rows(only, "options")[0] == "rtx-4090"
    assert "Excluded, and why" in html and "<svg" in html and "Pareto" in html


def test_advisor_answers_rent_or_buy_from_questions_4_and_5(web):
    html = web.get("/?task=lora&model=llama-3.1-8b&amount=2000&unit=steps"
                   "&hours_per_month=50&horizon_months=6&prices=article-000").text
    assert "Rent it." in html
    assert "Q4 (S13): under 100 h/month, always rent." in html


def test_advisor_bad_input_keeps_the_form_and_says_why(web):
    r = web.get("/?model=bogus-model&amount=1000")
    assert r.status_code == 422
    assert 'role="alert"' in r.text and "unknown model" in r.text
    assert 'value="bogus-model"' in r.text


def test_advisor_in_french(web):
    html = web.get(FLUX + "&lang=fr").text
    assert "Quel GPU pour cette tâche" in html
    assert "l’emporte" in html
    assert re.search(r"\d,\d\d\u00a0€", html)  # '3,89 €'


def test_catalog_sorts_and_filters_on_the_server(web):
    html = web.get("/gpus?prices=article-000&precision=article-000:fp16&priced_only=on").text
    order = rows(html, "catalog")
    s2 = [g for g in order if g in ("rtx-4090", "b200", "a100-80gb-sxm", "h100-sxm", "h200-sxm",
                                    "l40s")]
    assert s2 == ["rtx-4090", "b200", "a100-80gb-sxm", "h100-sxm", "h200-sxm", "l40s"]  # S2
    by_memory = rows(web.get("/gpus?sort=memory").text, "catalog")
    # the 512 GB M3 Ultra (384 GiB for its GPU) first, then the 288 GB MI355X / GB300
    assert by_memory[0] == "apple-m3-ultra" and by_memory[1] in ("mi355x", "gb300")


def test_gpu_page_has_every_spec_with_its_source_and_best_uses(web):
    html = web.get("/gpus/h100-sxm").text
    assert "Specifications" in html and "Source" in html
    assert "What the articles say it is best for" in html
    assert "S24" in html
    fr = web.get("/gpus/h100-sxm?lang=fr").text
    assert "Caractéristiques" in fr


def test_unknown_gpu_page_is_a_clear_error(web):
    r = web.get("/gpus/h10", headers={"accept": "text/html"})
    assert r.status_code == 422
    assert "did you mean" in r.text


def test_cost_page_compares_the_article_cards_with_ranges(web):
    html = web.get("/cost").text  # default: 1,000 Flux images on the article's three cards
    order = rows(html, "cost-table")
    assert order[0] == "rtx-4090"
    assert set(order) == {"rtx-4090", "a100-80gb-sxm", "h100-sxm"}
    assert html.count("<svg") >= 2  # time and cost ranges


def test_rent_or_buy_page_marks_the_break_even(web):
    html = web.get("/rent-or-buy?gpu=h100-sxm&purchase_price=25000USD&rent_price=3.15USD"
                   "&hours_per_month=730").text
    assert "break-even" in html.lower()
    assert 'class="marker"' in html  # the break-even line on the chart
    assert re.search(r'id="break-even-capital">7,937\u00a0h<', html)  # S11: 25000 / 3.15


def test_rent_or_buy_every_input_is_editable(web):
    html = web.get("/rent-or-buy").text
    for name in ("purchase_price", "rent_price", "hours_per_month", "years", "kwh_price",
                 "tdp", "load_factor", "pue", "cooling_per_hour", "maintenance_per_year",
                 "host_share", "resale_value", "prices", "currency", "gpu"):
        assert f'name="{name}"' in html, name


def test_rent_or_buy_bad_input_is_a_message_in_the_pages_words(web):
    r = web.get("/rent-or-buy?gpu=h100-sxm&kwh_price=cheap")
    assert r.status_code == 422
    assert "Electricity per kWh: cannot read &#39;cheap&#39; as money" in r.text
    assert "--kwh-price" not in r.text  # the page names its own field, not the CLI flag


def test_prices_page_shows_age_source_and_history(web):
    html = web.get("/prices?gpu=rtx-4090").text
    assert "Age" in html and "vramfarm-2026-11" in html
    assert "Price history" in html


def test_every_form_control_has_a_label(web):
    for url in PAGES:
        html = web.get(url).text
        ids = re.findall(r'<(?:input|select|textarea)[^>]*\sid="([^"]+)"', html)
        labels = set(re.findall(r'<label for="([^"]+)"', html))
        controls = re.findall(r'<(?:input|select|textarea)\b[^>]*>', html)
        for c in controls:
            if 'type="hidden"' in c:
                continue
            assert 'id="' in c, c
        assert set(ids) <= labels, (url, set(ids) - labels)


def test_not_found_is_a_page(web):
    r = web.get("/no-such-page", headers={"accept": "text/html"})
    assert r.status_code == 404 and "Page not found" in r.text


def test_advisor_hourly_budget_as_a_bare_number_uses_the_prices_currency(web):
    html = web.get(FLUX + "&max_price_per_hour=1").text  # question 3: under €1/h
    order = rows(html, "options")
    assert order and all(g == "rtx-4090" for g in order[:1])
    assert "hourly budget" in html  # the dearer GPUs are excluded for the price


def test_out_of_range_input_on_a_page_is_said_with_the_fields_label(web):
    r = web.get("/memory?model=llama-3.1-8b&batch=0")
    assert r.status_code == 422
    assert "Batch must be a whole number &gt;= 1, got 0" in r.text
    assert "Input should be" not in r.text
    fr = web.get("/rent-or-buy?gpu=h100-sxm&years=40&lang=fr")
    assert fr.status_code == 422
    assert "Années doit être supérieur à 0 et d’au plus 30, reçu 40" in fr.text


# ------------------------------------------------------------------ huge numbers

HUGE = ["/memory?model=llama-3.1-8b&context=1e30", "/cost?amount=1e30",
        "/?model=llama-3.1-8b&amount=1e300", "/?model=llama-3.1-8b&amount=1e300&lang=fr",
        *[f"/rent-or-buy?{name}=1e25USD" for name in (
            "rent_price", "kwh_price", "cooling_per_hour", "purchase_price", "host_share",
            "maintenance_per_year", "resale_value")],
        "/rent-or-buy?rent_price=1e25USD&lang=fr", "/cost?amount=1e30&lang=fr"]


@pytest.mark.parametrize("url", HUGE)
def test_huge_numbers_are_a_message_not_a_500(web, url):
    """These addresses answered 500 (decimal.InvalidOperation while formatting)."""
    r = web.get(url)
    assert r.status_code == 422, r.text[:300]
    assert 'role="alert"' in r.text and "internal error" not in r.text
    # the bound is named, in the page's language
    assert re.search(r"must be at most|beyond what whichgpu models|is above the \S+ bound|"
                     r": au plus|d’au plus|dépasse", r.text)


@pytest.mark.parametrize("url", [
    "/cost?amount=999T", "/?model=llama-3.1-8b&amount=999T&unit=tokens",
    f"/rent-or-buy?purchase_price={MONEY_CAPS_USD['purchase_price'][0]:.0f}USD",
    f"/rent-or-buy?kwh_price={MONEY_CAPS_USD['kwh_price'][0]:g}USD",
    "/memory?params=100B&context=10M&allow_long_context=true"])
def test_the_largest_accepted_numbers_render(web, url):
    r = web.get(url)
    assert r.status_code == 200, r.text[:300]
    assert 'id="results"' in r.text


# ------------------------------------------------------------------ contrast (WCAG 2.1 AA)

def _luminance(hex_colour: str) -> float:
    h = hex_colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    channels = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula_matches_wcag_examples():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


@pytest.fixture(scope="module")
def css():
    from importlib import resources

    text = resources.files("whichgpu.web").joinpath("static/style.css").read_text("utf-8")
    root = re.search(r":root\s*\{(.*?)\}", text, re.S).group(1)
    colours = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})", root))

    def colour(value: str) -> str:
        m = re.fullmatch(r"var\(--([\w-]+)\)", value.strip())
        return colours[m.group(1)] if m else value.strip()

    return text, colours, colour


BACKGROUNDS = ("--bg", "--panel", "#eff6ff", "#fef2f2")  # page, panels, verdict, error box


def test_keyboard_focus_ring_has_3_to_1_on_every_background(css):
    """WCAG 1.4.11: the focus outline is a UI graphic; it sits over the page or a panel."""
    text, colours, colour = css
    rule = re.search(r"focus-visible[^{]*\{([^}]*)\}", text).group(1)
    ring = colour(re.search(r"outline:\s*\d+px solid ([^;]+);", rule).group(1))
    for bg in BACKGROUNDS:
        background = colours[bg[2:]] if bg.startswith("--") else bg
        assert contrast(ring, background) >= 3.0, (ring, background)


@pytest.mark.parametrize(("fg", "bg", "minimum"), [
    ("--fg", "--bg", 4.5), ("--fg", "--panel", 4.5), ("--muted", "--bg", 4.5),
    ("--muted", "--panel", 4.5), ("--accent", "--bg", 4.5), ("--accent", "--panel", 4.5),
    ("--accent", "#eff6ff", 4.5), ("--accent-fg", "--accent", 4.5), ("--ok", "--bg", 4.5),
    ("--bad", "--bg", 4.5), ("--warn", "--bg", 4.5), ("#7f1d1d", "#fef2f2", 4.5),
    ("#f9fafb", "#111827", 4.5),
    *[(f"--c{i}", "--bg", 3.0) for i in range(10)],  # chart series (graphics: 3:1)
    ("#6b7280", "--bg", 3.0),  # input borders, chart frame, plain points and whiskers
])
def test_text_and_graphics_colours_meet_aa(css, fg, bg, minimum):
    _, colours, _ = css

    def value(c: str) -> str:
        return colours[c[2:]] if c.startswith("--") else c

    assert contrast(value(fg), value(bg)) >= minimum, (fg, bg)


def test_plain_chart_points_and_whiskers_use_the_darker_grey(css):
    text, _, _ = css
    for selector in (r"svg\.chart \.pt \{", r"svg\.chart \.whisker \{"):
        rule = re.search(selector + r"([^}]*)\}", text).group(1)
        grey = re.search(r"(?:fill|stroke):\s*(#[0-9a-fA-F]{6})", rule).group(1)
        assert contrast(grey, "#ffffff") >= 3.0, selector
