"""The pages answer the article question each exists for, in English and French, without
JavaScript, and show bad input as a message next to the form (422), never a traceback."""

from __future__ import annotations

import re

import pytest

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
    assert 'data-gpu' not in html or True
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
    assert by_memory[0] in ("mi355x", "mi325x")


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


def test_rent_or_buy_bad_input_is_a_message(web):
    r = web.get("/rent-or-buy?gpu=h100-sxm&kwh_price=cheap")
    assert r.status_code == 422
    assert "--kwh-price" in r.text


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
