"""GCP offers from SkyPilot's catalog: each GPU row paired with its host VM row, as SkyPilot
pairs them, replayed from real rows of ``catalogs/v8/gcp/vms.csv`` (tests/data/prices/skypilot/
README.md says which rows and how they were read)."""

from __future__ import annotations

import csv

import pytest

from paths import DATA
from prices_support import Route, serve
from whichgpu.catalog.prices import PriceStore, current_offers
from whichgpu.catalog.prices.refresh import refresh
from whichgpu.catalog.prices.skypilot import (
    CATALOG_VERSION,
    SkyPilotSource,
    feed_from_rows,
    read_vms_csv,
)
from whichgpu.errors import DataError

EXCERPT = DATA / "prices" / "skypilot" / "gcp-v8-excerpt.csv"


def _raw() -> tuple[dict, dict]:
    """The excerpt's host rows by (instance, zone) and GPU rows by (name, count, zone), read
    with the csv module alone (not with the code under test)."""
    hosts, gpus = {}, {}
    with EXCERPT.open(newline="") as fh:
        for r in csv.DictReader(fh):
            if r["InstanceType"]:
                hosts[(r["InstanceType"], r["AvailabilityZone"])] = r
            elif not r["AcceleratorName"].startswith("tpu-"):
                key = (r["AcceleratorName"], int(r["AcceleratorCount"]), r["AvailabilityZone"])
                gpus[key] = r
    return hosts, gpus


def _rows():
    return read_vms_csv(EXCERPT.read_text(), path=EXCERPT.name, cloud="gcp")


def _num(text: str) -> float | None:
    return float(text) if text else None


def test_each_offer_row_is_the_host_vm_plus_the_gpu_row_of_the_same_zone():
    hosts, gpus = _raw()
    rows, _ = _rows()
    assert rows
    for r in rows:
        zone = r.parts.gpu.zone
        gpu, host = gpus[(r.accelerator, r.count, zone)], hosts[(r.instance, zone)]
        assert r.region == gpu["Region"] == host["Region"]
        gpu_od, gpu_spot = _num(gpu["Price"]), _num(gpu["SpotPrice"])
        if gpu_spot is not None and gpu_od < gpu_spot:
            assert r.price is None  # dropped: see the below-spot test
        else:
            assert r.price == pytest.approx(float(host["Price"]) + gpu_od)
        assert r.spot == pytest.approx(float(host["SpotPrice"]) + gpu_spot)


def test_the_host_is_the_machine_type_skypilot_attaches_to_that_gpu_count():
    """sky/catalog/gcp_catalog.py: A100 x4 on a2-highgpu-4g, A100-80GB on a2-ultragpu, H100 on
    a3-highgpu-Ng; a T4 on the cheapest N1 host with >= 4 vCPUs and >= 16 GiB (n1-highmem-4,
    not the cheaper n1-highmem-2 with 2 vCPUs, nor the dearer n1-highmem-32)."""
    pairs = {(r.accelerator, r.count, r.parts.gpu.zone): r.instance for r in _rows()[0]}
    assert pairs[("A100", 4, "us-central1-a")] == "a2-highgpu-4g"
    assert pairs[("A100", 8, "europe-west4-b")] == "a2-highgpu-8g"
    assert pairs[("A100-80GB", 1, "us-east5-a")] == "a2-ultragpu-1g"
    assert pairs[("H100", 1, "us-east4-a")] == "a3-highgpu-1g"
    assert pairs[("H100", 2, "europe-west4-b")] == "a3-highgpu-2g"
    assert pairs[("T4", 1, "us-central1-a")] == "n1-highmem-4"
    assert pairs[("T4", 1, "europe-west4-a")] == "n1-highmem-4"


def test_a_gpu_row_without_a_host_row_is_reported_never_priced_alone():
    """The excerpt has the H100 x8 and L4 rows but not their a3-highgpu-8g / g2-standard-4
    host rows: no offer carries those GPUs, and the skip reasons name them with their rows."""
    rows, skipped = _rows()
    assert not [r for r in rows if (r.accelerator, r.count) in (("H100", 8), ("L4", 1))]
    _, gpus = _raw()
    for name, count in (("H100", 8), ("L4", 1)):
        n = sum(1 for k in gpus if k[:2] == (name, count))
        (reason,) = [k for k in skipped if "no host VM row" in k and f"{count} x {name}" in k]
        assert skipped[reason] == n > 0
    assert skipped["TPU (not a GPU)"] == 3


def test_an_on_demand_gpu_price_below_its_own_spot_price_is_dropped_and_reported():
    """The A100-80GB row of us-central1-a lists $1.8462/h on demand and $1.964/h spot: not
    GCP's on-demand rate (spot is a discount off it), so that zone gives a spot price only."""
    rows, skipped = _rows()
    (row,) = [r for r in rows if (r.accelerator, r.count, r.parts.gpu.zone)
              == ("A100-80GB", 1, "us-central1-a")]
    assert row.price is None and row.spot is not None
    assert any("below its own spot price" in k and "1 x A100-80GB" in k for k in skipped)


def test_offers_map_through_the_name_table_and_name_the_pairing():
    rows, skipped = _rows()
    result = feed_from_rows(rows, cloud="gcp", observed_at="2026-12-01", source="t",
                            skipped=skipped)
    gpus = {(o.gpu, o.instance_type) for o in result.offers}
    assert {("a100-40gb", "a2-highgpu-4g"), ("a100-80gb-sxm", "a2-ultragpu-1g"),
            ("h100-sxm", "a3-highgpu-1g"), ("t4", "n1-highmem-4")} <= gpus
    assert not result.unmapped
    hosts, gpu_rows = _raw()
    for o in result.offers:
        assert o.provider == "GCP" and o.billing.increment_s == 1 and o.billing.minimum_s == 60
        assert "SkyPilot's pairing" in o.note and "host VM " + o.instance_type in o.note
    (t4,) = [o for o in result.offers if o.gpu == "t4" and not o.spot]
    expected = min(float(hosts[("n1-highmem-4", z)]["Price"])
                   + float(gpu_rows[("T4", 1, z)]["Price"])
                   for z in ("us-central1-a", "europe-west4-a"))
    assert t4.price_per_hour.amount == pytest.approx(expected)


def test_a_file_without_the_zone_column_is_refused():
    text = EXCERPT.read_text()
    header, *body = text.splitlines()
    cut = header.replace(",AvailabilityZone", "")
    with pytest.raises(DataError, match="AvailabilityZone"):
        read_vms_csv("\n".join([cut, *body]) + "\n", path="gcp", cloud="gcp")


def test_a_refresh_replays_the_recorded_gcp_rows_and_stores_paired_offers(monkeypatch):
    monkeypatch.delenv("WHICHGPU_OFFLINE")
    routes = {f"/catalogs/{CATALOG_VERSION}/gcp/vms.csv": Route(EXCERPT.read_bytes())}
    with serve(routes) as base:
        (outcome,) = refresh([SkyPilotSource(["gcp"], base=base)], PriceStore()).outcomes
    assert outcome.status == "updated" and outcome.feed == "skypilot/gcp"
    assert any("no host VM row" in k for k in outcome.skipped)
    offers = current_offers("skypilot/gcp").offers
    assert {o.gpu for o in offers} >= {"a100-40gb", "a100-80gb-sxm", "h100-sxm", "t4"}
    rows, _ = _rows()
    for o in offers:
        candidates = [(r.spot if o.spot else r.price) for r in rows
                      if r.instance == o.instance_type and r.count == o.gpu_count]
        assert o.price_per_hour.amount == pytest.approx(min(p for p in candidates if p))


def test_a_plain_skypilot_refresh_leaves_gcp_out_and_reads_it_when_named():
    """GCP's GPU rows mix list prices with other SKUs' (docs/prices.md): the cheapest region
    would under-price it, so only ``--source skypilot/gcp`` reads it."""
    from whichgpu.catalog.prices.registry import get_source
    from whichgpu.catalog.prices.skypilot import CLOUDS

    plain = SkyPilotSource()
    assert "gcp" not in plain.clouds
    assert set(plain.clouds) == set(CLOUDS) - {"gcp"}
    assert SkyPilotSource(["gcp"]).clouds == ["gcp"]
    named = get_source("skypilot/gcp", PriceStore())
    assert isinstance(named, SkyPilotSource) and named.clouds == ["gcp"]
