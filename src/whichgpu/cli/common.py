"""Shared pieces of the CLI: consoles, JSON output, option parsing that reports bad input."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def emit_json(data: Any) -> None:
    """Machine-readable output: JSON on stdout and nothing else."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=_default) + "\n")


def _default(obj: Any) -> Any:
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return to_json()
    model_dump = getattr(obj, "model_dump", None)
    if callable(model_dump):
        return model_dump(mode="json")
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def note(text: str) -> None:
    """A remark for people (stderr, so --json output stays clean)."""
    err_console.print(f"[yellow]note:[/yellow] {text}")
