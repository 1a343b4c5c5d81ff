"""``whichgpu profile`` (issue 31): my machine described once and applied by --profile (or
the default profile) to every command that asks about that hardware; what the command line
says still wins."""

from __future__ import annotations

import json

import pytest

from whichgpu.answers import profiles


@pytest.fixture
def home(cli):
    r = cli("profile", "save", "home", "--gpu", "rtx-4070", "--host-ram", "64GB",
            "--kwh-price", "0.25EUR", "--currency", "EUR")
    assert r.code == 0, r.err
    return "home"


def test_a_saved_profile_is_listed(cli, home):
    data = cli("profile", "list", "--json").json()
    assert data["profiles"]["home"] == {"gpu": "rtx-4070", "host_ram": "64GB",
                                        "kwh_price": "0.25EUR", "currency": "EUR"}
    assert data["default"] is None


def test_profile_applies_the_card_and_host_ram(cli, home):
    with_profile = cli("memory", "qwen3-30b-a3b", "--quant", "q4_k_m", "--profile", home,
                       "--json")
    spelt_out = cli("memory", "qwen3-30b-a3b", "--quant", "q4_k_m", "--gpu", "rtx-4070",
                    "--host-ram", "64GB", "--json")
    assert with_profile.json() == spelt_out.json()
    assert "profile home: gpu=rtx-4070, host_ram=64GB" in with_profile.err


@pytest.mark.parametrize("args", [
    ("speed", "llama-3.1-8b", "--quant", "q4_k_m"),
    ("fits", "--models", "llama-3.1-8b"),
    ("tco",),
])
def test_every_hardware_command_takes_the_profile(cli, home, args):
    r = cli(*args, "--profile", home, "--json")
    assert r.code == 0, r.err
    assert "rtx-4070" in json.dumps(r.json())


def test_tco_takes_the_power_price_and_currency(cli, home):
    data = cli("tco", "--profile", home, "--json").json()
    text = json.dumps(data)
    assert "EUR" in text and "0.25" in text


def test_the_command_line_wins_over_the_profile(cli, home):
    r = cli("speed", "llama-3.1-8b", "--gpu", "l4", "--profile", home, "--json")
    assert r.code == 0 and r.json()["gpu"] == "l4"


def test_a_filter_is_never_taken_from_the_profile(cli, home):
    """prices list's GPU is a filter, not my card: the profile does not narrow it."""
    a = cli("prices", "list", "--prices", "article-000", "--json").json()
    assert len({o["gpu"] for o in a["offers"]}) > 1


def test_the_default_profile_applies_without_the_flag(cli):
    assert cli("profile", "save", "lab", "--gpu", "h100-sxm", "--count", "2",
               "--default").code == 0
    r = cli("speed", "llama-3.1-8b", "--json")
    assert r.code == 0 and r.json()["count"] == 2 and r.json()["gpu"] == "h100-sxm"
    assert "profile lab (default)" in r.err
    mem = cli("memory", "llama-3.1-70b", "--quant", "awq", "--json").json()
    assert mem["target"]["gpu"] == "h100-sxm" and mem["target"]["count"] == 2  # memory's --count
    cli("profile", "remove", "lab")
    assert cli("speed", "llama-3.1-8b").code == 2  # no card any more: speed needs one


@pytest.mark.parametrize("args", [
    ("profile", "save", "x", "--gpu", "h10"),
    ("profile", "save", "x", "--host-ram", "lots"),
    ("profile", "save", "x", "--currency", "XXX1"),
    ("profile", "save", "x"),
    ("profile", "save", "bad name!", "--gpu", "l4"),
    ("profile", "remove", "nope"),
    ("memory", "llama-3.1-8b", "--profile", "nope"),
])
def test_bad_profiles_are_usage_errors(cli, args):
    r = cli(*args)
    assert r.code == 2 and r.err.startswith("error: "), r
    assert not profiles.path().is_file() or "x" not in profiles.load()["profiles"]
