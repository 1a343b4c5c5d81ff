"""Lazy command loading (cli/lazy.py): ``whichgpu --help`` lists every command from a static
table without importing the request models, a command loads when used, and the table says
what the commands themselves say."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import whichgpu.cli.commands_index as commands_index
from whichgpu.cli.lazy import index_rows, render_index

HEAVY = ("whichgpu.answers.requests", "whichgpu.answers.request", "pydantic",
         "whichgpu.catalog", "whichgpu.estimate")


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "COLUMNS": "200"})  # the test's home
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_table_matches_the_commands():
    """A command added, renamed, re-described or moved to a help panel without regenerating
    the table fails here (regenerate: python -m whichgpu.cli.lazy > src/whichgpu/cli/
    commands_index.py)."""
    shipped = Path(commands_index.__file__).read_text("utf-8")
    assert render_index(index_rows()) == shipped


def test_help_lists_every_command_without_loading_any():
    result = _run(
        "import contextlib, io, json, sys\n"
        "from whichgpu.cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])\n"
        f"print(json.dumps({{'loaded': [m for m in sys.modules if m.startswith({HEAVY!r})],"
        " 'help': buf.getvalue()}))\n")
    assert result["loaded"] == []
    names = [row.name for row in index_rows()]
    assert len(names) >= 15 and {"recommend", "memory", "validate", "prices"} <= set(names)
    for row in index_rows():
        assert f"│ {row.name} " in result["help"], row.name
        assert row.help.split()[0] in result["help"]


def test_a_command_loads_when_used_and_walking_the_group_sees_all():
    result = _run(
        "import json, sys, typer\n"
        "from typer._completion_classes import BashComplete\n"
        "from whichgpu.cli.app import app\n"
        "root = typer.main.get_command(app)\n"
        "sc = BashComplete(root, {}, 'whichgpu', '_WHICHGPU_COMPLETE')\n"
        "names = [c.value for c in sc.get_completions([], 'me')]\n"
        "before = 'whichgpu.answers.requests' in sys.modules\n"
        "flags = [c.value for c in sc.get_completions(['memory'], '--qu')]\n"
        "after = 'whichgpu.answers.requests' in sys.modules\n"
        "sub = [c.value for c in sc.get_completions(['validate'], 'm')]\n"
        "walked = {n: sorted(getattr(c, 'commands', {})) for n, c in root.commands.items()}\n"
        "print(json.dumps({'names': names, 'before': before, 'flags': flags, 'after': after,"
        " 'sub': sub, 'walked': walked}))\n")
    assert result["names"] == ["memory"] and result["before"] is False  # names: the table
    assert result["flags"] == ["--quant"] and result["after"] is True  # options: the command
    assert result["sub"] == ["memory"]
    assert set(result["walked"]) == {row.name for row in index_rows()}
    assert {"memory", "speed", "fits", "serving"} <= set(result["walked"]["validate"])


def test_subcommand_help_and_a_float_option_still_strict():
    """``whichgpu memory --help`` builds the real command; a float option still refuses
    NaN (the strict-number patch now applies when a command module loads)."""
    from typer.testing import CliRunner

    from whichgpu.cli.app import app

    runner = CliRunner()
    shown = runner.invoke(app, ["memory", "--help"])
    assert shown.exit_code == 0 and "--quant" in shown.output
    refused = runner.invoke(app, ["recommend", "llama-3.1-8b", "--tokens", "1M",
                                  "--max-age", "nan"])
    assert refused.exit_code == 2 and "finite" in refused.output


def test_a_memory_question_loads_no_prices_web_or_cost():
    """``memory`` prices nothing: the price store (and sqlite3), the web app and the cost
    models stay unimported."""
    result = _run(
        "import contextlib, io, json, sys\n"
        "from whichgpu.cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):\n"
        "    main(['memory', 'llama-3.1-8b', '--quant', 'q4_k_m', '--context', '8k',"
        " '--json'])\n"
        "heavy = ('whichgpu.catalog.prices', 'whichgpu.web', 'whichgpu.cost', 'sqlite3',"
        " 'whichgpu.advise')\n"
        "print(json.dumps({'loaded': [m for m in sys.modules if m.startswith(heavy)],"
        " 'answer': json.loads(buf.getvalue())['quant']}))\n")
    assert result["answer"] == "q4_k_m"
    assert result["loaded"] == []
