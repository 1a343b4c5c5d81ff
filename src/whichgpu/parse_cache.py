"""A cache of parsed, validated data files, so a short command does not re-read the shipped
GPU catalog (TOML parsed, every row validated) on every start.

The parsed object is pickled under the user's cache folder (``paths.cache_dir()``), keyed by
the data files' paths, modification times and sizes, the parser modules' own modification
times and sizes, and the Python version: editing a data file or the code that parses it, or
another interpreter, reads the files again. A parse that reads several files (a CSV and its
JSON metadata) or depends on several modules names them all. Anything unexpected (no cache folder, a
truncated or foreign file, a different type) falls back to parsing, which is always right;
``WHICHGPU_NO_PARSE_CACHE=1`` turns the cache off. A pickle runs code when read, so only a
file this user owns and nobody else may write is read (the folder is the user's own, like
the price store beside it).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import CodeType
from typing import TypeVar

T = TypeVar("T")
#: one file, or several (each one's stamp is part of the key)
Files = Path | Sequence[Path]

#: set (to anything but 0 or empty) to parse every time
DISABLE_ENV = "WHICHGPU_NO_PARSE_CACHE"


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}:{st.st_mtime_ns}:{st.st_size}"


def _trusted(st: os.stat_result) -> bool:
    """Written by this user, and writable by nobody else (where the system says so)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # no POSIX owners (Windows): the user's own profile folder
        return True
    return st.st_uid == getuid() and not st.st_mode & 0o022


def _stamps(files: Files) -> list[str]:
    return [_stamp(files)] if isinstance(files, Path) else [_stamp(f) for f in files]


def cache_file(kind: str, data: Files, parser: Files) -> Path:
    """Where the parse of ``data`` by ``parser`` (modules' source files) is kept."""
    from whichgpu.paths import cache_dir

    key = "|".join((*_stamps(data), "/", *_stamps(parser), sys.version))
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
    return cache_dir() / "parsed" / f"{kind}-{digest}.pickle"


def cached_parse(kind: str, data: Files, parser: Files, parse: Callable[[], T],
                 expected: type[T]) -> T:
    """``parse()``, or what it returned last time for the same ``data`` and ``parser``."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return parse()
    try:
        where = cache_file(kind, data, parser)
    except OSError:  # the data file is not a plain file (a zipped package): no cache
        return parse()
    try:
        with where.open("rb") as f:
            if _trusted(os.fstat(f.fileno())):
                value = pickle.load(f)  # our own file, in the user's own folder
                if isinstance(value, expected):
                    return value
    except Exception:  # absent, truncated, or from another version of a class: parse
        pass
    value = parse()
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        part = where.with_name(f"{where.name}.{os.getpid()}.part")
        blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(blob)  # the user's alone, whatever the umask
        os.replace(part, where)  # whole or nothing, even with two processes at once
    except (OSError, pickle.PicklingError):  # a read-only home: parse next time too
        pass
    return value


def cached_toml(package: str, name: str) -> dict:
    """``tomllib.loads`` of the data file ``name`` shipped in ``package``, parsed once per
    change of the file (a pickled dict reads ~10 times faster than the TOML parser: the small
    tables a recommendation reads cost ~5 ms of CPU a process, issue 27). A TOML error is
    raised as tomllib raises it. Read, never changed, by its callers."""
    import tomllib
    from importlib import resources

    data = resources.files(package).joinpath(name)

    def parse() -> dict:
        return tomllib.loads(data.read_text("utf-8"))

    if not isinstance(data, Path):  # a zipped package: parse each time
        return parse()
    kind = f"toml-{package}-{name}".replace("/", "-").replace(".", "-")
    return cached_parse(kind, data, Path(__file__), parse, dict)


def _python_compile(source: str, filename: str, mode: str, flags: int) -> CodeType:
    return compile(source, filename, mode, flags, dont_inherit=True)


#: what :func:`compile_text` compiles with: Python's compile, or the whichgpu program's table
#: of code kept between runs (cli/class_code.py installs it)
compiler: Callable[[str, str, str, int], CodeType] = _python_compile


def compile_text(source: str, filename: str, mode: str, flags: int = 0) -> CodeType:
    """``compile(source, filename, mode, flags, dont_inherit=True)``, through the kept table
    where the program installed one: for texts every start compiles the same way (the request
    models' annotations, ~260 texts, ~6 ms of CPU)."""
    return compiler(source, filename, mode, flags)
