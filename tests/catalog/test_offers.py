import pytest

from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.offers import load_offer_file, load_offer_set
from whichgpu.catalog.prices.selection import get_offers
from whichgpu.errors import DataError, NotFoundError
from whichgpu.units import Money


def test_vramfarm_set_has_the_s20_prices_and_billing():
    offers = {o.gpu: o for o in load_offer_set("vramfarm-2026-11")}
    assert {g: o.price_per_hour for g, o in offers.items()} == {
        "rtx-4090": Money(0.59, "EUR"), "a100-80gb-sxm": Money(1.46, "EUR"),
        "h100-sxm": Money(3.90, "EUR"), "rtx-a6000": Money(0.72, "EUR"),
        "l40s": Money(1.06, "EUR")}
    assert all(o.billing == BillingRule(increment_s=60, minimum_s=900) for o in offers.values())
    assert all(o.source == "S20" and o.observed_at == "2026-11-12" for o in offers.values())


def test_article_000_set_is_in_usd_with_its_sources():
    offers = load_offer_set("article-000")
    assert {o.price_per_hour.currency for o in offers} == {"USD"}
    assert {o.source for o in offers} <= {"S2", "S4", "S8"}


def test_billing_rounds_up_to_the_increment_after_the_minimum():
    rule = BillingRule(increment_s=60, minimum_s=900)
    assert rule.billed_seconds(5 * 60) == 900  # 5 minutes cost 15
    assert rule.billed_seconds(16 * 60 + 1) == 17 * 60  # 16 min 1 s -> 17 minutes
    assert rule.billed_seconds(12000) == 12000


def test_user_offer_file_loads(tmp_path):
    f = tmp_path / "quotes.csv"
    f.write_text("provider,gpu,gpu_count,price_per_hour,currency\nacme,H100 SXM,8,20.0,USD\n")
    (offer,) = load_offer_file(f)
    assert offer.gpu == "h100-sxm" and offer.gpu_count == 8
    assert offer.price_per_gpu_hour == Money(2.5, "USD")
    assert get_offers(str(f))[0].provider == "acme"


@pytest.mark.parametrize(("row", "field"), [
    ("acme,h100-sxm,1,-3,USD", "price_per_hour"),
    ("acme,h100-sxm,1,abc,USD", "price_per_hour"),
    ("acme,h100-sxm,1.5,3,USD", "gpu_count"),
    ("acme,h100-sxm,1,3,dollars", "currency"),
    ("acme,H100,1,3,USD", "gpu"),  # ambiguous variant: reported, not guessed
    ("acme,zz9000,1,3,USD", "gpu"),
    (",h100-sxm,1,3,USD", "provider"),
])
def test_malformed_offer_file_names_file_row_and_field(tmp_path, row, field):
    f = tmp_path / "bad.csv"
    f.write_text("provider,gpu,gpu_count,price_per_hour,currency\n" + row + "\n")
    with pytest.raises(DataError) as info:
        load_offer_file(f)
    assert info.value.row == 2 and info.value.field == field
    assert "bad.csv" in str(info.value)


def test_missing_columns_are_named(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("provider,gpu\nacme,h100-sxm\n")
    with pytest.raises(DataError, match="price_per_hour"):
        load_offer_file(f)


def test_unknown_offer_set_suggests_the_shipped_ones():
    with pytest.raises(NotFoundError, match="vramfarm-2026-11"):
        get_offers("vramfarm-2026")
