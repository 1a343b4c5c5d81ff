"""The scheduled price refresh in the web service: its configuration, one refresh at a time
(the store's refresh lock), not again before it is due, and its last result on /readyz and
in /metrics."""

from __future__ import annotations

import threading

import pytest

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.sources import FeedResult, PriceSource
from whichgpu.errors import InputError
from whichgpu.units import Money
from whichgpu.web import schedule
from whichgpu.web.schedule import EVERY_ENV, Outcome, every_s, run_once

HOUR = 3600.0


class Fake(PriceSource):
    """A source that needs no network: one H100 offer per fetch (``calls`` counts them)."""

    kind, name = "test", "test"

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.calls = 0
        self.hold = hold

    def available(self):
        return None

    def fetch(self, progress=None):
        self.calls += 1
        if self.hold is not None:
            self.hold.wait(30)
        offers = [Offer(provider="p", gpu="h100-sxm", gpu_count=1,
                        price_per_hour=Money(2.0 + self.calls / 100, "USD"),
                        observed_at="2026-12-01", source="test")]
        yield FeedResult(feed="fake", source="test", kind="test", offers=offers)


@pytest.fixture
def fake(monkeypatch):
    source = Fake()
    monkeypatch.setattr("whichgpu.answers.prices.all_sources", lambda st: [source])
    monkeypatch.setattr(schedule, "_last", [None])
    return source


@pytest.mark.parametrize(("text", "seconds"), [("", None), ("off", None), ("0", None),
                                               ("6h", 6 * HOUR), ("30m", 1800.0)])
def test_the_schedule_is_read_from_the_environment(monkeypatch, text, seconds):
    monkeypatch.setenv(EVERY_ENV, text)
    assert every_s() == seconds


@pytest.mark.parametrize(("text", "words"), [("often", "is not a duration"),
                                             ("5m", "at most every 10 minutes")])
def test_a_bad_schedule_is_refused_in_one_line(monkeypatch, cli, text, words):
    monkeypatch.setenv(EVERY_ENV, text)
    with pytest.raises(InputError, match=words):
        every_s()
    out = cli("serve", "--port", "1")  # stops before it listens, saying why
    assert out.code == 2 and words in out.err and "Traceback" not in out.err


def test_a_due_refresh_runs_once_then_waits_for_the_period(fake):
    first = run_once(6 * HOUR)
    assert first.outcome is Outcome.REFRESHED and fake.calls == 1
    assert first.feeds == {"updated": 1}
    assert PriceStore(None).current_of("fake") is not None
    second = run_once(6 * HOUR)  # fetched a moment ago: not due for six hours
    assert second.outcome is Outcome.NOT_DUE and fake.calls == 1


def test_another_process_refreshing_makes_this_one_skip(fake):
    hold = threading.Event()
    fake.hold = hold
    runs: list = []
    busy = threading.Thread(target=lambda: runs.append(run_once(HOUR)))
    busy.start()
    try:
        for _ in range(200):  # until the first refresh holds the lock (inside its fetch)
            if fake.calls:
                break
            threading.Event().wait(0.05)
        assert fake.calls == 1
        second = run_once(HOUR)
        assert second.outcome is Outcome.BUSY and fake.calls == 1
        assert "refresh" in (second.detail or "")
    finally:
        hold.set()
        busy.join(30)
    assert runs[0].outcome is Outcome.REFRESHED


def test_readyz_and_metrics_say_the_schedule_and_the_last_result(web, fake, monkeypatch):
    monkeypatch.setenv(EVERY_ENV, "6h")
    schedule._last[0] = run_once(6 * HOUR)
    body = web.get("/readyz").json()
    refresh = body["refresh"]
    assert refresh["every_s"] == 6 * HOUR and refresh["due"] is False
    assert refresh["feeds"] == {"ok": 1} and refresh["failed_feeds"] == []
    assert refresh["last_fetch_age_s"] is not None and refresh["last_fetch_age_s"] < 600
    assert refresh["this_worker"]["outcome"] == "refreshed"
    text = web.get("/metrics").text
    assert "whichgpu_price_refresh_interval_seconds 21600.0" in text
    assert 'whichgpu_price_refresh_last_feeds{status="ok"} 1.0' in text
    assert 'whichgpu_price_refresh_last_feeds{status="failed"} 0.0' in text
    assert "whichgpu_price_refresh_last_fetch_timestamp_seconds " in text


def test_a_failed_fetch_shows_on_readyz(web, fake, monkeypatch):
    def broken(progress=None):
        raise OSError("the provider is down")
        yield  # a generator, like every fetch

    monkeypatch.setattr(fake, "fetch", broken)
    run = run_once(HOUR)
    assert run.outcome is Outcome.REFRESHED and run.feeds == {"failed": 1}
    refresh = web.get("/readyz").json()["refresh"]
    assert refresh["failed_feeds"] == ["test"] and refresh["every_s"] is None


def test_the_service_runs_the_loop_in_its_lifespan(fake, monkeypatch):
    from fastapi.testclient import TestClient

    from whichgpu.web.app import create_app

    monkeypatch.setenv(EVERY_ENV, "1h")
    monkeypatch.setattr(schedule, "START_DELAY_S", 0.0)
    monkeypatch.setattr(schedule, "CHECK_S", 0.2)  # a look every 0.2 s instead of 5 min
    with TestClient(create_app()) as client:
        for _ in range(200):
            if schedule._last[0] is not None:
                break
            threading.Event().wait(0.05)
        threading.Event().wait(1.0)  # several more looks: none refreshes again
        assert fake.calls == 1
        mine = client.get("/readyz").json()["refresh"]["this_worker"]
        assert mine["outcome"] in ("refreshed", "not_due")
