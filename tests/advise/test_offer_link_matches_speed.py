"""An offer's link is the one the speed model used (flaws8 2): the same Vast 4 x RTX 3090 was
"linked by its nvlink-bridge" in recommend's assumption while speed and REST said
``pcie_host``. An RTX 3090 NVLink bridge joins two cards only (NVIDIA GA102 whitepaper,
the catalog's source ``nv-ga102-wp``), so four cards talk over PCIe; the assumption now says
so, and a switched NVLink machine still says its NVLink."""

from __future__ import annotations

from whichgpu.advise.machines import link_words
from whichgpu.catalog.gpus import get_gpu


def test_a_bridge_joins_two_cards_only_past_that_the_words_are_pcie():
    gpu = get_gpu("rtx-a6000")  # a pro card sold with its 2-way bridge in mind
    assert gpu.interconnect.kind.value == "nvlink-bridge"
    assert int(gpu.interconnect.domain_gpus.value) == 2
    assert link_words(gpu, 2) == "nvlink-bridge"
    assert str(link_words(gpu, 4)).startswith("pcie4")


def test_a_geforce_3090_machine_has_no_bridge_unless_measured():
    """The RTX 3090's bridge is sold apart and most rented machines have none (the catalog's
    bridge_fitted, S23): two cards talk over PCIe 4.0 without peer-to-peer, in the speed
    model and in the words alike."""
    from whichgpu.estimate.speed.hardware import link_for

    for card in ("rtx-3090", "rtx-3090-ti"):
        gpu = get_gpu(card)
        assert gpu.interconnect.bridge_fitted is not None
        assert link_for(gpu, 2).kind == "pcie_host"
        assert str(link_words(gpu, 2)) == "pcie4 through the host (GPUs without peer-to-peer)"
    assert link_for(get_gpu("rtx-a6000"), 2).kind == "nvlink"


def test_the_words_follow_the_link_the_speed_estimate_used():
    gpu = get_gpu("rtx-3090")
    assert "peer-to-peer" in str(link_words(gpu, 2, "pcie_host"))
    assert str(link_words(gpu, 2, "pcie_p2p")) == "pcie4, peer to peer"
    assert link_words(get_gpu("h100-sxm"), 8) == "nvlink4"


def test_recommend_and_speed_name_the_same_link_for_4_x_3090(cli):
    r = cli("speed", "qwen3-235b-a22b", "--quant", "q4_k_m", "--gpu", "rtx-3090", "--count",
            "4", "--json")
    assert r.code == 0, r.err
    assert r.json()["link"] == "pcie_host"
    r = cli("recommend", "qwen3-235b-a22b", "--quant", "q4_k_m", "--max-gpus", "4", "--only",
            "rtx-3090", "--json")
    assert r.code == 0, r.err
    four = [o for o in r.json()["options"] if o["linked_gpus"] == 4]
    assert four
    said = " ".join(a for o in four for a in o["assumptions"] if "linked by its" in a)
    assert "pcie4 through the host (GPUs without peer-to-peer)" in said
    assert "nvlink-bridge" not in said
