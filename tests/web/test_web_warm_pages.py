"""The server's warm-up renders the advisor and VRAM pages once per language (issue 27: the
first advisor page after start): what only a page uses (charts, the number and money words
of each language, the explanations) is loaded before the first visitor, not by them."""

from __future__ import annotations

import gc
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # renders four whole pages (~1.5 s of CPU)


def test_warm_renders_each_page_in_each_language_and_freezes_start_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from whichgpu.web import i18n, pages, warm

    rendered: list[tuple[str, str, int]] = []
    real = pages.render

    def spy(request: Any, name: str, context: dict[str, Any], status: int = 200) -> Any:
        response = real(request, name, context, status)
        rendered.append((name, request.state.lang, response.status_code))
        return response

    monkeypatch.setattr(pages, "render", spy)
    try:
        warm.warm()
        frozen = gc.get_freeze_count()
    finally:
        gc.unfreeze()  # the rest of the session collects as before
    assert frozen > 0  # start-up's objects are out of the collector's sight
    for lang in i18n.LANGS:
        assert ("advisor.html", lang, 200) in rendered
        assert ("memory.html", lang, 200) in rendered


def test_the_warm_pages_answer_a_question() -> None:
    """Each page the warm-up renders carries an answer (not the empty form), in French too."""
    from whichgpu.web import warm

    for path, page in warm._pages():
        html = bytes(page(warm._request(path, "fr")).body).decode()
        assert '<html lang="fr"' in html
        assert '<section id="results"' in html, path  # an answer, not the empty form
