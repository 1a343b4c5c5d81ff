"""Usage errors (an unknown option, a value the option's type refuses, a missing argument) are
one line on stderr with exit status 2, like every other refusal: never typer's boxed panel
(issue 21's review: ``prices list --max-age nan`` printed five lines)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args", [
    ("prices", "list", "--max-age", "nan"),
    ("prices", "list", "--bogus"),
    ("prices", "list", "--limit", "x"),
    ("prices", "list", "--limit", "-1"),
    ("memory", "llama-3.1-8b", "--batch", "two"),
    ("gpus", "--json", "--nope"),
])
def test_a_usage_error_is_one_line_and_exit_2(cli, args):
    r = cli(*args)
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert r.code == 2, r
    assert len(lines) == 1 and lines[0].startswith("error: "), r.err
    assert not any(c in r.err for c in "╭╰│"), r.err


def test_a_usage_error_names_the_command_help(cli):
    r = cli("prices", "list", "--bogus")
    assert "No such option: --bogus" in r.err and "'whichgpu prices list --help'" in r.err


def test_help_and_a_command_keep_their_exit_status(cli):
    assert cli("--help").code == 0
    assert cli("prices", "list", "--help").code == 0
    assert cli("gpus", "--json").code == 0


def test_prices_list_json_lists_every_offer_unless_limited(cli):
    import json

    every = json.loads(cli("prices", "list", "--json").out)
    assert len(every["offers"]) == every["total"] > 25  # the shipped market: more than a page
    assert len({o["gpu"] for o in every["offers"]}) > 5
    three = json.loads(cli("prices", "list", "--json", "--limit", "3").out)
    assert len(three["offers"]) == 3 and three["total"] == every["total"]
    table = cli("prices", "list")
    assert "more; --limit 0 shows all" in table.out
