"""Issue 21 on the command line: every bad input is one line and exit 2 (items 3, 8, 9), a
file the user names is read only if it is a regular file (item 8), the machine's failures
say what they are (item 8: a full disk), and --json is strict JSON (item 9)."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import threading
from importlib import resources

import pytest

PRESETS = resources.files("whichgpu.models").joinpath("presets")


def one_line_exit_2(result, *words: str) -> str:
    assert result.code == 2, (result.code, result.err)
    text = result.err.strip()
    assert "internal error" not in text and "Traceback" not in text
    for w in words:
        assert w in text, text
    return text


def test_a_config_file_with_100000_layers_is_refused_in_one_line(cli, tmp_path):
    cfg = json.loads(PRESETS.joinpath("llama-3.1-8b", "config.json").read_text("utf-8"))
    cfg["num_hidden_layers"] = 100_000
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    text = one_line_exit_2(cli("memory", str(path)), "num_hidden_layers", "100,000 layers",
                           "at most 1,024")
    assert text.count("\n") == 0


@pytest.mark.parametrize("args,words", [
    (("model", "a" * 300), ("unknown model",)),
    (("model", "é" * 200), ("unknown model",)),
    (("memory", "x" * 5000), ("not a model name",)),
    (("gpus", "--prices", "p" * 300), ("price source",)),
    (("gpus", "--prices", "é" * 200), ()),
    (("gpus", "--min-memory", "1e9999k"), ("finite",)),
    (("cost", "--gpu", "h100-sxm", "--duration", "9" * 400 + "h"), ("finite",)),
    (("prices", "prune", "--keep", "9" * 30), ()),
    (("recommend", "llama-3.1-8b", "--calibration", "bad\x00name"), ()),
    (("validate", "memory", "--file", "bad\x00name"), ()),
])
def test_long_names_huge_numbers_and_odd_bytes_are_exit_2(cli, args, words):
    """Before: 66 such cases were internal errors (exit 1): OSError 'File name too long',
    OverflowError, ValueError 'embedded null byte'."""
    one_line_exit_2(cli(*args), *words)


@pytest.mark.parametrize("args", [
    ("model", "{fifo}"), ("memory", "{fifo}"), ("model", "/dev/zero"),
    ("gpus", "--prices", "{fifo}"), ("gpus", "--prices", "/dev/zero"),
    ("recommend", "llama-3.1-8b", "--calibration", "/dev/zero"),
    ("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--calibration", "{fifo}"),
    ("validate", "memory", "--file", "/dev/zero"),
])
def test_a_fifo_or_a_device_is_refused_without_reading(cli, tmp_path, args):
    """Before: a FIFO as the model file hung, /dev/zero grew the process until killed."""
    fifo = tmp_path / "named.json"
    os.mkfifo(fifo)
    args = tuple(a.replace("{fifo}", str(fifo)) for a in args)
    done: list = []
    t = threading.Thread(target=lambda: done.append(cli(*args)), daemon=True)
    t.start()
    t.join(10)
    assert done, f"whichgpu {' '.join(args)} blocked"
    one_line_exit_2(done[0], "not a regular file")


def test_a_csv_field_over_the_csv_limit_is_exit_2(cli, tmp_path):
    """Before: 'internal error: Error: field larger than field limit (131072)' (exit 1)."""
    path = tmp_path / "quotes.csv"
    path.write_text("provider,gpu,gpu_count,price_per_hour,currency,billing_increment_s,"
                    "billing_minimum_s,spot,region,observed_at,source,note\n"
                    "acme,h100,1,2.5,USD,1,0,false,eu,2026-11-01,me," + "x" * 200_000 + "\n")
    one_line_exit_2(cli("gpus", "--prices", str(path)), "CSV", "field larger")


def test_a_nested_json_model_file_is_exit_2(cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    one_line_exit_2(cli("model", str(path)), "nested")


@pytest.mark.parametrize("args", [
    ("gpus", "--max-age", "nan"), ("gpus", "--max-age", "inf"),
    ("recommend", "llama-3.1-8b", "--users", "2", "--tokens-per-s-each", "nan"),
    ("tco", "h100-sxm", "--years", "nan"), ("tco", "h100-sxm", "--pue", "-inf"),
    ("prices", "list", "--max-age", "1e999"),
])
def test_nan_and_infinity_are_usage_errors(cli, args):
    """Before: --max-age nan wrote NaN into --json (invalid JSON); --tokens-per-s-each nan
    silently dropped the requirement."""
    result = cli(*args, "--json")
    assert result.code == 2, result.err
    assert "finite" in result.err
    assert result.out == ""


def test_json_output_is_strict_even_if_a_number_is_not_finite(capsys):
    from whichgpu.cli.common import emit_json

    emit_json({"a": float("nan"), "b": [1.0, float("inf")], "c": {"d": -float("inf")}})
    out = capsys.readouterr().out
    assert json.loads(out, parse_constant=lambda c: pytest.fail(c)) == {
        "a": None, "b": [1.0, None], "c": {"d": None}}


def test_every_priced_json_answer_parses_strictly(cli):
    for args in (("gpus", "--prices", "article-000"),
                 ("recommend", "llama-3.1-8b", "--users", "4", "--tokens-per-s-each", "20"),
                 ("tco", "h100-sxm", "--purchase-price", "25000USD", "--rent-price", "3.15USD")):
        result = cli(*args, "--json")
        assert result.code == 0, result.err
        json.loads(result.out, parse_constant=lambda c, a=args: pytest.fail(f"{c} in {a}"))


@pytest.mark.parametrize("exc,words", [
    (OSError(errno.ENOSPC, "No space left on device", "/data/prices.sqlite"),
     "the disk is full (/data/prices.sqlite)"),
    (sqlite3.OperationalError("database or disk is full"), "the disk is full"),
    (OSError(errno.EROFS, "Read-only file system", "/data/prices.sqlite"), "read-only"),
    (MemoryError(), "out of memory"),
])
def test_a_full_disk_says_so(cli, monkeypatch, exc, words):
    """Before: a full disk read 'internal error: ... cannot rollback - no transaction is
    active'. The machine's failures are one clear line (exit 1: not the input's fault)."""
    from whichgpu.answers import advice

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(advice, "priced", fail)
    result = cli("recommend", "llama-3.1-8b")
    assert result.code == 1
    assert result.err.startswith("error: ") and words in result.err
    assert "internal error" not in result.err and result.err.count("\n") == 1


def test_a_real_bug_is_still_called_a_bug(cli, monkeypatch):
    from whichgpu.answers import advice

    monkeypatch.setattr(advice, "priced", lambda *a, **k: {}["missing"])
    result = cli("recommend", "llama-3.1-8b")
    assert result.code == 1 and "internal error: KeyError" in result.err
