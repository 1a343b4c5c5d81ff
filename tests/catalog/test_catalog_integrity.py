"""The shipped catalog is reviewed data: every value sourced, in a sane range, self-consistent."""

import re

import pytest

from whichgpu.catalog.gpus import FORM_FACTORS, PRECISIONS, default_catalog, load_catalog
from whichgpu.errors import DataError
from whichgpu.units import GB, GiB, MiB, check_currency

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
    assert g.form_factor in FORM_FACTORS and _known_source(g.form_factor_source), g.id
    if g.purchase_price:
        assert _known_source(g.purchase_price.source)
        assert g.purchase_price.low <= g.purchase_price.high


@pytest.mark.parametrize("g", GPUS, ids=lambda g: g.id)
def test_values_are_in_sane_ranges(g):
    assert 8 <= float(g.memory_gb.value) <= (600 if g.unified_memory else 400)
    assert 100 <= float(g.bandwidth_gb_s.value) <= 20_000
    assert 50 <= g.tdp_watts <= 2000
    assert 2015 <= int(g.launch_year.value) <= 2027
    ratio = g.usable_memory_bytes / (float(g.memory_gb.value) * GB)
    if g.unified_memory:
        # the GPU's share of a shared memory (sold in GiB: "128 GB" is 128 GiB): what the OS
        # lets it use, never all of it
        share = g.usable_memory_bytes / (float(g.memory_gb.value) * GiB)
        assert 0.5 <= share < 1.0, g.id
    else:
        # usable memory (MiB) is within 10 % of marketed GB, either side of the GB/GiB gap
        assert 0.88 <= ratio <= 1.12
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


def test_every_source_is_a_url():
    for key, text in CATALOG.sources.items():
        assert text.startswith("https://"), f"[sources] {key} is not a URL"


@pytest.mark.parametrize("g", GPUS, ids=lambda g: g.id)
def test_every_gpu_has_a_purchase_price_or_says_why_not(g):
    p, none = g.purchase_price, g.no_public_price
    assert (p is None) != (none is None), f"{g.id}: needs purchase_price or no_public_price"
    if p is not None:
        assert check_currency(p.currency) == p.currency and 0 < p.low <= p.high < 100_000
        assert re.fullmatch(r"\d{4}(-\d{2})?", p.date), f"{g.id}: undated price {p.date!r}"
    else:
        assert _known_source(none.source) and len(none.note) > 40, g.id


def test_a_price_that_does_not_exist_is_not_guessed():
    # The A10G is made for AWS and not sold; GB200 GPUs are sold only inside racks.
    assert CATALOG.get("a10g").purchase_price is None
    assert "AWS" in CATALOG.get("a10g").no_public_price.note
    assert "rack" in CATALOG.get("gb200").no_public_price.note


def test_values_resting_on_an_unverified_source_say_so():
    # A source that could not be read in full taints every value that cites it.
    unverified = {k for k, text in CATALOG.sources.items() if "unverified" in text.lower()}
    assert unverified  # nvsmi-a10g at least
    for g in GPUS:
        for name, sv in _sourced_fields(g):
            if sv.source in unverified:
                assert "unverified" in (sv.note or ""), f"{g.id}.{name} cites {sv.source}"


@pytest.mark.parametrize("g", GPUS, ids=lambda g: g.id)
def test_usable_memory_comes_from_a_real_smi_output_or_is_flagged(g):
    sv = g.memory_usable_mib
    from_smi = sv.source.startswith(("nvsmi-", "rocm-"))
    if g.unified_memory:  # no smi total exists: a measured driver limit, with its source
        from_smi = sv.source in ("metal-wired-75", "metal-wired-128", "spark-mem", "strix-gtt")
    assert from_smi or "unverified" in (sv.note or ""), f"{g.id}: neither measured nor flagged"


def test_geforce_fp8_conflict_is_recorded_with_its_reason():
    # Ada whitepaper v2.02 corrected the 4090's FP8/FP32-accumulate row from 660.6 to 330.3;
    # some spec lists still carry the old figure. The catalog keeps the corrected one and says why.
    fp8 = CATALOG.get("rtx-4090").throughput_at("fp8")
    assert fp8.tflops == pytest.approx(330.3)
    assert "v2.02" in fp8.note and "660.6" in fp8.note
    # The 5090's 838 is the FP16-accumulate rate, named as such.
    assert "FP16-accumulate" in CATALOG.get("rtx-5090").throughput_at("fp8").note


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


# ---------------------------------------------------------------- a malformed catalog

GOOD_GPU = """
[sources]
ds = "https://example.org/datasheet.pdf"

[[gpu]]
id = "x1"
name = "Test GPU"
vendor = "nvidia"
family = "x1"
form_factor = "pcie"
form_factor_source = "ds"
platform = { value = "cuda", source = "ds" }
architecture = { value = "Test", source = "ds" }
compute_capability = { value = "9.0", source = "ds" }
launch_year = { value = 2024, source = "ds" }
memory_gb = { value = 80, source = "ds" }
memory_usable_mib = { value = 81559, source = "ds" }
memory_type = { value = "HBM3", source = "ds" }
bandwidth_gb_s = { value = 3350, source = "ds" }
tdp_w = { value = 700, source = "ds" }

[gpu.tflops]
bf16 = { value = 989, source = "ds" }

[gpu.interconnect]
kind = { value = "pcie5", source = "ds" }
bandwidth_gb_s = { value = 128, source = "ds" }
direction = { value = "bidirectional", source = "ds" }
peer_to_peer = { value = true, source = "ds" }
domain_gpus = { value = 8, source = "ds" }
host_link = { value = "pcie5", source = "ds" }
"""


def _write(tmp_path, text):
    path = tmp_path / "gpus.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_well_formed_catalog_file_loads(tmp_path):
    assert load_catalog(_write(tmp_path, GOOD_GPU)).get("x1").tflops("bf16") == 989


def test_catalog_value_without_a_source_names_file_row_and_field(tmp_path):
    path = _write(tmp_path, GOOD_GPU.replace('tdp_w = { value = 700, source = "ds" }',
                                             "tdp_w = { value = 700 }"))
    with pytest.raises(DataError) as info:
        load_catalog(path)
    err = info.value
    assert err.path == str(path) and err.row == 1 and err.field == "tdp_w.source"
    assert "'x1'" in str(err)


def test_catalog_unknown_precision_names_the_gpu_and_the_key(tmp_path):
    path = _write(tmp_path, GOOD_GPU.replace('bf16 = { value = 989, source = "ds" }',
                                             'bf17 = { value = 989, source = "ds" }'))
    with pytest.raises(DataError) as info:
        load_catalog(path)
    err = info.value
    assert err.row == 1 and err.field == "tflops.bf17"
    assert "'x1'" in str(err) and "bf16" in str(err)  # the GPU, and the keys that exist


def test_catalog_source_key_that_is_not_listed_is_refused(tmp_path):
    path = _write(tmp_path, GOOD_GPU.replace('tdp_w = { value = 700, source = "ds" }',
                                             'tdp_w = { value = 700, source = "nowhere" }'))
    with pytest.raises(DataError) as info:
        load_catalog(path)
    assert info.value.field == "tdp_w" and "'nowhere'" in str(info.value)


def test_catalog_that_is_not_toml_names_the_file(tmp_path):
    path = _write(tmp_path, GOOD_GPU + "\n[[gpu]\nid = ")
    with pytest.raises(DataError, match="not valid TOML") as info:
        load_catalog(path)
    assert info.value.path == str(path)


def test_catalog_gpu_cannot_have_a_price_and_no_price(tmp_path):
    both = GOOD_GPU.replace(
        'tdp_w = { value = 700, source = "ds" }',
        'tdp_w = { value = 700, source = "ds" }\n'
        'purchase_price = { low = 1, high = 2, currency = "USD", date = "2026", source = "ds" }\n'
        'no_public_price = { source = "ds", note = "none" }')
    with pytest.raises(DataError, match="not both"):
        load_catalog(_write(tmp_path, both))


# ---------------------------------------------------------------- issue 14: the new cards

NEW_CARDS = {
    "rtx-3060-12gb", "rtx-3070", "rtx-3080-10gb", "rtx-3080-12gb", "rtx-3090-ti",
    "rtx-4060-ti-16gb", "rtx-4070", "rtx-4070-super", "rtx-4070-ti", "rtx-4070-ti-super",
    "rtx-4080", "rtx-4080-super", "rtx-5060-ti-16gb", "rtx-5070", "rtx-5070-ti", "rtx-5080",
    "rtx-pro-6000-server", "rtx-pro-6000-ws", "rtx-pro-6000-maxq", "rtx-5000-ada",
    "rtx-4000-ada", "rtx-a5000", "rtx-a4000", "b300", "gb300", "h20", "h800", "l20", "mi250x",
    "mi210", "gaudi3", "apple-m3-ultra", "apple-m4-max", "apple-m4-pro", "dgx-spark",
    "ryzen-ai-max-395", "rx-7900-xtx", "radeon-ai-pro-r9700", "arc-b580", "arc-pro-b60",
}


def test_catalog_has_every_card_issue_14_names():
    assert NEW_CARDS <= {g.id for g in GPUS}


# (id, memory GB, bandwidth GB/s, TDP W, dense BF16 TFLOPS): the datasheet figures (and, for
# GeForce, NVIDIA's AI TOPS / 16 or / 8 at FP32 accumulate), as the sources in gpus.toml give them.
# The rows of DATASHEET_TYPED below are typed from the vendor's page named beside each, not
# from gpus.toml: a wrong catalog value fails them, not only a later drift.
DATASHEET = [
    ("rtx-3060-12gb", 12, 360, 170, 25.5), ("rtx-3090-ti", 24, 1008, 450, 80.0),
    ("rtx-4060-ti-16gb", 16, 288, 165, 44.1), ("rtx-4070", 12, 504.2, 200, 58.2),
    ("rtx-4080", 16, 716.8, 320, 97.5), ("rtx-4080-super", 16, 736, 320, 104.5),
    ("rtx-5060-ti-16gb", 16, 448, 180, 47.4), ("rtx-5070", 12, 672, 250, 61.8),
    ("rtx-5070-ti", 16, 896, 300, 87.9), ("rtx-5080", 16, 960, 360, 112.6),
    ("rtx-pro-6000-ws", 96, 1792, 600, 500), ("rtx-pro-6000-maxq", 96, 1792, 300, 438.9),
    ("rtx-pro-6000-server", 96, 1597, 600, 467.9), ("rtx-5000-ada", 32, 576, 250, 261.1),
    ("rtx-a5000", 24, 768, 230, 111.1), ("rtx-a4000", 16, 448, 140, 76.7),
    ("b300", 270, 7700, 1100, 2250), ("gb300", 288, 8000, 1400, 2500),
    ("h20", 96, 4000, 400, 148), ("h800", 80, 3350, 700, 989), ("l20", 48, 864, 275, 119.5),
    ("mi250x", 128, 3276.8, 500, 383), ("mi210", 64, 1638.4, 300, 181),
    ("gaudi3", 128, 3700, 900, 1835), ("dgx-spark", 128, 273, 240, 62.5),
    ("rx-7900-xtx", 24, 960, 355, 122.8), ("radeon-ai-pro-r9700", 32, 640, 300, 191),
    ("arc-b580", 12, 456, 190, 116.5), ("arc-pro-b60", 24, 456, 200, 98.5),
    ("apple-m3-ultra", 512, 819, 270, 28.4), ("apple-m4-max", 128, 546, 140, 16.1),
    ("apple-m4-pro", 64, 273, 140, 8.0), ("ryzen-ai-max-395", 128, 256, 120, 59.4),
]


AMPERE_GA102_WP = ("https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-"
                   "whitepaper-v2.pdf")  # Appendix A: RTX 3090 / 3080 / 3070 tables
ADA_4070_FAMILY = "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4070-family/"
# (id, memory GB, bandwidth GB/s, TDP W, dense BF16 TFLOPS at FP32 accumulate, where typed from)
DATASHEET_TYPED = [
    # whitepaper: 8 GB GDDR6 at 14 Gbps on 256 bits = 448 GB/s; 220 W; FP16 tensor with FP32
    # accumulate 40.6 dense (81.3 with sparsity)
    ("rtx-3070", 8, 448, 220, 40.6, AMPERE_GA102_WP),
    # whitepaper: 10 GB GDDR6X at 19 Gbps on 320 bits = 760 GB/s; 320 W; 59.5 dense
    ("rtx-3080-10gb", 10, 760, 320, 59.5, AMPERE_GA102_WP),
    # 12 GB GDDR6X at 19 Gbps on 384 bits = 912 GB/s, 350 W; 70 SMs (8,960 CUDA cores) at the
    # 10 GB card's 1,710 MHz boost: 59.5 x 70 / 68 = 61.25 dense
    ("rtx-3080-12gb", 12, 912, 350, 61.25,
     "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3080-3080ti/"),
    # datasheet: 20 GB GDDR6 ECC, 360 GB/s, 130 W max; Tensor 327.6 TFLOPS (FP8 sparse) / 4
    ("rtx-4000-ada", 20, 360, 130, 81.9,
     "https://www.nvidia.com/en-us/design-visualization/rtx-4000/"),
    # 12 GB GDDR6X at 21 Gbps on 192 bits = 504 GB/s; 220 W; 568 AI TOPS / 8 = 71.0
    ("rtx-4070-super", 12, 504, 220, 71.0, ADA_4070_FAMILY),
    # 12 GB GDDR6X at 21 Gbps on 192 bits = 504 GB/s; 285 W; 641 AI TOPS / 8 = 80.1
    ("rtx-4070-ti", 12, 504, 285, 80.1, ADA_4070_FAMILY),
    # 16 GB GDDR6X at 21 Gbps on 256 bits = 672 GB/s; 285 W; 706 AI TOPS / 8 = 88.25
    ("rtx-4070-ti-super", 16, 672, 285, 88.25, ADA_4070_FAMILY),
]


@pytest.mark.parametrize(("gpu_id", "mem", "bw", "tdp", "bf16", "url"), DATASHEET_TYPED)
def test_cards_match_the_figures_typed_from_their_datasheet(gpu_id, mem, bw, tdp, bf16, url):
    g = CATALOG.get(gpu_id)
    assert float(g.memory_gb.value) == mem, url
    # NVIDIA rounds the bandwidth it prints (504 for 504.2 = 21.008 Gbps x 192 / 8)
    assert float(g.bandwidth_gb_s.value) == pytest.approx(bw, abs=0.5), url
    assert g.tdp_watts == tdp, url
    assert g.tflops("bf16") == pytest.approx(bf16, abs=0.15), url


def test_every_card_issue_14_names_has_its_datasheet_row():
    rows = {r[0] for r in DATASHEET} | {r[0] for r in DATASHEET_TYPED}
    left_out = NEW_CARDS - rows
    assert not left_out, sorted(left_out)


@pytest.mark.parametrize(("gpu_id", "mem", "bw", "tdp", "bf16"), DATASHEET)
def test_new_cards_carry_their_datasheet_figures(gpu_id, mem, bw, tdp, bf16):
    g = CATALOG.get(gpu_id)
    assert float(g.memory_gb.value) == mem and float(g.bandwidth_gb_s.value) == bw
    assert g.tdp_watts == tdp
    assert g.tflops("bf16") == pytest.approx(bf16, abs=0.15)


def test_geforce_rates_follow_the_ai_tops_ratios_of_the_whitepaper_cards():
    # Blackwell GeForce: AI TOPS (FP4 sparse) / 16 = dense BF16 at FP32 accumulate (5090: 209.5)
    for gpu_id, ai_tops in (("rtx-5080", 1801), ("rtx-5070-ti", 1406), ("rtx-5070", 988)):
        g = CATALOG.get(gpu_id)
        assert g.tflops("bf16") == pytest.approx(ai_tops / 16, abs=0.06)
        assert g.tflops("fp16_acc16") == pytest.approx(2 * g.tflops("bf16"), abs=0.11)
        assert g.tflops("fp4") == pytest.approx(ai_tops / 2, abs=0.06)
    # Ada GeForce: AI TOPS (FP8 sparse, FP16 accumulate) / 8 (4090: 1,321 / 8 = 165.2)
    for gpu_id, ai_tops in (("rtx-4070", 466), ("rtx-4070-super", 568), ("rtx-4080", 780)):
        assert CATALOG.get(gpu_id).tflops("bf16") == pytest.approx(ai_tops / 8, abs=0.06)
        assert CATALOG.get(gpu_id).throughput_at("fp4").status == "unsupported"
    # professional cards run FP32 accumulate at the full rate: no separate FP16-acc figure
    pro = CATALOG.get("rtx-pro-6000-ws")
    assert pro.tflops("fp16_acc16") == pro.tflops("bf16") == 4000 / 8


def test_unified_memory_machines_give_the_gpu_what_the_os_lets_it_use():
    m4max, m3u, spark, strix = (CATALOG.get(i) for i in (
        "apple-m4-max", "apple-m3-ultra", "dgx-spark", "ryzen-ai-max-395"))
    for g in (m4max, m3u, spark, strix):
        assert g.unified_memory and g.usable_memory_bytes < g.memory_bytes * 1.074
    assert m4max.memory_usable_mib.value == 110100  # 107.52 GiB measured on macOS 26
    assert "iogpu.wired_limit_mb" in m4max.memory_usable_mib.note
    assert m3u.memory_usable_mib.value == 512 * 1024 * 3 // 4  # 75 %, flagged unverified
    assert strix.memory_usable_mib.value == 96 * 1024 and "ttm" in strix.memory_usable_mib.note
    assert spark.memory_usable_mib.value == 124610  # 121.69 GiB, what CUDA sees


def test_each_card_runs_the_engines_of_its_platform():
    apple, radeon, gaudi, b580 = (CATALOG.get(i) for i in (
        "apple-m4-max", "rx-7900-xtx", "gaudi3", "arc-b580"))
    assert "vllm" not in CATALOG.engines_for(apple) and "llamacpp" in CATALOG.engines_for(apple)
    why = CATALOG.engine_problem(apple, "vllm")
    assert why.startswith("vLLM does not run on Apple silicon") and "llama.cpp" in why
    problem = CATALOG.engine_problem
    assert problem(radeon, "sglang") and problem(radeon, "vllm") is None
    assert problem(gaudi, "llamacpp") and problem(gaudi, "vllm") is None
    assert problem(b580, "trtllm") and problem(b580, "llamacpp") is None
    assert CATALOG.engine_problem(CATALOG.get("mi300x"), "trtllm")  # NVIDIA-only
    assert CATALOG.engine_problem(CATALOG.get("h100-sxm"), "trtllm") is None


def test_every_platform_engine_has_a_known_source():
    for key, info in CATALOG.platforms.items():
        assert info.engines, key
        for engine, src in info.engines.items():
            assert _known_source(src), f"platforms.{key}.{engine}"


def test_a_refusal_names_only_engines_that_run_there_and_that_engine_accepts():
    """The sentence after "does not run on" lists engines a user can pass to --engine and
    that run on the card (it once named MLX, which --engine refused)."""
    from whichgpu.catalog.gpus import ENGINE_LABELS
    from whichgpu.estimate.workload import DIFFUSION_ENGINES, ENGINES, LLM_ENGINES

    by_label = {v: k for k, v in ENGINE_LABELS.items()}
    for g in GPUS:
        runs = CATALOG.engines_for(g) or ()
        for engine in ENGINES:
            why = CATALOG.engine_problem(g, engine)
            if why is None:
                continue
            found = re.match(r"^.*? does not run on [^;]*; (.*?) (?:do|does)(?: \(|$)", why)
            assert found, (g.id, engine, why)
            names = re.split(r", | or ", found.group(1))
            for name in names:
                assert by_label.get(name) in runs and by_label[name] in ENGINES, (g.id, why)
                # an alternative runs the same kind of work (SGLang runs both LLMs and DiTs)
                families = [f for f in (LLM_ENGINES, DIFFUSION_ENGINES) if engine in f]
                assert any(by_label[name] in f for f in families), (g.id, engine, why)
