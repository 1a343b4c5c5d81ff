"""Fuzzing the command line (issue 21): hypothesis picks a command and some of its options
(read from the typer app itself, so a new option is fuzzed without a change here) and gives
them values the CLI reads or hostile ones (NaN, 10^400, 300-byte names, NUL bytes, FIFOs,
/dev/zero, deeply nested or 100,000-layer config files, a CSV with a 200 KB field). Whatever
comes in, the exit status is 0 or 2 with one line, never 1 (an internal error) and never a
traceback, and --json is strict JSON; a usage error (exit 2) prints its reason on exactly
one ``error:`` line.

The examples are fixed (``derandomize``) and few, so ``make test`` stays quick; set
``WHICHGPU_FUZZ_EXAMPLES=2000`` for a long run.

Not fuzzed here: ``serve`` (starts a server), ``bench`` (probes the GPU), ``prices refresh``
and ``prices api --refresh`` (live sources; tests/catalog/prices/test_api_prices_store.py covers
a refresh that fails), and the price store's own path (``--store``, covered by the price-store tests
of issue 21's items 5 and 10).
"""

from __future__ import annotations

import json
import os
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("WHICHGPU_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck), print_blob=True)
PRESETS = resources.files("whichgpu.models").joinpath("presets")
SKIP = {("serve",), ("bench",), ("prices", "refresh")}
SKIP_OPTIONS = {"--store", "--help", "--debug", "--json", "--url", "--cross-validation",
                "--loso", "--refresh"}
# Refitting the constants without each GPU, source or serving source takes minutes per call:
# the fuzz reads these commands' arguments without the refit
# (tests/estimate/validation/test_validation_reporting.py and the serving validation tests
# cover it).
ALWAYS = {("validate", "speed"): ["--no-cross-validation"], ("validate", "serving"): ["--no-loso"]}

HOSTILE = ["nan", "inf", "-inf", "1e400", "-1e400", "9" * 400, "-" + "9" * 40, "0", "-1",
           "1e-400", "", " ", "a\x00b", "é" * 150, "x" * 300, "../../etc/passwd", "/dev/zero",
           "/dev/null", "/tmp", "{fifo}", "{deep}", "{huge_layers}", "{garbage}", "{huge_csv}",
           "org/name",
           "1..2", "2h..1h", "1e9999k", "1e30USD", "-5EUR", "NaNUSD", "60%", "1e308h", "8k",
           "1M", "70B", "none", "EURUSD=nan", "EURUSD=0",
           # issue 36: spelled infinities, a 400-digit negative, denormals, a file that
           # refuses reads
           "Infinity", "-Infinity", "1e999", "-" + "9" * 400, "1e-320", "5e-324",
           "/proc/self/mem"]
GOOD = ["llama-3.1-8b", "flux.1-dev", "h100", "rtx-4090", "7B", "article-000",
        "vramfarm-2026-11", "3h20m", "2EUR", "1000", "bf16", "q4_k_m", "vllm", "lora", "EUR",
        "inference"]


def _leaves(command, path=()):
    if hasattr(command, "commands"):
        for name, sub in sorted(command.commands.items()):
            yield from _leaves(sub, (*path, name))
    elif path not in SKIP and path[:1] not in {("serve",), ("bench",), ("mcp",)}:
        yield path, command


def _commands():
    import typer

    from whichgpu.cli.app import app

    out = []
    for path, command in _leaves(typer.main.get_command(app)):
        options, positionals, flags = [], [], []
        for p in command.params:
            opts = [o for o in getattr(p, "opts", ()) if o.startswith("--")]
            if not opts:
                positionals.append(p)
            elif opts[0] in SKIP_OPTIONS:
                continue
            elif getattr(p, "is_flag", False):
                flags.append(opts[0])
            else:
                options.append(opts[0])
        takes_json = any("--json" in getattr(p, "opts", ()) for p in command.params)
        out.append((path, options, flags, len(positionals), takes_json))
    return out


COMMANDS = _commands()


@pytest.fixture
def files(tmp_path, monkeypatch):
    """The files a hostile value may name: a FIFO, deeply nested JSON, a config with 100,000
    layers, and bytes that are no format at all. The fuzzed commands run in ``tmp_path``: a
    command that writes a file it is given (``runs export 1M``) writes it there, never in the
    checkout, where a file named like a model ('flux.1-dev') would be read as that model by
    every later test."""
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "deep.json").write_text("[" * 50_000 + "]" * 50_000)
    cfg = json.loads(PRESETS.joinpath("llama-3.1-8b", "config.json").read_text("utf-8"))
    cfg["num_hidden_layers"] = 100_000
    (tmp_path / "layers.json").write_text(json.dumps(cfg))
    (tmp_path / "garbage.gguf").write_bytes(b"GGUF" + bytes(range(60)))
    (tmp_path / "huge.csv").write_text(
        "provider,gpu,gpu_count,price_per_hour,currency,billing_increment_s,billing_minimum_s,"
        "spot,region,observed_at,source,note\nacme,h100,1,2.5,USD,1,0,false,eu,2026-11-01,me,"
        + "x" * 200_000 + "\n")
    return {"{fifo}": str(tmp_path / "fifo.json"), "{deep}": str(tmp_path / "deep.json"),
            "{huge_layers}": str(tmp_path / "layers.json"),
            "{garbage}": str(tmp_path / "garbage.gguf"), "{huge_csv}": str(tmp_path / "huge.csv")}


values = st.sampled_from(HOSTILE) | st.sampled_from(GOOD) | st.text(max_size=20)


@st.composite
def invocations(draw, command):
    path, options, flags, n_positional, takes_json = command
    args = list(path)
    args += [draw(values) for _ in range(n_positional)]
    for opt in draw(st.lists(st.sampled_from(options), max_size=4, unique=True)) if options \
            else []:
        args += [opt, draw(values)]
    args += draw(st.lists(st.sampled_from(flags), max_size=2, unique=True)) if flags else []
    args += ALWAYS.get(path, [])
    if takes_json:
        args.append("--json")
    return args


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[0]) for c in COMMANDS])
def test_fuzzed_command_lines_never_crash(cli, files, command):
    @FUZZ
    @given(args=invocations(command))
    def run(args):
        args = [files.get(a, a) for a in args]
        result = cli(*args)
        where = f"whichgpu {' '.join(a[:60] for a in args)}"
        assert result.code in (0, 2), (where, result.code, result.err[-600:])
        assert "internal error" not in result.err and "Traceback" not in result.err, where
        if result.code == 2:  # a usage error: its reason on exactly one ``error:`` line
            errors = [line for line in result.err.splitlines() if line.startswith("error:")]
            assert len(errors) == 1, (where, result.err[-600:])
            assert 'File "' not in result.err, (where, result.err[-600:])
        if result.code == 0 and args[-1] == "--json":
            json.loads(result.out, parse_constant=lambda c: pytest.fail(f"{c}: {where}"))

    run()
