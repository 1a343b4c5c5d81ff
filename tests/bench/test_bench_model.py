"""``whichgpu bench model``: the random-weight stand-in, the estimates beside the measurements,
and the rows appended to the validation data."""

from __future__ import annotations

import csv
import sys

import pytest

from bench_fakes import DATA, fake_torch, no_driver
from whichgpu.bench import model_bench as mb
from whichgpu.errors import InputError
from whichgpu.estimate.validation import memory as validation_memory
from whichgpu.estimate.validation import speed as validation_speed
from whichgpu.models import resolve_model

TINY = str(DATA / "tiny-llama" / "config.json")
MEASURED = {"prefill_tokens_per_s": 9000.0, "decode_tokens_per_s": 30.0,
            "train_tokens_per_s": 5000.0, "inference_peak_bytes": 16.5e9,
            "train_peak_bytes": 140e9}


def _rows(gpu="h200-sxm", settings=None):
    s = settings or mb.Settings(batch=1, prompt_tokens=512, output_tokens=128, train=True,
                                train_seq=1024)
    return mb.validation_rows(resolve_model("llama-3.1-8b"), s, gpu, MEASURED,
                              "torch 2.13.0; cuda 12.8", day="20261130")


def test_rows_follow_the_validation_schemas():
    rows = _rows()
    assert [r["metric"] for r in rows["speed"]] == ["prefill_tokens_per_s",
                                                    "decode_tokens_per_s", "train_tokens_per_s"]
    assert [r["measured"] for r in rows["memory"]] == ["peak_allocated_bytes"] * 2
    for r in rows["speed"]:
        assert set(r) <= set(mb.SPEED_HEADER)
        assert r["model"] == "meta-llama/Llama-3.1-8B" and r["engine"] == "whichgpu-bench"
        assert r["source_url"] == mb.SOURCE and "torch 2.13.0" in r["conditions"]
    for r in rows["memory"]:
        assert set(r) <= set(mb.MEMORY_HEADER)
    assert rows["speed"][0]["id"] == "bench-llama-3.1-8b-h200-sxm-b1-p512-o128-prefill-20261130"


def test_validation_reads_the_rows_back_as_it_scores_them():
    """What --append writes is what 'whichgpu validate' scores: same workload, same estimate."""
    rows = _rows()
    for r in rows["speed"]:
        predicted = validation_speed.predict(r)[0]
        assert predicted > 0
    for r in rows["memory"]:
        predicted, how = validation_memory.predict(r)
        assert predicted > 0 and "without CUDA context" in how


def test_each_measurement_is_set_beside_its_estimate():
    lines = {ln.name: ln for ln in mb.compare_lines(_rows(), MEASURED, "h200-sxm")}
    assert set(lines) == {"prefill_tokens_per_s", "decode_tokens_per_s_per_sequence",
                          "train_tokens_per_s", "inference_peak_bytes", "train_peak_bytes"}
    decode = lines["decode_tokens_per_s_per_sequence"]
    assert decode.measured == 30.0
    assert decode.estimate.low < decode.estimate.typical < decode.estimate.high
    assert decode.error(decode.estimate) == pytest.approx(decode.estimate.typical / 30 - 1)
    assert decode.to_json()["calibrated_estimate"] is None


def test_a_profile_adds_a_calibrated_estimate(tmp_path):
    import json

    from whichgpu.bench.profile import SCHEMA, load_profile

    p = tmp_path / "p.json"
    p.write_text(json.dumps({"schema": SCHEMA, "gpus": [
        {"index": 0, "catalog_id": "h200-sxm", "memory_bandwidth_bytes_per_s": 3.0e12}]}))
    lines = mb.compare_lines(_rows(), MEASURED, "h200-sxm", load_profile(p))
    decode = next(ln for ln in lines if ln.name.startswith("decode"))
    assert decode.calibrated.typical < decode.estimate.typical


def test_rows_are_appended_once_under_the_existing_header(tmp_path):
    (tmp_path / "speed.csv").write_text(",".join(mb.SPEED_HEADER) + "\n")
    written = mb.append_rows(str(tmp_path), _rows())
    assert len(written) == 5
    assert mb.append_rows(str(tmp_path), _rows()) == []  # already there
    with (tmp_path / "speed.csv").open() as f:
        speed = list(csv.DictReader(f))
    assert [r["metric"] for r in speed] == ["prefill_tokens_per_s", "decode_tokens_per_s",
                                            "train_tokens_per_s"]
    with (tmp_path / "memory.csv").open() as f:  # created with its header
        assert next(csv.reader(f)) == list(mb.MEMORY_HEADER)


def test_appending_to_a_file_without_the_columns_is_refused(tmp_path):
    from whichgpu.errors import DataError

    (tmp_path / "speed.csv").write_text("id,value\n")
    with pytest.raises(DataError, match="no column"):
        mb.append_rows(str(tmp_path), _rows())
    with pytest.raises(InputError, match="not a folder"):
        mb.append_rows(str(tmp_path / "nope"), _rows())


@pytest.mark.parametrize(("model", "why"), [("mixtral-8x7b", "mixture-of-experts"),
                                            ("deepseek-v3", "mixture-of-experts"),
                                            ("flux.1-dev", "decoder LLMs")])
def test_models_the_stand_in_cannot_be_are_refused(model, why):
    with pytest.raises(InputError, match=why):
        mb.check_buildable(resolve_model(model))


@pytest.mark.parametrize("kw", [{"batch": 0}, {"prompt_tokens": 0}, {"dtype": "int4"}])
def test_bad_settings_are_bad_input(kw):
    with pytest.raises(InputError):
        mb.Settings(**kw)


def test_a_run_the_gpu_cannot_hold_is_refused_before_building_it():
    gib = 2**30
    torch = fake_torch(cuda_devices=1)
    torch.cuda.mem_get_info = lambda device: (10 * gib, 80 * gib)
    spec = resolve_model("llama-3.1-8b")  # 16 GB of bf16 weights
    with pytest.raises(InputError, match=r"needs about 1\d\.\d GB and the GPU has 10\.7 GB free"):
        mb.check_fits(torch, "cuda:0", spec, mb.Settings())
    torch.cuda.mem_get_info = lambda device: (130 * gib, 141 * gib)
    mb.check_fits(torch, "cuda:0", spec, mb.Settings())  # inference fits on an H200
    with pytest.raises(InputError, match="the training step needs"):  # 18 bytes a parameter
        mb.check_fits(torch, "cuda:0", spec, mb.Settings(train=True))


# ------------------------------------------------------------------ with torch, on the CPU

@pytest.mark.parametrize("model", ["llama-3.2-1b", "llama-3.1-8b", "qwen2.5-0.5b", "phi-3-mini",
                                   "mistral-7b-v0.3"])
def test_the_stand_in_has_the_models_parameter_count(model):
    pytest.importorskip("torch")
    from whichgpu.bench.decoder import parameter_count

    spec = resolve_model(model)
    assert parameter_count(spec) == pytest.approx(spec.params.total, rel=1e-3)


def test_a_tiny_model_runs_prefill_decode_and_a_training_step_on_the_cpu():
    torch = pytest.importorskip("torch")
    spec = resolve_model(TINY)
    s = mb.Settings(batch=2, prompt_tokens=16, output_tokens=4, train=True, train_seq=32,
                    repeat=2)
    r = mb.run_model_bench(torch, spec, s, device="cpu")
    assert r.params_built == spec.params.total
    got = {ln.name: ln.measured for ln in r.lines}
    assert got["prefill_tokens_per_s"] > 0 and got["train_tokens_per_s"] > 0
    assert got["decode_tokens_per_s_per_sequence"] > 0
    assert got["decode_tokens_per_s (all sequences)"] == pytest.approx(
        2 * got["decode_tokens_per_s_per_sequence"])
    assert r.rows == {}  # no GPU, nothing to validate


def test_the_stand_in_decodes_through_its_cache_like_a_full_forward_pass():
    """The KV cache is right: the last logits of one pass equal prefill + one cached step."""
    torch = pytest.importorskip("torch")
    from whichgpu.bench.decoder import Decoder

    torch.manual_seed(0)
    model = Decoder(resolve_model(TINY), dtype=torch.float32).eval()
    tokens = torch.randint(0, 256, (1, 9))
    with torch.inference_mode():
        full = model(tokens, last_only=True)
        cache = model.new_cache(1, 9)
        model(tokens[:, :8], cache, 0)
        step = model(tokens[:, 8:], cache, 8, last_only=True)
    assert torch.allclose(full, step, atol=1e-4)


def test_bench_model_on_the_cpu_through_the_cli(cli):
    pytest.importorskip("torch")
    res = cli("bench", "model", TINY, "--device", "cpu", "--prompt-tokens", "16",
              "--output-tokens", "4", "--repeat", "1", "--json")
    assert res.code == 0, res.err
    data = res.json()
    assert data["device"] == "cpu" and data["gpu"] is None
    assert {r["name"] for r in data["results"]} == {"prefill_tokens_per_s",
                                                    "decode_tokens_per_s_per_sequence"}
    res = cli("bench", "model", TINY, "--device", "cpu", "--append", "validation")
    assert res.code == 2 and "not one" in res.err


def test_bench_model_without_a_gpu_exits_2(cli, monkeypatch, tmp_path):
    no_driver(monkeypatch, tmp_path)
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda_devices=0, cuda_version=None))
    res = cli("bench", "model", "llama-3.2-1b")
    assert res.code == 2 and "bench model" in res.err and "Traceback" not in res.err


def test_bench_model_refuses_an_moe_before_looking_for_a_gpu(cli):
    res = cli("bench", "model", "mixtral-8x7b")
    assert res.code == 2 and "mixture-of-experts" in res.err
