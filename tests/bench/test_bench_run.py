"""``whichgpu bench``: the timing harness on the CPU, and the whole GPU flow on recorded driver
output with the kernels' results replaced (no GPU here or in CI)."""

from __future__ import annotations

import sys

import pytest

from bench_fakes import fake_smi, fake_torch, no_driver
from whichgpu.bench import kernels
from whichgpu.bench.kernels import Device, Measurement, Timing

# ------------------------------------------------------------------ the harness, no torch


def test_time_warms_up_then_times_each_repetition():
    calls = []
    dev = Device(fake_torch(cuda_devices=0), "cpu")
    t = dev.time(lambda: calls.append(1), warmup=2, repeat=3)
    assert len(calls) == 5 and len(t.seconds) == 3
    assert all(s >= 0 for s in t.seconds)


def test_timing_statistics():
    t = Timing((0.010, 0.012, 0.011, 0.030))
    assert t.median == pytest.approx(0.0115) and t.best == 0.010
    assert t.spread == pytest.approx((0.030 - 0.010) / 0.0115)


def test_repeat_must_be_positive():
    from whichgpu.errors import InputError

    with pytest.raises(InputError):
        Device(fake_torch(0), "cpu").time(lambda: None, repeat=0)


# ------------------------------------------------------------------ the harness on the CPU

def test_cpu_matmul_counts_two_n_cubed_flops_per_repetition():
    torch = pytest.importorskip("torch")
    dev = Device(torch, "cpu")
    m = kernels.matmul(dev, "fp32", 64, warmup=1, repeat=3)
    assert m.name == "matmul_fp32" and m.unit == "FLOP/s"
    assert m.work == 2 * 64**3
    assert m.value == pytest.approx(m.work / m.timing.median)
    assert "64x64x64" in m.method


def test_cpu_copies_count_read_plus_write_for_device_memory():
    torch = pytest.importorskip("torch")
    dev = Device(torch, "cpu")
    bw = kernels.memory_bandwidth(dev, 1 << 20, warmup=1, repeat=2)
    assert bw.work == 2 * (1 << 20) and bw.value > 0
    h2d = kernels.host_transfer(dev, 1 << 20, "h2d", warmup=0, repeat=2)
    assert h2d.work == 1 << 20 and "pinned" not in h2d.method  # no pinning on the CPU
    p2p = kernels.peer_transfer(dev, Device(torch, "cpu"), 1 << 20, warmup=0, repeat=2)
    assert p2p.name == "p2p_0_0" and p2p.value > 0


def test_unknown_precision_or_direction_is_bad_input():
    torch = pytest.importorskip("torch")
    from whichgpu.errors import InputError

    with pytest.raises(InputError):
        kernels.matmul(Device(torch, "cpu"), "fp64", 8)
    with pytest.raises(InputError):
        kernels.host_transfer(Device(torch, "cpu"), 1024, "sideways")


def test_bench_on_the_cpu_runs_every_step_and_saves_nothing(cli):
    pytest.importorskip("torch")
    res = cli("bench", "--device", "cpu", "--quick", "--json")
    assert res.code == 0, res.err
    data = res.json()
    names = [m["name"] for m in data["gpus"][0]["measurements"]]
    assert names == ["matmul_fp32", "matmul_bf16", "memory_bandwidth", "h2d", "d2h"]
    assert data["saved_to"] is None and data["conditions"]["device"] == "cpu"


# ------------------------------------------------------------------ the GPU flow, recorded

FAKE = {"bf16": 700e12, "fp16": 700e12, "tf32": 350e12, "fp8": 1300e12}


def _fake_kernels(monkeypatch, seen: list[str] | None = None):
    """Replace the CUDA kernels by their typical H100 results (recorded, not run)."""
    t = Timing((0.01, 0.01, 0.01))

    def matmul(dev, p, n, **kw):
        if seen is not None:
            seen.append(f"{dev}:{p}")
        return Measurement(f"matmul_{p}", FAKE[p], "FLOP/s", t, 2 * n**3, "fake")

    monkeypatch.setattr(kernels, "supported_precisions", lambda dev: list(FAKE))
    monkeypatch.setattr(kernels, "matmul", matmul)
    monkeypatch.setattr(kernels, "memory_bandwidth", lambda dev, n, **kw: Measurement(
        "memory_bandwidth", 2.9e12, "bytes/s", t, 2 * n, "fake"))
    monkeypatch.setattr(kernels, "host_transfer", lambda dev, n, d, **kw: Measurement(
        d, 5.3e10, "bytes/s", t, n, "fake"))
    monkeypatch.setattr(kernels, "peer_transfer", lambda a, b, n, **kw: Measurement(
        f"p2p_{a.device.index}_{b.device.index}", 3.6e11, "bytes/s", t, n, "fake"))


@pytest.fixture
def hgx(monkeypatch, tmp_path):
    """An 8 x H100 SXM machine: recorded nvidia-smi, torch that sees 8 GPUs, kernels replaced."""
    monkeypatch.setitem(sys.modules, "pynvml", None)
    fake_smi(monkeypatch, tmp_path, "h100-8gpu-nvlink")
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda_devices=8))
    _fake_kernels(monkeypatch)


def test_bench_measures_each_gpu_and_pair_and_saves_a_profile(cli, hgx):
    res = cli("bench", "--json")
    assert res.code == 0, res.err
    data = res.json()
    assert data["saved_to"].endswith("calibration.json")
    assert len(data["gpus"]) == 8 and data["gpus"][0]["catalog_id"] == "h100-sxm"
    g = data["gpus"][0]
    assert g["matmul_tflops"] == {"bf16": 700.0, "fp16": 700.0, "tf32": 350.0, "fp8": 1300.0}
    ratios = {v["name"]: v["ratio"] for v in g["versus_datasheet"]}
    assert ratios["matmul_bf16"] == pytest.approx(700 / 989.5)  # dense BF16 datasheet
    assert ratios["memory_bandwidth"] == pytest.approx(2.9e12 / 3.35e12)
    assert ratios["h2d"] == pytest.approx(5.3e10 / 64e9)  # PCIe 5 x16, one direction
    assert ratios["p2p_0_1"] == pytest.approx(3.6e11 / 450e9)  # NVLink 900 GB/s both ways
    topo = data["topology"]
    assert topo["kind"] == "nvlink" and len(topo["pairs"]) == 28
    assert all(p["p2p_bytes_per_s"] == 3.6e11 for p in topo["pairs"])
    assert len(data["p2p"]) == 28


def test_the_saved_profile_changes_speed_for_h100_sxm_only(cli, hgx):
    assert cli("bench", "--no-p2p").code == 0
    args = ("speed", "llama-3.1-70b", "--gpu", "h100-sxm", "--count", "2", "--json")
    plain, calibrated = cli(*args).json(), cli(*args, "--calibration", "default").json()
    key = "prefill_tokens_per_s"
    assert calibrated[key]["typical"] < plain[key]["typical"]  # 71 % measured < 80 % reference
    other = ("speed", "llama-3.1-8b", "--gpu", "a100-80gb-sxm", "--json")
    assert cli(*other).json()[key] == cli(*other, "--calibration", "default").json()[key]


def test_the_table_shows_measured_datasheet_and_ratio(cli, hgx):
    res = cli("bench", "--gpu-index", "0,1", "--no-save")
    assert res.code == 0, res.err
    assert "0: h100-sxm" in res.out and "700 (71%)" in res.out  # BF16 of 989.5
    assert "datasheet" in res.out and "2,900" in res.out and "(87%)" in res.out
    assert "GPU0: NVIDIA H100 80GB HBM3, power limit 700 W" in res.out
    assert "GPU1" in res.out and "GPU2" not in res.out
    assert "NV18" in res.out and "360" in res.out and "450" in res.out  # link vs datasheet
    assert "Saved" not in res.out


def test_the_progress_bar_gets_every_planned_step_in_order(hgx):
    from whichgpu.bench.detect import detect_gpus
    from whichgpu.bench.run import Options, plan, run_bench
    from whichgpu.bench.topology import read_topology

    class Recorder:
        def __init__(self):
            self.total, self.steps, self.finished = None, [], False

        def start(self, total):
            self.total = total

        def step(self, description):
            self.steps.append(description)

        def done(self):
            self.finished = True

    gpus, topo, rec = detect_gpus()[:2], read_topology(2), Recorder()
    run_bench(sys.modules["torch"], gpus, topo, options=Options(), reporter=rec)
    expected = plan(gpus, {0: list(FAKE), 1: list(FAKE)}, topo, Options())
    assert rec.steps == expected and rec.total == len(expected) == 15 and rec.finished
    assert expected[0] == "GPU0 matmul bf16" and expected[-1] == "GPU0 -> GPU1 peer copy"


def test_the_rich_progress_bar_runs_through_its_steps():
    from whichgpu.cli.bench_cmds import RichReporter

    r = RichReporter()
    r.start(2)
    r.step("GPU0 matmul bf16")
    r.step("GPU0 memory bandwidth")
    assert r.progress.tasks[0].completed == 1
    r.done()
    assert r.progress.tasks[0].completed == 2


def test_only_the_asked_precisions_and_gpus_are_measured(cli, monkeypatch, hgx):
    seen: list[str] = []
    _fake_kernels(monkeypatch, seen)
    assert cli("bench", "--gpu-index", "3", "--precision", "bf16,fp8", "--no-save").code == 0
    assert seen == ["cuda:3:bf16", "cuda:3:fp8"]


def test_cuda_visible_devices_are_matched_to_the_driver_by_uuid(cli, monkeypatch, tmp_path):
    """CUDA sees GPUs 3 and 5 of eight (CUDA_VISIBLE_DEVICES=3,5) as cuda:0 and cuda:1."""
    monkeypatch.setitem(sys.modules, "pynvml", None)
    fake_smi(monkeypatch, tmp_path, "h100-8gpu-nvlink")
    uuids = ["2c3d4e5f-6071-4283-9495-a6b7c8d9eafb", "4e5f6071-8293-44a5-b6b7-c8d9eafb0c1d"]
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda_devices=2, uuids=uuids))
    seen: list[str] = []
    _fake_kernels(monkeypatch, seen)
    res = cli("bench", "--precision", "bf16", "--no-save", "--json")
    assert res.code == 0, res.err
    data = res.json()
    assert [(g["index"], g["cuda_index"]) for g in data["gpus"]] == [(3, 0), (5, 1)]
    assert seen == ["cuda:0:bf16", "cuda:1:bf16"]
    assert [(p["a"], p["b"]) for p in data["topology"]["pairs"]] == [(3, 5)]
    assert [m["name"] for m in data["p2p"]] == ["p2p_3_5"]


def test_a_power_capped_card_is_pointed_out(cli, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    fake_smi(monkeypatch, tmp_path, "rtx4090-2gpu-pcie")
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda_devices=2))
    _fake_kernels(monkeypatch)
    res = cli("bench", "--no-save")
    assert res.code == 0, res.err
    assert "power limit 350 W is below the 450 W" in res.out
    assert "weakest: pcie_host" in res.out  # PIX, but GNS: no peer-to-peer
    assert "GNS" in res.out


def test_a_card_outside_the_catalog_is_measured_but_not_saved_unless_named(cli, monkeypatch,
                                                                          tmp_path):
    machine = tmp_path / "quadro"
    machine.mkdir()
    (machine / "query.csv").write_text(
        "index, name, memory.total [MiB], power.limit [W]\n"
        "0, NVIDIA Quadro RTX 8000, 49152 MiB, 260.00 W\n")
    monkeypatch.setitem(sys.modules, "pynvml", None)
    fake_smi(monkeypatch, tmp_path, str(machine))
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda_devices=1))
    _fake_kernels(monkeypatch)
    res = cli("bench", "--precision", "bf16")
    assert res.code == 0 and "no profile was saved" in res.err and "--as ID" in res.err
    res = cli("bench", "--precision", "bf16", "--as", "rtx-a6000", "--json")
    assert res.json()["gpus"][0]["catalog_id"] == "rtx-a6000"
    assert res.json()["saved_to"]


def test_asking_for_a_gpu_that_is_not_there_is_bad_input(cli, hgx):
    res = cli("bench", "--gpu-index", "9")
    assert res.code == 2 and "no GPU 9" in res.err


# ------------------------------------------------------------------ no GPU, no crash

def test_bench_without_torch_says_how_to_install_it(cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    res = cli("bench")
    assert res.code == 2
    assert "PyTorch" in res.err and "pip install 'whichgpu[bench]'" in res.err
    assert "Traceback" not in res.err


def test_bench_without_a_gpu_says_what_is_missing(cli, monkeypatch, tmp_path):
    no_driver(monkeypatch, tmp_path)
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda_devices=0, cuda_version=None))
    res = cli("bench")
    assert res.code == 2
    assert "an NVIDIA GPU with its driver" in res.err
    assert "a CUDA build of PyTorch" in res.err and "Nothing was measured" in res.err


def test_a_driver_gpu_that_cuda_cannot_see_is_named(cli, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    fake_smi(monkeypatch, tmp_path, "h200-1gpu")
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda_devices=0))
    res = cli("bench")
    assert res.code == 2 and "NVIDIA H200" in res.err and "CUDA_VISIBLE_DEVICES" in res.err


def test_cuda_without_nvml_or_nvidia_smi_still_benches(cli, monkeypatch, tmp_path):
    no_driver(monkeypatch, tmp_path)
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda_devices=1))
    _fake_kernels(monkeypatch)
    res = cli("bench", "--no-save", "--json")
    assert res.code == 0, res.err
    g = res.json()["gpus"][0]
    assert g["source"] == "torch" and g["catalog_id"] == "h200-sxm"
