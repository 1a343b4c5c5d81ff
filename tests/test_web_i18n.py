"""English and French: every message in both catalogs, placeholders intact, numbers, money and
dates formatted per locale, and no English left in French pages outside marked passages."""

from __future__ import annotations

import re
import sys
import tomllib
from datetime import date
from html.parser import HTMLParser
from importlib import resources

import pytest

from whichgpu.units import Money
from whichgpu.web import i18n
from whichgpu.web.explain import phrase
from whichgpu.web.messages import extract

PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


@pytest.fixture(scope="module")
def template():
    return extract()


def test_every_message_has_a_french_translation(template):
    fr = i18n.translations("fr")
    missing = [m.id for m in template if m.id and isinstance(m.id, str)
               and fr.gettext(m.id) == m.id and m.id not in SAME_IN_FRENCH]
    assert not missing, missing


SAME_IN_FRENCH = {"%(low)s – %(high)s", "%(n)s × %(gpu)s", "Activations", "Architecture",
                  "Compute capability", "Fine-tuning", "Fragmentation", "GPU", "Gradients",
                  "Logits", "Pareto", "Source", "Sources", "Spot", "TDP", "Total", "budget",
                  "images", "images/min", "spot", "tokens/s", "Utilisation"}


def test_placeholders_survive_translation(template):
    fr = i18n.translations("fr")
    for m in template:
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        for i, msgid in enumerate(ids):
            text = fr.ngettext(ids[0], ids[1], 1 + i) if len(ids) == 2 else fr.gettext(msgid)
            assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(msgid)), msgid
            assert text.count("%%") == msgid.count("%%"), msgid


def test_catalogs_are_data_files_with_no_fuzzy_entries():
    from babel.messages.pofile import read_po

    for lang in i18n.LANGS:
        po = resources.files("whichgpu.web").joinpath(f"locales/{lang}/LC_MESSAGES/messages.po")
        with po.open("rb") as f:
            catalog = read_po(f, locale=lang)
        assert not [m.id for m in catalog if m.id and m.fuzzy], lang


def test_phrase_patterns_compile_and_use_their_groups():
    path = resources.files("whichgpu.web").joinpath("locales/fr/phrases.toml")
    for p in tomllib.loads(path.read_text("utf-8"))["phrase"]:
        groups = set(re.compile(p["en"]).groupindex)
        assert set(re.findall(r"\{(\w+)\}", p["text"])) <= groups, p["en"]


@pytest.mark.parametrize(("text", "french"), [
    ("fp8 KV cache (--kv-dtype fp8)", "cache KV en fp8 (--kv-dtype fp8)"),
    ("context 4,096 tokens", "contexte de 4\u202f096 tokens"),
    ("S9: $0.10/kWh", "S9\u00a0: 0,10\u00a0$US/kWh"),
    ("Q4 (S13): under 100 h/month, always rent.",
     "Q4 (S13)\u00a0: sous 100 h/mois, louez toujours."),
])
def test_engine_phrases_in_french(text, french):
    assert phrase(i18n.locale("fr"), text) == french


def test_engine_article_rules_all_have_french():
    from whichgpu.advise.checklist import ChecklistAnswers, article_rules

    fr = i18n.locale("fr")
    for hours in (50, 300, 600):
        for horizon in (6, 24):
            for budget in (Money(0.5, "USD"), Money(4, "USD")):
                answers = ChecklistAnswers("inference", "x", budget, hours, horizon)
                for billions in (7, 40, 400):
                    for rule in article_rules(answers, billions):
                        assert phrase(fr, rule) is not None, rule


def test_money_numbers_and_dates_per_locale():
    en, fr = i18n.locale("en"), i18n.locale("fr")
    assert en.money(Money(1234.56, "EUR")) == "€1,234.56"
    assert fr.money(Money(1234.56, "EUR")) == "1\u202f234,56\u00a0€"
    assert en.money(Money(0.0018, "USD")) == "$0.0018"
    assert fr.number(8192) == "8\u202f192"
    assert fr.gb(43.0e9) == "43,0\u00a0Go" and en.gb(43.0e9) == "43.0\u00a0GB"
    assert en.percent(0.6) == "60%" and fr.percent(0.6) == "60\u00a0%"
    assert fr.duration(12000) == "3\u00a0h 20\u00a0min"
    assert fr.duration(3 * 86400) == "3\u00a0j"
    assert en.date(date(2026, 11, 12)) == "Nov 12, 2026"
    assert fr.date(date(2026, 11, 12)) == "12 nov. 2026"


@pytest.mark.parametrize(("header", "lang"), [
    ("fr-FR,fr;q=0.9,en;q=0.8", "fr"), ("en-GB,en;q=0.9", "en"), ("de-DE,fr;q=0.5", "fr"),
    ("de", "en"), ("", "en"), ("fr;q=0,en;q=0.1", "en"), ("garbage;;q=x", "en")])
def test_accept_language(header, lang):
    assert i18n.negotiate(None, None, header) == lang


def test_query_beats_cookie_beats_header():
    assert i18n.negotiate("en", "fr", "fr") == "en"
    assert i18n.negotiate(None, "fr", "en") == "fr"
    assert i18n.negotiate("xx", None, "fr") == "fr"


class _Text(HTMLParser):
    """Visible text outside elements marked lang="en" (and outside code)."""

    VOID = frozenset({"br", "input", "meta", "link", "img", "option", "hr", "circle", "line",
                      "rect", "path", "source"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        english = dict(attrs).get("lang") == "en" or tag in ("pre", "code", "script", "style")
        self.stack.append((tag, english))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if data.strip() and not any(e for _, e in self.stack):
            self.text.append(data.strip())


ENGLISH = re.compile(r"\b(the|and|with|which|would|does not|from|is|are)\b")


@pytest.mark.parametrize("url", [
    "/?task=image&model=flux.1-dev&quant=fp8&amount=1000&unit=images&prices=vramfarm-2026-11",
    "/?task=lora&model=llama-3.1-8b&amount=2000&unit=steps&hours_per_month=300"
    "&horizon_months=24&prices=article-000",
    "/memory?model=llama-3.1-70b&quant=q4_k_m&context=8k&gpu=rtx-4090",
    "/memory?model=flux.1-dev&task=image", "/gpus", "/gpus/rtx-4090", "/cost",
    "/rent-or-buy", "/prices?gpu=h100", "/?model=bogus"])
def test_french_pages_have_no_unmarked_english(web, url):
    html = web.get(url, params={"lang": "fr"}).text
    parser = _Text()
    parser.feed(html)
    leaks = [t for t in parser.text if ENGLISH.search(t)]
    assert not leaks, leaks


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
