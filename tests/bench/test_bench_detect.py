"""Detecting GPUs from recorded nvidia-smi output and a fake NVML; mapping names to the catalog."""

from __future__ import annotations

import pytest

from bench_fakes import DATA, FakeNVML, fake_smi, no_driver
from whichgpu.bench import detect
from whichgpu.bench.detect import BenchUnavailable, catalog_id_for, parse_query_csv
from whichgpu.errors import DataError


def _query(machine: str) -> str:
    return (DATA / machine / "query.csv").read_text()


def test_one_h200_is_read_with_power_limit_and_clocks():
    (g,) = parse_query_csv(_query("h200-1gpu"))
    assert (g.index, g.name, g.catalog_id) == (0, "NVIDIA H200", "h200-sxm")
    assert g.memory_total_mib == 143771
    assert g.power_limit_w == 700.0 and g.default_power_limit_w == 700.0
    assert (g.max_sm_clock_mhz, g.max_memory_clock_mhz) == (1980, 3201)
    assert g.compute_capability == "9.0" and g.driver_version == "550.127.05"
    assert g.pci_bus_id == "00000000:19:00.0"


def test_two_pcie_4090s_keep_their_own_power_limits():
    gpus = parse_query_csv(_query("rtx4090-2gpu-pcie"))
    assert [g.catalog_id for g in gpus] == ["rtx-4090", "rtx-4090"]
    assert [g.power_limit_w for g in gpus] == [350.0, 450.0]


def test_eight_sxm_h100s_map_to_the_sxm_card_not_the_pcie_one():
    gpus = parse_query_csv(_query("h100-8gpu-nvlink"))
    assert [g.index for g in gpus] == list(range(8))
    assert {g.catalog_id for g in gpus} == {"h100-sxm"}
    assert "nvsmi-h100" in gpus[0].catalog_note


@pytest.mark.parametrize(("name", "mib", "expected"), [
    ("NVIDIA H100 80GB HBM3", 81559, "h100-sxm"),
    ("NVIDIA H100 PCIe", 81559, "h100-pcie"),
    ("NVIDIA H100 NVL", 95830, "h100-nvl"),
    ("NVIDIA H200", 143771, "h200-sxm"),
    ("NVIDIA A100-SXM4-80GB", 81920, "a100-80gb-sxm"),
    ("NVIDIA A100-SXM4-40GB", 40960, "a100-40gb"),
    ("NVIDIA A10G", 23028, "a10g"),  # a size parser would read "A 10 GB"
    ("NVIDIA A10", 23028, "a10"),
    ("NVIDIA RTX 6000 Ada Generation", 49140, "rtx-6000-ada"),
    ("NVIDIA GeForce RTX 4090", 24564, "rtx-4090"),
    ("Tesla V100-SXM2-16GB", 16384, "v100-16gb"),
    ("Tesla T4", 15360, "t4"),
    ("NVIDIA L40S", 46068, "l40s"),
])
def test_nvidia_smi_names_map_to_catalog_ids(name, mib, expected):
    assert catalog_id_for(name, mib)[0] == expected


def test_a_card_whose_memory_disagrees_with_the_catalog_is_not_mapped():
    gid, why = catalog_id_for("NVIDIA L4", 46068)
    assert gid is None
    assert "46,068 MiB" in why and "l4" in why


def test_the_40gb_pcie_a100_is_its_own_card():
    gid, _ = catalog_id_for("NVIDIA A100-PCIE-40GB", 40960)
    assert gid == "a100-40gb-pcie"


def test_an_unknown_card_is_not_mapped_and_says_so():
    gid, why = catalog_id_for("NVIDIA Quadro P2000", 5120)
    assert gid is None and "Quadro P2000" in why


def test_na_and_not_supported_values_are_unknown_not_errors():
    text = ("index, name, memory.total [MiB], power.limit [W], clocks.max.sm [MHz]\n"
            "0, NVIDIA L4, 23034 MiB, [N/A], [Not Supported]\n")
    (g,) = parse_query_csv(text)
    assert g.power_limit_w is None and g.max_sm_clock_mhz is None
    assert g.catalog_id == "l4"


def test_a_unit_other_than_expected_is_an_error_naming_the_field():
    text = "index, name, memory.total [GiB]\n0, NVIDIA L4, 22 GiB\n"
    with pytest.raises(DataError, match=r"memory\.total is in GiB"):
        parse_query_csv(text)


@pytest.mark.parametrize("text", ["", "foo, bar\n1, 2\n",
                                  "index, name\n0, NVIDIA L4, extra\n", "index, name\nx, L4\n"])
def test_malformed_query_output_is_a_data_error(text):
    with pytest.raises(DataError):
        parse_query_csv(text)


def test_detection_runs_nvidia_smi_when_nvml_is_missing(monkeypatch, tmp_path):
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)
    fake_smi(monkeypatch, tmp_path, "h100-8gpu-nvlink")
    gpus = detect.detect_gpus()
    assert len(gpus) == 8 and gpus[0].source == "nvidia-smi"


def test_an_older_driver_without_compute_cap_is_queried_again(monkeypatch, tmp_path):
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)
    fake_smi(monkeypatch, tmp_path, "h200-1gpu", old_driver=True)
    (g,) = detect.detect_gpus()
    assert g.catalog_id == "h200-sxm" and g.compute_capability is None


def test_nvml_is_read_first_when_it_is_there(monkeypatch):
    nvml = FakeNVML([("NVIDIA H200", 143771, 700000, (9, 0), "00000000:19:00.0")])
    monkeypatch.setitem(__import__("sys").modules, "pynvml", nvml)
    (g,) = detect.detect_gpus()
    assert g.source == "nvml" and g.catalog_id == "h200-sxm"
    assert g.power_limit_w == 700.0 and g.default_power_limit_w is None  # not supported
    assert g.compute_capability == "9.0" and g.driver_version == "550.127.05"
    assert nvml.shutdowns == 1


def test_nvml_that_cannot_start_falls_back_to_nvidia_smi(monkeypatch, tmp_path):
    monkeypatch.setitem(__import__("sys").modules, "pynvml", FakeNVML([], fail_init=True))
    fake_smi(monkeypatch, tmp_path, "rtx4090-2gpu-pcie")
    assert [g.source for g in detect.detect_gpus()] == ["nvidia-smi", "nvidia-smi"]


def test_no_driver_at_all_says_what_is_missing(monkeypatch, tmp_path):
    no_driver(monkeypatch, tmp_path)
    with pytest.raises(BenchUnavailable) as exc:
        detect.detect_gpus()
    text = str(exc.value)
    assert "nvidia-ml-py is not installed" in text and "nvidia-smi is not on PATH" in text
