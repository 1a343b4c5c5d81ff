"""typer's per-option parsers are built for the options a command line gives, not for all
(cli/common.py parse_given_options_only), and the answers and refusals stay typer's own."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

typer_coercion = pytest.importorskip("typer._coercion")


def test_only_given_options_build_a_parser(monkeypatch):
    from whichgpu.cli.app import app

    built: list[str] = []
    real = typer_coercion.build_runtime_param

    def counting(descriptor):
        built.append(repr(descriptor.annotation))
        return real(descriptor)

    monkeypatch.setattr(typer_coercion, "build_runtime_param", counting)
    res = CliRunner().invoke(app, ["memory", "llama-3.1-8b", "--quant", "q4_k_m",
                                   "--context", "8k", "--json"])
    assert res.exit_code == 0, res.output
    assert '"quant": "q4_k_m"' in res.output
    # the given options and those with a default value: a minority of the command's options
    import typer

    memory = typer.main.get_command(app).commands["memory"]  # type: ignore[attr-defined]
    assert len(memory.params) >= 25
    assert 4 <= len(built) <= len(memory.params) // 2, built


def test_values_and_refusals_are_unchanged():
    from whichgpu.cli.app import app

    runner = CliRunner()
    bad = runner.invoke(app, ["recommend", "llama-3.1-8b", "--tokens", "1M", "--top", "x"])
    assert bad.exit_code == 2 and "--top" in bad.output
    nan = runner.invoke(app, ["recommend", "llama-3.1-8b", "--tokens", "1M", "--max-age",
                              "inf"])
    assert nan.exit_code == 2 and "finite" in nan.output
    # a repeatable option, given twice and left out: typer's list, and typer's no-value
    rated = runner.invoke(app, ["gpus", "--json", "--currency", "EUR", "--rate",
                                "EURUSD=1.25", "--rate", "GBPUSD=1.5"])
    plain = runner.invoke(app, ["gpus", "--json", "--currency", "EUR"])
    assert rated.exit_code == 0 and plain.exit_code == 0, rated.output + plain.output
    assert rated.output != plain.output  # the override was read
