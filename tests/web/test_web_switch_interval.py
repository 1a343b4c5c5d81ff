"""Issue 27: a server hands the interpreter lock over every 0.5 ms (web/work.py
SWITCH_INTERVAL_S), so the event loop and quick answers do not wait Python's 5 ms behind each
whole-catalog answer; an app built for a test leaves the process's interval alone."""

from __future__ import annotations

import sys

import pytest

from whichgpu.web import warm, work


def test_a_served_app_shares_the_interpreter_more_often(monkeypatch: pytest.MonkeyPatch):
    from whichgpu.web.app import create_app

    monkeypatch.setenv(warm.WARM_ENV, "1")
    served = create_app()
    assert work.share_the_interpreter in served.router.on_startup
    before = sys.getswitchinterval()
    try:
        work.share_the_interpreter()
        assert sys.getswitchinterval() == pytest.approx(work.SWITCH_INTERVAL_S)
        assert work.SWITCH_INTERVAL_S < before
    finally:
        sys.setswitchinterval(before)


def test_an_app_built_for_a_test_keeps_the_interval(monkeypatch: pytest.MonkeyPatch):
    from whichgpu.advise.collector import pace_for_serving
    from whichgpu.web.app import create_app

    monkeypatch.delenv(warm.WARM_ENV, raising=False)
    startup = create_app().router.on_startup
    assert work.share_the_interpreter not in startup
    assert pace_for_serving not in startup  # nor the collector's threshold


def test_a_served_app_paces_the_collector_for_its_life(monkeypatch: pytest.MonkeyPatch):
    """Its young collections as rare as during an answer (advise/collector.py
    pace_for_serving): full collections, which stop every thread, come far less often."""
    import gc

    from whichgpu.advise.collector import ANSWER_THRESHOLD, pace_for_serving
    from whichgpu.web.app import create_app

    monkeypatch.setenv(warm.WARM_ENV, "1")
    assert pace_for_serving in create_app().router.on_startup
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        pace_for_serving()
        assert gc.get_threshold() == (ANSWER_THRESHOLD, 10, 10)
    finally:
        gc.set_threshold(*before)
