"""Warm what every request shares before a server answers its first one.

A fresh process reads the GPU catalog, the presets, the calibration constants and the price
store's offers, builds the request models' validators, reads each language's catalog and
compiles the page templates on its first questions; without this the first advisor page
after start paid for all of it.
``serve`` asks for it (``WHICHGPU_WEB_WARM=1``, inherited by its workers); an app built for
a test does not, so the test suite does not pay it. The warm-up asks one small question
through the web's own services (its answer is remembered like any other); a failure is
logged and never stops the start.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("whichgpu.web")

WARM_ENV = "WHICHGPU_WEB_WARM"
# a small model, so that the warm-up itself is quick; the catalog, offers and constants it
# loads are the ones every question uses
_MODEL = "qwen2.5-0.5b"


def _pages() -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    from whichgpu.web import pages

    # the handlers themselves (their page memo left out): the HTML is not kept
    return (("/?model=" + _MODEL + "&tokens=1M", pages.advisor.__wrapped__),
            ("/memory?model=" + _MODEL, pages.memory_page.__wrapped__))


def _request(path: str, lang: str) -> Any:
    """A GET of ``path`` in ``lang`` as the page handlers read it (no connection)."""
    from starlette.requests import Request

    route, _, query = path.partition("?")
    return Request({"type": "http", "method": "GET", "path": route, "root_path": "",
                    "query_string": query.encode(), "scheme": "http", "server": ("warm", 80),
                    "headers": [(b"host", b"warm"), (b"accept", b"text/html")],
                    "state": {"lang": lang}})


def _freeze() -> None:
    """What start-up built (modules, catalog, presets, offers, templates) moved out of the
    garbage collector's sight: a full collection then walks only what requests made since. On
    2026-12-07 (shared 2-core machine), six whole-catalog answers after the warm-up saw 3 full
    collections take 1.70 s in all (the longest 0.71 s, every thread stopped), 0.54 s frozen
    (0.22 s; wall time at load average 9). Start-up's garbage is collected first; a frozen
    object is still freed when nothing refers to it any more, only a reference cycle among
    frozen objects stays (start-up data is kept for the server's life anyway)."""
    import gc

    gc.collect()
    gc.freeze()


def wanted() -> bool:
    return os.environ.get(WARM_ENV, "").strip().lower() in ("1", "true", "yes")


def warm() -> float:
    """Load the shared data and answer one small question; the seconds it took."""
    t0 = time.perf_counter()
    try:
        from whichgpu.answers import requests as r
        from whichgpu.answers.inputs.values import WorkCount
        from whichgpu.web import i18n, pages, services

        for command in r.COMMANDS:  # validators are built on first use (defer_build)
            command.model_rebuild(force=True)
        for lang in i18n.LANGS:  # each language's catalog and number formats
            i18n.translations(lang)
            i18n.locale(lang)
        for name in pages.ENV.list_templates():
            if name.endswith(".html"):
                pages.ENV.get_template(name)
        services.memory(r.Memory(model=_MODEL))
        services.recommend(r.Recommend(model=_MODEL, tokens=WorkCount(1_000_000, "1M")))
        for lang in i18n.LANGS:  # what only a page uses: charts, number and money words
            for path, page in _pages():
                page(_request(path, lang))
    except Exception as exc:
        log.warning("warm-up skipped: %s: %s", type(exc).__name__, exc)
    _freeze()
    seconds = time.perf_counter() - t0
    log.info("warmed up in %.2f s", seconds)
    return seconds
