"""Issue 32, pictures: the prices page summarises each GPU's latest prices (lowest, median,
range; on demand and spot) and draws the history as a band with a median line instead of
~15 stacked dots under an 18-colour legend; each picture has a text equivalent.

(The browser test tests/web/test_web_layout.py checks the same charts on /prices?gpu=h100-sxm in
Chromium at 390 and 1366 px: no label over another, text >= 11 px.)"""

from __future__ import annotations

import re
import statistics
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from whichgpu.units import Money
from whichgpu.web import charts, price_views
from whichgpu.web.i18n import locale

SVG = "{http://www.w3.org/2000/svg}"
EN = locale("en")


def _offer(provider: str, amount: float, *, spot: bool = False, gpu: str = "h100-sxm",
           count: int = 1, region: str | None = "us") -> SimpleNamespace:
    return SimpleNamespace(provider=provider, gpu=gpu, gpu_count=count, spot=spot,
                           region=region, price_per_gpu_hour=Money(amount, "USD"))


def test_one_offer_sold_in_three_machine_sizes_counts_once_in_the_median():
    """Was: the same offer listed three times (1x, 2x, 4x) in the table; counted three times
    the median would be $1.00, not the middle of the three prices."""
    offers = [_offer("A", 1.0, count=n) for n in (1, 2, 4)]
    offers += [_offer("B", 2.0), _offer("C", 4.0), _offer("D", 0.5, spot=True),
               _offer("E", 0.9, spot=True)]
    (row,) = price_views.summarise(offers)
    od, spot = row.tiers[price_views.Tier.ON_DEMAND], row.tiers[price_views.Tier.SPOT]
    assert (od.lowest.amount, od.median.amount, od.highest.amount, od.offers) == (1, 2, 4, 3)
    assert od.lowest_provider == "A"
    assert (spot.lowest.amount, spot.median.amount, spot.highest.amount) == (0.5, 0.7, 0.9)


@pytest.fixture(scope="module")
def client():
    from whichgpu.web.app import create_app

    return TestClient(create_app())


def _cells(html: str, gpu: str) -> list[str]:
    table = html[html.index('<table class="price-summary">'):]
    table = table[:table.index("</table>")]
    row = re.search(rf'<tr><th scope="row"><a href="/gpus/{gpu}">.*?</tr>', table, re.S)
    assert row, gpu
    return [re.sub(r"<[^>]+>", "", c).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(0), re.S)]


def test_the_summary_agrees_with_the_rest_api_for_each_tier(client):
    """The page's lowest / median / range per GPU are those of the API's offers."""
    html = client.get("/prices?gpu=h100-sxm&lang=en").text
    offers = [o for o in client.get("/api/v1/prices?gpu=h100-sxm").json()["offers"]
              if o["price_per_gpu_hour"]["currency"] == "USD"]
    cells = _cells(html, "h100-sxm")
    assert len(cells) == 6  # on demand and spot each: lowest, median, range
    for spot, (low, med, rng) in ((False, cells[:3]), (True, cells[3:])):
        prices = {(o["provider"], o.get("region") or "", o["price_per_gpu_hour"]["amount"])
                  for o in offers if o["spot"] is spot}
        amounts = sorted(a for *_, a in prices)
        assert amounts, spot
        fmt = [EN.money({"amount": a, "currency": "USD"}) for a in
               (amounts[0], statistics.median(amounts), amounts[-1])]
        assert low.startswith(fmt[0]) and med == fmt[1], (spot, cells)
        assert rng.startswith(f"{fmt[0]} – {fmt[2]}"), (spot, rng)


def test_the_prices_page_has_no_colour_legend_and_each_chart_a_caption(client):
    """Was: an 18-entry legend of swatches that could not be matched to the dots."""
    for lang in ("en", "fr"):
        html = client.get(f"/prices?gpu=h100&lang={lang}").text
        assert 'class="legend"' not in html and "swatch" not in html
        figures = re.findall(r'<figure class="chart-box">(.*?)</figure>', html, re.S)
        assert len(figures) >= 2  # the summary's bars and the USD history
        for f in figures:
            assert "<figcaption>" in f and 'role="img"' in f
        assert '<table class="price-summary">' in html and "<caption" in html
        assert html.count('<table class="history-days">') == 2  # EUR and USD


def test_french_summary_writes_numbers_the_french_way(client):
    html = client.get("/prices?gpu=h100-sxm&lang=fr").text
    cells = " ".join(_cells(html, "h100-sxm"))
    assert re.search(r"\d,\d\d\u00a0\$US", cells), cells
    assert not re.search(r"\$\d", cells), cells


def _day(d: int) -> float:
    return datetime(2026, 1, d, tzinfo=UTC).timestamp()


def _layouts(markup: str) -> list[ET.Element]:
    return list(ET.fromstring(f"<div>{markup}</div>").iter(f"{SVG}svg"))


def _band(n_sources: int) -> str:
    days = [charts.Day(_day(d), 1.0 + d / 10, 2.0 + d / 10, 3.0 + d / 5) for d in (1, 9, 20)]
    lines = [charts.Series(f"source-{k}", f"c{k + 1}",
                           [(_day(1), 1.5 + k / 10), (_day(20), 2.1 + k / 20)])
             for k in range(n_sources)]
    return charts.band_chart(days, lines, title="t", desc="d", x_label="observed",
                             y_label="per GPU-hour",
                             fx=lambda t: EN.date(datetime.fromtimestamp(t, UTC)),
                             fy=lambda v: EN.money({"amount": v, "currency": "USD"}),
                             low_name="lowest", median_name="median")


@pytest.mark.parametrize("n_sources", [0, 4])
def test_history_labels_never_overlap_and_ticks_fall_on_days_with_prices(n_sources):
    """Was: ~15 labels on top of each other at the right edge; ticks on arbitrary dates."""
    for svg in _layouts(_band(n_sources)):
        labels = [charts._box(float(t.get("x")), float(t.get("y")), t.text or "",
                              t.get("text-anchor"), 12.0)
                  for t in svg.iter(f"{SVG}text") if t.get("class") == "end-label"]
        assert any((t.text or "").startswith("median") for t in svg.iter(f"{SVG}text"))
        for i, a in enumerate(labels):
            assert not any(charts._overlaps(a, b, 0) for b in labels[i + 1:])
        axis = next(svg.iter(f"{SVG}g"))
        ticks = [t.text for t in axis.iter(f"{SVG}text") if not t.get("class")]
        days = {EN.date(datetime.fromtimestamp(_day(d), UTC)) for d in (1, 9, 20)}
        x_ticks = [t for t in ticks if "2026" in (t or "")]
        assert x_ticks and set(x_ticks) <= days, x_ticks
        assert EN.date(datetime.fromtimestamp(_day(20), UTC)) in x_ticks  # the latest day
        assert svg.find(f"{SVG}path[@class='band']") is not None


def test_a_single_day_draws_no_chart_but_still_lists_its_prices():
    """Was: one dot on a 5-day axis. One date is a table row, not a picture."""
    pt = SimpleNamespace(spot=False, cheapest=Money(3.9, "EUR"), feed="f", gpu="h100-sxm",
                         observed_at=datetime(2026, 11, 12, tzinfo=UTC), fetched_at=None)
    (view,) = price_views.history_views([pt], EN)
    assert view.chart is None and len(view.days) == 1 and view.days[0].low.amount == 3.9
