"""Each test's CPU seconds, for deciding what to speed up or mark slow on a shared machine (wall
time there says more about the other sessions than about the test).

    WHICHGPU_TEST_CPU=/tmp/cpu make test     (or any pytest run: the variable loads it)

writes ``/tmp/cpu-<worker>.tsv`` (``main`` without xdist) when the session ends: per test
(set-up, call and tear-down together, so a module fixture counts where it is made), the CPU
seconds, the wall seconds and the node id, the costliest first. CPU counts this process, the
children it waited for (a CLI in a subprocess) and the processes still running under it (the
served app, Chromium and its renderers), read from /proc; what a long-lived child did for
another test in the meantime is counted in this one, so read a browser file's tests together.
Not loaded without the variable (tests/conftest.py).
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator

import pytest

OUT_ENV = "WHICHGPU_TEST_CPU"
_TICK = os.sysconf("SC_CLK_TCK")
_cpu: dict[str, float] = {}
_wall: dict[str, float] = {}


def _descendants_cpu(root: int) -> dict[int, float]:
    """{pid: CPU seconds} of the live processes under ``root`` (each with the children it
    waited for)."""
    return {pid: cpu for pid, (_, cpu) in _descendants(root).items()}


def _descendants(root: int) -> dict[int, tuple[int, float]]:
    """{pid: (parent pid, CPU seconds)} of the live processes under ``root`` (each with the
    children it waited for)."""
    children: dict[int, list[int]] = {}
    spent: dict[int, tuple[int, float]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # it ended meanwhile
            continue
        fields = stat[stat.rindex(b")") + 2:].split()  # after "pid (command) "
        # ppid, then utime, stime, cutime, cstime (fields 4 and 14-17 of proc(5))
        children.setdefault(int(fields[1]), []).append(int(name))
        spent[int(name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / _TICK)
    out: dict[int, tuple[int, float]] = {}
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        out[pid] = spent.get(pid, (root, 0.0))
        todo.extend(children.get(pid, ()))
    return out


def _own() -> float:
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + waited.ru_utime + waited.ru_stime


class _Mark:
    """CPU so far: this process with its waited children, and each live descendant."""

    def __init__(self) -> None:
        self.own = _own()
        self.tree = _descendants(os.getpid())

    def since(self, start: _Mark) -> float:
        """CPU spent from ``start`` to this mark. A process that ended in between counts
        through its parent, if the parent waited for it (its whole life, in the parent's
        children's time), and so on up to a process still here or this one: so what it had
        spent at ``start`` (counted by the tests before, while it was alive) is taken off.
        Without that, a browser file's test that closed a context counted its renderer's
        CPU twice (reaped into Chromium's zygote), and the test at whose end Chromium and
        Playwright's driver closed counted all of Chromium's again (65 CPU-s for a test that
        posts two requests, 2026-12-07). A process still running outside the tree (left to
        init when its parent was killed) reached nobody here: nothing is taken off for it."""
        here, me = self.tree, os.getpid()

        def reaped_here(pid: int) -> bool:
            if os.path.exists(f"/proc/{pid}"):  # alive, out of the tree
                return False
            parent = start.tree[pid][0]
            if parent in here or parent == me:
                return True
            return parent in start.tree and reaped_here(parent)

        gone = sum(cpu for pid, (_, cpu) in start.tree.items()
                   if pid not in here and reaped_here(pid))
        grown = sum(max(0.0, cpu - start.tree.get(pid, (0, 0.0))[1])
                    for pid, (_, cpu) in here.items())
        return max(0.0, self.own - start.own - gone + grown)


def cpu_now() -> float:
    """CPU seconds so far of this process, its waited children and its live descendants."""
    mark = _Mark()
    return mark.own + sum(cpu for _, cpu in mark.tree.values())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    start, wall = _Mark(), time.perf_counter()
    yield
    _cpu[item.nodeid] = _Mark().since(start)
    _wall[item.nodeid] = time.perf_counter() - wall


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get(OUT_ENV)
    if not out or not _cpu:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{out}-{worker}.tsv", "w", encoding="utf-8") as f:
        for nodeid, cpu in sorted(_cpu.items(), key=lambda kv: -kv[1]):
            f.write(f"{cpu:.3f}\t{_wall[nodeid]:.3f}\t{nodeid}\n")
