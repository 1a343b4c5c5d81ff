"""The shipped history of published prices: dated, sourced points that `prices history` shows
oldest first, and that never price a job."""

from __future__ import annotations

import csv
from importlib import resources

from whichgpu.catalog.prices import PriceStore, current_offers
from whichgpu.catalog.prices.published import published_points
from whichgpu.catalog.prices.sources import parse_time


def _table() -> list[dict]:
    text = resources.files("whichgpu.catalog.prices").joinpath(
        "data/history/published.csv").read_text("utf-8")
    return list(csv.DictReader(text.splitlines()))


def test_every_published_point_has_a_date_a_source_and_a_precision():
    rows = _table()
    assert len(rows) >= 5
    for r in rows:
        assert parse_time(r["observed_at"]) is not None
        assert r["source"].startswith("https://")
        assert r["date_precision"] in ("day", "month")
        if r["date_precision"] == "month":  # a month-only point sits on the month's last day
            day = parse_time(r["observed_at"])
            assert (day.replace(day=28) + __import__("datetime").timedelta(days=4)).day <= 4
    assert len(published_points()) == len(rows)


def test_prices_history_shows_the_published_points_oldest_first_with_their_sources(cli):
    r = cli("prices", "history", "h100-sxm", "--json")
    assert r.code == 0, r.err
    points = r.json()["points"]
    dates = [p["observed_at"] for p in points if p["observed_at"]]
    assert dates == sorted(dates)  # oldest observation first, whatever the storing order
    published = [p for p in points if p["feed"].startswith("history/")]
    expected = sorted((row["observed_at"], float(row["price_per_hour"])) for row in _table()
                      if row["gpu"] == "h100-sxm")
    assert [(p["observed_at"][:10], p["cheapest_per_gpu_hour"]["amount"]) for p in published] \
        == expected
    assert all(p["source"].startswith("https://") for p in published)
    # the market snapshot's points (observed 2026-12-01) come after them
    assert dates[-1] > published[-1]["observed_at"]


def test_published_points_never_price_a_job_and_are_stored_once(cli):
    sel = current_offers()
    assert not [f for f in sel.feeds if f.feed.startswith("history/")]
    assert cli("prices", "history", "rtx-5090").code == 0
    assert cli("prices", "history", "rtx-4090").code == 0  # seeding again stores nothing new
    snaps = [s for s in PriceStore().snapshots() if s.kind == "history"]
    assert len(snaps) == len(_table())


def test_prune_keeps_every_published_point(cli):
    assert cli("prices", "history", "h100-sxm").code == 0
    assert cli("prices", "prune", "--keep", "1").code == 0
    snaps = [s for s in PriceStore().snapshots() if s.kind == "history"]
    assert len(snaps) == len(_table())


def test_an_undated_price_is_listed_as_undated_and_never_placed_on_the_time_axis(cli, web):
    """article-000's H100 SXM example ($3.15/h) has no date: no history point sits at
    'today' for it; both the CLI and the web answer list it apart."""
    data = cli("prices", "history", "h100-sxm", "--json").json()
    assert data["points"] and all(p["observed_at"] for p in data["points"])
    undated = data["undated"]
    assert undated and all(p["observed_at"] is None for p in undated)
    assert any(p["feed"] == "article-000" for p in undated)
    api = web.get("/api/v1/prices/history", params={"gpu": "h100-sxm"}).json()
    assert all(p["observed_at"] for p in api["points"])
    assert {p["feed"] for p in api["undated"]} == {p["feed"] for p in undated}
