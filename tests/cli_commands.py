"""The click commands of whichgpu's modules, built once per test process for the ``cli``
fixture (tests/conftest.py).

Run as a program, whichgpu builds the one command it runs (``cli/lazy.py`` ``load_module``:
the module's ``register`` binds the request model's fields to typer options, then typer makes
the click command). In process, every ``cli(...)`` call built it again: about 10 ms of CPU for
``memory`` (of 15 ms for the whole call; time.process_time over 20 calls, 2026-12-07). The
fast tests under tests/cli took 22.9 CPU-s with it, 19.3 without (tests/cpu_times.py, one
process, shared machine). Building depends only on the code (the request models, their defaults and
help), never on the environment a test sets, so the first build of each (module, command)
serves every later call; the commands still parse, validate and run on each call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Loader = Callable[[str, str | None], dict[str, Any]]

_built: dict[tuple[str, str | None], dict[str, Any]] = {}


def built_once(load_module: Loader) -> Loader:
    """``load_module`` whose result for each (module, root command) is kept for the process."""

    def load(module: str, root: str | None = None) -> dict[str, Any]:
        key = (module, root)
        if key not in _built:
            _built[key] = load_module(module, root)
        return dict(_built[key])

    return load
