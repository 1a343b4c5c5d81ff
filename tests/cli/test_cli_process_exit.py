"""The program as one short process (cli/process.py, issue 27): run as ``whichgpu`` it
answers with the garbage collector off and ends without the interpreter's teardown; its output,
exit status and exit handlers are those of an ordinary exit, a server turns collection back on,
and ``main([...])`` in someone else's process changes nothing."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

from whichgpu.cli import main

# the console script's own call: main() with the command line in sys.argv
_PROGRAM = "from whichgpu.cli import main; main()"


def _program(tmp_path, *args: str, before: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WHICHGPU_HOME": str(tmp_path), "WHICHGPU_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-c", before + _PROGRAM, *args], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_a_long_answer_reaches_stdout_whole_and_exit_handlers_run(tmp_path) -> None:
    """The whole JSON (tens of kB through a pipe) arrives, then what atexit was asked to
    run: nothing buffered is lost by the quick exit."""
    done = _program(tmp_path, "memory", "llama-3.1-70b", "--quant", "q4_k_m", "--json",
                    before="import atexit; atexit.register(print, 'atexit ran')\n")
    assert done.returncode == 0, done.stderr
    body, _, tail = done.stdout.rpartition("}\n")
    assert json.loads(body + "}")["model"]
    assert tail == "atexit ran\n"


def test_bad_input_still_exits_2_with_its_one_line(tmp_path) -> None:
    done = _program(tmp_path, "memory", "llama-3.1-70b", "--quant", "zzz")
    assert done.returncode == 2
    assert done.stderr == "error: unknown quantization format 'zzz'\n"
    assert done.stdout == ""


def test_the_answer_runs_without_the_collector_and_a_server_turns_it_on(tmp_path) -> None:
    """``serve`` keeps running: collection is on again by the time the server starts."""
    spy = ("import gc, whichgpu.web.server as server\n"
           "import whichgpu.answers.estimates as estimates\n"
           "answer = estimates.memory\n"
           "def memory(*a, **k):\n"
           "    print('memory: collector on:', gc.isenabled())\n"
           "    return answer(*a, **k)\n"
           "estimates.memory = memory\n"
           "server.serve = lambda q, note: print('serve: collector on:', gc.isenabled())\n")
    served = _program(tmp_path, "serve", before=spy)
    assert served.returncode == 0, served.stderr
    assert served.stdout == "serve: collector on: True\n"
    answered = _program(tmp_path, "memory", "llama-3.1-8b", "--json", before=spy)
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.startswith("memory: collector on: False\n")


@pytest.mark.parametrize("args", [["--help"], ["memory", "llama-3.1-8b", "--json"]])
def test_main_with_arguments_leaves_the_callers_interpreter_as_it_was(args, capsys) -> None:
    assert gc.isenabled()
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 0
    assert gc.isenabled()
