"""Each price source yields offers in our schema, with a source and a timestamp on every one."""

import io
import json
import zipfile

import pytest

from prices_support import DATA, GPUHUNT_DIR, Route, serve, write_offers
from whichgpu.catalog.prices.file import FileSource
from whichgpu.catalog.prices.gpuhunt_source import (
    GpuhuntItem,
    GpuhuntSource,
    items_to_feed,
    read_catalog_csv,
)
from whichgpu.catalog.prices.shipped import ShippedSource
from whichgpu.catalog.prices.sources import parse_time, utc_now
from whichgpu.catalog.prices.url import UrlSource, check_url
from whichgpu.errors import DataError, InputError
from whichgpu.units import Money


@pytest.fixture
def online(monkeypatch):
    """Network sources allowed (they only ever reach the loopback server in these tests)."""
    monkeypatch.delenv("WHICHGPU_OFFLINE", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


def test_every_offer_of_every_source_has_a_source_and_a_timestamp():
    feeds = [*ShippedSource().fetch(), *FileSource(DATA / "quotes.csv").fetch(),
             *GpuhuntSource(catalog_dir=GPUHUNT_DIR).fetch()]
    for feed in feeds:
        for o in feed.offers:
            assert o.source and o.offer_set == feed.feed
            if feed.feed != "article-000":  # the one undated article, flagged as such
                assert parse_time(o.observed_at) is not None


# ------------------------------------------------------------------------ shipped

def test_shipped_source_yields_each_dated_set_with_a_digest():
    feeds = {f.feed: f for f in ShippedSource().fetch()}
    assert set(feeds) == {"article-000", "vramfarm-2026-11"}
    vram = feeds["vramfarm-2026-11"]
    assert len(vram.offers) == 5 and len(vram.digest) == 64
    assert {o.price_per_hour.currency for o in vram.offers} == {"EUR"}


# ------------------------------------------------------------------------ file

def test_file_source_maps_provider_spellings_and_dates_undated_rows():
    (feed,) = FileSource(DATA / "quotes.csv", observed_at="2026-11-27").fetch()
    assert feed.feed == "quotes" and feed.kind == "file"
    by_gpu = {o.gpu: o for o in feed.offers}
    assert set(by_gpu) == {"h100-pcie", "a100-80gb-sxm", "rtx-4090", "h100-sxm", "l40s"}
    assert by_gpu["a100-80gb-sxm"].price_per_gpu_hour == Money(1.30, "USD")
    assert by_gpu["l40s"].price_per_hour == Money(2.80, "EUR")
    assert by_gpu["rtx-4090"].spot and by_gpu["h100-pcie"].billing.minimum_s == 600
    assert by_gpu["h100-sxm"].observed_at == "2026-11-27"  # the undated row
    assert by_gpu["h100-pcie"].observed_at == "2026-11-28"


@pytest.mark.parametrize(("row", "field"), [
    ("acme,H100,1,2.0,USD,false,,", "gpu"),  # ambiguous
    ("acme,A100-80GB,1,2.0,USD,false,,", "gpu"),  # SXM or PCIe?
    ("acme,H100 PCIe,1,2.0,USD,maybe,,", "spot"),
    ("acme,H100 PCIe,1,2.0,USD,false,,yesterday", "observed_at"),
    ("acme,H100 PCIe,1,0,USD,false,,", "price_per_hour"),
])
def test_file_source_errors_name_the_file_row_and_field(tmp_path, row, field):
    path = write_offers(tmp_path / "q.csv", "acme,L4,1,0.5,USD,false,,", row)
    with pytest.raises(DataError) as info:
        list(FileSource(path).fetch())
    assert (info.value.row, info.value.field) == (3, field)
    assert "q.csv, row 3" in str(info.value)


# ------------------------------------------------------------------------ URL

def test_url_source_reads_the_json_schema_and_reports_unknown_gpus(online):
    body = (DATA / "feed.json").read_bytes()
    with serve({"/prices.json": Route(body)}) as base:
        (feed,) = UrlSource("broker", f"{base}/prices.json", allow_http=True).fetch()
    assert feed.error is None and feed.version == "2026-11-29.1"
    assert {o.gpu for o in feed.offers} == {"h100-sxm", "h100-pcie", "rtx-4090"}
    assert {o.observed_at for o in feed.offers} == {"2026-11-29T12:00:00Z",
                                                   "2026-11-29T08:00:00Z"}
    reasons = {u.name: u.reason for u in feed.unmapped}
    assert set(reasons) == {"H100", "Rubin CPX"} and "ambiguous" in reasons["H100"]


def test_url_source_is_https_only_unless_told(online):
    with pytest.raises(InputError, match="plain http"):
        UrlSource("x", "http://prices.example/p.json")
    with pytest.raises(InputError, match="not an https URL"):
        check_url("ftp://prices.example/p.json")
    assert UrlSource("x", "https://prices.example/p.json").url.startswith("https://")


def test_url_source_refuses_a_redirect_from_https_to_plain_http():
    import urllib.request

    from whichgpu.catalog.prices.url import _SafeRedirects

    req = urllib.request.Request("https://prices.example/p.json")
    with pytest.raises(InputError, match="plain http"):
        _SafeRedirects(False).redirect_request(req, None, 302, "Found", {},
                                               "http://prices.example/p.json")
    assert _SafeRedirects(False).redirect_request(
        req, None, 302, "Found", {}, "https://mirror.example/p.json").full_url.startswith(
        "https://mirror")


def test_url_source_follows_redirects_it_allows(online):
    body = (DATA / "feed.json").read_bytes()
    with serve({"/old.json": Route(status=301, headers=(("Location", "/new.json"),)),
                "/new.json": Route(body)}) as base:
        (feed,) = UrlSource("x", f"{base}/old.json", allow_http=True).fetch()
    assert feed.error is None and len(feed.offers) == 3


def test_url_source_stops_at_the_size_limit(online):
    with serve({"/big.json": Route(b"[" + b" " * 5000 + b"]")}) as base:
        (feed,) = UrlSource("x", f"{base}/big.json", allow_http=True, max_bytes=1000).fetch()
    assert "limit" in feed.error and not feed.offers


def test_url_source_times_out(online):
    with serve({"/slow.json": Route(b"[]", delay_s=2)}) as base:
        (feed,) = UrlSource("x", f"{base}/slow.json", allow_http=True, timeout_s=0.3).fetch()
    assert "timed out" in feed.error


def test_url_source_http_error_is_a_failed_feed_not_an_exception(online):
    with serve({}) as base:
        (feed,) = UrlSource("x", f"{base}/missing.json", allow_http=True).fetch()
    assert "HTTP 404" in feed.error


def test_url_source_refuses_to_run_offline():
    with pytest.raises(InputError, match="WHICHGPU_OFFLINE"):
        list(UrlSource("x", "https://prices.example/p.json").fetch())


# ------------------------------------------------------------------------ gpuhunt

def test_gpuhunt_files_map_to_our_ids_in_usd_with_provider_region_and_spot():
    feeds = {f.feed: f for f in GpuhuntSource(catalog_dir=GPUHUNT_DIR).fetch()}
    assert set(feeds) == {f"gpuhunt/{p}" for p in
                          ("aws", "azure", "gcp", "lambdalabs", "runpod", "verda")}
    aws = feeds["gpuhunt/aws"]
    p5 = [o for o in aws.offers if o.gpu == "h100-sxm"]
    assert {(o.region, o.spot, o.price_per_hour.amount) for o in p5} == {
        ("us-east-1", False, 55.04), ("us-east-1", True, 30.12), ("eu-west-1", False, 57.6)}
    assert all(o.gpu_count == 8 and o.price_per_hour.currency == "USD" for o in p5)
    assert "p5.48xlarge" in p5[0].note and aws.skipped == {"no GPU": 1}
    runpod = {o.gpu for o in feeds["gpuhunt/runpod"].offers}
    assert {"h100-sxm", "h100-pcie", "h100-nvl", "a100-80gb-sxm", "a100-80gb-pcie"} <= runpod
    assert feeds["gpuhunt/gcp"].skipped == {"google accelerator (outside the catalog)": 1}


def test_gpuhunt_unmapped_names_are_reported_with_their_instance():
    feeds = {f.feed: f for f in GpuhuntSource(catalog_dir=GPUHUNT_DIR).fetch()}
    lam = {(u.name, u.instance) for u in feeds["gpuhunt/lambdalabs"].unmapped}
    assert lam == {("GH200", "gpu_1x_gh200")}  # not in the catalog: reported, not guessed
    # Lambda's plain gpu_1x_a100 is the A100 PCIe 40GB card, now in the catalog.
    assert "a100-40gb-pcie" in {o.gpu for o in feeds["gpuhunt/lambdalabs"].offers}
    (azure,) = feeds["gpuhunt/azure"].unmapped
    assert azure.instance == "Standard_NV6ads_A10_v5" and "fractional" in azure.reason


def test_gpuhunt_online_items_without_variant_evidence_are_reported():
    # What gpuhunt's query() returns for Vast.ai: the instance name is an offer id.
    items = [GpuhuntItem("vastai", "18512345", "us-ca", 1.6, 1, "H100", 80.0, False),
             GpuhuntItem("vastai", "18512346", "us-ca", 1.7, 1, "H100", 80.0, False),
             GpuhuntItem("vastai", "18512347", "se", 0.31, 1, "RTX4090", 24.0, False)]
    feed = items_to_feed(items, provider="vastai", fetched_at=utc_now())
    assert [o.gpu for o in feed.offers] == ["rtx-4090"]
    (h100,) = feed.unmapped
    assert h100.rows == 2 and set(h100.candidates) >= {"h100-sxm", "h100-pcie"}


def test_our_reader_agrees_with_gpuhunts_own_loader_on_the_recorded_files():
    from gpuhunt._internal import storage

    for path in GPUHUNT_DIR.glob("*.csv"):
        with path.open(newline="") as f:
            theirs = [GpuhuntItem.from_catalog_item(i) for i in
                      storage.load(f, provider=path.stem)]
        ours, bad = read_catalog_csv(path.read_text(), provider=path.stem, path=path)
        assert bad == 0 and ours == theirs


def test_a_file_without_gpuhunts_columns_is_a_failed_feed(tmp_path):
    (tmp_path / "aws.csv").write_text("name,cost\np5,55\n")
    (feed,) = GpuhuntSource(catalog_dir=tmp_path).fetch()
    assert feed.feed == "gpuhunt/aws" and "missing column(s)" in feed.error


def _zip(provider: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(f"{provider}.csv", (GPUHUNT_DIR / f"{provider}.csv").read_text())
    return out.getvalue()


def test_gpuhunt_live_through_gpuhuntss_own_client_one_failing_provider_blocks_nothing(
        online, monkeypatch):
    routes = {}
    for provider in ("aws", "runpod"):
        routes[f"/v3/{provider}/version"] = Route(b"20261130-7\n")
        routes[f"/v3/{provider}/20261130-7/catalog.zip"] = Route(_zip(provider))
    routes["/v3/gcp/version"] = Route(b"20261130-7\n")  # then its zip is missing
    with serve(routes) as base:
        monkeypatch.setenv("GPUHUNT_CATALOG_URL", f"{base}/v3")
        src = GpuhuntSource(["aws", "runpod", "gcp", "azure"], timeout_s=5)
        feeds = {f.feed: f for f in src.fetch()}
    assert feeds["gpuhunt/aws"].error is None and feeds["gpuhunt/aws"].version == "20261130-7"
    assert len(feeds["gpuhunt/aws"].offers) == 8 and len(feeds["gpuhunt/runpod"].offers) == 9
    assert "404" in feeds["gpuhunt/gcp"].error and "404" in feeds["gpuhunt/azure"].error
    src_text = feeds["gpuhunt/aws"].offers[0].source
    assert src_text == "gpuhunt aws catalog 20261130-7"


def test_gpuhunt_live_refuses_to_run_offline():
    with pytest.raises(InputError, match="WHICHGPU_OFFLINE"):
        list(GpuhuntSource(["aws"]).fetch())


def test_unknown_gpuhunt_provider_is_an_input_error():
    with pytest.raises(InputError, match="lambdalabs"):
        GpuhuntSource(["lambda"])


def test_recorded_gpuhunt_files_have_gpuhunts_exact_columns():
    from gpuhunt._internal.storage import CATALOG_V2_FIELDS

    for path in GPUHUNT_DIR.glob("*.csv"):
        assert path.read_text().splitlines()[0].split(",") == CATALOG_V2_FIELDS
    assert json.loads((DATA / "feed.json").read_text())["offers"]
