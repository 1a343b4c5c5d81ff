"""Issue 32's "Done when": every recommend question of the answer set (tests/answer_set.py:
the question classes the command line is tested on: tokens, images, videos, steps, training
tokens, users, a daily volume, a request rate with latency targets, no amount, a price set,
a currency, spot, a deadline, an owned card and its count, rank by time) is asked on the
advisor through its own controls, in a real browser, in English and in French, and gets
the answer of the REST API (which tests/answers/test_answers_parity.py holds to ``--json``): the
same first option, at the same cost."""

from __future__ import annotations

import pytest

from answer_set import QUESTIONS
from browser_forms import fill_form
from browser_session import _reason

pytestmark = pytest.mark.skipif(_reason is not None, reason=_reason or "")

RECOMMEND = {k: f for k, (command, f) in QUESTIONS.items() if command == "recommend"}
UNITS = ("tokens", "images", "videos", "steps", "train_tokens", "users", "tokens_per_day")


# The best row's GPU, and its cost (serving: per 1M output tokens; ranked by the price per
# hour: the price), read in one round trip.
BEST = """() => {
  const row = document.querySelector('tr.best');
  if (!row) return null;
  const table = document.querySelector('table.options');
  const cell = row.querySelector('td.cost') || row.querySelector('td.price');
  return {gpu: row.getAttribute('data-gpu'), cost: cell.getAttribute('data-sort'),
          serving: (table.getAttribute('class') || '').includes('serving')};
}"""


def _steps(fields: dict) -> list[tuple[str, str]]:
    """The controls to set and their values, in the order a person sets them."""
    unit = next((u for u in UNITS if u in fields), None)
    steps = [("task", fields.get("task", "inference")), ("model", fields["model"])]
    if unit:
        steps += [("unit", unit), ("amount", str(fields[unit]))]
    steps += [(name, "true" if value is True else str(value)) for name, value in fields.items()
              if name not in ("task", "model", *UNITS)]
    return steps


def _ask(tab, fields: dict) -> list[str]:
    """Fill the advisor's form as a person would (its controls, by their ids) and submit;
    what could not be filled, if anything (then nothing is submitted)."""
    wrong = fill_form(tab, _steps(fields), "#advisor-form", unfold=True)
    if wrong:
        return wrong
    with tab.expect_navigation():
        tab.click("#advisor-form button[type=submit]")
    return []


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_every_recommend_question_class_gets_the_apis_answer(browser, server, lang):
    ctx = browser.new_context(viewport={"width": 1366, "height": 900},
                              locale=f"{lang}-{lang.upper()}")
    tab = ctx.new_page()
    wrong: dict[str, str] = {}
    for name, fields in RECOMMEND.items():
        tab.goto(f"{server}/?lang={lang}")
        cannot = _ask(tab, fields)
        if cannot:
            wrong[name] = "; ".join(cannot)
            continue
        api = ctx.request.get(f"{server}/api/v1/recommend", params={
            k: ("true" if v is True else str(v)) for k, v in fields.items()}).json()
        best = api["options"][0]
        page = tab.evaluate(BEST)
        if page is None:
            wrong[name] = "no answer: " + tab.locator("main").inner_text()[:300]
            continue
        page_cost = float(page["cost"])
        api_cost = (best["cost_per_million_tokens"]["output"]["amount"] if page["serving"]
                    else best["cost"]["typical"]["amount"])
        # the JSON writes money to 6 decimals; the page keeps the full float in data-sort
        if page["gpu"] != best["gpu"] or abs(page_cost - api_cost) > 5.01e-7:
            wrong[name] = f"page {page['gpu']} {page_cost} != api {best['gpu']} {api_cost}"
    ctx.close()
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())
