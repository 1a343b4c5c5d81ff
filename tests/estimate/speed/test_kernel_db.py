"""The optional measured-kernel path (aiconfigurator-core, issue 28): opt-in, coverage, which
path answered, and the wiring into the serving model, with a fake package so CI without the
82 MB wheel still checks it; the real package under importorskip."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate import memo
from whichgpu.estimate.speed import kernel_db
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model

LLAMA_8B = resolve_model("llama-3.1-8b")


def _model(gpu: str = "h100-sxm", engine: str = "vllm", **kw) -> ServingModel:
    w = Workload(LLAMA_8B, engine=engine, prompt_tokens=1000, output_tokens=200, **kw)
    return ServingModel(w, get_gpu(gpu), lengths="mean")


class _FakeEngine:
    """Decode step 10 ms + 1 ms per sequence; a mixed step adds 0.01 ms per prompt token."""

    def decode_step_latency(self, gen_tokens, isl, osl):
        return 10.0 + gen_tokens

    def mixed_step_latency(self, ctx_tokens, gen_tokens, isl, osl):
        return 10.0 + gen_tokens + 0.01 * ctx_tokens


@pytest.fixture(autouse=True)
def _no_remembered_replicas():
    """Each test swaps the package in or out, which a process never does: a replica remembered
    by an earlier test (estimate/speed/serving.py keeps them by value, and a preset is one
    object per process) would answer with the earlier test's step path."""
    memo.clear()
    yield
    memo.clear()


@pytest.fixture
def fake_package(monkeypatch):
    """A stand-in aiconfigurator_core whose EngineHandle.compile records what it is asked."""
    asked: list[tuple] = []

    class EngineHandle:
        @classmethod
        def compile(cls, model, system, backend, **kw):
            asked.append((model, system, backend, kw))
            return _FakeEngine()

    pkg = types.ModuleType("aiconfigurator_core")
    sdk = types.ModuleType("aiconfigurator_core.sdk")
    eng = types.ModuleType("aiconfigurator_core.sdk.engine")
    eng.EngineHandle = EngineHandle  # type: ignore[attr-defined]
    for name, mod in (("aiconfigurator_core", pkg), ("aiconfigurator_core.sdk", sdk),
                      ("aiconfigurator_core.sdk.engine", eng)):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(kernel_db, "_ships_config", lambda model: True)
    monkeypatch.setattr(kernel_db, "version", lambda: "0.12.0")
    kernel_db._engine.cache_clear()
    yield asked
    kernel_db._engine.cache_clear()


def test_without_the_opt_in_whichgpus_model_answers_even_with_the_package(fake_package,
                                                                          monkeypatch):
    monkeypatch.delenv(kernel_db.ENV, raising=False)
    sm = _model()
    assert sm.steps.path == "model"
    assert sm.steps.label == "whichgpu's model"
    assert fake_package == []  # the package was never asked


def test_opted_in_and_covered_the_measured_kernels_answer_the_steps(fake_package):
    with kernel_db.use_kernel_db():
        sm = _model()
    assert sm.steps.path == kernel_db.StepPath.MEASURED
    assert sm.steps.label == "aiconfigurator-core 0.12.0 measured kernels"
    (model, system, backend, kw), = fake_package
    assert (model, system, backend) == ("meta-llama/Meta-Llama-3.1-8B", "h100_sxm", "vllm")
    assert kw["tp_size"] == 1 and kw["gemm_quant_mode"] == "bfloat16"
    # the step times are the package's, in seconds, plus the engine's fitted CPU cost per
    # running sequence; a fractional batch is interpolated
    cpu = sm.steps.per_sequence_s
    assert cpu > 0
    assert sm.steps.decode(8) == pytest.approx(0.018 + 8 * cpu)
    assert sm.steps.decode(8.5) == pytest.approx(0.0185 + 8.5 * cpu)
    assert sm.steps.mixed(4, 1000) == pytest.approx(0.024 + 4 * cpu)
    # and they drive the serving answer: a 10 ms + 1 ms/sequence decode step caps a sequence
    # at under 1000 / 11 tokens/s
    pt = sm.max_throughput()
    assert pt.tpot_s >= 0.011 - 1e-9


def test_the_env_variable_opts_in(fake_package, monkeypatch):
    monkeypatch.setenv(kernel_db.ENV, "1")
    assert _model().steps.path == "measured"


def test_an_uncovered_gpu_keeps_whichgpus_model_and_says_why(fake_package):
    with kernel_db.use_kernel_db():
        sm = _model("mi300x")
    assert sm.steps.path == "model"
    assert sm.steps.label == "whichgpu's model"
    assert sm.steps.why == "no measured kernels for mi300x"
    assert fake_package == []


@pytest.mark.parametrize(("model", "kw", "why"), [
    ("llama-3.1-8b", {"engine": "llamacpp"}, "no measured kernels for the llamacpp engine"),
    ("llama-3.1-8b", {"engine": "vllm", "quant": "awq"}, "no measured kernels for awq weights"),
    ("llama-3.1-8b", {"engine": "vllm", "kv_dtype": "q8_0"},
     "no measured kernels for a q8_0 KV cache"),
    ("llama-3.1-70b", {"engine": "vllm", "gpus": 4, "tp": 2, "pp": 2},
     "pipeline-parallel layouts are not mapped to the kernel database"),
])
def test_coverage_says_why_a_replica_is_not_covered(model, kw, why):
    w = Workload(resolve_model(model), prompt_tokens=1000, output_tokens=200, **kw)
    assert kernel_db.coverage(w, "h100-sxm") == why


def test_coverage_maps_a_covered_replica():
    w = Workload(resolve_model("llama-3.1-70b"), engine="trtllm", quant="fp8", kv_dtype="fp8",
                 gpus=4, tp=4, prompt_tokens=1000, output_tokens=200)
    assert kernel_db.coverage(w, "b200") == kernel_db.Coverage(
        "b200_sxm", "trtllm", "meta-llama/Meta-Llama-3.1-70B", "fp8", "fp8", 4)


def test_a_package_error_falls_back_to_whichgpus_model(fake_package, monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("no gemm table for this shape\nsecond line")

    monkeypatch.setattr(sys.modules["aiconfigurator_core.sdk.engine"].EngineHandle, "compile",
                        broken)
    with kernel_db.use_kernel_db():
        sm = _model()
    assert sm.steps.path == "model"
    assert sm.steps.why == "aiconfigurator-core does not cover it (no gemm table for this shape)"


def test_not_installed_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "aiconfigurator_core.sdk.engine", None)  # import fails
    kernel_db._engine.cache_clear()
    with kernel_db.use_kernel_db():
        sm = _model()
    kernel_db._engine.cache_clear()
    assert sm.steps.path == "model"
    assert sm.steps.why == "aiconfigurator-core is not installed"


def test_opted_out_answers_are_identical_to_whichgpus_model(fake_package):
    with kernel_db.use_kernel_db(False):
        a = _model().max_throughput()
    b = _model().max_throughput()
    assert a.output_tokens_per_s == b.output_tokens_per_s


def test_help_does_not_import_the_package():
    code = ("import sys\nfrom whichgpu.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\nassert 'aiconfigurator_core' not in sys.modules\n"
            "assert 'whichgpu.estimate.speed.kernel_db' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=60)


def test_the_real_package_answers_a_covered_replica():
    pytest.importorskip("aiconfigurator_core")
    kernel_db._engine.cache_clear()
    with kernel_db.use_kernel_db():
        sm = _model("h100-sxm", "vllm")
    assert sm.steps.path == "measured", sm.steps.why
    assert sm.steps.label.startswith("aiconfigurator-core 0.12")
    one, many = sm.steps.decode(1), sm.steps.decode(64)
    # an 8B bf16 decode step on an H100 streams 16 GB of weights at ~3.35 TB/s: a few ms
    assert 0.003 < one < 0.05
    assert one < many  # more sequences, more KV read and matmul
    assert sm.steps.mixed(0, 2048) > one  # a 2k-token prefill chunk costs more than a decode


def test_the_answer_says_which_path_timed_the_steps(fake_package, monkeypatch):
    from whichgpu.estimate.speed.serving_answers import max_throughput_answer

    monkeypatch.delenv(kernel_db.ENV, raising=False)
    w = Workload(LLAMA_8B, engine="vllm", prompt_tokens=1000, output_tokens=200)
    plain = max_throughput_answer(w, get_gpu("h100-sxm"))
    assert not [a for a in plain["assumptions"] if a.startswith("step times")]
    with kernel_db.use_kernel_db():
        measured = max_throughput_answer(w, get_gpu("h100-sxm"))
        other = max_throughput_answer(w, get_gpu("mi300x"))
    assert [a for a in measured["assumptions"] if a.startswith(
        "step times: aiconfigurator-core 0.12.0 measured kernels")]
    assert "step times: whichgpu's model (measured kernels asked for, but no measured kernels " \
        "for mi300x)" in other["assumptions"]
    # the fake engine's steps are not whichgpu's: the answer follows the path
    assert measured["throughput_tokens_per_s"] != plain["throughput_tokens_per_s"]


def test_an_moe_replica_maps_its_expert_layout():
    w = Workload(resolve_model("qwen3-30b-a3b"), engine="vllm", gpus=2, tp=2,
                 prompt_tokens=1000, output_tokens=200)
    c = kernel_db.coverage(w, "h100-sxm")
    assert isinstance(c, kernel_db.Coverage)
    assert (c.model, c.tp, c.moe_tp, c.moe_ep, c.moe_quant) == ("Qwen/Qwen3-30B-A3B", 2, 2, 1,
                                                                 "bfloat16")
    ep = kernel_db.coverage(w.with_(expert_parallel=True), "h100-sxm")
    assert isinstance(ep, kernel_db.Coverage)
    assert (ep.moe_tp, ep.moe_ep) == (1, 2)


def test_a_step_past_the_tables_is_timed_by_whichgpus_model_and_counted(fake_package,
                                                                        monkeypatch):
    def short(self, gen_tokens, isl, osl):
        if gen_tokens > 100:
            raise RuntimeError("generation attention data missing at /opt/x/table.parquet")
        return 10.0 + gen_tokens

    monkeypatch.setattr(_FakeEngine, "decode_step_latency", short)
    with kernel_db.use_kernel_db():
        sm = _model()
    plain = _model()
    assert sm.steps.path == "measured"
    assert sm.steps.decode(200) == pytest.approx(plain.steps.decode(200))
    assert sm.steps.decode(50) == pytest.approx(0.060 + 50 * sm.steps.per_sequence_s)
    assert sm.steps.gaps == {(200, 0)}
    (note,) = kernel_db.step_notes(sm.steps)
    assert "1 step shape(s) past its tables from whichgpu's model" in note


def test_a_table_missing_at_the_first_query_falls_back_without_naming_paths(fake_package,
                                                                            monkeypatch):
    def missing(self, *a):
        raise RuntimeError("perf database error: MLA data missing at /opt/site/x/1.3.0")

    monkeypatch.setattr(_FakeEngine, "mixed_step_latency", missing)
    with kernel_db.use_kernel_db():
        sm = _model()
    assert sm.steps.path == "model"
    assert sm.steps.why == ("aiconfigurator-core does not cover it (perf database error: MLA "
                            "data missing)")


RECOMMEND = ("recommend", "llama-3.1-8b", "--engine", "vllm", "--requests-per-s", "20",
             "--prompt-tokens", "1000", "--output-tokens", "200", "--ttft", "2s", "--tpot",
             "60ms", "--prices", "vramfarm-2026-11", "--json")


def test_each_recommend_option_says_which_path_timed_its_steps(fake_package, cli, monkeypatch):
    monkeypatch.setenv(kernel_db.ENV, "1")
    res = cli(*RECOMMEND)
    assert res.code == 0, res.err
    options = res.json()["options"]
    assert options
    paths = set()
    for o in options:
        if o["gpu"] in kernel_db.SYSTEMS:
            assert o["step_times"] == "aiconfigurator-core 0.12.0 measured kernels"
        else:
            assert o["step_times"] == "whichgpu's model"
            assert any(f"no measured kernels for {o['gpu']}" in n for n in o["notes"])
        paths.add(o["step_times"])
    monkeypatch.delenv(kernel_db.ENV)
    plain = cli(*RECOMMEND).json()["options"]
    assert all("step_times" not in o for o in plain)
    assert paths == {"aiconfigurator-core 0.12.0 measured kernels", "whichgpu's model"}
