"""Issue 17's chart defects, on the SVG charts.py draws (no browser: tests/web/test_web_layout.py
checks the same charts as Chromium renders them): unlabelled dots, a time axis from "0.0 s",
tick labels on top of each other, a price history of one dot that says nothing, and English
number formats on French pages."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from whichgpu.web import charts
from whichgpu.web.i18n import locale

SVG = "{http://www.w3.org/2000/svg}"
EN, FR = locale("en"), locale("fr")


def layouts(markup: str) -> dict[str, ET.Element]:
    """The chart's two drawings by layout name (wide, narrow)."""
    root = ET.fromstring(f"<div>{markup}</div>")
    out = {}
    for svg in root.iter(f"{SVG}svg"):
        name = next(c for c in svg.get("class").split() if c.startswith("chart-")
                    and c in ("chart-wide", "chart-narrow"))
        out[name.removeprefix("chart-")] = svg
    return out


def texts(svg: ET.Element, css: str | None = None) -> list[str]:
    return [t.text or "" for t in svg.iter(f"{SVG}text")
            if css is None or css in (t.get("class") or "").split()]


def ticks(svg: ET.Element) -> list[str]:
    axis = next(svg.iter(f"{SVG}g"))
    return [t.text or "" for t in axis.iter(f"{SVG}text") if not t.get("class")]


def boxes(svg: ET.Element, css: str) -> list[charts.Box]:
    font = 12.0
    return [charts._box(float(t.get("x")), float(t.get("y")), t.text or "",
                        t.get("text-anchor"), font)
            for t in svg.iter(f"{SVG}text") if css in (t.get("class") or "").split()]


def _scatter(n: int) -> str:
    pts = [charts.Point(f"{k} × rtx-4090", 6 / k, 3.6 + 0.01 * k, 5 / k, 7 / k, k == 1,
                        k == 1) for k in range(1, n + 1)]
    return charts.scatter(pts, title="t", desc="d", x_label="time (hours)", y_label="cost",
                          fx=lambda h: EN.duration(h * 3600),
                          fy=lambda v: EN.money({"amount": v, "currency": "USD"}),
                          front_label="front")


def test_each_chart_is_drawn_for_a_laptop_and_for_a_phone():
    drawn = layouts(_scatter(3))
    assert set(drawn) == {"wide", "narrow"}
    assert drawn["wide"].get("viewBox") == "0 0 720 320"
    assert drawn["narrow"].get("viewBox") == "0 0 340 300"  # 12 px text >= 11 px at 360 px


@pytest.mark.parametrize("layout", ["wide", "narrow"])
def test_every_dot_of_a_small_cost_time_chart_is_labelled(layout):
    """Was: only the Pareto front and the recommendation had labels; the others were bare."""
    svg = layouts(_scatter(4))[layout]
    dots = list(svg.iter(f"{SVG}circle"))
    labels = texts(svg, "pt-label")
    assert len(dots) == 4 and len(labels) == 4
    assert all(re.fullmatch(r"\d × rtx-4090|#\d", s) for s in labels), labels


@pytest.mark.parametrize("layout", ["wide", "narrow"])
def test_the_time_axis_does_not_start_at_0_0_s(layout):
    """Was: '0.0 s' as the first tick of an axis whose dots sit at 1 to 6 hours."""
    svg = layouts(_scatter(6))[layout]
    assert not any(re.match(r"0[.,]0\s", s) for s in ticks(svg)), ticks(svg)


@pytest.mark.parametrize("layout", ["wide", "narrow"])
def test_point_labels_never_overlap_on_a_crowded_chart(layout):
    svg = layouts(_scatter(16))[layout]
    placed = boxes(svg, "pt-label")
    assert len(placed) >= 4
    for i, a in enumerate(placed):
        assert not any(charts._overlaps(a, b, 0) for b in placed[i + 1:])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 340), st.floats(0, 300)), min_size=1, max_size=30),
       st.lists(st.text("abc#0123456789 ×", min_size=1, max_size=18), min_size=30,
                max_size=30))
def test_place_label_keeps_every_label_clear_of_the_others_and_inside(spots, words):
    taken: list[charts.Box] = []
    area = (0.0, 0.0, 340.0, 300.0)
    placed = []
    for (px, py), word in zip(spots, words, strict=False):
        before = len(taken)
        spot = charts.place_label(px, py, 5, (word,), 12, taken, area)
        if spot is not None:
            b = taken[-1]
            assert charts._inside(b, area)
            assert not any(charts._overlaps(b, o) for o in taken[:before])
            placed.append(b)


@pytest.mark.parametrize("layout", ["wide", "narrow"])
def test_date_ticks_are_thinned_until_they_do_not_touch(layout):
    from datetime import UTC, datetime

    day = 86400
    start = datetime(2026, 9, 1, tzinfo=UTC).timestamp()
    series = [charts.Series("feed · h100-sxm", "c0",
                            [(start + k * 7 * day, 2.0 + 0.01 * k) for k in range(14)])]
    svg = layouts(charts.line_chart(
        series, title="t", desc="d", x_label="observed", y_label="per GPU-hour",
        fx=lambda t: FR.date(datetime.fromtimestamp(t, UTC)),
        fy=lambda v: FR.money({"amount": v, "currency": "EUR"}), y_from_zero=False))[layout]
    base = max(float(t.get("y")) for t in next(svg.iter(f"{SVG}g")).iter(f"{SVG}text")
               if not t.get("class"))
    row = [charts._box(float(t.get("x")), base, t.text, "middle", 12)
           for t in next(svg.iter(f"{SVG}g")).iter(f"{SVG}text")
           if not t.get("class") and float(t.get("y")) == base]
    assert len(row) >= 2
    for a, b in itertools.pairwise(row):
        assert a[2] + 8 <= b[0], (a, b)
    width = float(svg.get("viewBox").split()[2])
    assert all(b[0] >= 0 and b[2] <= width for b in row)


def test_a_price_history_of_one_snapshot_says_its_price():
    """Was: one bare dot on an empty chart; now the dot carries its value."""
    series = [charts.Series("vast · rtx-4090", "c0", [(1_790_000_000.0, 0.34)])]
    for svg in layouts(charts.line_chart(
            series, title="t", desc="d", x_label="observed", y_label="per GPU-hour",
            fx=str, fy=lambda v: EN.money({"amount": v, "currency": "USD"}),
            y_from_zero=False, min_x_span=6 * 86400)).values():
        assert texts(svg, "end-label") == ["$0.34"]


def test_the_stacked_bar_puts_each_capacity_label_on_a_free_row():
    segs = [charts.Segment("weights", "weights", 42.0), charts.Segment("kv", "KV", 3.0)]
    marks = [("rtx-4090 (26 GB)", 25.8), ("rtx-5090 (34 GB)", 33.6), ("l40s (48 GB)", 47.7)]
    for svg in layouts(charts.stacked_bar(segs, title="t", desc="d", fmt=str,
                                          marks=marks)).values():
        placed = boxes(svg, "mark-label")
        assert len(placed) == 3
        for i, a in enumerate(placed):
            assert not any(charts._overlaps(a, b, 0) for b in placed[i + 1:])


@pytest.fixture
def client():
    from whichgpu.web.app import create_app

    return TestClient(create_app())


def test_french_charts_write_numbers_the_french_way(client):
    """Was: '~1,979' and '$50,000' on French pages, read there as 1.979 and 50."""
    # the article's H100 price (named; the page opens on the market since issue 26), where
    # buying breaks even within the horizon, so the chart marks it
    html = client.get("/rent-or-buy?gpu=h100-sxm&prices=article-000&lang=fr").text
    svgs = re.findall(r"<svg.*?</svg>", html, re.S)
    assert len(svgs) == 2
    words = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", "".join(svgs)))
    assert not re.search(r"\d,\d{3}\b", words), words  # no English thousands
    assert re.search(r"\d[\u202f\u00a0]\d{3}", words), words  # 50 000 $US
    assert "$US" in words and "point mort" in words
