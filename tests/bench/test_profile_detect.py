"""Issue 31: 'whichgpu profile save NAME --detect' saves this machine as 'whichgpu bench'
finds it (its NVIDIA cards through NVML or nvidia-smi, mapped to catalog ids, and its RAM);
what the command line gives wins. The driver is replaced here by recorded GpuInfo rows."""

from __future__ import annotations

import pytest

from whichgpu.bench import detect
from whichgpu.bench.detect import BenchUnavailable, GpuInfo

RTX_4090 = GpuInfo(index=0, name="NVIDIA GeForce RTX 4090", memory_total_mib=24564,
                   catalog_id="rtx-4090", source="nvidia-smi")


@pytest.fixture
def machine(monkeypatch):
    def use(gpus, ram=64 * 2**30):
        def found():
            if isinstance(gpus, Exception):
                raise gpus
            return gpus
        monkeypatch.setattr(detect, "detect_gpus", found)
        from whichgpu.answers import profiles

        monkeypatch.setattr(profiles, "host_ram_bytes", lambda: ram)
    return use


def test_detect_saves_the_cards_their_count_and_the_ram(cli, machine):
    machine([RTX_4090, GpuInfo(**{**RTX_4090.to_json(), "index": 1})])
    r = cli("profile", "save", "rig", "--detect")
    assert r.code == 0, r.err
    saved = cli("profile", "list", "--json").json()["profiles"]["rig"]
    assert saved == {"gpu": "rtx-4090", "count": 2, "host_ram": "64.0GiB"}
    assert "found 2 GPU(s) with nvidia-smi" in r.err
    # and it applies as a profile: the same answer as the card spelt out
    assert cli("memory", "llama-3.1-70b", "--quant", "q4_k_m", "--profile", "rig",
               "--json").json() == cli("memory", "llama-3.1-70b", "--quant", "q4_k_m", "--gpu",
                                       "rtx-4090", "--gpus", "2", "--host-ram", "64.0GiB",
                                       "--json").json()


def test_what_the_command_line_gives_wins(cli, machine):
    machine([RTX_4090])
    assert cli("profile", "save", "rig", "--detect", "--host-ram", "32GB").code == 0
    saved = cli("profile", "list", "--json").json()["profiles"]["rig"]
    assert saved["host_ram"] == "32GB" and saved["gpu"] == "rtx-4090"
    assert cli("profile", "save", "other", "--detect", "--gpu", "rtx-3060").code == 0
    other = cli("profile", "list", "--json").json()["profiles"]["other"]
    assert other["gpu"] == "rtx-3060" and "count" not in other  # the 4090's count is not its


def test_a_card_outside_the_catalog_is_saved_by_its_memory(cli, machine):
    machine([GpuInfo(index=0, name="NVIDIA Future 9000", memory_total_mib=32768,
                     catalog_id=None)])
    assert cli("profile", "save", "rig", "--detect").code == 0
    assert cli("profile", "list", "--json").json()["profiles"]["rig"]["gpu"] == "32768MiB"


def test_no_gpu_found_is_said_and_the_ram_is_still_saved(cli, machine):
    machine(BenchUnavailable("no NVIDIA GPU found: nvidia-smi is not on PATH"))
    r = cli("profile", "save", "laptop", "--detect")
    assert r.code == 0 and "no NVIDIA GPU found" in r.err
    assert cli("profile", "list", "--json").json()["profiles"]["laptop"] == {
        "host_ram": "64.0GiB"}
