"""A spinner while an answer takes more than a second, on a terminal only (issue 31); it
never reaches a pipe and stops before the answer is printed."""

from __future__ import annotations

import io
import time

from whichgpu.cli import common
from whichgpu.cli.common import Spinner


def test_no_spinner_when_output_is_not_a_terminal(cli):
    assert not Spinner.wanted()  # pytest captures stdout: not a terminal
    r = cli("memory", "llama-3.1-8b", "--quant", "q4_k_m")
    assert "⠋" not in r.out + r.err and "working" not in r.err


def test_the_spinner_waits_its_delay_then_stops_before_output(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(common, "console", common._Console(file=out))
    with Spinner(delay=0.0) as s:
        for _ in range(100):  # the timer thread starts it
            if s._status is not None:
                break
            time.sleep(0.01)
        assert s._status is not None and Spinner.active is s
        common.console.print("the answer")
        assert Spinner.active is None and s._status is None
    assert out.getvalue() == "the answer\n"


def test_a_quick_answer_never_shows_it():
    with Spinner(delay=5.0) as s:
        pass
    assert s._status is None and Spinner.active is None
