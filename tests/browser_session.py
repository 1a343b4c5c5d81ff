"""The browser tests' shared fixtures, one of each per test process (per pytest-xdist worker):
``whichgpu serve`` in a subprocess (``server``), Playwright (``playwright_driver``), one
Chromium (``browser``) and, in it, one context and one tab for the ``page`` fixture. Starting a
server and a Chromium took about 2 s of CPU each; every browser file used to start its own
(some files one Chromium per test).

Every test opens its own context, or gets the file's tab with its cookies and storage
cleared and nothing loaded, so sharing the browser and the read-only server changes nothing a
test sees. Skipped, with the reason, where Chromium or Playwright is missing; ``.ci/run``
installs Chromium and sets WHICHGPU_REQUIRE_BROWSER=1, so in CI a missing browser fails
instead."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = os.environ.get("WHICHGPU_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return (f"Chromium not found at {CHROMIUM}: 'apt-get install chromium' (.ci/run does "
                "it), or set WHICHGPU_CHROMIUM")
    return None


_reason = _missing()
if _reason and os.environ.get("WHICHGPU_REQUIRE_BROWSER"):
    raise RuntimeError(f"browser tests are required here but cannot run: {_reason}")
# A browser test file says ``pytestmark = needs_browser`` (or decorates its browser tests).
needs_browser = pytest.mark.skipif(_reason is not None, reason=_reason or "")


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """``whichgpu serve`` in a subprocess, with its own home (price store) and no network."""
    from whichgpu.web.local_server import ServerDidNotStart, serve

    # 120 s: on a loaded machine (seven sessions on two cores) its start took over 30 s and
    # every browser test of the worker failed with "did not start" (2026-12-07)
    try:
        with serve(tmp_path_factory.mktemp("serve-home"), timeout_s=120) as base:
            yield base
    except ServerDidNotStart as exc:
        pytest.fail(str(exc))


# Playwright's sync API keeps an asyncio loop running in this thread while it is open, so it
# lives for one test file: kept for the session, every later test of the worker that starts an
# event loop (anyio.run: the MCP client, the server's off-loop tests) failed with "Already
# running asyncio in this thread". The server (a subprocess) stays one per worker.
@pytest.fixture(scope="module")
def playwright_driver():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright_driver):
    """One headless Chromium for the browser tests of one file."""
    b = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
    yield b
    b.close()


VIEWPORT = {"width": 1280, "height": 900}


@pytest.fixture(scope="module")
def browser_context(browser):
    """The context the ``page`` fixture's tab lives in (its cookies cleared per test)."""
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    yield context
    context.close()


@pytest.fixture(scope="module")
def _page_tab(browser_context):
    """One tab for a file's ``page`` tests: a new tab cost about 0.5 CPU-s more than a page
    load (Chromium starts a renderer for each; 0.84 against 0.25 CPU-s measured alone,
    2026-12-07)."""
    tab = browser_context.new_page()
    yield tab
    tab.close()


@pytest.fixture
def page(_page_tab, browser_context, server):
    """The file's tab, as a fresh one: no cookies, no session or local storage, the
    context's size, nothing loaded; it fails the test on any console error, page error, or
    request that leaves the server (every asset is local) while the test runs."""
    tab = _page_tab
    browser_context.clear_cookies()
    tab.set_viewport_size(VIEWPORT)
    errors: list[str] = []
    listeners = (
        ("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error"
         else None),
        ("pageerror", lambda e: errors.append(f"pageerror: {e}")),
        ("request", lambda r: None if r.url.startswith((server, "data:")) else
         errors.append(f"request off the server: {r.url}")),
    )
    for event, listener in listeners:
        tab.on(event, listener)
    tab.base = server
    yield tab
    for event, listener in listeners:
        tab.remove_listener(event, listener)
    if tab.url.startswith(server):
        tab.evaluate("() => { sessionStorage.clear(); localStorage.clear(); }")
    tab.goto("about:blank")
    assert not errors, errors
