"""``nvidia-smi topo -m`` (and ``-p2p r``) read into GPU pairs and the link the model uses (S28)."""

from __future__ import annotations

import sys

import pytest

from bench_fakes import DATA, FakeNVML, fake_smi, no_driver
from whichgpu.bench import topology as t
from whichgpu.errors import DataError


def _read(machine: str, name: str) -> str:
    return (DATA / machine / name).read_text()


def test_one_gpu_has_no_pairs_and_the_ansi_header_is_read():
    topo = t.parse_topo_matrix(_read("h200-1gpu", "topo.txt"))
    assert topo.gpus == (0,) and topo.pairs == () and topo.kind == "none"
    assert topo.cpu_affinity == {0: "0-47,96-143"} and topo.numa_affinity == {0: "0"}


def test_hgx_h100_has_nv18_between_all_28_pairs_and_skips_the_nics():
    topo = t.parse_topo_matrix(_read("h100-8gpu-nvlink", "topo.txt"))
    assert topo.gpus == tuple(range(8))
    assert len(topo.pairs) == 28
    assert {p.link for p in topo.pairs} == {"NV18"}
    assert {p.nvlinks for p in topo.pairs} == {18}
    assert topo.kind == "nvlink"
    assert topo.numa_affinity[3] == "0" and topo.numa_affinity[4] == "1"


def test_two_4090s_on_one_switch_without_p2p_are_host_staged():
    """S28: PCIe without peer-to-peer. PIX alone would suggest P2P; -p2p r says GNS."""
    topo = t.parse_topo_matrix(_read("rtx4090-2gpu-pcie", "topo.txt"))
    (pair,) = topo.pairs
    assert pair.link == "PIX" and pair.kind == "pcie_p2p"  # from the link code alone
    p2p = t.parse_p2p_matrix(_read("rtx4090-2gpu-pcie", "p2p.txt"))
    assert p2p == {(0, 1): "GNS"}
    (pair,) = topo.with_p2p(p2p).pairs
    assert pair.kind == "pcie_host"
    assert "GPU not supported" in pair.meaning


def test_the_weakest_link_decides_the_kind():
    topo = t.Topology((0, 1, 2), (t.Pair(0, 1, "NV4"), t.Pair(0, 2, "SYS"),
                                  t.Pair(1, 2, "PXB", p2p="OK")))
    assert topo.kind == "pcie_host"
    assert topo.pair(2, 1).kind == "pcie_p2p"


def test_an_older_spaces_only_matrix_with_a_mellanox_column_is_read():
    text = ("        GPU0    GPU1    mlx4_0  CPU Affinity\n"
            "GPU0     X      PHB     PHB     0-9,20-29\n"
            "GPU1    PHB      X      PHB     0-9,20-29\n"
            "mlx4_0  PHB     PHB      X\n\nLegend:\n")
    topo = t.parse_topo_matrix(text)
    assert [(p.a, p.b, p.link, p.kind) for p in topo.pairs] == [(0, 1, "PHB", "pcie_host")]
    assert topo.cpu_affinity == {0: "0-9,20-29", 1: "0-9,20-29"}


@pytest.mark.parametrize("text", ["nothing here", "\tGPU0\tGPU1\nGPU0\t X \tQQQ\nGPU1\tQQQ\t X \n",
                                  "\tGPU0\tGPU1\nGPU0\t X \n"])
def test_malformed_matrices_are_data_errors(text):
    with pytest.raises(DataError):
        t.parse_topo_matrix(text)


def test_topology_is_read_through_nvidia_smi_with_peer_status(monkeypatch, tmp_path):
    fake_smi(monkeypatch, tmp_path, "rtx4090-2gpu-pcie")
    topo = t.read_topology(2)
    assert topo.source == "nvidia-smi topo -m"
    assert topo.pairs[0].p2p == "GNS" and topo.kind == "pcie_host"


def test_eight_nvlink_gpus_are_read_through_nvidia_smi(monkeypatch, tmp_path):
    fake_smi(monkeypatch, tmp_path, "h100-8gpu-nvlink")
    topo = t.read_topology(8)
    assert topo.kind == "nvlink" and {p.p2p for p in topo.pairs} == {"OK"}


def test_a_driver_without_topo_p2p_keeps_the_link_codes(monkeypatch, tmp_path):
    machine = tmp_path / "old-driver"
    machine.mkdir()
    (machine / "topo.txt").write_text(_read("rtx4090-2gpu-pcie", "topo.txt"))
    fake_smi(monkeypatch, tmp_path, str(machine))
    (pair,) = t.read_topology(2).pairs
    assert pair.p2p is None and pair.kind == "pcie_p2p"


def test_nvml_gives_the_same_codes_when_nvidia_smi_is_missing(monkeypatch, tmp_path):
    no_driver(monkeypatch, tmp_path)
    cards = [("NVIDIA H100 80GB HBM3", 81559, 700000, (9, 0), f"0000:{b}:00.0")
             for b in ("18", "2a", "3a")]
    nvml = FakeNVML(cards, nvlinks={(0, 1): 18}, ancestor=40)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    topo = t.read_topology(3)
    assert topo.source == "NVML"
    assert [(p.a, p.b, p.link) for p in topo.pairs] == [(0, 1, "NV18"), (0, 2, "NODE"),
                                                        (1, 2, "NODE")]
    assert topo.kind == "pcie_host"


def test_no_driver_leaves_the_topology_unknown_but_does_not_fail(monkeypatch, tmp_path):
    no_driver(monkeypatch, tmp_path)
    topo = t.read_topology(2)
    assert topo.pairs == () and "unknown" in topo.source


def test_pairs_serialise_with_kind_and_meaning():
    data = t.Pair(0, 1, "NV12", p2p="OK", p2p_bytes_per_s=3.5e11).to_json()
    assert data["kind"] == "nvlink" and data["nvlinks"] == 12
    assert "NVLink x12" in data["meaning"]
