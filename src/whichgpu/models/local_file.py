"""Local model files and JSON text: regular files only, read with a size cap, parsed strictly.

A FIFO given as config.json would block the read forever, ``/dev/zero`` would grow the
process without end, and a directory or socket cannot be a model file: ``whichgpu.user_files``
refuses each from its file type before a byte is read. JSON is parsed strictly (no NaN or
Infinity) with a bound on its nesting.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whichgpu.errors import DataError
from whichgpu.user_files import file_kind, open_regular, read_regular, stat_path

MAX_JSON_BYTES = 16 * 2**20  # the largest config.json / model_index.json is a few hundred KB
MAX_JSON_DEPTH = 32  # real configs nest 3-4 objects deep (text_config.rope_scaling)

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "file_kind", "json_depth", "open_regular",
           "parse_json", "read_json", "read_regular", "stat_path"]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str | bytes, origin: object) -> Any:
    """Parsed JSON, or a DataError naming ``origin``: invalid JSON, NaN/Infinity (not JSON),
    nesting deeper than any config (``MAX_JSON_DEPTH``), integers of thousands of digits."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(origin, "not a UTF-8 text file (is it a weights file?)") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise DataError(origin, f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                        f"{exc.msg}") from exc
    except RecursionError:
        data = None
        deepest = MAX_JSON_DEPTH + 1
    except ValueError as exc:  # NaN / Infinity, or an integer of more than 4,300 digits
        raise DataError(origin, f"invalid JSON: {str(exc).splitlines()[0][:120]}") from None
    else:
        deepest = json_depth(data, MAX_JSON_DEPTH)
    if deepest > MAX_JSON_DEPTH:
        raise DataError(origin, f"JSON nested more than {MAX_JSON_DEPTH} levels deep: a model "
                        "config nests a few")
    return data


def json_depth(data: Any, stop: int = MAX_JSON_DEPTH) -> int:
    """How deep objects and lists nest in parsed JSON (walked without recursion; the walk
    stops once past ``stop``)."""
    deepest = 0
    todo = [(data, 1)]
    while todo:
        item, depth = todo.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > stop:
            return deepest
        todo.extend((child, depth + 1) for child in children
                    if isinstance(child, dict | list))
    return deepest


def read_json(path: Path, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """A local JSON file (regular, at most ``max_bytes``), parsed strictly."""
    return parse_json(read_regular(path, max_bytes, what="a model config"), path)
