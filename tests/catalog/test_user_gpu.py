"""Your own card (issue 14): --gpu 12GB (the fit), --gpu-spec (speed, owning it)."""

import pytest

from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.catalog.user_gpu import (
    SPEC_KEYS,
    is_memory_only,
    missing_for_speed,
    resolve_gpu_arg,
    user_gpu,
)
from whichgpu.errors import InputError
from whichgpu.estimate.memory.report import memory_report
from whichgpu.estimate.speed import estimate_speed
from whichgpu.units import GiB, MiB

RTX3060 = "memory=12GB,bandwidth=360GB/s,fp16=25.5,fp16_acc16=51,tdp=170W,price=329USD"


def test_a_bare_size_is_a_card_described_by_its_memory():
    assert is_memory_only("12GB") and is_memory_only("24 GiB") and not is_memory_only("rtx-4090")
    res = resolve_gpu_arg("12GB")
    g = res.gpu
    assert g.user_spec and g.id == "your-12gb" and "memory only" in res.note
    # a card sold as 12 GB has 12 GiB: the catalog's RTX 3060 12GB carries the same figure
    assert g.usable_memory_bytes == 12 * GiB
    assert g.usable_memory_bytes == default_catalog().get("rtx-3060-12gb").usable_memory_bytes
    assert missing_for_speed(g) == ["bandwidth=GB/s", "fp16=TFLOPS (dense, FP32 accumulate)"]


def test_memory_only_answers_the_fit():
    w = build_workload("llama-3.1-8b", quant="q4_k_m", context="8k")
    report = memory_report(w, resolve_gpu_arg("12GB").gpu)
    assert report.target.fits and report.target.gpu.id == "your-12gb"
    big = memory_report(build_workload("llama-3.1-70b", quant="q4_k_m"),
                        resolve_gpu_arg("12GB").gpu)
    assert not big.target.fits


def test_memory_only_speed_says_what_it_lacks_instead_of_a_number():
    w = build_workload("llama-3.1-8b", quant="q4_k_m")
    with pytest.raises(InputError, match="bandwidth=GB/s and fp16=TFLOPS"):
        estimate_speed(w, resolve_gpu_arg("12GB").gpu)


def test_a_full_spec_gives_a_speed_from_its_own_figures():
    mine = user_gpu(RTX3060)
    catalog = default_catalog().get("rtx-3060-12gb")
    w = build_workload("llama-3.1-8b", quant="q4_k_m", context="2k")
    a, b = estimate_speed(w, mine), estimate_speed(w, catalog)
    # the same figures as the catalog's RTX 3060 12GB: the same decode rate
    rate = "decode_tokens_per_s"
    assert a.rates[rate].typical == pytest.approx(b.rates[rate].typical, rel=0.02)
    faster = user_gpu(RTX3060.replace("360GB/s", "720GB/s"))
    assert estimate_speed(w, faster).rates[rate].typical > 1.5 * a.rates[rate].typical


@pytest.mark.parametrize(("spec", "names"), [
    ("memory=12", "memory"), ("memory=12GB,bandwith=300GB/s", "bandwith"),
    ("bandwidth=300GB/s", "memory=SIZE"), ("memory=12GB,bandwidth=300", "bandwidth"),
    ("memory=12GB,fp16=fast", "fp16"), ("memory=12GB,fp16=-3", "fp16"),
    ("memory=12GB,interconnect=usb4", "interconnect"), ("memory=12GB,tdp=lots", "tdp"),
    ("memory=12GB,platform=cuda9", "platform"), ("memory=12GB,price=cheap", "price"),
    ("memory=12GB,memory=24GB", "memory"), ("memory=12GB,usable=20GB", "usable"),
    ("memory=12GB,p2p=maybe", "p2p"), ("memory=12GB,name=My Card!", "name"),
])
def test_a_bad_spec_is_refused_in_one_line_naming_the_key(spec, names):
    with pytest.raises(InputError) as info:
        user_gpu(spec)
    assert names in str(info.value) and "\n" not in str(info.value)


def test_every_key_is_documented():
    assert {"memory", "bandwidth", "fp16", "fp8", "tdp", "interconnect", "price"} <= set(SPEC_KEYS)


def test_the_spec_sets_platform_and_links():
    g = user_gpu("memory=24GB,bandwidth=960GB/s,fp16=122,platform=rocm,interconnect=pcie4x8")
    assert g.platform.value == "rocm"
    assert g.interconnect.bandwidth_gb_s.value == 32  # PCIe 4.0 x8, both directions
    assert g.usable_memory_bytes == 24 * GiB
    assert user_gpu("memory=12GB,usable=12282MiB").usable_memory_bytes == 12282 * MiB


def test_recommend_shows_your_card_as_owned_with_its_ownership_cost():
    w = build_workload("llama-3.1-8b", quant="q4_k_m", context="4k")
    job = build_job(w, tokens="1M")
    rec = recommend(job, [], owned=user_gpu(RTX3060), owned_count=2)
    assert [o.count for o in rec.owned] == [1, 2]
    one = rec.owned[0]
    assert one.fits and one.option is not None and one.cost_per_hour is not None
    data = one.to_json()
    assert data["owned"] and data["rental_price"] is None and data["time_s"]["typical"] > 0
    assert "no rental price" in one.cost_note
    # owning: (329 USD + 3 years of 170 W x the share of TDP drawn while busy (the energy
    # model's measured board power, issue 33) at 0.10 USD/kWh) / hours used at 60 %
    from whichgpu.estimate.energy import busy_load_factor

    share, _ = busy_load_factor(user_gpu(RTX3060))
    assert 0 < share <= 1
    hours = 3 * 8760 * 0.6
    expected = (329 + 0.170 * share * 0.10 * hours) / hours
    assert one.cost_per_hour.amount == pytest.approx(expected, rel=0.01)
    assert rec.to_json()["owned"][1]["count"] == 2


def test_recommend_with_a_memory_only_card_gives_the_fit_and_what_is_missing():
    w = build_workload("llama-3.1-70b", quant="q4_k_m", context="8k")
    rec = recommend(build_job(w, tokens="1M"), [], owned=resolve_gpu_arg("24GB").gpu,
                    owned_count=3)
    assert [(o.count, o.fits) for o in rec.owned] == [(1, False), (2, True), (3, True)]
    assert rec.owned[1].option is None and "bandwidth=GB/s" in rec.owned[1].missing[0]
    assert "price" in rec.owned[1].cost_note  # no purchase price: said, not guessed


def test_cli_takes_your_card_on_memory_speed_recommend_and_tco(cli):
    r = cli("memory", "llama-3.1-8b", "--quant", "q4_k_m", "--gpu", "12GB", "--json")
    assert r.code == 0 and r.json()["target"]["gpu"] == "your-12gb"
    r = cli("speed", "llama-3.1-8b", "--gpu", "12GB")
    assert r.code == 2 and "bandwidth" in r.err and r.out == ""
    r = cli("speed", "llama-3.1-8b", "--quant", "q4_k_m", "--gpu-spec", RTX3060, "--json")
    assert r.code == 0 and r.json()["gpu"] == "your-12gb"
    r = cli("speed", "llama-3.1-8b", "--gpu-spec", "memory=12GB,bandwith=1")
    assert r.code == 2 and "bandwith" in r.err
    r = cli("recommend", "llama-3.1-8b", "--quant", "q4_k_m", "--tokens", "1M",
            "--prices", "vramfarm-2026-11", "--gpu-spec", RTX3060, "--json")
    assert r.code == 0 and r.json()["owned"][0]["gpu"] == "your-12gb"
    r = cli("tco", "--gpu-spec", "memory=24GB,tdp=350W,price=700USD", "--rent-price",
            "0.25USD", "--json")
    assert r.code == 0
    r = cli("tco", "12GB", "--purchase-price", "300USD", "--rent-price", "0.2USD")
    assert r.code == 2 and "--tdp" in r.err
    r = cli("cost", "--gpu", "12GB", "--duration", "1h")
    assert r.code == 2 and "tco" in r.err


def test_api_takes_gpu_spec(web):
    r = web.get("/api/v1/memory", params={"model": "llama-3.1-8b", "quant": "q4_k_m",
                                          "gpu": "12GB"})
    assert r.status_code == 200 and r.json()["target"]["gpu"] == "your-12gb"
    r = web.get("/api/v1/speed", params={"model": "llama-3.1-8b", "quant": "q4_k_m",
                                         "gpu_spec": RTX3060})
    assert r.status_code == 200 and r.json()["gpu"] == "your-12gb"
    r = web.get("/api/v1/speed", params={"model": "llama-3.1-8b", "gpu": "12GB"})
    assert r.status_code == 422 and "bandwidth" in r.json()["detail"]
    r = web.get("/api/v1/memory", params={"model": "llama-3.1-8b", "gpu_spec": "memory=x"})
    assert r.status_code == 422 and "memory" in r.json()["detail"]


def test_advisor_page_shows_your_card_beside_the_rentals(web):
    html = web.get("/", params={"model": "llama-3.1-8b", "workload": "inference",
                                "amount": "1M", "quant": "q4_k_m",
                                "prices": "vramfarm-2026-11", "gpu_spec": RTX3060}).text
    assert "Your card (owned: no rental price)" in html and "your-12gb" in html
