"""Issue 27: the templates' ``_()`` says what jinja2.ext.i18n's newstyle gettext says, in one
call, its answers for words without parameters remembered per language (bounded); and the
advisor page keeps its HTML, not its typed recommendation (measuring one for the memo's byte
bound took ~4 CPU-ms a page)."""

from __future__ import annotations

import pytest
from jinja2 import Environment, select_autoescape

from whichgpu.web import pages, services
from whichgpu.web.i18n import translations

TEMPLATES = [
    "{{ _('Prices') }}",
    "{{ _('Rank by') }} {{ _('Rank by') }}",
    "{{ _('within 5 %% of the first: a near-tie') }}",
    "{{ _('About %(time)s for %(cost)s at %(price)s/h.', time='<b>1 h</b>', cost='2 $', "
    "price=3) }}",
    "{{ _('and %(n)s more GPUs that can run it: show them all', n=4) }}",
    "{{ _('no such words in any catalog <x> & %%') }}",
    "{% autoescape false %}{{ _('no <escaping> here %%') }}{% endautoescape %}",
]


def _reference(lang: str) -> Environment:
    """jinja2's own newstyle gettext, as pages.ENV had it before."""
    env = Environment(autoescape=select_autoescape(["html"], default_for_string=True),
                      extensions=["jinja2.ext.i18n"])
    env.install_gettext_callables(  # type: ignore[attr-defined]
        translations(lang).gettext, translations(lang).ngettext, newstyle=True)
    return env


def _ours() -> Environment:
    env = Environment(autoescape=select_autoescape(["html"], default_for_string=True),
                      extensions=["jinja2.ext.i18n"])
    env.globals["_"] = pages._gettext
    return env


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_gettext_says_what_the_extension_said(lang):
    pages._SAID.clear()
    token = pages._lang.set(lang)
    try:
        for text in TEMPLATES:
            expected = _reference(lang).from_string(text).render()
            assert _ours().from_string(text).render() == expected, text
            assert _ours().from_string(text).render() == expected, text  # remembered
    finally:
        pages._lang.reset(token)
    if lang == "fr":  # the French catalog was read, not the English words kept
        token = pages._lang.set("fr")
        try:
            assert _ours().from_string("{{ _('Prices') }}").render() != "Prices"
        finally:
            pages._lang.reset(token)


def test_remembered_words_follow_the_language_and_stay_bounded(monkeypatch):
    pages._SAID.clear()
    said = {}
    for lang in ("en", "fr", "en"):
        token = pages._lang.set(lang)
        try:
            said.setdefault(lang, set()).add(_ours().from_string("{{ _('Rank by') }}").render())
        finally:
            pages._lang.reset(token)
    assert said["en"] == {"Rank by"} and said["fr"] != said["en"]  # a new language, new words
    monkeypatch.setattr(pages, "SAID_SIZE", 8)
    pages._SAID.clear()
    for i in range(50):
        assert _ours().from_string(f"{{{{ _('words {i}') }}}}").render() == f"words {i}"
        assert len(pages._SAID) <= 8


def test_the_advisor_pages_recommendation_is_not_kept(web):  # web: the memos fresh
    from whichgpu.answers import requests as r

    q = r.Recommend(model="qwen2.5-0.5b", tokens="1M", only="rtx-4090")
    answer = pages._recommend_unkept(q)
    assert answer.rec.best is not None
    assert "recommend" not in [k[0] for k in services._memo]
    services.recommend(q)  # asked elsewhere (the cost page), it is kept as before
    assert "recommend" in [k[0] for k in services._memo]
