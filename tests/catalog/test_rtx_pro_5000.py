"""The RTX PRO 5000 Blackwell 48 GB is in the catalog with its sourced datasheet figures, and
RunPod's offer for it in the shipped SkyPilot snapshot maps to it (catalog/data/gpus.toml)."""

from __future__ import annotations

import csv
import re

from paths import ROOT
from whichgpu.catalog.gpus import default_catalog


def test_the_card_resolves_with_its_datasheet_figures():
    cat = default_catalog()
    gpu = cat.get("rtx-pro-5000")
    assert cat.get("rtx-pro-5000-blackwell").id == gpu.id  # before: 'did you mean rtx-a5000'
    assert gpu.memory_bytes == 48e9 and gpu.bandwidth_bytes_per_s == 1344e9
    assert gpu.tdp_watts == 300
    # NVIDIA's 2,064 AI TOPS are sparse FP4: dense FP4 half of it, dense 16-bit an eighth
    assert gpu.tflops("fp4") == 2064 / 2 and gpu.tflops("bf16") == 2064 / 8
    # between the RTX PRO 4500 and the RTX PRO 6000 Max-Q on every figure
    lo, hi = cat.get("rtx-pro-4500"), cat.get("rtx-pro-6000-maxq")
    for f in (lambda g: g.memory_bytes, lambda g: g.bandwidth_bytes_per_s,
              lambda g: g.tflops("bf16")):
        assert f(lo) < f(gpu) < f(hi)
    assert gpu.usable_memory_bytes < 48 * 2**30  # 48 GiB of GDDR7, less what the driver keeps


def test_every_figure_names_a_source_the_catalog_lists():
    import tomllib

    raw = tomllib.loads((ROOT / "src/whichgpu/catalog/data/gpus.toml").read_text("utf-8"))
    entry = next(g for g in raw["gpu"] if g["id"] == "rtx-pro-5000")
    named = {v["source"] for v in entry.values() if isinstance(v, dict) and "source" in v}
    named |= {v["source"] for v in entry["tflops"].values()}
    named |= {v["source"] for v in entry["interconnect"].values()}
    # the catalog's own sources, or the research articles S1-S30 (as the integrity test reads)
    articles = {n for n in named if re.fullmatch(r"S([1-9]|[12]\d|30)", n)}
    assert named - articles <= set(raw["sources"]), named - articles - set(raw["sources"])


def test_runpods_offer_maps_to_it():
    path = ROOT / "src/whichgpu/catalog/prices/data/market/skypilot.csv"
    with path.open(encoding="utf-8") as f:
        rows = [r for r in csv.reader(f) if len(r) > 3 and r[3] == "rtx-pro-5000"]
    assert rows and rows[0][1] == "1x_RTXPRO5000_SECURE" and float(rows[0][5]) == 0.96
