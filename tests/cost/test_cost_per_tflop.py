"""S1/S2: cost per TFLOP = hourly price / FP16 TFLOPS, reproduced from the catalog and offers."""

import pytest

from whichgpu.catalog.offers import load_offer_set
from whichgpu.cost.per_tflop import catalog_rows

# The S2 $/TFLOP/h column, to the article's rounding (4 decimals).
S2_COLUMN = {"rtx-4090": 0.0018, "b200": 0.0019, "a100-80gb-sxm": 0.0023, "h100-sxm": 0.0032,
             "h200-sxm": 0.0038, "l40s": 0.0041}


def _s2_rows(precision):
    offers = list(load_offer_set("article-000"))
    rows = catalog_rows(precision=precision, offers=offers, priced_only=True)
    return [r for r in rows if r.gpu.id in S2_COLUMN]


def test_s2_cost_per_tflop_column_matches_to_the_articles_rounding():
    rows = _s2_rows("article-000:fp16")
    assert {r.gpu.id: round(r.cost_per_tflop_hour.amount, 4) for r in rows} == S2_COLUMN
    assert all(r.cost_per_tflop_hour.currency == "USD" for r in rows)


def test_s2_ranking_is_4090_first_b200_second_l40s_last():
    order = [r.gpu.id for r in _s2_rows("article-000:fp16")]
    assert order[:2] == ["rtx-4090", "b200"]
    assert order[-1] == "l40s"


def test_dense_bf16_ranking_differs_from_the_article():
    # With dense BF16 (FP32 accumulate) the 4090 drops from first: its 165 TFLOPS, not 330.
    order = [r.gpu.id for r in _s2_rows("bf16")]
    assert order[0] == "b200"
    assert order.index("rtx-4090") > order.index("h100-sxm")
    assert order[-1] == "l40s"


def test_every_row_names_the_figure_it_used():
    for r in _s2_rows("bf16"):
        assert r.figure.basis == "bf16" and "dense" in r.figure.meaning
        assert r.to_json()["precision_meaning"] == r.figure.meaning


def test_unsupported_precision_gives_no_cost_rather_than_a_wrong_one():
    offers = list(load_offer_set("article-000"))
    rows = {r.gpu.id: r for r in catalog_rows(precision="fp8", offers=offers, priced_only=True)}
    assert rows["a100-80gb-sxm"].cost_per_tflop_hour is None  # no FP8 on the A100 (S21)
    assert rows["h100-sxm"].cost_per_tflop_hour.amount == pytest.approx(3.15 / 1979)
