"""Issue 17, item 7 ("French complete: every error, note and unit"): the research notes the
GPU pages show under each value are in French on the French pages, with their numbers and
sources unchanged and written the French way (was: every note in English, marked
``lang="en"``, with a line saying "1,979 there is 1 979 here")."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from whichgpu.catalog.gpus import default_catalog


def _page_before_sources(web, gpu_id: str) -> str:
    html = web.get(f"/gpus/{gpu_id}?lang=fr").text
    # the sources list names each cited document as it is titled (a bibliography)
    return html.split('<ul class="sources">')[0]


@pytest.mark.parametrize("gpu_id", [g.id for g in default_catalog().gpus])
def test_the_french_gpu_page_has_no_english_note(web, gpu_id):
    page = _page_before_sources(web, gpu_id)
    # the one English block allowed: the language switch's link to the English page
    switch = re.sub(r'<a href="[^"]*" hreflang="en" lang="en">English</a>', "", page)
    assert 'lang="en"' not in switch, re.findall(r'<[^>]*lang="en"[^>]*>[^<]{0,120}', switch)
    assert "1,979 there is 1 979 here" not in page


def _notes() -> dict[str, str]:
    """Every figure note of the catalog and its French from the engine catalog."""
    from whichgpu.web.i18n import locale
    from whichgpu.web.messages import data_strings
    from whichgpu.web.words import DATA, translated

    fr = locale("fr")
    return {text: translated(fr, DATA, text) or "" for where, text in data_strings()
            if where.startswith("gpus.toml:gpu[") and ".engines" not in where}


def _numbers(text: str, lang: str) -> Counter:
    if lang == "en":  # 1,440 and 7.7
        text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    else:  # 1 440 and 7,7 (a version such as v2.02 or NVLink 4.0 keeps its point)
        text = re.sub(r"(?<=\d)[ \u00a0\u202f](?=\d{3}(?!\d))", "", text)
        text = re.sub(r"(?<=\d),(?=\d)", ".", text)
    return Counter(re.findall(r"\d+(?:\.\d+)?", text))


def test_every_figure_note_has_french_with_the_same_numbers_and_sources():
    notes = _notes()
    assert len(notes) >= 400
    missing = [en[:80] for en, fr in notes.items() if not fr]
    assert not missing, missing[:5]
    for en, fr in notes.items():
        assert _numbers(fr, "fr") == _numbers(en, "en"), (en, fr)
        for url in re.findall(r"https?://\S+", en):
            assert url.rstrip(").,;:") in fr, (url, fr)
        for source in re.findall(r"\b(?:S\d{1,2}|nvsmi-[\w-]+|nv-[\w-]+)\b", en):
            assert source in fr, (source, fr)


def _unquoted(text: str) -> str:
    """The note without what it quotes as written ('0MiB / 183359MiB', « 180 GB »)."""
    return re.sub(r"'[^']*'|« [^»]* »", "", re.sub(r"(?<=\w)[’'](?=\w)", "", text))


def test_french_notes_write_numbers_and_units_the_french_way():
    for en, fr in _notes().items():
        said = _unquoted(fr)
        for grouped in re.findall(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?!\d)", _unquoted(en)):
            assert grouped not in said, (grouped, fr)  # 1,979 reads as 1.979 in French
        assert not re.search(r"\d (?:GB|GiB|MiB|TB)(?:/s)?\b", said), fr  # Go, Gio, Mio, To
        assert " ;" not in fr and " :" not in fr, fr  # a no-break space before ; and :
