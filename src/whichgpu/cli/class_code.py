"""The code Python compiles for classes, compiled once and kept between runs (issue 27).

Python makes a dataclass's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` (and a
frozen one's ``__setattr__`` and ``__delattr__``) by writing their source text and compiling
it, each time the class is defined; ``typing.ForwardRef`` compiles each annotation's text
(``"dict[str, Any]"``) that pydantic or ``typing.get_type_hints`` evaluates, and
``collections.namedtuple`` its ``__new__``. A
``whichgpu recommend`` process defines ~180 dataclasses (whichgpu's, typer's, pydantic's) and
~1,000 forward references: compiling their ~1,100 distinct texts took ~80 ms of its ~0.6 s
of CPU, more than any other single step of its start (measured on the shared 2-core machine).

:func:`install` has ``dataclasses``, ``typing`` and ``collections`` compile through
:func:`_code`, which looks
the text up in a table of code objects read from the user's cache folder
(``paths.cache_dir()``) and compiles only a text it has not seen; the table is written back
at exit when the run compiled something new. A code object is a function of its source text
and mode and of the interpreter that compiled it, so the table is keyed by the full text and
mode and kept per Python version, bytecode magic number and optimisation level: never stale.
Only the file this user owns and nobody else may write is read (marshal, like a ``.pyc``,
trusts its input; the check is the parse cache's); anything unexpected (no cache folder, a
damaged file) compiles as Python does. ``WHICHGPU_NO_PARSE_CACHE=1`` turns it off with the
other start-up caches.

Only the ``whichgpu`` program installs it (cli/process.py ``start``); ``main([...])`` in
someone else's process leaves ``dataclasses``, ``typing`` and ``collections`` as they are.
"""

from __future__ import annotations

import builtins
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

#: the most texts kept: past it, a run keeps only the texts it used (new code since)
MAX_TEXTS = 5000

#: source text -> its code: read from the file, then what this run compiled
_codes: dict[str, CodeType] = {}
#: the texts this run used (what is kept when the table grows past MAX_TEXTS)
_used: set[str] = set()
_state: dict[str, Any] = {"file": None, "new": False, "loaded": False, "command": "other"}


def cache_path(command: str) -> Path:
    """Where this interpreter's table for ``command`` (a root command, or "other") is kept:
    one table per command, so that a run reads the code of its own classes, not every
    command's (the ~900 texts of a recommendation are ~1 MB, 6 ms to read)."""
    from importlib.util import MAGIC_NUMBER

    from whichgpu.paths import cache_dir

    version = "".join(map(str, sys.version_info[:2]))
    name = (f"{command}-{sys.implementation.name}{version}-{MAGIC_NUMBER.hex()}"
            f"-o{sys.flags.optimize}.marshal")
    return cache_dir() / "class-code" / name


def command_of(args: list[str]) -> str:
    """The root command ``args`` run (its table's name), or "other"."""
    from whichgpu.cli.commands_index import COMMANDS

    names = {row[0] for row in COMMANDS}
    word = next((a for a in args if not a.startswith("-")), None)
    return word if word in names else "other"


def install(args: list[str]) -> bool:
    """Have ``dataclasses`` compile its generated methods through the kept table of the
    command ``args`` run (see the module's note); the table is read when the first class is
    made. False, and nothing changed, when switched off or already done."""
    import dataclasses

    from whichgpu.parse_cache import DISABLE_ENV

    if os.environ.get(DISABLE_ENV, "") not in ("", "0") or "exec" in vars(dataclasses):
        return False
    import typing

    _state["command"] = command_of(args)
    # a module global shadows the builtin: the one exec of dataclasses.py (_create_fn) and
    # the one compile of typing.py (ForwardRef.__init__)
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    if "compile" not in vars(typing):
        typing.compile = _compile  # type: ignore[attr-defined]
    import collections

    if "eval" not in vars(collections):  # and the one eval of collections (namedtuple)
        collections.eval = _eval  # type: ignore[attr-defined]
    from whichgpu import parse_cache

    parse_cache.compiler = _code_of  # the request models' annotations (answers/request.py)
    import atexit

    atexit.register(save)
    return True


def _load() -> None:
    """The table, when the first class is made (once)."""
    _state["loaded"] = True
    try:
        where = cache_path(_state["command"])
    except Exception:  # no cache folder can be named: compile as Python does
        return
    _state["file"] = where
    _codes.update(_read(where))


def _read(where: Path) -> dict[str, CodeType]:
    import marshal

    from whichgpu.parse_cache import _trusted

    try:
        with where.open("rb") as f:
            if not _trusted(os.fstat(f.fileno())):
                return {}
            # our own file, in the user's own folder; read whole (marshal.load on a file
            # reads piece by piece: 4x slower for a 1 MB table)
            table = marshal.loads(f.read())
    except Exception:  # absent, truncated, or not ours: compile
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _code(source: str, mode: str, filename: str = "<string>", flags: int = 0) -> CodeType:
    """``source`` compiled as ``mode`` (``"<string>"``, as dataclasses, typing and
    collections name it), from the table or compiled now. dont_inherit: the flags those
    modules compile with (none has a __future__ import), not this module's; ``flags`` for a
    caller that has some (parse_cache.compile_text)."""
    if not _state["loaded"]:
        _load()
    key = f"{mode}\0{filename}\0{flags}\0{source}"
    code = _codes.get(key)
    if code is None:
        code = _codes[key] = compile(source, filename, mode, flags, dont_inherit=True)
        _state["new"] = True
    _used.add(key)
    return code


def _code_of(source: str, filename: str, mode: str, flags: int) -> CodeType:
    """:func:`_code` in ``compile``'s order of arguments (parse_cache.compiler)."""
    return _code(source, mode, filename, flags)


def _exec(source: Any, globals: dict[str, Any] | None = None,
          locals: dict[str, Any] | None = None) -> None:
    """``exec`` as ``dataclasses`` calls it: a text compiled once per interpreter."""
    builtins.exec(_code(source, "exec") if isinstance(source, str) else source, globals,
                  locals)


def _eval(source: Any, globals: dict[str, Any] | None = None,
          locals: Any = None) -> Any:
    """``eval`` as ``collections.namedtuple`` calls it (its ``__new__``'s lambda): compiled
    once per interpreter. Leading blanks are dropped first, as ``eval`` drops them."""
    if isinstance(source, str):
        source = _code(source.lstrip(" \t"), "eval")
    return builtins.eval(source, globals, locals)


def _compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
    """``compile`` as ``typing.ForwardRef`` calls it (an annotation's text, "<string>",
    "eval"): compiled once per interpreter; any other call as Python compiles it."""
    if args or kwargs or not isinstance(source, str) or filename != "<string>":
        return builtins.compile(source, filename, mode, *args, **kwargs)
    return _code(source, mode)


def save() -> None:
    """Write the table back when this run compiled a text it did not have (at exit)."""
    import marshal

    where = _state["file"]
    if where is None or not _state["new"]:
        return
    keep = _codes if len(_codes) <= MAX_TEXTS else {t: _codes[t] for t in _used}
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        part = where.with_name(f"{where.name}.{os.getpid()}.part")
        blob = marshal.dumps(keep)
        with os.fdopen(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(blob)  # the user's alone, whatever the umask
        os.replace(part, where)  # whole or nothing, even with two processes at once
    except (OSError, ValueError):  # a read-only home: compile next time too
        return
    _state["new"] = False
