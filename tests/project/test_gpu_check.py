"""scripts/gpu_check.sh, the prepared real-GPU check: its plan, its refusal without a GPU, the
presets it builds and its summary (the GPU run itself needs a lent device)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

from paths import ROOT

SCRIPT = ROOT / "scripts" / "gpu_check.sh"
BASH = shutil.which("bash") or "/bin/bash"


def run(*args, path=None, tmp_path=None):
    env = {**os.environ, "PYTHON": sys.executable}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([BASH, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path or ROOT, timeout=120)


def test_the_dry_run_prints_every_step_and_writes_nothing(tmp_path):
    out = tmp_path / "check"
    res = run("--dry-run", "--out", str(out))
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert "bench --quick --output" in text and str(out / "profile.json") in text
    assert text.count("whichgpu bench model ") == 3
    assert "validate speed --file" in text and "torch:" in text and "driver:" in text
    assert not out.exists()


def test_the_presets_in_the_plan_are_dense_decoders_bench_model_can_build():
    from whichgpu.bench.model_bench import check_buildable
    from whichgpu.models import resolve_model

    models = re.findall(r"\"([a-z0-9.\-]+) --", SCRIPT.read_text())
    assert len(models) == 3
    for m in models:
        check_buildable(resolve_model(m))


def test_without_a_gpu_it_exits_2_and_says_what_it_needs(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("hostname", "date", "dirname", "sed", "head"):
        for d in ("/usr/bin", "/bin"):
            if os.path.exists(f"{d}/{tool}"):
                os.symlink(f"{d}/{tool}", bindir / tool)
                break
    res = run("--out", str(tmp_path / "o"), path=str(bindir))
    assert res.returncode == 2
    assert "no nvidia-smi" in res.stderr and "Traceback" not in res.stderr


def test_an_unknown_option_is_a_usage_error():
    res = run("--fast")
    assert res.returncode == 2 and "unknown option" in res.stderr


def test_the_summary_sets_each_measurement_beside_the_estimates(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from gpu_check_summary import summarise
    finally:
        sys.path.pop(0)
    (tmp_path / "bench.json").write_text(json.dumps({"gpus": [{
        "name": "NVIDIA H200", "catalog_id": "h200-sxm",
        "versus_datasheet": [{"name": "matmul_bf16", "measured": 790e12, "unit": "FLOP/s",
                              "datasheet": 989e12, "ratio": 0.8}]}]}))
    (tmp_path / "model-1.json").write_text(json.dumps({
        "model": "llama-3.2-1b", "settings": {"batch": 4},
        "results": [{"name": "prefill_tokens_per_s", "unit": "tokens/s", "measured": 1000.0,
                     "estimate": {"low": 800, "typical": 1100, "high": 1300}, "error": 0.1,
                     "calibrated_estimate": {"low": 700, "typical": 1050, "high": 1200},
                     "calibrated_error": 0.05}]}))
    (tmp_path / "model-2.json").write_text("")
    lines = "\n".join(summarise(tmp_path))
    assert "ratio 0.80" in lines and "h200-sxm" in lines
    assert "(+10%)" in lines and "(+5%)" in lines
    assert "model-2.json: no result" in lines
    assert "median |error|: 10% datasheet, 5% with the profile" in lines


def test_the_make_target_runs_the_script():
    text = (ROOT / "Makefile").read_text()
    assert re.search(r"^gpu-check:\n\tbash scripts/gpu_check.sh$", text, re.M)
