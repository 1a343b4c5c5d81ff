"""A calibration profile changes the speed model's answer for the GPU it measured, and only it."""

from __future__ import annotations

import json

import pytest

from profile_files import _entry, _profile
from whichgpu.bench.profile import (
    SCHEMA,
    default_profile_path,
    load_profile,
    profile_from_option,
    save_profile,
)
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import DataError, InputError
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def _decode(profile=None, gpu="h200-sxm", count=1, prompt=512):
    w = Workload(model=resolve_model("llama-3.1-8b"), task="inference", prompt_tokens=prompt,
                 output_tokens=128, engine="vllm")
    est = estimate_speed(w, get_gpu(gpu), count, profile=profile)
    return est.rates["decode_tokens_per_s_per_sequence"].typical, \
        est.rates["prefill_tokens_per_s"].typical, est


def test_a_profile_changes_the_speed_of_the_gpu_it_measured(tmp_path):
    """H200 measured at 600 of 989 TFLOPS (61 %, reference 80 %) and 3.6 of 4.8 TB/s (75 %,
    reference 90 %): decode (bandwidth-bound) slows by up to 0.75/0.90 (fixed per-step
    overheads do not scale), prefill by up to 0.61/0.80. An 8k prompt: a short one's prefill
    is bound by vLLM's per-layer dispatch on the host, which the card's speed does not move."""
    profile = load_profile(_profile(tmp_path, [_entry(0)]))
    decode0, prefill0, _ = _decode(prompt=8192)
    decode1, prefill1, est = _decode(profile, prompt=8192)
    assert decode1 < decode0 and prefill1 < prefill0
    bs = 3.6e12 / 4.8e12 / 0.90
    assert bs <= decode1 / decode0 < 0.95
    cs = 600 / get_gpu("h200-sxm").tflops("bf16") / 0.80
    assert cs <= prefill1 / prefill0 < 0.95
    assert est.calibration and "profile.json" in est.calibration


def test_a_profile_leaves_other_gpus_alone(tmp_path):
    profile = load_profile(_profile(tmp_path, [_entry(0)]))
    assert _decode(profile, gpu="h100-sxm")[:2] == _decode(gpu="h100-sxm")[:2]


def test_a_card_measured_at_the_reference_is_predicted_as_before(tmp_path):
    g = get_gpu("h200-sxm")
    entry = _entry(0, bf16=0.80 * g.tflops("bf16"), bw=0.90 * g.bandwidth_bytes_per_s)
    profile = load_profile(_profile(tmp_path, [entry]))
    assert _decode(profile)[:2] == pytest.approx(_decode()[:2], rel=1e-9)


def test_several_cards_of_one_kind_count_by_their_median(tmp_path):
    one = load_profile(_profile(tmp_path, [_entry(0, bw=3.6e12)], name="one.json"))
    three = load_profile(_profile(tmp_path, [_entry(0, bw=3.0e12), _entry(1, bw=3.6e12),
                                             _entry(2, bw=4.4e12)], name="three.json"))
    assert three.scales_for("h200-sxm", 0.8, 0.9) == one.scales_for("h200-sxm", 0.8, 0.9)


def _two_h100s(tmp_path, link, p2p, bw):
    pairs = [{"a": 0, "b": 1, "link": link, "p2p": p2p, "kind":
              "nvlink" if link.startswith("NV") else ("pcie_p2p" if p2p == "OK"
                                                     else "pcie_host"),
              "p2p_bytes_per_s": bw}]
    g = get_gpu("h100-sxm")
    entries = [_entry(i, "h100-sxm", 0.8 * g.tflops("bf16"), 0.9 * g.bandwidth_bytes_per_s)
               for i in (0, 1)]
    return load_profile(_profile(tmp_path, entries, {"kind": pairs[0]["kind"], "pairs": pairs},
                                 name=f"{link}.json"))


def _train_two(profile=None):
    w = Workload(model=resolve_model("llama-3.1-8b"), task="full-ft", context=2048, batch=1,
                 gpus=2)
    return estimate_speed(w, get_gpu("h100-sxm"), 2, profile=profile, check_fit=False)


def test_a_measured_pcie_topology_replaces_the_assumed_nvlink(tmp_path):
    """S28: an 'H100' box whose cards turn out to be linked through the CPU trains slower."""
    assumed = _train_two()
    assert assumed.scalars["link"] == "nvlink"
    measured = _train_two(_two_h100s(tmp_path, "SYS", "CNS", 2.0e10))
    assert measured.scalars["link"] == "pcie_host"
    assert measured.rates["tokens_per_s"].typical < assumed.rates["tokens_per_s"].typical


def test_a_measured_nvlink_with_its_bandwidth_is_used(tmp_path):
    profile = _two_h100s(tmp_path, "NV18", "OK", 3.6e11)
    assert profile.link_for("h100-sxm", 2) == {"kind": "nvlink", "one_way_bytes_per_s": 3.6e11,
                                               "pairs": 1}
    assert profile.link_for("h100-sxm", 4) is None  # only two were measured
    assert _train_two(profile).scalars["link"] == "nvlink"


def test_the_speed_command_uses_a_profile_file(cli, tmp_path):
    path = _profile(tmp_path, [_entry(0)])
    args = ("speed", "llama-3.1-8b", "--gpu", "h200-sxm", "--json")
    plain = cli(*args).json()
    calibrated = cli(*args, "--calibration", str(path)).json()
    key = "decode_tokens_per_s_per_sequence"
    assert calibrated[key]["typical"] < plain[key]["typical"]
    assert "profile.json" in calibrated["calibration"] and plain["calibration"] is None


def test_default_reads_the_profile_bench_saved(cli, tmp_path):
    res = cli("speed", "llama-3.1-8b", "--gpu", "h200-sxm", "--calibration", "default")
    assert res.code == 2 and "whichgpu bench" in res.err
    data = json.loads(_profile(tmp_path, [_entry(0)]).read_text())
    saved = save_profile(data)
    assert saved == default_profile_path()
    assert profile_from_option("default").entries("h200-sxm")
    res = cli("speed", "llama-3.1-8b", "--gpu", "h200-sxm", "--calibration", "default",
              "--json")
    assert res.code == 0 and res.json()["calibration"]


def test_save_refuses_a_profile_it_could_not_read_back(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(DataError):
        save_profile({"schema": SCHEMA, "gpus": [{"name": "no catalog id"}]}, target)
    assert not target.exists()


@pytest.mark.parametrize(("data", "field"), [
    ({"schema": "other"}, "schema"),
    ({"schema": SCHEMA, "gpus": []}, "gpus"),
    ({"schema": SCHEMA, "gpus": [{"index": 0}]}, "catalog_id"),
    ({"schema": SCHEMA, "gpus": [{"catalog_id": "h200-sxm", "matmul_tflops": {"bf16": -1}}]},
     "matmul_tflops.bf16"),
    ({"schema": SCHEMA, "gpus": [{"catalog_id": "h200"}]}, "catalog_id"),
    ({"schema": SCHEMA, "gpus": [{"catalog_id": "h200-sxm", "h2d_bytes_per_s": "fast"}]},
     "h2d_bytes_per_s"),
    ({"schema": SCHEMA, "gpus": [{"catalog_id": "h200-sxm"}],
      "topology": {"pairs": [{"a": 0, "b": 1, "kind": "carrier-pigeon"}]}},
     "topology.pairs.kind"),
    ({"schema": SCHEMA, "gpus": [{"catalog_id": "h200-sxm"}],
      "topology": {"pairs": [{"a": 0, "b": 1, "p2p_bytes_per_s": 0}]}},
     "topology.pairs.p2p_bytes_per_s"),
])
def test_bad_profiles_name_the_field(tmp_path, data, field):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(DataError) as exc:
        load_profile(p)
    assert exc.value.field == field


def test_an_alias_instead_of_a_catalog_id_gets_a_suggestion(tmp_path):
    p = tmp_path / "alias.json"
    p.write_text(json.dumps({"schema": SCHEMA, "gpus": [{"catalog_id": "h200"}]}))
    with pytest.raises(DataError, match="did you mean h200-sxm"):
        load_profile(p)


def test_a_bad_profile_on_the_command_line_exits_2(cli, tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    res = cli("speed", "llama-3.1-8b", "--gpu", "h200-sxm", "--calibration", str(p))
    assert res.code == 2 and "not valid JSON" in res.err and "Traceback" not in res.err
    with pytest.raises(InputError):
        profile_from_option(str(tmp_path / "missing.json"))


def test_recommend_uses_the_profile_for_the_gpu_it_measured(cli, tmp_path):
    """A slow-measured H200 takes longer in 'recommend'; the other cards' times stay put."""
    path = _profile(tmp_path, [_entry(0, bf16=400.0, bw=2.4e12)])
    args = ("recommend", "llama-3.1-8b", "--tokens", "1M", "--prices", "article-000",
            "--top", "40", "--json")

    def times(*extra):
        res = cli(*args, *extra)
        assert res.code == 0, res.err
        return {(o["gpu"], o["count"]): o["time_s"]["typical"] for o in res.json()["options"]}

    plain, calibrated = times(), times("--calibration", str(path))
    h200 = [k for k in plain if k[0] == "h200-sxm"]
    assert h200 and all(calibrated[k] > plain[k] for k in h200 if k in calibrated)
    others = [k for k in plain if k[0] != "h200-sxm" and k in calibrated]
    assert others and all(calibrated[k] == plain[k] for k in others)
