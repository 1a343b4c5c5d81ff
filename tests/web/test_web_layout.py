"""Issue 17, in a real browser (Debian's Chromium, as tests/web/test_web_browser.py): at 360 and
390 px no page scrolls sideways, in English and French; chart text stays >= 11 px on screen
and no label covers another label or a dot, on a phone and on a 1366 x 768 laptop; after a
submit the answer is on screen and focused.

Each test reproduces a defect of the issue and fails on the code before its fix (pages 465 to
588 px wide on a 390 px phone, chart labels at about 6 px, the answer starting near y = 900).
"""

from __future__ import annotations

import sys

import pytest

from browser_forms import fill_form
from browser_session import _reason
from paths import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from screenshots import MEASURE, PAGES  # scripts/screenshots.py: the same pages

pytestmark = pytest.mark.skipif(_reason is not None, reason=_reason or "")

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
CHART_PAGES = [(n, p) for n, p in PAGES if n not in ("gpus", "gpu")]

# Every visible chart's text: its size on screen and its box; every dot's box.
CHART_GEOMETRY = """() => {
  const out = [];
  for (const svg of document.querySelectorAll('svg.chart')) {
    const r = svg.getBoundingClientRect();
    if (r.width === 0) continue;
    const scale = r.width / svg.viewBox.baseVal.width;
    const texts = [], dots = [];
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const b = t.getBoundingClientRect();
      texts.push({text: t.textContent, cls: t.getAttribute('class') || '',
                  px: parseFloat(getComputedStyle(t).fontSize) * scale,
                  box: [b.left, b.top, b.right, b.bottom]});
    }
    for (const c of svg.querySelectorAll('circle')) {
      const b = c.getBoundingClientRect();
      dots.push([b.left, b.top, b.right, b.bottom]);
    }
    out.push({title: svg.querySelector('title').textContent,
              svg: [r.left, r.top, r.right, r.bottom], texts, dots});
  }
  return out;
}"""


class _Done:
    """What a test closes when it is done with its tab: the tab is kept for the file's next
    test on the same kind of screen, its cookies and storage cleared and its page left."""

    def __init__(self, tab) -> None:
        self.tab = tab

    def close(self) -> None:
        self.tab.evaluate("() => { sessionStorage.clear(); localStorage.clear(); }")
        self.tab.context.clear_cookies()
        self.tab.goto("about:blank")


# One tab per browser and kind of screen (a phone's: mobile and touch, or a desktop's at any
# size), kept for the whole file: a new context and tab cost about 0.5 CPU-s more than the
# page load itself (Chromium starts a renderer for each; measured 0.76 against 0.25 CPU-s,
# 2026-12-07), and the file's 31 tests each made one. The entry keeps its browser alive: a
# worker that runs the file in parts (conftest.SPLIT) launches a browser per part, and a
# closed one's id could otherwise come back for the next and find its closed tab.
_TABS: dict[tuple[int, bool], tuple[object, object, dict[str, list[str]]]] = {}


def _tab(browser, viewport, server):
    """The tab for ``viewport`` (its size set), and the page and console errors it shows
    from now on (a refused input's 422 page left out)."""
    mobile = viewport is PHONE
    key = (id(browser), mobile)
    if key not in _TABS:
        ctx = browser.new_context(viewport=viewport, locale="en-US", is_mobile=mobile,
                                  has_touch=mobile)
        tab = ctx.new_page()
        sink: dict[str, list[str]] = {"errors": []}
        tab.on("pageerror", lambda e: sink["errors"].append(str(e)))
        tab.on("console", lambda m: sink["errors"].append(m.text) if m.type == "error"
               and "status of 422" not in m.text else None)  # a refused input is a 422 page
        _TABS[key] = (browser, tab, sink)
    _, tab, sink = _TABS[key]
    if tab.url != "about:blank":  # type: ignore[attr-defined]
        _Done(tab).close()  # a test that failed left it on its page
    tab.set_viewport_size(viewport)  # type: ignore[attr-defined]
    errors: list[str] = []
    sink["errors"] = errors
    return _Done(tab), tab, errors


def _url(server, path: str, lang: str) -> str:
    return f"{server}{path}{'&' if '?' in path else '?'}lang={lang}"


def _cross(a, b, tol: float = 1.0) -> bool:
    return (min(a[2], b[2]) - max(a[0], b[0]) > tol
            and min(a[3], b[3]) - max(a[1], b[1]) > tol)


# answers whose tables only some questions show, measured on the phone only: the API
# comparison of a daily volume (seven columns; it scrolled the page to 722-786 px on a 390 px
# phone before its table was put in a scrolling region, 2026-12-07)
PHONE_ONLY = (("advisor-vs-api-daily",
               "/?model=llama-3.3-70b&quant=fp8&tokens_per_day=1.7M&vs_api=true"),)


@pytest.mark.parametrize("width", [360, 390])
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_no_page_scrolls_sideways_on_a_phone(browser, server, width, lang):
    """Was: /rent-or-buy 588 px, the advisor 547 px, /gpus/rtx-4090 577 px, French /memory
    401 px on a 390 px phone (a fieldset is min-content wide, a select as its longest option,
    a long source URL does not wrap)."""
    ctx, tab, errors = _tab(browser, {"width": width, "height": 800}, server)
    wide = {}
    for name, path in (*PAGES, *PHONE_ONLY):
        tab.goto(_url(server, path, lang))
        m = tab.evaluate(MEASURE, width)
        if m["scroll"] > width + 1:
            wide[name] = (m["scroll"], m["over"][:3])
    ctx.close()
    assert not wide, wide
    assert not errors, errors


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_chart_text_is_readable_and_no_label_covers_another(browser, server, viewport, lang):
    """Was: 12 px text in a 720 px drawing squeezed to 370 px (about 6 px on screen);
    cost-vs-time labels on top of each other and of other dots; the break-even label across
    the rent line."""
    ctx, tab, _ = _tab(browser, viewport, server)
    problems: list[str] = []
    seen = 0
    for name, path in CHART_PAGES:
        tab.goto(_url(server, path, lang))
        for chart in tab.evaluate(CHART_GEOMETRY):
            seen += 1
            where = f"{name}/{chart['title']}"
            texts = chart["texts"]
            for t in texts:
                if t["px"] < 11:
                    problems.append(f"{where}: {t['text']!r} at {t['px']:.1f} px")
                s, b = chart["svg"], t["box"]
                if b[0] < s[0] - 1 or b[2] > s[2] + 1:
                    problems.append(f"{where}: {t['text']!r} cut at the chart's edge")
            for i, a in enumerate(texts):
                for b in texts[i + 1:]:
                    if _cross(a["box"], b["box"]) and "marker-label" not in (a["cls"],
                                                                             b["cls"]):
                        problems.append(f"{where}: {a['text']!r} over {b['text']!r}")
            for t in texts:
                if t["cls"] in ("pt-label", "end-label"):
                    for d in chart["dots"]:
                        if _cross(t["box"], d, 2.0):
                            problems.append(f"{where}: {t['text']!r} over a dot")
                            break
    ctx.close()
    assert seen >= 6  # the memory bar, cost vs time (2), time and cost ranges, rent vs own
    assert not problems, problems[:10]


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_the_answer_is_on_screen_and_focused_after_submitting(browser, server, viewport,
                                                              lang):
    """Was: on a 1366 x 768 laptop the advisor's answer started near y = 900, below the
    fold, and nothing moved to it."""
    ctx, tab, errors = _tab(browser, viewport, server)
    tab.goto(_url(server, "/?task=inference", lang))
    tab.fill("#f-model", "llama-3.1-8b")
    tab.fill("#f-amount", "1M")
    with tab.expect_navigation():
        tab.click("#advisor-form button[type=submit]")
    tab.wait_for_selector("#results")
    top = tab.evaluate("document.getElementById('results').getBoundingClientRect().top")
    assert -1 <= top < viewport["height"] / 4, top  # at the top of the screen
    assert tab.evaluate("document.getElementById('results')"
                        ".contains(document.activeElement)")
    # a bad value: the error box comes into view the same way
    tab.fill("#f-amount", "lots")
    with tab.expect_navigation():
        tab.click("#advisor-form button[type=submit]")
    top, bottom = tab.evaluate("(r => [r.top, r.bottom])(document.getElementById('error')"
                               ".getBoundingClientRect())")
    assert -1 <= top and bottom <= viewport["height"] + 1, (top, bottom)  # all of it on screen
    assert tab.evaluate("document.getElementById('error').contains(document.activeElement)")
    # reloading or following a link to a result does not jump: only a submit does
    tab.goto(_url(server, "/?task=inference&model=llama-3.1-8b&amount=1M", lang))
    assert tab.evaluate("window.scrollY") == 0
    ctx.close()
    assert not errors, errors


def test_the_rent_page_does_not_jump_while_its_inputs_update_live(browser, server):
    ctx, tab, errors = _tab(browser, LAPTOP, server)
    tab.goto(server + "/rent-or-buy")
    before = tab.locator("#break-even-hours").inner_text()
    tab.fill("#f-kwh_price", "0.40USD")
    tab.wait_for_function(
        "b => document.querySelector('#break-even-hours').innerText !== b", arg=before)
    assert tab.evaluate("window.scrollY") == 0
    ctx.close()
    assert not errors, errors


# A model and an amount per workload, typed the way a visitor would (the unit is left as
# the form sets it: the test only picks the workload).
TASKS = [("inference", "llama-3.1-8b", "1M"), ("image", "flux.1-dev", "1000"),
         ("video", "wan-2.1-14b", "10"), ("lora", "llama-3.1-8b", "2000"),
         ("qlora", "llama-3.1-8b", "2000"), ("full-ft", "llama-3.1-8b", "500"),
         ("image-lora", "flux.1-dev", "1000"), ("pretrain", "llama-3.1-8b", "1B")]


# the error box's text (None without one), and where the answer starts on screen
ANSWER_OR_ERROR = """() => {
  const error = document.getElementById('error');
  const results = document.getElementById('results');
  return [error ? error.innerText : null, results ? results.getBoundingClientRect().top : null];
}"""


BOTH = pytest.mark.parametrize(("viewport", "lang"), [(LAPTOP, "en"), (LAPTOP, "fr"),
                                                    (PHONE, "en"), (PHONE, "fr")],
                               ids=["laptop-en", "laptop-fr", "phone-en", "phone-fr"])


@BOTH
def test_every_workload_submits_from_the_advisor_and_its_answer_is_in_view(
        browser, server, viewport, lang):
    """Was: choosing image generation left "Of what" at tokens, so 1,000 FLUX images
    answered "--tokens, --users and --tokens-per-day are for LLM inference" (in English on
    the French page too); LoRA and pre-training failed the same way."""
    ctx, tab, errors = _tab(browser, viewport, server)
    failed = {}
    for task, model, amount in TASKS:
        tab.goto(_url(server, "/", lang))
        # the three controls set in one round trip, as Playwright's fill and select_option set
        # them (tests/browser_forms.py), then the unit the workload left
        cannot = fill_form(tab, [("task", task), ("model", model), ("amount", amount)],
                           "#advisor-form")
        if cannot:
            failed[task] = ("", "; ".join(cannot))
            continue
        unit = tab.evaluate("document.getElementById('f-unit').value")
        with tab.expect_navigation():
            tab.click("#advisor-form button[type=submit]")
        error, top = tab.evaluate(ANSWER_OR_ERROR)
        if error is not None:
            failed[task] = (unit, error)
            continue
        if top is None or not -1 <= top < viewport["height"] / 4:
            failed[task] = (unit, f"answer at y = {top}")
    ctx.close()
    assert not failed, failed
    assert not errors, errors


def test_the_unit_and_its_fields_follow_the_workload(browser, server):
    ctx, tab, _ = _tab(browser, LAPTOP, server)
    tab.goto(server + "/")
    offered = "Array.from(document.querySelectorAll('#f-unit option:not([hidden])'), o => o.value)"
    assert tab.evaluate(offered) == ["tokens", "tokens_per_day", "users"]
    assert tab.locator("#f-tokens_per_s_each").is_hidden()
    tab.select_option("#f-unit", "users")
    assert tab.locator("#f-tokens_per_s_each").is_visible()  # N users at X tokens/s each
    tab.select_option("#f-task", "image")
    assert tab.input_value("#f-unit") == "images" and tab.evaluate(offered) == ["images"]
    assert tab.locator("#f-tokens_per_s_each").is_hidden()
    assert "images" in tab.locator("#h-amount").inner_text()
    tab.select_option("#f-task", "lora")
    assert tab.evaluate(offered) == ["steps", "train_tokens"]
    assert tab.input_value("#f-unit") == "steps"
    ctx.close()


# The value set as Playwright's fill sets it (tests/browser_forms.py: the control shown and
# enabled, its input and change events), then whether the browser would submit it; None where
# the control cannot be filled or does not keep the value. One round trip, where fill and
# checkValidity were two.
VALID = """([selector, value]) => {
  const el = document.querySelector(selector);
  if (!el || !el.checkVisibility() || el.disabled || el.readOnly) return null;
  el.focus(); el.value = value;
  el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return el.value === value ? el.checkValidity() : null;
}"""


def _valid(tab, selector: str, value: str) -> bool:
    valid = tab.evaluate(VALID, [selector, value])
    assert valid is not None, f"{selector} cannot take {value!r}"
    return valid


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_decimals_submit_where_the_bounds_allow_them_and_nothing_else(browser, server, lang):
    """Was: /rent-or-buy's template escaped its attributes (step="&#34;any&#34;"), so PUE 1.3,
    a load of 0.7 or 2.5 years could not be submitted, and negative hours could."""
    ctx, tab, errors = _tab(browser, LAPTOP, server)
    tab.goto(_url(server, "/rent-or-buy?gpu=h100-sxm", lang))
    for sel, good, bad in (("#f-pue", "1.3", "0.9"), ("#f-load_factor", "0.7", "1.5"),
                           ("#f-years", "2.5", "-1"), ("#f-hours_per_month", "100.5", "-5"),
                           ("#f-tdp", "350.5", "-1")):
        assert not _valid(tab, sel, bad), (sel, bad)
        assert _valid(tab, sel, good), (sel, good)
    with tab.expect_navigation():
        tab.click("#rent-form button[type=submit]")
    assert tab.locator("#error").count() == 0
    assert "pue=1.3" in tab.url and "years=2.5" in tab.url
    # the advisor's rent-or-buy questions and a number of users at a decimal speed
    tab.goto(_url(server, "/", lang))
    assert _valid(tab, "#f-hours_per_month", "100.5") and _valid(tab, "#f-horizon_months", "2.5")
    assert not _valid(tab, "#f-hours_per_month", "-5")
    tab.select_option("#f-unit", "users")
    assert _valid(tab, "#f-tokens_per_s_each", "7.5")
    # a whole number stays whole: a batch of 1.5 sequences is refused by the browser
    tab.goto(_url(server, "/memory", lang))
    assert not _valid(tab, "#f-batch", "1.5") and _valid(tab, "#f-batch", "8")
    ctx.close()
    assert not errors, errors


def test_a_pasted_config_keeps_the_context_typed_above_it(browser, server):
    """Was: the paste form sent only the config, so a context of 32k typed in the form above
    came back as the config's default (4,096)."""
    import json
    from importlib import resources

    cfg = resources.files("whichgpu.models").joinpath("presets", "llama-3.1-8b",
                                                      "config.json").read_text("utf-8")
    ctx, tab, errors = _tab(browser, LAPTOP, server)
    tab.goto(server + "/memory")
    tab.fill("#f-context", "32k")
    tab.fill("#f-quant", "q4_k_m")
    tab.click("details.paste summary")
    tab.fill("#f-config", json.dumps(json.loads(cfg)))
    with tab.expect_navigation():
        tab.click("#paste-form button[type=submit]")
    pasted = tab.locator('tr[data-term="kv_cache"] td.num').first.inner_text()
    tab.goto(server + "/memory?model=llama-3.1-8b&context=32k&quant=q4_k_m")
    typed = tab.locator('tr[data-term="kv_cache"] td.num').first.inner_text()
    assert pasted == typed  # the same 32k cache, not 4,096 tokens' worth
    assert tab.locator("#f-context").input_value() == "32k"
    ctx.close()
    assert not errors, errors


# Each page's form with decimals typed where its fields take them, and what the address must
# then carry: (page, form, [(field, value)], [in the address]).
DECIMALS = [
    ("/", "#advisor-form", [("#f-model", "llama-3.1-8b"), ("#f-amount", "1.5M"),
                            ("#f-max_price_per_hour", "2.5USD"), ("#f-hours_per_month", "100.5"),
                            ("#f-horizon_months", "2.5")],
     ["amount=1.5M", "hours_per_month=100.5", "horizon_months=2.5"]),
    ("/?task=inference", "#advisor-form", [("#f-model", "llama-3.1-8b"), ("#f-amount", ""),
                                           ("#f-requests_per_s", "2.5"), ("#f-ttft", "1.5s")],
     ["requests_per_s=2.5", "ttft=1.5s"]),
    ("/cost?task=inference&model=llama-3.1-8b&unit=users", "#cost-form",
     [("#f-amount", "10"), ("#f-tokens_per_s_each", "7.5")], ["tokens_per_s_each=7.5"]),
    ("/memory?model=llama-3.1-8b", "#memory-form", [("#f-host_ram", "31.5GB")],
     ["host_ram=31.5GB"]),
    ("/gpus", "#gpus-form", [("#f-min_memory", "23.5GB")], ["min_memory=23.5GB"]),
    ("/rent-or-buy?gpu=h100-sxm", "#rent-form", [("#f-pue", "1.3"), ("#f-years", "2.5"),
                                                 ("#f-rent_price", "2.49USD")],
     ["pue=1.3", "years=2.5", "rent_price=2.49USD"]),
]


@BOTH
def test_decimals_submit_on_every_page(browser, server, viewport, lang):
    """Every page's form takes the decimals its fields allow (numbers and amounts with a
    unit), submits, and answers without an error, on a laptop and on a phone."""
    ctx, tab, errors = _tab(browser, viewport, server)
    failed = {}
    for path, form, fills, carried in DECIMALS:
        tab.goto(_url(server, path, lang))
        cannot = fill_form(tab, [(sel.removeprefix("#f-"), value) for sel, value in fills], form)
        if cannot:
            failed[path] = "; ".join(cannot)
            continue
        if not tab.eval_on_selector(form, "f => f.checkValidity()"):
            failed[path] = "the browser refuses the form"
            continue
        with tab.expect_navigation():
            tab.click(f"{form} button[type=submit]")
        error, _ = tab.evaluate(ANSWER_OR_ERROR)
        if error is not None:
            failed[path] = error
        elif not all(c in tab.url for c in carried):
            failed[path] = tab.url
    ctx.close()
    assert not failed, failed
    assert not errors, errors


# A refusal on every page, the export download's included (its option past the last, a
# launcher it does not know, a provider the launcher has no backend for).
REFUSED = [
    "/?model=llama-3.1-8b&amount=abc&unit=tokens",
    "/?model=llama-3.1-8b&amount=1M&objective=fast",
    "/?model=llama-3.1-8b&amount=1M&max_price_per_hour=-2",
    "/memory?model=llama-3.1-8b&batch=0", "/memory?model=nosuch",
    "/cost?task=inference&model=llama-3.1-8b&amount=abc",
    "/rent-or-buy?gpu=h100-sxm&pue=0.5", "/rent-or-buy?kwh_price=cheap",
    "/gpus?min_memory=lots", "/prices?gpu=nosuch", "/gpus/nosuch",
    "/export?task=inference&model=llama-3.1-8b&amount=1M&unit=tokens&export=dstack"
    "&export_option=9999",
    "/export?task=inference&model=llama-3.1-8b&amount=1M&unit=tokens&export=slurm",
]
# An option on Mithril, where SkyPilot opens no ports: found in the ranking itself, which moves
# as pricing does (option 1, then 4 once machines were priced as sold, then further down once
# token jobs could split over separate machines)
NO_PORTS = ("/export?task=inference&model=llama-3.1-8b&amount=1M&unit=tokens&spot=true"
            "&export=skypilot&export_option={n}")


def _no_ports_path(server: str) -> str:
    import json
    import urllib.request

    url = server + "/api/v1/recommend?model=llama-3.1-8b&tokens=1M&spot=true&top=0"
    with urllib.request.urlopen(url, timeout=120) as r:
        options = json.load(r)["options"]
    n = next(i for i, o in enumerate(options, 1)
             if (o.get("offer") or {}).get("provider") == "Mithril")
    return NO_PORTS.format(n=n)


# the error box's whole text and how many parts of it are marked English, or None without one
ERROR_BOX = """() => {
  const b = document.getElementById('error');
  return b ? [b.textContent, b.querySelectorAll('[lang=en]').length] : null;
}"""


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_no_cli_flag_in_any_web_error(browser, server, lang):
    """Was: "--export-option N", "narrow the price list with --prices", "--objective",
    "'whichgpu gpus' lists them" in English on the French page.

    The box's whole text (``textContent``: what any screen size shows, and what none does)
    at one size: the server writes the same box for a phone and a laptop, so the phone's
    run of this test read the same words again (about 8 CPU-s of the suite)."""
    ctx, tab, _ = _tab(browser, LAPTOP, server)
    said = {}
    for path in [*REFUSED, _no_ports_path(server)]:
        res = tab.goto(_url(server, path, lang))
        box = tab.evaluate(ERROR_BOX)  # one round trip for the box's text and its English
        assert res.status in (404, 422) and box is not None, (path, res.status)
        said[path] = (box[0] or "", box[1])
    ctx.close()
    flags = {p: t for p, (t, _) in said.items() if "--" in t}
    assert not flags, flags
    if lang == "fr":
        english = {p: t for p, (t, n) in said.items() if n}
        assert not english, english


def test_the_rest_api_takes_json_numbers_from_a_page(browser, server):
    """A browser's fetch with JSON numbers gets the answer the same text gets."""
    ctx, tab, errors = _tab(browser, PHONE, server)
    tab.goto(server + "/")
    same = tab.evaluate("""async () => {
      const ask = async body => {
        const r = await fetch('/api/v1/memory', {method: 'POST', body: JSON.stringify(body),
                                                 headers: {'content-type': 'application/json'}});
        return [r.status, await r.text()];
      };
      const a = await ask({model: 'llama-3.1-8b', context: 8192, batch: 2});
      const b = await ask({model: 'llama-3.1-8b', context: '8k', batch: 2});
      const bad = await ask({model: 'llama-3.1-8b', context: -5});
      return [a[0], a[1] === b[1], bad[0]];
    }""")
    ctx.close()
    assert same == [200, True, 422]
    assert not errors, errors


def test_every_french_gpu_page_and_the_serving_answer_fit_a_phone(browser, server):
    """The French research notes are longer than the English ones: no catalog GPU's French
    page, and no serving answer (its grouped table), is wider than a 360 px phone."""
    from whichgpu.catalog.gpus import default_catalog

    ctx, tab, errors = _tab(browser, {"width": 360, "height": 800}, server)
    wide = {}
    paths = [f"/gpus/{g.id}" for g in default_catalog().gpus]
    paths.append("/?task=inference&model=llama-3.1-8b&requests_per_s=20&spot=true")
    for path in paths:
        tab.goto(_url(server, path, "fr"))
        m = tab.evaluate(MEASURE, 360)
        if m["scroll"] > 361:
            wide[path] = (m["scroll"], m["over"][:2])
    ctx.close()
    assert not wide, wide
    assert not errors, errors
