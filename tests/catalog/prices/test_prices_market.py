"""The shipped market snapshot and the live SkyPilot source: rebuilt from the recorded input,
replayed from the recorded real files, and judged by the same guards as every refresh."""

from __future__ import annotations

import csv
import importlib.util
import io
import statistics
import time
import tomllib

import pytest

from paths import ROOT
from prices_support import Route, serve
from whichgpu.catalog.gpus import default_catalog
from whichgpu.catalog.prices import PriceStore, current_offers
from whichgpu.catalog.prices.market import market_feed_names, market_feeds
from whichgpu.catalog.prices.names import map_gpu_name
from whichgpu.catalog.prices.refresh import refresh
from whichgpu.catalog.prices.skypilot import CATALOG_VERSION, SkyPilotSource, read_vms_csv

RECORDED = ROOT / "scripts" / "data" / "skypilot-catalog"
SHIPPED = ROOT / "src" / "whichgpu" / "catalog" / "prices" / "data" / "market"


def _builder():
    spec = importlib.util.spec_from_file_location("build_market_snapshot",
                                                  ROOT / "scripts" / "build_market_snapshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_builder_reproduces_the_shipped_snapshot_from_the_recorded_input(tmp_path):
    _builder().build(RECORDED, tmp_path)
    for name in ("skypilot.csv", "skypilot.json"):
        assert (tmp_path / name).read_bytes() == (SHIPPED / name).read_bytes(), name


def test_every_shipped_offer_names_its_commit_and_date_and_matches_the_recorded_row():
    manifest = tomllib.loads((RECORDED / "manifest.toml").read_text())
    for f in market_feeds():
        cloud = f.feed.split("/", 1)[1]
        info = manifest["files"][cloud]
        rows, _ = read_vms_csv((RECORDED / f"{cloud}.csv").read_text(), path=cloud)
        for o in f.offers:
            assert info["commit"] in o.source and info["path"] in o.source
            assert o.observed_at == manifest["read_on"]
            instance = o.note.split(";", 1)[0]
            prices = [(r.spot if o.spot else r.price) for r in rows if r.instance == instance]
            assert o.price_per_hour.amount == pytest.approx(min(p for p in prices if p))


def test_the_mi300x_is_priced_from_runpods_recorded_rows(cli):
    """The issue's MI300X has market offers: RunPod's, one per recorded instance type, each at
    its recorded row's price."""
    rows, _ = read_vms_csv((RECORDED / "runpod.csv").read_text(), path="runpod", cloud="runpod")
    recorded = {r.instance: r.price for r in rows if r.accelerator == "MI300X"}
    offers = cli("prices", "list", "mi300x", "--limit", "0", "--json").json()["offers"]
    assert recorded and {o["instance_type"]: o["price_per_hour"]["amount"] for o in offers} == \
        pytest.approx(recorded)
    assert {o["provider"] for o in offers} == {"RunPod"}


def test_a_fresh_install_lists_dated_market_offers_for_many_gpus_and_providers(cli):
    data = cli("prices", "list", "--limit", "0", "--json").json()
    offers = data["offers"]
    assert len({o["gpu"] for o in offers}) >= 20
    assert len({o["provider"] for o in offers}) >= 6
    assert any(o["spot"] for o in offers) and all(o["observed_at"] for o in offers)
    assert all("interrupted" in o["note"] for o in offers if o["spot"])
    # the median on-demand H100 SXM per GPU-hour is the shipped snapshot's
    with open(SHIPPED / "skypilot.csv") as fh:
        rows = [r for r in csv.DictReader(fh) if r["gpu"] == "h100-sxm" and r["spot"] == "false"]
    expected = statistics.median(float(r["price_per_hour"]) / int(r["gpu_count"]) for r in rows)
    listed = [o["price_per_gpu_hour"]["amount"] for o in offers
              if o["gpu"] == "h100-sxm" and not o["spot"]]
    assert statistics.median(listed) == pytest.approx(expected)


def test_unmapped_names_are_listed_with_their_counts_never_dropped(cli):
    data = cli("prices", "sources", "--unmapped", "--json").json()
    sky = next(s for s in data["sources"] if s["name"] == "skypilot")
    unmapped = [u for f in sky["feeds"] for u in f["unmapped"]]
    assert unmapped and all(u["rows"] >= 1 and u["reason"] for u in unmapped)
    ids = {g.id for g in default_catalog().gpus}
    pending = [u for u in unmapped if u["reason"].startswith("catalog has no ")]
    assert all(u["reason"].removeprefix("catalog has no ") not in ids for u in pending)


def test_the_recommendation_is_priced_from_the_market_snapshot_and_says_so(cli):
    r = cli("recommend", "llama-3.1-70b", "--quant", "awq", "--tokens", "1M",
            "--prompt-tokens", "512", "--output-tokens", "512", "--json")
    assert r.code == 0, r.err
    prices = r.json()["prices"]
    assert {f["feed"] for f in prices["feeds"]} == set(market_feed_names())
    assert prices["sources"] == ["skypilot"] and not prices["mixed"]
    text = cli("recommend", "llama-3.1-70b", "--quant", "awq", "--tokens", "1M",
               "--prompt-tokens", "512", "--output-tokens", "512")
    err = " ".join(text.err.split())
    assert "Prices from the SkyPilot catalog" in err
    # dated by the day the files were read, and the label says so (not "observed")
    assert "catalog files read 2026-12-01" in err and "at most as new" in err


# ------------------------------------------------------------------------ the live source

def _recorded_routes(transform=lambda cloud, text: text) -> dict[str, Route]:
    return {f"/catalogs/{CATALOG_VERSION}/{p.stem}/vms.csv":
            Route(transform(p.stem, p.read_text()).encode()) for p in RECORDED.glob("*.csv")}


def test_a_refresh_replays_the_recorded_real_files_and_stores_offers(monkeypatch):
    monkeypatch.delenv("WHICHGPU_OFFLINE")
    with serve(_recorded_routes()) as base:
        report = refresh([SkyPilotSource(["runpod", "vast"], base=base)], PriceStore())
    status = {o.feed: o.status for o in report.outcomes}
    assert status == {"skypilot/runpod": "updated", "skypilot/vast": "updated"}
    sel = current_offers("skypilot/runpod")
    rows, _ = read_vms_csv((RECORDED / "runpod.csv").read_text(), path="runpod", cloud="runpod")
    mapped = {r.instance for r in rows
              if map_gpu_name(r.accelerator, provider="runpod", instance=r.instance, via="skypilot",
                              memory_gb=round(r.memory_gb, 1) if r.memory_gb else None).mapped}
    # one on-demand offer per recorded instance type whose GPU maps (every v8 RunPod spot equals
    # on-demand); the recording also holds cards the catalog lacks (RTX 2000 Ada, RTX PRO 4000 ...)
    assert 0 < len(mapped) < len({r.instance for r in rows})
    assert sel.feeds[0].snapshot_id and len(sel.offers) == len(mapped)
    assert all(o.source.startswith("http://127.0.0.1") for o in sel.offers)


def _cut(cloud: str, text: str) -> str:
    return text[: len(text) // 2]


def _prices_times_1000(cloud: str, text: str) -> str:
    rows = list(csv.DictReader(io.StringIO(text)))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for r in rows:  # a unit error (cents read as dollars) hits both price columns
        for col in ("Price", "SpotPrice"):
            if r[col]:
                r[col] = str(float(r[col]) * 1000)
        writer.writerow(r)
    return out.getvalue()


@pytest.mark.parametrize("transform, why", [
    (lambda c, t: "", "missing column"),
    (lambda c, t: t.splitlines()[0] + "\n", "no offers"),
    (lambda c, t: "name,price\nh100,2\n", "missing column"),
    (_cut, "truncated"),
    (_prices_times_1000, "implausible"),
])
def test_a_bad_file_is_rejected_with_a_reason_and_the_previous_snapshot_kept(
        monkeypatch, transform, why):
    monkeypatch.delenv("WHICHGPU_OFFLINE")
    store = PriceStore()
    before = current_offers("skypilot/runpod", store=store)  # the shipped snapshot
    with serve(_recorded_routes(transform)) as base:
        (outcome,) = refresh([SkyPilotSource(["runpod"], base=base)], store).outcomes
    assert outcome.status in ("failed", "rejected") and why in outcome.message
    after = current_offers("skypilot/runpod", store=store)
    assert after.feeds[0].snapshot_id == before.feeds[0].snapshot_id
    assert len(after.offers) == len(before.offers)


def test_a_download_that_keeps_trickling_stops_at_the_whole_deadline():
    from whichgpu.catalog.prices.url import DeadlineError, download

    class Trickle:
        def __init__(self):
            self.body = b"x" * 100

    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.3)  # each read is well inside the timeout
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        start = time.monotonic()
        with pytest.raises(DeadlineError, match="longer than 1 s"):
            download(f"http://127.0.0.1:{server.server_address[1]}/", allow_http=True,
                     timeout_s=1.0)
        assert time.monotonic() - start < 2.5
    finally:
        server.shutdown()
        server.server_close()


def test_market_offers_name_their_instance_type_through_the_store():
    """Each snapshot offer keeps the SkyPilot InstanceType it was built from (a launcher
    export names it), also after the store has been seeded from the shipped files."""
    shipped = {o.instance_type for f in market_feeds() for o in f.offers}
    assert None not in shipped and len(shipped) > 50
    stored = current_offers(None).offers
    assert {o.instance_type for o in stored if o.offer_set.startswith("skypilot/")} == shipped
    with open(SHIPPED / "skypilot.csv", newline="", encoding="utf-8") as fh:
        assert {r["instance"] for r in csv.DictReader(fh)} == shipped


# ------------------------------------------------------------------------ review fixes

def test_every_mithril_offer_is_spot_because_its_file_mirrors_the_spot_price():
    """SkyPilot's fetch_mithril.py writes Mithril's spot price into Price and SpotPrice: the
    offers are interruptible, never on-demand, and their note says why."""
    (mithril,) = [f for f in market_feeds() if f.feed == "skypilot/mithril"]
    assert mithril.offers and all(o.spot for o in mithril.offers)
    assert all("interrupted" in o.note and "fetch_mithril" in o.note for o in mithril.offers)
    rows, _ = read_vms_csv((RECORDED / "mithril.csv").read_text(), path="m", cloud="mithril")
    assert all(r.price is None and r.spot for r in rows)


def test_the_headline_recommendation_never_prices_a_spot_only_offer_as_on_demand(cli):
    listed = cli("prices", "list", "--limit", "0", "--json").json()["offers"]
    mithril = [o for o in listed if o["provider"] == "Mithril"]
    assert mithril and all(o["spot"] for o in mithril)
    data = cli("recommend", "llama-3.1-70b", "--quant", "awq", "--tokens", "1M",
               "--prompt-tokens", "512", "--output-tokens", "512", "--json", "--top", "0"
               ).json()
    offers = [o["offer"] for o in data["options"]]
    assert offers and not any(o["provider"] == "Mithril" and not o["spot"] for o in offers)


def test_a_spot_price_above_on_demand_keeps_on_demand_and_says_so_in_the_build_report():
    from whichgpu.catalog.prices.skypilot import VmRow, feed_from_rows

    rows = [VmRow("1x_L40S_SECURE", "L40S", 1, 0.43, 0.86, "US")]
    result = feed_from_rows(rows, cloud="runpod", observed_at="2026-12-01", source="t")
    assert [(o.spot, o.price_per_hour.amount) for o in result.offers] == [(False, 0.43)]
    (reason,) = result.skipped
    assert "spot above on-demand" in reason and "$0.86" in reason and "$0.43" in reason
    # the shipped build report names the one it found (AWS p5.4xlarge in the recorded file)
    meta = {f.feed: f.meta for f in market_feeds()}
    assert any("p5.4xlarge" in k for k in meta["skypilot/aws"]["skipped"])


def _first_rows(keep: float):
    def cut(cloud: str, text: str) -> str:
        lines = text.splitlines(keepends=True)
        return "".join(lines[: 1 + int((len(lines) - 1) * keep)])  # at a row boundary
    return cut


def test_a_file_cut_at_a_row_boundary_is_refused_against_the_last_good_refresh(monkeypatch):
    monkeypatch.delenv("WHICHGPU_OFFLINE")
    store = PriceStore()
    with serve(_recorded_routes()) as base:
        (good,) = refresh([SkyPilotSource(["runpod"], base=base)], store).outcomes
    recorded = len((RECORDED / "runpod.csv").read_text().splitlines()) - 1
    assert good.status == "updated" and good.snapshot.source_rows == recorded
    with serve(_recorded_routes(_first_rows(0.5))) as base:
        (cut,) = refresh([SkyPilotSource(["runpod"], base=base)], store).outcomes
    assert cut.status == "rejected" and "cut short" in cut.message
    assert str(recorded) in cut.message
    assert current_offers("skypilot/runpod", store=store).feeds[0].snapshot_id == \
        good.snapshot.id
    # the same cut is taken when the user says so
    with serve(_recorded_routes(_first_rows(0.5))) as base:
        (forced,) = refresh([SkyPilotSource(["runpod"], base=base)], store,
                            force=True).outcomes
    assert forced.status == "updated"


def test_a_cut_file_is_refused_against_the_shipped_snapshot_by_its_instance_types(
        monkeypatch):
    """Without a refresh of its own to compare rows with, the shipped snapshot's instance types
    and GPUs are the yardstick: a file that lost most of them is not used."""
    monkeypatch.delenv("WHICHGPU_OFFLINE")
    store = PriceStore()
    before = current_offers("skypilot/vast", store=store)
    with serve(_recorded_routes(_first_rows(0.3))) as base:
        (outcome,) = refresh([SkyPilotSource(["vast"], base=base)], store).outcomes
    assert outcome.status == "rejected" and "missing" in outcome.message
    assert current_offers("skypilot/vast", store=store).feeds[0].snapshot_id == \
        before.feeds[0].snapshot_id


def test_a_file_that_lost_an_expected_column_is_refused(monkeypatch):
    def drop_spot(cloud: str, text: str) -> str:
        rows = list(csv.DictReader(io.StringIO(text)))
        out = io.StringIO()
        fields = [c for c in rows[0] if c != "SpotPrice"]
        writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()

    monkeypatch.delenv("WHICHGPU_OFFLINE")
    with serve(_recorded_routes(drop_spot)) as base:
        (outcome,) = refresh([SkyPilotSource(["runpod"], base=base)], PriceStore()).outcomes
    assert outcome.status == "failed" and "missing column(s) SpotPrice" in outcome.message


def test_a_provider_whose_billing_rule_is_not_stated_says_so_in_every_answer(cli):
    """Prime Intellect's and Nebius's rules are 'not stated': the per-second rule priced with is
    named an assumption, in the offer's JSON and in the recommendation's reason."""
    from whichgpu.catalog.prices.providers import providers

    listed = cli("prices", "list", "--limit", "0", "--json").json()["offers"]
    unstated = {p.name for p in providers().values() if not p.stated}
    for o in listed:
        assert o["billing"]["stated"] == (o["provider"] not in unstated), o["provider"]
        if o["provider"] in unstated:
            assert "assumed" in o["billing"]["description"]
    r = cli("recommend", "llama-3.1-8b", "--tokens", "1M", "--only", "h200-sxm")
    assert "Prime Intellect does not state its billing rule" in " ".join(r.out.split())
