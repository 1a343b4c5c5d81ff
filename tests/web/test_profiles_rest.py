"""Profiles over REST (issue 31): GET /api/v1/profiles lists the profiles saved on the server's
machine, and ?profile=NAME on a GET question fills what the query leaves out, the same way
--profile NAME does on the command line (the same JSON); a default profile is never applied
to a visitor; an unknown name or a path that takes none is a 422."""

from __future__ import annotations

import pytest


@pytest.fixture
def home(cli):
    r = cli("profile", "save", "home", "--gpu", "rtx-4070", "--host-ram", "64GB",
            "--currency", "EUR", "--default")
    assert r.code == 0, r.err
    return "home"


def test_the_saved_profiles_are_listed(web, home):
    data = web.get("/api/v1/profiles").json()
    assert data["default"] == "home"
    one = data["profiles"][0]
    assert one["name"] == "home"
    assert one["values"] == {"gpu": "rtx-4070", "host_ram": "64GB", "currency": "EUR"}
    assert {"memory", "speed", "recommend"} <= set(one["applies_to"])


@pytest.mark.parametrize(("path", "args"), [
    ("/api/v1/memory?model=qwen3-30b-a3b&quant=q4_k_m", ("memory", "qwen3-30b-a3b", "--quant",
                                                          "q4_k_m")),
    ("/api/v1/speed?model=llama-3.1-8b&quant=q4_k_m", ("speed", "llama-3.1-8b", "--quant",
                                                        "q4_k_m")),
])
def test_a_named_profile_answers_as_the_command_line_does(web, cli, home, path, args):
    rest = web.get(path + "&profile=home")
    assert rest.status_code == 200, rest.text
    assert rest.json() == cli(*args, "--profile", "home", "--json").json()
    spelt = web.get(path + "&gpu=rtx-4070&host_ram=64GB").json()
    assert rest.json() == spelt
    assert "gpu=rtx-4070" in rest.headers["x-whichgpu-profile"]


def test_the_query_wins_over_the_profile(web, home):
    got = web.get("/api/v1/memory?model=llama-3.1-8b&gpu=h100-sxm&profile=home").json()
    assert got["target"]["gpu"] == "h100-sxm"


def test_no_profile_is_applied_unless_named(web, home):
    plain = web.get("/api/v1/memory?model=llama-3.1-8b").json()
    assert plain["target"] is None  # the default profile (home, rtx-4070) is the CLI's only


def test_an_unknown_profile_or_a_path_that_takes_none_is_a_422(web, home):
    r = web.get("/api/v1/memory?model=llama-3.1-8b&profile=office")
    assert r.status_code == 422 and "no profile 'office'" in r.json()["detail"]
    r = web.get("/api/v1/models?profile=home")
    assert r.status_code == 422 and "profile applies to" in r.json()["detail"]
    r = web.get("/api/v1/memory?model=llama-3.1-8b&profile=home&profile=home")
    assert r.status_code == 422
