"""Issue 32, parity by construction: walk every field of each page's request model (the
answer layer's, as the web takes it) and fail when the page's form has no control for it and
web/controls.py's NOT_ON_PAGE gives no reason. A field added to a request model gets a control
from the model itself ("All settings"); a hand-written control takes its place."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from whichgpu.answers import requests as r
from whichgpu.answers.request import for_web
from whichgpu.web import controls

PAGES = {"advisor": ("/", "advisor-form"), "memory": ("/memory", "memory-form"),
         "fits": ("/fits", "fits-form"), "rent": ("/rent-or-buy", "rent-form"),
         "gpus": ("/gpus", "gpus-form")}


class _Form(HTMLParser):
    """The names of the controls in one form (not its hidden inputs), with how often each
    appears, and the option values of its selects."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id, self.inside = form_id, False
        self.names: list[str] = []
        self.options: dict[str, list[str]] = {}
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside:
            return
        if tag in ("input", "select", "textarea") and a.get("type") != "hidden" and a.get("name"):
            self.names.append(str(a["name"]))
            if tag == "select":
                self._select = str(a["name"])
                self.options[self._select] = []
        if tag == "option" and self._select:
            self.options[self._select].append(str(a.get("value") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        if tag == "select":
            self._select = None


def _form(web, path: str, form_id: str, lang: str = "en") -> _Form:
    html = web.get(path, params={"lang": lang}).text
    parsed = _Form(form_id)
    parsed.feed(html)
    assert parsed.names, f"no form #{form_id} on {path}"
    return parsed


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_request_field_has_a_control_or_a_reason(web, page, lang):
    path, form_id = PAGES[page]
    form = _form(web, path, form_id, lang)
    model = for_web(controls.PAGE_MODEL[page])
    excused = controls.NOT_ON_PAGE[page]
    missing = [n for n in model.model_fields if n not in form.names and n not in excused]
    assert not missing, f"{path}: no control and no reason for {missing}"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_control_appears_once_and_each_reason_is_needed(web, page):
    """A generated control never doubles a hand-written one (one id, one value), and the
    list of reasons names only fields that exist and are really left out."""
    path, form_id = PAGES[page]
    form = _form(web, path, form_id)
    twice = sorted({n for n in form.names if form.names.count(n) > 1})
    assert not twice, f"{path}: two controls for {twice}"
    fields = for_web(controls.PAGE_MODEL[page]).model_fields
    for name, why in controls.NOT_ON_PAGE[page].items():
        assert name in fields, f"NOT_ON_PAGE[{page!r}] names {name!r}, not a field"
        assert len(why) > 20, f"{name}: give the reason"
        if name != "calibration":  # drawn only where the server has a calibration profile
            assert name not in form.names, f"{path} has a control for {name}: drop its reason"


def test_the_amount_fields_are_units_of_the_amount(web):
    """The advisor's reasons say tokens, images ... are 'How much' with 'Of what': each is
    an option of 'Of what', and a question asked that way is the field's question."""
    form = _form(web, "/", "advisor-form")
    for name, why in controls.NOT_ON_PAGE["advisor"].items():
        if "'Of what'" in why:
            assert name in form.options["unit"], name


def test_a_new_request_field_gets_a_generated_control(web, monkeypatch):
    """Parity by construction: a field the page does not draw by hand is drawn from the
    model (its label, its bounds), without a template edit."""
    from typing import Annotated

    from pydantic import Field

    from whichgpu.answers.fields import Web

    class Wider(r.Gpus):
        widgets: Annotated[int | None, Field(ge=2, description="x"),
                           Web(label="Widgets per rack", max=9)] = None

    monkeypatch.setitem(controls.PAGE_MODEL, "gpus", Wider)
    html = web.get("/gpus", params={"vendor": "amd", "walk": "1"}).text
    control = re.search(r'<input id="f-widgets" name="widgets"[^>]*>', html)
    assert control, "no generated control for the new field"
    assert 'min="2"' in control.group(0) and 'max="9"' in control.group(0)
    assert '<label for="f-widgets">Widgets per rack</label>' in html


def test_generated_controls_ask_the_question(web):
    """Controls of "All settings" reach the answer: at most 1 GPU ranks single cards only,
    and the form shows the values asked (a select keeps its choice)."""
    url = "/?task=inference&model=llama-3.1-8b&amount=1M&unit=tokens&max_gpus=1&top=3"
    html = web.get(url).text
    assert re.search(r'<input id="f-max_gpus" name="max_gpus" value="1"', html)
    assert re.search(r'<input id="f-top" name="top" value="3"', html)
    table = re.search(r'<table class="options".*?</table>', html, re.S).group(0)
    labels = re.findall(r'<th scope="row"><a [^>]*>([^<]+)</a>', table)
    assert len(labels) == 3 and not any("×" in x for x in labels), labels
    html = web.get("/?task=lora&model=llama-3.1-8b&amount=200&unit=steps"
                   "&gradient_checkpointing=false").text
    select = re.search(r'<select id="f-gradient_checkpointing".*?</select>', html, re.S)
    assert select and re.search(r'<option value="false" selected>', select.group(0))
