"""The shipped catalog is reviewed data: every value sourced, in a sane range, self-consistent."""

import re

import pytest

from whichgpu.catalog.gpus import PRECISIONS, default_catalog
from whichgpu.units import GB, MiB

CATALOG = default_catalog()
GPUS = CATALOG.gpus
ARTICLE_ID = re.compile(r"S([1-9]|[12]\d|30)$")

REQUIRED = {
    "b200", "gb200", "h200-sxm", "h200-nvl", "h100-sxm", "h100-pcie", "h100-nvl",
    "a100-80gb-sxm", "a100-80gb-pcie", "a100-40gb", "l40s", "l40", "l4", "a10g", "a10",
    "rtx-4090", "rtx-5090", "rtx-3090", "rtx-a6000", "rtx-6000-ada", "mi300x", "mi325x",
    "mi355x", "t4",
}


def _sourced_fields(g):
    yield from ((n, getattr(g, n)) for n in (
        "architecture", "compute_capability", "launch_year", "memory_gb", "memory_usable_mib",
        "memory_type", "bandwidth_gb_s", "tdp_w"))
    ic = g.interconnect
    yield from ((f"interconnect.{n}", getattr(ic, n)) for n in (
        "kind", "bandwidth_gb_s", "direction", "peer_to_peer", "domain_gpus", "host_link"))


def _known_source(key: str) -> bool:
    return key in CATALOG.sources or bool(ARTICLE_ID.match(key))


def test_catalog_has_every_gpu_the_issue_names():
    ids = {g.id for g in GPUS}
    assert REQUIRED <= ids
    assert any(g.family == "v100" for g in GPUS)


@pytest.mark.parametrize("g", GPUS, ids=lambda g: g.id)
def test_every_value_has_a_known_source(g):
    for name, sv in _sourced_fields(g):
        assert _known_source(sv.source), f"{g.id}.{name}: unknown source {sv.source!r}"
    for key, t in g.throughput.items():
        assert t.source and _known_source(t.source), f"{g.id}.tflops.{key}"
    if g.purchase_price:
        assert _known_source(g.purchase_price.source)
        assert g.purchase_price.low <= g.purchase_price.high


@pytest.mark.parametrize("g", GPUS, ids=lambda g: g.id)
def test_values_are_in_sane_ranges(g):
    assert 8 <= float(g.memory_gb.value) <= 400
    assert 100 <= float(g.bandwidth_gb_s.value) <= 20_000
    assert 50 <= g.tdp_watts <= 2000
    assert 2015 <= int(g.launch_year.value) <= 2027
    # usable memory (MiB) is within 10 % of marketed GB, either side of the GB/GiB gap
    assert 0.88 <= g.usable_memory_bytes / (float(g.memory_gb.value) * GB) <= 1.12
    assert g.memory_usable_mib.value * MiB == g.usable_memory_bytes


@pytest.mark.parametrize("g", GPUS, ids=lambda g: g.id)
def test_throughput_is_dense_and_consistent(g):
    for key, t in g.throughput.items():
        assert key in PRECISIONS
        if t.status != "supported":
            assert t.tflops is None
            continue
        assert t.tflops and t.tflops > 0, f"{g.id}.{key}"
        if t.sparse_tflops is not None:
            # dense <= sparse, and vendors' sparse figure is 2x dense
            assert t.tflops <= t.sparse_tflops
            assert t.sparse_tflops / t.tflops == pytest.approx(2, rel=0.02), f"{g.id}.{key}"
    bf16, fp8 = g.tflops("bf16"), g.tflops("fp8")
    if bf16 and fp8:
        assert fp8 >= bf16, f"{g.id}: fp8 slower than bf16"
    if g.tflops("fp16_acc16") is not None:
        assert g.tflops("fp16_acc16") >= g.tflops("fp16")


def test_unsupported_is_not_the_same_as_unknown():
    a100 = CATALOG.get("a100-80gb-sxm")
    assert a100.throughput_at("fp8").status == "unsupported"  # S21: no FP8 on the A100
    assert CATALOG.get("h100-sxm").throughput_at("fp8").status == "supported"
    # A precision the file does not mention is unknown, not unsupported.
    assert CATALOG.get("l40").throughput_at("fp64").status == "unknown"


def test_geforce_cards_carry_both_accumulate_rates():
    g = CATALOG.get("rtx-4090")
    assert g.tflops("bf16") == pytest.approx(165.2)  # S21/S22: FP32 accumulate
    assert g.tflops("fp16_acc16") == pytest.approx(2 * 165.2, rel=0.01)  # doubles (S22)


def test_data_centre_cards_fall_back_to_the_single_fp16_rate():
    g = CATALOG.get("h100-sxm")
    assert g.tflops("fp16_acc16") == g.tflops("fp16")


def test_article_s21_table_matches_the_catalog():
    # S21: bandwidth, dense BF16, FP8, power, interconnect for the three compared cards.
    rtx, a100, h100 = (CATALOG.get(i) for i in ("rtx-4090", "a100-80gb-sxm", "h100-sxm"))
    assert float(rtx.bandwidth_gb_s.value) == 1008
    assert float(h100.bandwidth_gb_s.value) == 3350
    assert abs(float(a100.bandwidth_gb_s.value) - 2000) < 50
    assert h100.tflops("bf16") == pytest.approx(989, abs=1)
    assert a100.tflops("bf16") == 312
    assert h100.tflops("fp8") == pytest.approx(1979, abs=1)
    assert float(h100.interconnect.bandwidth_gb_s.value) == 900
    assert float(a100.interconnect.bandwidth_gb_s.value) == 600
    assert rtx.interconnect.peer_to_peer.value is False  # S23


def test_h100_80gb_shows_81559_mib_like_nvidia_smi():
    assert CATALOG.get("h100-sxm").memory_usable_mib.value == 81559


def test_conflicts_are_recorded_with_a_note():
    b200 = CATALOG.get("b200")
    assert "192" in b200.memory_gb.note  # 180 vs 192 GB
    assert "300" in CATALOG.get("l40s").tdp_w.note  # L40S TDP conflict
    assert "288" in CATALOG.get("mi325x").memory_gb.note  # MI325X memory conflict


def test_quoted_figures_point_at_catalog_gpus():
    ids = {g.id for g in GPUS}
    for q in CATALOG.quoted:
        assert q.gpu in ids and ARTICLE_ID.match(q.source)


# Sources that are not a URL must say why (the exact-string search of public nvidia-smi outputs).
NON_URL_SOURCES = {"nvsmi-search"}


def test_every_source_is_a_url_unless_it_explains_itself():
    for key, text in CATALOG.sources.items():
        if key in NON_URL_SOURCES:
            assert "nvidia-smi" in text and "URL" in text
        else:
            assert text.startswith("https://"), f"[sources] {key} is not a URL"


@pytest.mark.parametrize("g", GPUS, ids=lambda g: g.id)
def test_usable_memory_comes_from_a_real_smi_output_or_is_flagged(g):
    sv = g.memory_usable_mib
    from_smi = sv.source.startswith(("nvsmi-", "rocm-"))
    assert from_smi or "unverified" in (sv.note or ""), f"{g.id}: neither measured nor flagged"


def test_geforce_blackwell_and_ada_accumulate_rates_follow_the_whitepapers():
    rtx5090, rtx4090 = CATALOG.get("rtx-5090"), CATALOG.get("rtx-4090")
    # RTX Blackwell whitepaper Table 3 (dense): FP32 accumulate runs at half the FP16-acc rate.
    assert rtx5090.tflops("bf16") == pytest.approx(209.5)
    assert rtx5090.tflops("fp16_acc16") == pytest.approx(419)
    assert rtx5090.tflops("fp8") == pytest.approx(419)
    assert rtx5090.tflops("fp8_acc16") == pytest.approx(838)
    assert rtx5090.tflops("fp4") == pytest.approx(1676)
    # Ada whitepaper v2.02+ Appendix A: FP8 with FP32 accumulate is 330.3, not 660.6.
    assert rtx4090.tflops("fp8") == pytest.approx(330.3)
    assert rtx4090.tflops("fp8_acc16") == pytest.approx(660.6)


def test_blackwell_per_gpu_figures_follow_nvidias_current_tables():
    b200, gb200 = CATALOG.get("b200"), CATALOG.get("gb200")
    assert float(b200.bandwidth_gb_s.value) == 7700
    assert "8 TB/s" in b200.bandwidth_gb_s.note  # the DGX/marketing figure is recorded
    assert b200.tflops("bf16") == 2250 and gb200.tflops("bf16") == 2500
    assert gb200.tflops("fp64") == 40 and gb200.tflops("fp32") == 80
    assert "45" in gb200.throughput_at("fp64").note  # the GTC 2024 / Epoch figure is recorded


def test_mi355x_is_not_confused_with_the_mi350x():
    mi355x = CATALOG.get("mi355x")
    assert mi355x.tflops("fp8") == pytest.approx(5033.2)
    assert "4,600" in mi355x.throughput_at("fp8").note  # Epoch's MI350X figure, recorded as such
    assert mi355x.tdp_watts == 1400
