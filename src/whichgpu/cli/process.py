"""The ``whichgpu`` program as one short process: how it starts and how it ends (issue 27).

Only :func:`whichgpu.cli.main` called as the program (the console script, no ``argv``) uses
this; code that calls ``main([...])`` in its own process (the tests, a notebook) keeps the
interpreter as it was.

- **No cyclic garbage collection while it answers.** Start-up creates tens of thousands of
  objects that live until the end (modules, classes, the catalog, the request models), and
  every collection walks them again: 24 ms of a ``memory`` question and 73 ms of a
  ``recommend`` one (gc.callbacks, on the shared 2-core machine). One answer leaves little
  cyclic garbage (the peak RSS of the benchmark's recommend questions is the same with the
  collector off). A command that keeps running (``serve``, ``mcp``) turns it back on with
  :func:`long_running`.
- **No interpreter teardown at the end.** Freeing every module and object one by one, and
  the collections Python runs while finalizing, cost about 60 ms of a ``memory`` question.
  :func:`leave` runs the ``atexit`` handlers (weakref finalizers, logging's flush), flushes
  stdout and stderr, and ends the process with its status; where another thread still runs
  or a stream cannot be flushed, it leaves the ordinary way.
- **Dataclass methods compiled once per interpreter**, not once per run: see
  cli/class_code.py (~70 ms of a ``recommend`` process).
- **No pydantic plugins.** pydantic looks for plugins (package entry points) the first time
  it builds a validator: importing ``importlib.metadata`` (and ``email``, ``zipfile``,
  ``csv`` with it) and reading every installed package's entry points cost ~30 ms of every
  command (``time.process_time``, shared 2-core machine). whichgpu uses none, and a plugin
  (tracing, say) would only watch the program validate its own input; typer already turns
  them off for its own validators. Where ``PYDANTIC_DISABLE_PLUGINS`` is set, pydantic reads
  it as usual.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import NoReturn


def start(args: list[str]) -> None:
    """Before the command line is read: no garbage collection (see the module's note), and
    dataclasses' generated methods compiled once per interpreter, not once per run
    (cli/class_code.py)."""
    gc.disable()
    _no_pydantic_plugins()
    from whichgpu.cli import class_code

    class_code.install(args)


#: pydantic's plugin loader (``get_plugins``), asked by every validator it builds
PYDANTIC_LOADER = "pydantic.plugin._loader"


def _no_pydantic_plugins() -> None:
    """pydantic finds no plugins, without reading the installed packages' entry points (see
    the module's note): its loader is a stand-in that has none. Nothing where the environment
    says which plugins to skip, or where pydantic has already looked."""
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ or PYDANTIC_LOADER in sys.modules:
        return
    import types

    loader = types.ModuleType(PYDANTIC_LOADER, "whichgpu: no pydantic plugins (cli/process.py)")
    loader.get_plugins = tuple  # type: ignore[attr-defined]  # get_plugins() -> ()
    sys.modules[PYDANTIC_LOADER] = loader


def long_running() -> None:
    """For a command that keeps running (a server), after :func:`start`: the objects made so
    far are kept out of every collection (gc.freeze), and collection is on again. Nothing
    where the collector was on (``main([...])`` in someone else's process)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def leave(code: object) -> NoReturn:
    """End the process with ``code`` (a ``SystemExit``'s code) without the interpreter's
    teardown; the ordinary exit where that would lose something."""
    import threading

    if threading.active_count() > 1:  # a thread that still runs: the interpreter joins it
        raise SystemExit(code)
    import atexit

    atexit._run_exitfuncs()  # what the interpreter runs first when it exits
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # as the interpreter does with SystemExit("text")
        print(code, file=sys.stderr)
        status = 1
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: no console at all (pythonw)
                stream.flush()
    except (OSError, ValueError):  # a closed pipe (whichgpu ... | head): Python's own way
        raise SystemExit(status) from None
    os._exit(status)
