"""The cards the held-out questions name (issue 30): each carries the figures typed here from
the page its catalog source names, none is given a price nobody published, and they are
used like the other cards (found by the names people type, shown for buying only where a
price exists, never ranked without an offer)."""

import pytest

from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.ownership import tco
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog, resolve_gpu
from whichgpu.catalog.offers import Offer
from whichgpu.errors import InputError, NotFoundError
from whichgpu.units import GiB, Money

CATALOG = default_catalog()
NEW = ("rtx-2080", "rtx-pro-4500", "apple-m5-max", "apple-m3-pro", "apple-m1-ultra",
       "apple-m2-ultra", "apple-m3-max", "apple-m1-max", "rtx-2080-ti")

# (id, memory GB, bandwidth GB/s, dense 16-bit TFLOPS, where the figures were read)
TYPED = [
    # en.gamegpu.com: 8,192 MB GDDR6, 256-bit at 14 Gbps = 448 GB/s, 215 W; bit-tech (NVIDIA's
    # reference specs): 46 SMs at 1,710 MHz -> 46 x 1,024 x 1.71 / 2 at FP32 accumulate
    ("rtx-2080", 8, 448, 40.3, "https://en.gamegpu.com/geforce-rtx-2xx-series/geforce-rtx-2080"),
    # technical.city: 32 GB GDDR7, 896.0 GB/s, 200 W, 2,617 MHz; hmc-tech: 82 SMs
    ("rtx-pro-4500", 32, 896, 219.7, "https://technical.city/en/video/RTX-PRO-4500-Blackwell"),
    # awesomeagents / cputronic: 40-core GPU, up to 128 GB, 614 GB/s; tzakharko: ~70 TFLOPS
    # FP16 matrix (an estimate for the Neural Accelerators)
    ("apple-m5-max", 128, 614, 70, "https://awesomeagents.ai/hardware/apple-m5-max"),
    # gigazine (Apple's spec page): 150 GB/s; hmc-tech: 2,304 ALUs at 1,398 MHz = 6.44
    ("apple-m3-pro", 18, 150, 6.44,
     "https://gigazine.net/gsc_news/en/20231101-apple-m3-pro-memory-bandwidth"),
    # thetechportal: 64-core GPU, up to 128 GB at 800 GB/s; notebookcheck: 1,296 MHz
    ("apple-m1-ultra", 128, 800, 21.2,
     "https://thetechportal.com/2022/03/09/apple-mac-studio-display-m1-ultra-chip/"),
    # the siblings people own: techspot (WWDC 2023): 76-core GPU, up to 192 GB at 800 GB/s;
    # hmc-tech: the 38-core M2 Max 13.6 TFLOPS, doubled
    ("apple-m2-ultra", 192, 800, 27.2,
     "https://www.techspot.com/news/98961-apple-launches-new-mac-studio-m2-max-m2.html"),
    # newyorkmetropolitan (review table): 11 GB GDDR6, 352 bits, 616 GB/s; bit-tech: 68 SMs at
    # 1,545 MHz reference boost -> 68 x 1,024 x 1.545 / 2 at FP32 accumulate
    # notebookcheck: the 40-core M3 Max with up to 128 GB at 400 GB/s; 40 x 128 x 2 x 1.398 GHz
    ("apple-m3-max", 128, 400, 14.3,
     "https://www.notebookcheck.net/M3-Max-40-Core-GPU-vs-M3-8-Core-GPU-vs-M3-Pro-14-Core-GPU_"
     "11636_12030_12032.247598.0.html"),
    # frontpagetech (Apple's announcement): 32-core GPU, up to 64 GB at 400 GB/s; 2 x 5.3
    ("apple-m1-max", 64, 400, 10.6,
     "https://www.frontpagetech.com/2021/10/18/apple-announces-new-m1-pro-and-m1-max-chips-worst-"
     "naming-ever/"),
    ("rtx-2080-ti", 11, 616, 53.8,
     "https://www.newyorkmetropolitan.com/tech/nvidia-rtx-2080-and-2080-ti-review-a-tale-of-two-"
     "very-expensive-graphics-cards"),
]


@pytest.mark.parametrize(("gpu_id", "mem", "bw", "tf16", "url"), TYPED, ids=[t[0] for t in TYPED])
def test_question_cards_carry_the_figures_of_their_sources(gpu_id, mem, bw, tf16, url):
    g = CATALOG.get(gpu_id)
    assert float(g.memory_gb.value) == mem, url
    assert float(g.bandwidth_gb_s.value) == bw, url
    assert g.tflops("fp16") == pytest.approx(tf16, abs=0.05), url


def test_turing_has_no_bf16_and_halves_the_rate_at_fp32_accumulate():
    g = CATALOG.get("rtx-2080")
    assert g.throughput_at("bf16").status == "unsupported"  # as the T4
    assert g.tflops("fp16_acc16") == pytest.approx(2 * g.tflops("fp16"), abs=0.1)
    assert g.tflops("fp16_acc16") == pytest.approx(46 * 1024 * 1.710e9 / 1e12, abs=0.1)
    assert g.tdp_watts == 215 and g.memory_usable_mib.value == 7982


def test_the_pro_card_runs_fp32_accumulate_at_full_rate():
    g = CATALOG.get("rtx-pro-4500")
    assert g.tflops("bf16") == pytest.approx(82 * 1024 * 2.617e9 / 1e12, abs=0.1)
    assert g.tflops("fp4") == pytest.approx(4 * 82 * 1024 * 2.617e9 / 1e12, abs=0.1)
    assert g.tdp_watts == 200


def test_the_macs_give_the_gpu_what_macos_lets_it_wire():
    m5, m1, m3p = (CATALOG.get(i) for i in ("apple-m5-max", "apple-m1-ultra", "apple-m3-pro"))
    # a 64 GB M-series Max showed 49152.00 MiB in llama.cpp's Metal log (metal-wired-75)
    assert CATALOG.get("apple-m1-max").memory_usable_mib.value == 49152
    # 107.52 GiB measured on 128 GB Macs with macOS 26 (metal-wired-128)
    for g in (m5, m1, CATALOG.get("apple-m3-max")):
        assert g.memory_usable_mib.value == 110100
    # two thirds on the small Macs (16 and 32 GB show it): 12 of 18 GiB, flagged unverified
    assert m3p.usable_memory_bytes == 12 * GiB and "unverified" in m3p.memory_usable_mib.note
    # the M5's Neural Accelerators: 16-bit matmuls well above its FP32 rate; not before M5
    assert m5.tflops("bf16") > 3 * m5.tflops("fp32")
    assert m1.tflops("bf16") == m1.tflops("fp32") and m3p.tflops("bf16") == m3p.tflops("fp32")


@pytest.mark.parametrize("gpu_id", ["rtx-pro-4500", "apple-m5-max", "apple-m3-pro",
                                    "apple-m1-ultra", "apple-m2-ultra", "apple-m3-max",
                                    "apple-m1-max"])
def test_no_price_is_made_up_for_a_card_without_a_sourced_one(gpu_id):
    g = CATALOG.get(gpu_id)
    assert g.purchase_price is None and g.no_public_price is not None
    with pytest.raises(InputError, match=f"no purchase price for {gpu_id}"):
        tco(gpu_id, rent_price="1USD")


@pytest.mark.parametrize(("typed", "gpu_id"), [
    ("RTX 2080", "rtx-2080"), ("rtx2080", "rtx-2080"), ("RTX PRO 4500", "rtx-pro-4500"),
    ("rtx-pro-4500-blackwell", "rtx-pro-4500"), ("M5 Max", "apple-m5-max"),
    ("m3-pro", "apple-m3-pro"), ("M1 Ultra", "apple-m1-ultra"),
    ("mac-studio-m1-ultra", "apple-m1-ultra"), ("RTX 2080 Ti", "rtx-2080-ti"),
    ("2080ti", "rtx-2080-ti"), ("M2 Ultra", "apple-m2-ultra"), ("M3 Max", "apple-m3-max"),
    ("M1 Max", "apple-m1-max")])
def test_question_cards_are_found_by_the_names_people_type(typed, gpu_id):
    assert resolve_gpu(typed).gpu.id == gpu_id


def test_a_sibling_the_catalog_lacks_is_not_answered_for_another_card():
    # the RTX 2070 and the M2 Max are not in the catalog: refused, not read as a 2080 or M5 Max
    for typed in ("rtx 2070", "M2 Max"):
        with pytest.raises(NotFoundError, match=f"unknown GPU '{typed}'"):
            resolve_gpu(typed)


def test_recommend_never_ranks_them_without_an_offer_and_quotes_only_published_prices():
    w = build_workload("llama-3.1-8b", quant="q4_k_m", context="4k")
    offer = Offer(provider="market", gpu="rtx-4090", price_per_hour=Money(0.4, "USD"),
                  offer_set="t")
    rec = recommend(build_job(w, tokens="1M"), [offer], max_gpus=1)
    assert not {o.gpu.id for o in rec.options} & set(NEW)
    why = {e.gpu.id: (e.kind, str(e.reason)) for e in rec.excluded if e.gpu.id in NEW}
    assert set(why) == set(NEW)
    assert why["rtx-2080"][0] == "offer" and "to buy: 699 USD (2018-09)" in why["rtx-2080"][1]
    assert "to buy: 999-1,199 USD (2018-09)" in why["rtx-2080-ti"][1]
    for gpu_id in NEW[1:-1]:
        assert "to buy" not in why[gpu_id][1], why[gpu_id]
