"""Issue 32: axe-core finds no serious or critical accessibility violation on any page, in
English and French, on a phone (390 x 844) and a laptop (1366 x 768), with every
``<details>`` opened (the answers' folded tables, "More settings", "All settings").

axe-core is not fetched from a CDN: it is the ``axe.min.js`` the PyPI package
axe-playwright-python ships (the dev extra), loaded with Playwright's init script (which
the pages' Content-Security-Policy does not block, as it would an inline script tag).
"""

from __future__ import annotations

import json
import sys

import pytest

from browser_session import _reason
from paths import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from screenshots import PAGES  # scripts/screenshots.py: the pages the layout tests open

pytestmark = pytest.mark.skipif(_reason is not None, reason=_reason or "")

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
# the layout tests' pages, and the states they do not reach: an error, a serving answer (its
# "what binds" picture), an own card with llama.cpp offload, and the fits page
EXTRA = (
    ("error", "/?model=nonsense-model-xyz&amount=1M&unit=tokens"),
    ("serving", "/?task=inference&model=llama-3.1-8b&engine=vllm&requests_per_s=20"
                "&prompt_tokens=1000&output_tokens=200&ttft=2s&tpot=50ms"),
    ("own-card", "/?task=inference&model=gpt-oss-120b&amount=1M&unit=tokens&engine=llamacpp"
                 "&gpu=rtx-4090&host_ram=64GB"),
    ("fits", "/fits?gpu=rtx-3060-12gb&host_ram=64GB"),
    ("fits-empty", "/fits"),
    ("prices-all", "/prices"),
)
BLOCKING = ("serious", "critical")


def _axe_context(browser, **options):
    """A context whose every page has axe-core loaded (an init script, run as each page
    starts: the browser compiles the 570 kB script once and reuses it, where evaluating it
    on each page cost about 0.1 CPU-s a page, 2026-12-07)."""
    try:
        from axe_playwright_python.base import AXE_FILE_PATH
    except ImportError:
        pytest.fail("axe-playwright-python is not installed (pip install -e '.[dev]'): it "
                    "ships the axe-core the accessibility test injects")
    ctx = browser.new_context(**options)
    ctx.add_init_script(path=str(AXE_FILE_PATH))
    return ctx


def _violations(tab) -> list[dict]:
    tab.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    assert tab.evaluate("() => typeof window.axe !== 'undefined'"), "axe-core not loaded"
    result = tab.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return result["violations"]


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_axe_finds_no_serious_violation(browser, server, viewport, lang):
    ctx = _axe_context(browser, viewport=viewport, locale=f"{lang}-{lang.upper()}",
                       is_mobile=viewport is PHONE, has_touch=viewport is PHONE)
    tab = ctx.new_page()
    found: dict[str, list[str]] = {}
    checked = 0
    for name, path in (*PAGES, *EXTRA):
        tab.goto(f"{server}{path}{'&' if '?' in path else '?'}lang={lang}")
        for v in _violations(tab):
            if v["impact"] in BLOCKING:
                found.setdefault(name, []).append(
                    f"{v['id']} ({v['impact']}): " + json.dumps(
                        [n["target"] for n in v["nodes"][:3]]))
        checked += 1
    ctx.close()
    assert checked == len(PAGES) + len(EXTRA)
    assert not found, "\n".join(f"{k}: {v}" for k, v in found.items())


def test_axe_would_see_a_violation(browser, server):
    """The check can fail: an image without a text alternative and an unlabelled input
    added to a page are reported."""
    ctx = _axe_context(browser, viewport=LAPTOP)
    tab = ctx.new_page()
    tab.goto(f"{server}/gpus")
    tab.evaluate("""() => {
      const i = document.createElement('input'); document.querySelector('main').append(i);
      const s = document.createElement('select'); document.querySelector('main').append(s);
    }""")
    ids = {v["id"] for v in _violations(tab) if v["impact"] in BLOCKING}
    ctx.close()
    assert "label" in ids or "select-name" in ids, ids
