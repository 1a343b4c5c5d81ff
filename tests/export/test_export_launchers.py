"""Exports load with the launchers' own code: SkyPilot's sky.Task.from_yaml (and its feasibility
check on recorded catalog rows) and the loader of dstack apply (issue 19).

SkyPilot and dstack live in their own environment (.venv-launchers, built by make setup: see
docs/export.md); ``scripts/check_launcher_files.py`` runs there and answers in JSON. make test
sets WHICHGPU_LAUNCHERS_PYTHON, so under make (and in CI) a missing environment fails; a bare
pytest without it skips these tests with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from paths import DATA, ROOT
from whichgpu.export import names

DATA = DATA / "export"
OFFERS = str(DATA / "offers.csv")
CHECKER = ROOT / "scripts" / "check_launcher_files.py"
_PY = os.environ.get("WHICHGPU_LAUNCHERS_PYTHON") or str(ROOT / ".venv-launchers" / "bin" /
                                                         "python")
if not Path(_PY).exists():
    if os.environ.get("WHICHGPU_LAUNCHERS_PYTHON"):
        raise RuntimeError(f"the launchers' environment is missing ({_PY}): run make setup")
    pytest.skip("no launchers environment (.venv-launchers): run make setup",
                allow_module_level=True)

DONE_WHEN = ("recommend", "llama-3.1-8b", "--task", "lora", "--steps", "2000", "--context", "2k",
             "--prices", OFFERS)


class _Checker:
    """The checker (scripts/check_launcher_files.py serve) in the launchers' venv, started
    once for the module: SkyPilot and dstack are imported once (seconds each time), and every
    test's files are loaded by the same launchers' code as a fresh process would load them."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "SKY_RUNTIME_DIR": str(home), "HOME": str(home),
               "SKYPILOT_DISABLE_USAGE_COLLECTION": "1", "DSTACK_DO_NOT_TRACK": "1"}
        self.log = home / "checker-stderr.txt"
        with self.log.open("w") as err:
            self.proc = subprocess.Popen([_PY, str(CHECKER), "serve"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err, text=True,
                                         env=env, cwd=ROOT)

    def ask(self, mode: str, paths: list[Path]) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"mode": mode, "paths": [str(p) for p in paths],
                   "cwd": str(paths[0].parent if paths else ROOT)}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:  # the launchers may print lines of their own
            if line.startswith("@@answer "):
                return json.loads(line[len("@@answer "):])
        raise AssertionError(f"the checker stopped: {self.log.read_text()[-2000:]}")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_CHECKERS: dict[Path, _Checker] = {}


@pytest.fixture(scope="module")
def sky_home(tmp_path_factory):
    """A SkyPilot runtime folder whose catalog is the recorded rows (nothing downloaded); the
    checker that loads files with the launchers' code runs with it (one process per module)."""
    home = tmp_path_factory.mktemp("sky")
    shutil.copytree(DATA / "skypilot-catalog", home / ".sky" / "catalogs" / "v8")
    yield home
    checker = _CHECKERS.pop(home, None)
    if checker is not None:
        checker.close()


def _check(mode: str, paths: list[Path], sky_home: Path) -> dict:
    if sky_home not in _CHECKERS:
        _CHECKERS[sky_home] = _Checker(sky_home)
    return _CHECKERS[sky_home].ask(mode, paths)


def _export(cli, tmp_path: Path, launcher: str, *args: str, name: str | None = None) -> Path:
    res = cli(*DONE_WHEN, *args, "--export", launcher)
    assert res.code == 0, res.err
    path = tmp_path / (name or f"task-{launcher}-{abs(hash(args))}.yaml")
    path.write_text(res.out)
    return path


def _exported(cli, launcher: str) -> dict:
    """The option the export wrote, from the same command's JSON."""
    data = cli(*DONE_WHEN, "--export", launcher, "--json", "--top", "0").json()
    assert data["export"]["launcher"] == launcher
    return data["options"][data["export"]["option"] - 1]


def test_done_when_skypilot_file_loads_and_sky_can_launch_it(cli, tmp_path, sky_home):
    path = _export(cli, tmp_path, "skypilot")
    text = path.read_text()
    assert text.startswith("# SkyPilot task written by whichgpu")
    body = yaml.safe_load(text)
    got = _check("skypilot", [path], sky_home)[str(path)]
    assert got["ok"], got.get("error")
    best = _exported(cli, "skypilot")
    assert got["cloud"].lower() == body["resources"]["infra"].split("/")[0]
    assert got["instance_type"] == best["offer"]["instance_type"]
    assert got["region"] == best["offer"]["region"]
    assert got["use_spot"] is False and got["disk_size"] == body["resources"]["disk_size"]
    assert got["launchable_instance_types"] == [best["offer"]["instance_type"]], got["hint"]
    assert "axolotl train" in got["run"] and got["envs"]["MODEL"] == "meta-llama/Llama-3.1-8B"


def test_done_when_dstack_file_loads_with_dstack_apply_loader(cli, tmp_path, sky_home):
    path = _export(cli, tmp_path, "dstack")
    got = _check("dstack", [path], sky_home)[str(path)]
    assert got["ok"], got.get("error")
    best = _exported(cli, "dstack")
    assert best["offer"]["provider"] == "RunPod"  # option 1, on Hyperbolic, has no dstack backend
    assert "passed over" in path.read_text()
    assert got["type"] == "task" and got["spot_policy"] == "on-demand"
    assert got["backends"] == ["runpod"] and got["regions"] == [best["offer"]["region"]]
    assert got["instance_types"] == [best["offer"]["instance_type"]]
    assert got["max_price"] == pytest.approx(best["price_per_hour"]["amount"], abs=0.01)
    assert got["gpu_name"] == ["A6000"] and got["gpu_count"] == [1, 1]
    assert got["gpu_memory_gb"] == [48.0, 48.0]
    assert any("axolotl train" in c for c in got["commands"]) and "HF_TOKEN" in got["env"]


def test_spot_and_other_options_load_and_launch_as_priced(cli, tmp_path, sky_home):
    """Every ranked option the launchers can express: spot flags, the 8-GPU AWS instance,
    and the option's own offer is what SkyPilot finds launchable."""
    data = cli(*DONE_WHEN, "--spot", "--json", "--top", "0").json()
    sky_files, ds_files, expected = [], [], {}
    unsupported = _check("names", [], sky_home)["skypilot_unsupported"]
    refused = 0
    for i, opt in enumerate(data["options"][:12], start=1):
        if opt["offer"]["provider"] == "Hyperbolic":
            continue
        for launcher, bucket in (("skypilot", sky_files), ("dstack", ds_files)):
            res = cli(*DONE_WHEN, "--spot", "--export-option", str(i), "--export", launcher)
            if res.code == 2 and "SkyPilot does not support" in res.err:
                # refused only for a feature SkyPilot itself lacks on that cloud (a bucket
                # mount for a spot run's checkpoints on RunPod or Vast.ai)
                cloud = names.backend(opt["offer"]["provider"], "skypilot")
                assert "storage_mounting" in unsupported[cloud], res.err
                refused += 1
                continue
            if res.code == 2 and "in machines of" in res.err:
                # priced from smaller offers, and the price list sells no machine that size
                assert opt["count"] > opt["offer"]["gpu_count"], res.err
                assert f"none of {opt['count']}" in res.err
                refused += 1
                continue
            assert res.code == 0, res.err
            p = tmp_path / f"o{i}.{launcher}.yaml"
            p.write_text(res.out)
            bucket.append(p)
            expected[str(p)] = opt
    assert sky_files and ds_files
    for path, got in _check("skypilot", sky_files, sky_home).items():
        opt = expected[path]
        assert got["ok"], (path, got.get("error"))
        assert got["features_error"] is None, (path, got["features_error"])
        assert got["use_spot"] is (opt["pricing"] == "spot")
        if opt["count"] == opt["offer"]["gpu_count"]:
            assert got["launchable_instance_types"] == [opt["offer"]["instance_type"]], got
        if opt["pricing"] == "spot":
            assert got["job_recovery"]["strategy"] == "EAGER_NEXT_REGION"
    for path, got in _check("dstack", ds_files, sky_home).items():
        opt = expected[path]
        assert got["ok"], (path, got.get("error"))
        assert got["spot_policy"] == ("spot" if opt["pricing"] == "spot" else "on-demand")


def test_engines_we_know_get_real_commands_that_load(cli, tmp_path, sky_home):
    cases = {
        "vllm": ("recommend", "llama-3.1-8b", "--engine", "vllm", "--tokens", "1M",
                 "--context", "8k", "--prices", OFFERS, "--only", "h100-sxm"),
        "llamacpp": ("recommend", "llama-3.1-8b", "--quant", "q4_k_m", "--tokens", "1M",
                     "--prices", OFFERS, "--only", "rtx-a6000"),
    }
    paths = {}
    for engine, args in cases.items():
        res = cli(*args, "--export", "skypilot")
        assert res.code == 0, res.err
        paths[engine] = tmp_path / f"{engine}.sky.yaml"
        paths[engine].write_text(res.out)
    got = _check("skypilot", list(paths.values()), sky_home)
    vllm = got[str(paths["vllm"])]
    assert vllm["ok"] and "vllm serve $MODEL --tensor-parallel-size 1" in vllm["run"]
    assert "--max-model-len 8192" in vllm["run"] and "--gpu-memory-utilization 0.9" in vllm["run"]
    llama = got[str(paths["llamacpp"])]
    assert llama["ok"] and "llama-server -hf $GGUF_REPO:Q4_K_M" in llama["run"]
    assert "-ngl 999" in llama["run"] and "FILL-IN" in llama["envs"]["GGUF_REPO"]


def test_an_option_the_launcher_cannot_express_is_a_clear_error(cli):
    data = cli(*DONE_WHEN, "--json", "--top", "0").json()
    i = next(n for n, o in enumerate(data["options"], start=1)
             if o["offer"]["provider"] == "Hyperbolic")
    res = cli(*DONE_WHEN, "--export", "dstack", "--export-option", str(i))
    assert res.code == 2 and "dstack has no backend for Hyperbolic" in res.err
    assert "--export skypilot" in res.err and "Traceback" not in res.err
    assert cli(*DONE_WHEN, "--export", "kubernetes").code == 2
    assert "only" in cli(*DONE_WHEN, "--export", "dstack", "--export-option", "999").err


def test_rest_field_returns_the_same_yaml_as_the_cli(cli, web, tmp_path, sky_home):
    """The API's export field is the CLI's file (on the shipped market prices: the web reads
    no offer files), and dstack's loader takes it."""
    args = ("recommend", "llama-3.1-8b", "--task", "lora", "--steps", "2000", "--context", "2k",
            "--export", "dstack")
    out = cli(*args).out
    r = web.get("/api/v1/recommend", params={
        "model": "llama-3.1-8b", "task": "lora", "steps": "2000", "context": "2k",
        "export": "dstack"})
    assert r.status_code == 200, r.text
    body = r.json()["export"]["yaml"]
    assert [x for x in body.splitlines() if not x.startswith("# Reproduce")] == \
        [x for x in out.splitlines() if not x.startswith("# Reproduce")]
    path = tmp_path / "rest.dstack.yml"
    path.write_text(body)
    assert _check("dstack", [path], sky_home)[str(path)]["ok"]
    assert web.get("/api/v1/recommend", params={"model": "llama-3.1-8b", "task": "lora",
                                                "steps": "10", "export": "k8s"}).status_code \
        == 422


def test_names_are_the_launchers_own(sky_home):
    """Every SkyPilot name in the table is one SkyPilot's catalog lists for that cloud (where
    we have its rows), every cloud and backend is registered, and every dstack name and
    memory is one gpuhunt (dstack's GPU list) knows."""
    from whichgpu.export import names

    got = _check("names", [], sky_home)
    clouds, backends = set(got["skypilot_clouds"]), set(got["dstack_backends"])
    for key, entry in names.provider_entries().items():
        assert entry.get("skypilot") is None or entry["skypilot"] in clouds, key
        assert entry.get("dstack") is None or entry["dstack"] in backends, key
    listed = got["skypilot_accelerators"]
    known = {(g["name"], g["memory"]) for g in got["dstack_gpus"]}
    for gpu, entry in names.gpu_entries().items():
        if "dstack" not in entry:  # only where gpuhunt knows no such GPU (the export refuses)
            assert entry["skypilot"] not in {n for n, _ in known}, gpu
            continue
        assert (entry["dstack"], entry["dstack_memory_gb"]) in known, gpu
        for cloud, name in entry.get("skypilot_clouds", {}).items():
            assert name in listed[cloud], (gpu, cloud, name)


def test_every_shipped_market_offer_maps_to_the_accelerator_skypilot_lists_for_it():
    """For each offer of the shipped SkyPilot snapshot, the name the table gives its GPU on its
    cloud is the AcceleratorName of that instance type's row in SkyPilot's own catalog."""
    import csv

    from whichgpu.export.names import skypilot_accelerator

    rows = {}
    for f in (ROOT / "scripts" / "data" / "skypilot-catalog").glob("*.csv"):
        for r in csv.DictReader(f.open()):
            rows[(f.stem, r["InstanceType"])] = r["AcceleratorName"]
    snap = ROOT / "src" / "whichgpu" / "catalog" / "prices" / "data" / "market" / "skypilot.csv"
    checked = 0
    for o in csv.DictReader(snap.open()):
        cloud = o["feed"].split("/")[1]
        want = rows.get((cloud, o["instance"]))
        if want:
            assert skypilot_accelerator(o["gpu"], cloud) == want, (o["gpu"], cloud, o["instance"])
            checked += 1
    assert checked > 150


def test_unsupported_features_table_is_skypilots_own(sky_home):
    """launcher_names.toml's skypilot_unsupported is, per cloud, what the installed SkyPilot
    does not implement there, among the features an export uses."""
    lib = _check("names", [], sky_home)["skypilot_unsupported"]
    used = {"open_ports", "multi-node", "storage_mounting", "spot_instance", "docker_image"}
    for key, entry in names.provider_entries().items():
        cloud = entry.get("skypilot")
        if cloud:
            assert set(entry.get("skypilot_unsupported", ())) == set(lib[cloud]) & used, key


# On the shipped market (what a user gets with no --prices): the review's cases.
SERVE_70B = ("recommend", "llama-3.1-70b", "--tokens", "10M", "--context", "8k")


@pytest.mark.parametrize("engine", ["vllm", "llamacpp", "sglang"])
def test_serving_exports_pick_a_cloud_that_opens_ports(cli, tmp_path, sky_home, engine):
    """Mithril and Hyperbolic cannot open ports in SkyPilot: a server's file goes elsewhere,
    says which options it passed over, and SkyPilot's own feature check passes."""
    args = (*SERVE_70B, "--engine", engine) + (("--quant", "q4_k_m") if engine == "llamacpp"
                                               else ())
    res = cli(*args, "--export", "skypilot")
    assert res.code == 0, res.err
    path = tmp_path / f"{engine}.sky.yaml"
    path.write_text(res.out)
    body = yaml.safe_load(res.out)
    assert body["resources"]["ports"] == [8000]
    got = _check("skypilot", [path], sky_home)[str(path)]
    assert got["ok"], got.get("error")
    assert "open_ports" in got["features"] and got["features_error"] is None
    cloud = body["resources"]["infra"].split("/")[0]
    assert cloud not in ("mithril", "hyperbolic")


def test_amd_exports_use_rocm_builds(cli, tmp_path, sky_home):
    """An MI300X file carries no CUDA-only step: llama.cpp's HIP build, AMD's vLLM image, and
    training in AMD's PyTorch image with SDPA instead of flash-attn; the loaders take them.
    Priced from the shipped market snapshot (RunPod's v8 MI300X rows)."""
    cases = {
        "llamacpp.dstack": ("recommend", "llama-3.1-70b", "--quant", "q4_k_m", "--tokens", "1M",
                            "--only", "mi300x", "--export", "dstack"),
        "vllm.sky": ("recommend", "llama-3.1-8b", "--engine", "vllm", "--tokens", "1M",
                     "--only", "mi300x", "--export", "skypilot"),
        "fullft.sky": ("recommend", "llama-3.1-8b", "--task", "full-ft", "--steps", "200",
                       "--context", "2k", "--only", "mi300x", "--export", "skypilot"),
    }
    paths = {}
    for key, args in cases.items():
        res = cli(*args)
        assert res.code == 0, (key, res.err)
        assert "GGML_CUDA" not in res.out and "pip install -U vllm" not in res.out, key
        assert "flash_attention: true" not in res.out, key
        paths[key] = tmp_path / f"{key}.yaml"
        paths[key].write_text(res.out)
    ds = _check("dstack", [paths["llamacpp.dstack"]], sky_home)[str(paths["llamacpp.dstack"])]
    assert ds["ok"], ds.get("error")
    assert ds["gpu_vendor"] == "amd" and any("-DGGML_HIP=ON" in c for c in ds["commands"])
    sky = _check("skypilot", [paths["vllm.sky"], paths["fullft.sky"]], sky_home)
    vllm, ft = sky[str(paths["vllm.sky"])], sky[str(paths["fullft.sky"])]
    assert vllm["ok"] and vllm["image_id"] and "rocm/vllm" in str(vllm["image_id"]), vllm
    assert "vllm serve" in vllm["run"] and vllm["features_error"] is None
    # SkyPilot's feasibility step finds the file's own instance type (recorded catalog rows)
    asked = yaml.safe_load(paths["vllm.sky"].read_text())["resources"].get("instance_type")
    assert vllm["launchable_instance_types"] == [asked], vllm["hint"]
    assert ft["ok"] and "rocm/pytorch" in str(ft["image_id"]) and "sdp_attention: true" in \
        ft["run"], ft


@pytest.mark.parametrize("currency", ["EUR", "GBP", "JPY"])
def test_dstack_max_price_is_in_usd_whatever_the_display_currency(cli, currency):
    usd = yaml.safe_load(cli(*DONE_WHEN, "--export", "dstack").out)["max_price"]
    other = cli(*DONE_WHEN, "--currency", currency, "--export", "dstack")
    assert other.code == 0, other.err
    assert yaml.safe_load(other.out)["max_price"] == usd


def test_independent_work_on_one_gpu_offers_exports_as_that_many_separate_machines(cli):
    """Was: a 6-GPU option priced from a 1-GPU offer was refused at export ('none of 6').
    Images split into independent shares, so the option is 6 separate 1-GPU machines
    (issue 26): the file asks for one GPU a machine and launches six of them."""
    data = cli("recommend", "flux.1-dev", "--task", "image", "--images", "1000", "--json",
               "--top", "0").json()
    i, opt = next((i, o) for i, o in enumerate(data["options"], start=1)
                  if o["count"] == 6 and o["offer"]["gpu_count"] == 1)
    assert opt["machines"] == 6 and opt["gpus_per_machine"] == 1
    files = {}
    for launcher in ("skypilot", "dstack"):
        res = cli("recommend", "flux.1-dev", "--task", "image", "--images", "1000",
                  "--export", launcher, "--export-option", str(i))
        assert res.code == 0 and "Traceback" not in res.err, res.err
        files[launcher] = res.out
    sky = yaml.safe_load(files["skypilot"])
    assert sky["resources"]["accelerators"].endswith(":1")
    assert sky.get("num_nodes") == 6 or str(sky["envs"]["SHARD_COUNT"]) == "6"
    assert "6 separate machines" in files["skypilot"]
    dstack = yaml.safe_load(files["dstack"])
    assert "nodes" not in dstack and "SHARD_COUNT=6" in dstack["env"]  # six runs, not one
    # the best exportable option asks for a count some machine of that offer has
    best = yaml.safe_load(cli("recommend", "flux.1-dev", "--task", "image", "--images", "1000",
                              "--export", "skypilot").out)
    assert int(best["resources"]["accelerators"].split(":")[1]) in (1, 2, 4, 8)


def test_export_option_without_export_and_the_apis_launcher_case(cli, web):
    res = cli(*DONE_WHEN, "--export-option", "2")
    assert res.code == 2 and "--export-option needs --export" in res.err
    r = web.get("/api/v1/recommend", params={"model": "llama-3.1-8b", "task": "lora",
                                             "steps": "2000", "context": "2k",
                                             "export": "SkyPilot"})
    assert r.status_code == 200, r.text
    assert r.json()["export"]["launcher"] == "skypilot"


def test_export_file_is_the_rest_answers_file():
    """export_file (for the advisor page's download button) gives the REST field's file."""
    from whichgpu.answers.request import for_web
    from whichgpu.answers.requests import Recommend
    from whichgpu.export import export_file
    from whichgpu.web import services

    q = for_web(Recommend)(model="llama-3.1-8b", task="lora", steps="2000", context="2k",
                           export="dstack")
    res = services.recommend(q)
    name, text = export_file(res.rec, "dstack", None, selection=res.selection,
                             rates=res.rates)
    assert name == res.exported.filename and name.endswith(".dstack.yml")
    assert text == res.exported.text


RATE = ("recommend", "llama-3.1-8b", "--engine", "vllm", "--requests-per-s", "20",
        "--prompt-tokens", "1000", "--output-tokens", "200")


@pytest.mark.parametrize("spot", [False, True])
def test_rate_sized_serving_exports_a_service_of_its_replicas(cli, tmp_path, sky_home, spot):
    """--requests-per-s exports its replicas as a SkyServe service and a dstack service (with
    the spot spares), and both launchers' loaders take them."""
    extra = ("--spot",) if spot else ()
    data = cli(*RATE, *extra, "--export", "dstack", "--json", "--top", "0").json()
    opt = data["options"][data["export"]["option"] - 1]
    spares = (opt.get("spot_risk") or {}).get("spare_replicas", {}).get("typical", 0)
    want = opt["replicas"] + spares
    paths = {}
    for launcher in ("skypilot", "dstack"):
        res = cli(*RATE, *extra, "--export", launcher)
        assert res.code == 0, res.err
        paths[launcher] = tmp_path / f"rate-{spot}.{launcher}.yaml"
        paths[launcher].write_text(res.out)
    ds = _check("dstack", [paths["dstack"]], sky_home)[str(paths["dstack"])]
    assert ds["ok"], ds.get("error")
    assert ds["type"] == "service" and ds["port"] == 8000 and ds["replicas"] == [want, want]
    sky = _check("skypilot", [paths["skypilot"]], sky_home)[str(paths["skypilot"])]
    assert sky["ok"], sky.get("error")
    assert sky["readiness_path"] == "/health" and sky["features_error"] is None
    sky_opt = cli(*RATE, *extra, "--export", "skypilot", "--json", "--top", "0").json()
    chosen = sky_opt["options"][sky_opt["export"]["option"] - 1]
    assert sky["service_replicas"] == chosen["replicas"] + (
        (chosen.get("spot_risk") or {}).get("spare_replicas", {}).get("typical", 0))
    assert "--max-num-seqs" in sky["run"]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))


def test_dstack_runs_independent_shares_as_a_job_array_not_a_multinode_task(cli, tmp_path,
                                                                            sky_home):
    """dstack's nodes: N is a distributed task: dstack (0.22.5) provisions its nodes together,
    in one backend and region, and only on backends with multi-node support; Vast.ai (the
    offer of this option) has none, so nodes: 6 could never start there. Six independent
    shares are six runs of one file, each given SHARD_INDEX (issue 26); the file loads with
    dstack apply's loader, and a cluster (linked nodes) still asks for its nodes."""
    args = ("recommend", "flux.1-dev", "--task", "image", "--images", "1000")
    data = cli(*args, "--json", "--top", "0").json()
    i, opt = next((i, o) for i, o in enumerate(data["options"], start=1)
                  if o["machines"] == 6 and o["gpus_per_machine"] == 1)
    assert opt["spread"] == "separate machines"
    text = cli(*args, "--export", "dstack", "--export-option", str(i)).out
    path = tmp_path / "shares.dstack.yml"
    path.write_text(text)
    got = _check("dstack", [path], sky_home)[str(path)]
    assert got["ok"] and got["type"] == "task" and got["nodes"] in (None, 1)
    assert got["env"]["SHARD_COUNT"] == "6" and got["env"]["SHARD_INDEX"] == "0"
    assert got["gpu_count"] == [1, 1]
    launch = next(line for line in text.splitlines() if line.startswith("# Launch:"))
    assert "seq 0 5" in launch and "-e SHARD_INDEX=$i" in launch and "dstack apply" in launch
    run_name = launch.split(" -n ")[1].split()[0].replace("$i", "5")
    assert len(run_name) <= 41 and run_name[0].isalpha()  # dstack's run-name rule
    backend = got["backends"][0]
    assert backend not in _check("names", [], sky_home)["dstack_multinode_backends"]
