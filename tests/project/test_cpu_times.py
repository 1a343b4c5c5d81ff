"""tests/cpu_times.py (loaded when WHICHGPU_TEST_CPU names a file) counts the CPU a test spends
in processes it starts, whether they still run (a served app, Chromium) or were waited for (a
CLI in a subprocess), and writes the costliest tests first."""

from __future__ import annotations

import subprocess
import sys
import time

import cpu_times

# about 0.15 s of CPU in the child, then (for the live case) it says so and waits
_BUSY = ("import sys, time\n"
         "t = time.process_time()\n"
         "while time.process_time() - t < 0.15: pass\n"
         "print('busy done', flush=True)\n"
         "sys.stdin.read()\n")


def test_a_child_still_running_is_counted():
    child = subprocess.Popen([sys.executable, "-c", _BUSY], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        before_self = time.process_time()
        before = cpu_times.cpu_now()
        assert child.stdout is not None and child.stdout.readline() == "busy done\n"
        spent = cpu_times.cpu_now() - before
        own = time.process_time() - before_self
        assert spent - own >= 0.12, spent
    finally:
        child.communicate("")


def test_a_child_waited_for_is_counted():
    before_self = time.process_time()
    before = cpu_times.cpu_now()
    subprocess.run([sys.executable, "-c", _BUSY], input="", capture_output=True, check=True)
    spent = cpu_times.cpu_now() - before
    assert spent - (time.process_time() - before_self) >= 0.12, spent


def test_the_file_lists_the_costliest_first(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_times, "_cpu", {"a.py::cheap": 0.1, "b.py::dear": 2.5})
    monkeypatch.setattr(cpu_times, "_wall", {"a.py::cheap": 0.2, "b.py::dear": 9.0})
    monkeypatch.setenv(cpu_times.OUT_ENV, str(tmp_path / "cpu"))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    cpu_times.pytest_sessionfinish(None)  # type: ignore[arg-type]
    lines = (tmp_path / "cpu-gw7.tsv").read_text("utf-8").splitlines()
    assert lines == ["2.500\t9.000\tb.py::dear", "0.100\t0.200\ta.py::cheap"]


def test_a_process_that_leaves_the_tree_subtracts_nothing():
    """A browser whose parent ends first leaves the tree with the CPU the earlier tests were
    counted: the test it leaves in is not given that back (the file's sum came out negative
    there)."""
    import os
    import signal

    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys\n"
         f"c = subprocess.Popen([sys.executable, '-c', {_BUSY!r}], stdin=subprocess.PIPE,"
         " stdout=subprocess.PIPE, text=True)\n"
         "print(c.stdout.readline().strip(), c.pid, flush=True)\n"
         "sys.stdin.read()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    *said, pid = parent.stdout.readline().split()
    assert said == ["busy", "done"]
    try:
        start = cpu_times._Mark()
        assert int(pid) in start.tree and start.tree[int(pid)][1] >= 0.12
        parent.kill()  # the busy child is left to init, out of this process's tree
        parent.wait()
        assert cpu_times._Mark().since(start) >= 0
    finally:
        os.kill(int(pid), signal.SIGKILL)


def test_a_process_its_live_parent_reaps_is_not_counted_again():
    """A renderer that Chromium's zygote reaps (a browser context closed) goes into the
    zygote's children's time with its whole life: what it spent before the test, counted
    then, is not counted again in the test it ends in."""
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys\n"
         f"c = subprocess.Popen([sys.executable, '-c', {_BUSY!r}], stdin=subprocess.PIPE,"
         " stdout=subprocess.PIPE, text=True)\n"
         "print(c.stdout.readline().strip(), flush=True)\n"
         "sys.stdin.readline()\n"
         "c.communicate('')\n"  # the busy child ends; this parent waits for it
         "print('reaped', flush=True)\n"
         "sys.stdin.read()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None and parent.stdin is not None
    try:
        assert parent.stdout.readline() == "busy done\n"
        start = cpu_times._Mark()
        parent.stdin.write("go\n")
        parent.stdin.flush()
        assert parent.stdout.readline() == "reaped\n"
        assert cpu_times._Mark().since(start) < 0.1  # was 0.15 and more: the child twice
    finally:
        parent.communicate("")


def test_a_process_reaped_through_a_parent_that_ended_too_is_not_counted_again():
    """Chromium closing with Playwright's driver at a file's end: the driver waits for the
    browser and this process waits for the driver, so the browser's whole life comes back
    here; what it spent before the test is not counted again."""
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys\n"
         f"c = subprocess.Popen([sys.executable, '-c', {_BUSY!r}], stdin=subprocess.PIPE,"
         " stdout=subprocess.PIPE, text=True)\n"
         "print(c.stdout.readline().strip(), flush=True)\n"
         "sys.stdin.readline()\n"
         "c.communicate('')\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    assert parent.stdout.readline() == "busy done\n"
    start = cpu_times._Mark()
    parent.communicate("go\n")  # the child ends, its parent waits for it and ends
    assert cpu_times._Mark().since(start) < 0.1  # was 0.15 and more: the child twice
