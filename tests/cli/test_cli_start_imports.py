"""What a command line process loads (issue 27: `whichgpu --help` and a `memory` question load
only what they use). Import-graph assertions in a fresh interpreter, not timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from answer_set import _stable  # the answer less what ages with the clock

_PROBE = """
import contextlib, io, json, sys
from whichgpu.cli import main
args = sys.argv[1:]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(args)
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(tmp_path, *args: str) -> set[str]:
    env = {**os.environ, "WHICHGPU_HOME": str(tmp_path), "WHICHGPU_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", _PROBE, *args], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _under(mods: set[str], *prefixes: str) -> list[str]:
    return sorted(m for m in mods if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_help_loads_no_request_model_and_no_pydantic(tmp_path) -> None:
    mods = _loaded(tmp_path, "--help")
    assert "whichgpu.cli.app" in mods  # the probe ran the command line
    assert _under(mods, "pydantic", "whichgpu.answers", "whichgpu.catalog",
                  "whichgpu.estimate", "whichgpu.models") == []


def test_memory_loads_no_advice_prices_serving_or_mixed_cards(tmp_path) -> None:
    mods = _loaded(tmp_path, "memory", "llama-3.1-70b", "--quant", "q4_k_m", "--context", "8k")
    assert "whichgpu.estimate.memory.report" in mods  # it answered
    assert _under(mods, "whichgpu.advise", "whichgpu.cost", "whichgpu.catalog.prices",
                  "whichgpu.answers.mixed", "whichgpu.estimate.mixed_cards",
                  "whichgpu.estimate.speed.serving", "whichgpu.estimate.speed.serving_answers",
                  "whichgpu.estimate.speed.llm", "whichgpu.web", "whichgpu.agents",
                  "whichgpu.export", "sqlite3") == []


@pytest.mark.parametrize("args", [("memory", "llama-3.1-8b", "--gpu", "rtx-3090,rtx-4090"),
                                  ("memory", "llama-3.1-8b", "--gpu", "2xrtx-3090")])
def test_a_list_of_cards_still_reaches_the_mixed_cards(tmp_path, args) -> None:
    """The one-card shortcut leaves a list of cards (even of one kind) to answers/mixed.py."""
    assert "whichgpu.answers.mixed" in _loaded(tmp_path, *args)


def test_recommend_loads_no_ownership_or_mixed_cards(tmp_path) -> None:
    """A recommendation for rented GPUs imports neither owning costs (whichgpu.cost loads each
    name on first use) nor the mixed-cards answer (only a list of cards reaches it)."""
    mods = _loaded(tmp_path, "recommend", "llama-3.1-8b", "--tokens", "10M", "--json")
    assert "whichgpu.advise.recommend" in mods and "whichgpu.cost.billing" in mods  # answered
    assert _under(mods, "whichgpu.cost.ownership", "whichgpu.cost.rent_or_buy",
                  "whichgpu.answers.mixed", "whichgpu.answers.fits_table",
                  "whichgpu.estimate.mixed_cards") == []


def _program_modules(tmp_path, *args: str, **env: str) -> tuple[str, set[str]]:
    """What the ``whichgpu`` program (main() with sys.argv, cli/process.py's start and end)
    prints and has loaded when it ends (an exit handler lists the modules)."""
    before = ("import atexit, json, sys\n"
              "atexit.register(lambda: print('MODULES', json.dumps(sorted(sys.modules))))\n")
    full = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    full.update({"WHICHGPU_HOME": str(tmp_path), "WHICHGPU_OFFLINE": "1",
                 "HF_HUB_OFFLINE": "1", **env})
    out = subprocess.run([sys.executable, "-c", before + "from whichgpu.cli import main; main()",
                          *args], env=full, cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    answer, _, listed = out.rpartition("MODULES ")
    return answer, set(json.loads(listed))


@pytest.mark.parametrize(("args", "answered"), [
    (("memory", "llama-3.1-70b", "--quant", "q4_k_m", "--json"),
     "whichgpu.estimate.memory.report"),
    (("recommend", "llama-3.1-8b", "--tokens", "10M", "--json"), "whichgpu.advise.recommend")])
def test_the_program_reads_no_package_metadata(tmp_path, args, answered) -> None:
    """cli/process.py: pydantic's plugin search (every installed package's entry points,
    importlib.metadata and email with it) is not run by the program, and the measured
    kernels' version is read only where they answer (estimate/speed/kernel_db.py); the answer
    is the same as where pydantic searches (PYDANTIC_DISABLE_PLUGINS set: its own loader)."""
    answer, mods = _program_modules(tmp_path, *args)
    assert answered in mods  # it answered
    assert _under(mods, "importlib.metadata", "email") == []
    searched, theirs = _program_modules(tmp_path, *args, PYDANTIC_DISABLE_PLUGINS="none-such")
    assert "importlib.metadata" in theirs  # pydantic's own loader, as the variable asks
    assert _stable(json.loads(searched)) == _stable(json.loads(answer))


def test_a_command_defines_only_its_own_request_models(tmp_path) -> None:
    """answers/requests.py defines the estimates' and recommend's models; the others
    (answers/other_requests.py) are defined when first named, by the commands that use them."""
    assert "whichgpu.answers.other_requests" not in _loaded(tmp_path, "memory", "llama-3.1-8b")
    assert "whichgpu.answers.other_requests" in _loaded(tmp_path, "tco", "--help")


def test_every_command_model_is_still_named_by_requests() -> None:
    """``requests.Tco``, ``from whichgpu.answers.requests import Tco`` and ``COMMANDS`` reach
    the models answers/other_requests.py defines: the same classes."""
    from whichgpu.answers import other_requests, requests

    for name in requests.ELSEWHERE:
        assert getattr(requests, name) is getattr(other_requests, name)
    assert {m.COMMAND for m in requests.COMMANDS} >= {"tco", "memory", "prices api", "serve"}
    with pytest.raises(AttributeError):
        requests.NoSuchModel  # noqa: B018
