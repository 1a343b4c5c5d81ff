"""``--kernel-db`` / ``--no-kernel-db`` (issue 28): the measured-kernel path asked for per
request on the command line (speed, recommend), the REST API and the MCP tools, over the
WHICHGPU_KERNEL_DB default; without the ``[kernels]`` extra, a one-line error naming it."""

from __future__ import annotations

import sys
import types

import pytest

from whichgpu.estimate.speed import kernel_db

SPEED = ("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "vllm",
         "--max-throughput", "--json")
RECOMMEND = ("recommend", "llama-3.1-8b", "--engine", "vllm", "--requests-per-s", "5",
             "--only", "h100-sxm", "--prices", "vramfarm-2026-11", "--json")


class _FakeEngine:
    """Decode step 10 ms + 1 ms per sequence; a mixed step adds 0.01 ms per prompt token."""

    def decode_step_latency(self, gen_tokens, isl, osl):
        return 10.0 + gen_tokens

    def mixed_step_latency(self, ctx_tokens, gen_tokens, isl, osl):
        return 10.0 + gen_tokens + 0.01 * ctx_tokens


@pytest.fixture
def fake_package(monkeypatch):
    """A stand-in aiconfigurator_core (as in test_kernel_db.py) recording what it compiles."""
    asked: list[tuple] = []

    class EngineHandle:
        @classmethod
        def compile(cls, model, system, backend, **kw):
            asked.append((model, system, backend))
            return _FakeEngine()

    eng = types.ModuleType("aiconfigurator_core.sdk.engine")
    eng.EngineHandle = EngineHandle  # type: ignore[attr-defined]
    for name, mod in (("aiconfigurator_core", types.ModuleType("aiconfigurator_core")),
                      ("aiconfigurator_core.sdk", types.ModuleType("aiconfigurator_core.sdk")),
                      ("aiconfigurator_core.sdk.engine", eng)):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(kernel_db, "_ships_config", lambda model: True)
    monkeypatch.setattr(kernel_db, "version", lambda: "0.12.0")
    kernel_db._engine.cache_clear()
    yield asked
    kernel_db._engine.cache_clear()


@pytest.fixture
def not_installed(monkeypatch):
    monkeypatch.setattr(kernel_db, "installed", lambda: False)
    monkeypatch.delenv(kernel_db.ENV, raising=False)


def _step_notes(data: dict) -> list[str]:
    return [a for a in data.get("assumptions", []) if str(a).startswith("step times")]


@pytest.mark.parametrize("args", [SPEED, RECOMMEND])
def test_asking_without_the_extra_is_a_one_line_error_naming_it(cli, not_installed, args):
    res = cli(*args, "--kernel-db")
    assert res.code == 2
    assert "whichgpu[kernels]" in res.err and "aiconfigurator-core" in res.err
    assert "Traceback" not in res.err and len(res.err.strip().splitlines()) == 1


def test_no_kernel_db_without_the_extra_answers_as_before(cli, not_installed):
    plain, off = cli(*SPEED), cli(*SPEED, "--no-kernel-db")
    assert plain.code == off.code == 0
    assert off.json() == plain.json()


def test_the_flag_opts_in_where_the_env_does_not(cli, fake_package, monkeypatch):
    monkeypatch.delenv(kernel_db.ENV, raising=False)
    plain = cli(*SPEED).json()
    measured = cli(*SPEED, "--kernel-db").json()
    assert not _step_notes(plain)
    assert any("aiconfigurator-core 0.12.0 measured kernels" in a for a in _step_notes(measured))
    assert measured["throughput_tokens_per_s"] != plain["throughput_tokens_per_s"]
    assert fake_package  # the package was asked
    # the request's choice does not outlive it
    assert not kernel_db.opted_in()


def test_no_kernel_db_overrides_the_env(cli, fake_package, monkeypatch):
    monkeypatch.setenv(kernel_db.ENV, "1")
    on = cli(*SPEED).json()
    off = cli(*SPEED, "--no-kernel-db").json()
    assert _step_notes(on) and not _step_notes(off)
    monkeypatch.delenv(kernel_db.ENV)
    assert off == cli(*SPEED).json()


def test_recommend_takes_the_flag(cli, fake_package, monkeypatch):
    monkeypatch.delenv(kernel_db.ENV, raising=False)
    best = cli(*RECOMMEND, "--kernel-db").json()["options"][0]
    assert best["step_times"].startswith("aiconfigurator-core")
    assert "step_times" not in cli(*RECOMMEND).json()["options"][0]


def test_rest_refuses_it_with_the_reason_when_not_installed(web, not_installed):
    got = web.get("/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&engine=vllm"
                  "&max_throughput=true&kernel_db=true")
    assert got.status_code == 422
    assert "whichgpu[kernels]" in got.text
    assert "--kernel-db" not in got.text  # no CLI flag in a web answer
    ok = web.get("/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&engine=vllm"
                 "&max_throughput=true&kernel_db=false")
    assert ok.status_code == 200


def test_the_mcp_speed_and_recommend_tools_take_it():
    from whichgpu.agents.tools import TOOLS_BY_NAME, input_schema

    for name in ("speed", "recommend"):
        props = input_schema(TOOLS_BY_NAME[name].model)["properties"]
        assert "kernel_db" in props, name
        assert "whichgpu[kernels]" in props["kernel_db"]["description"]
