"""Strict JSON for every surface: NaN and the infinities, which JSON cannot write, become null.

The CLI's ``--json``, the REST API and the MCP tools all write answers through :func:`finite`,
so the three say "no value" the same way.
"""

from __future__ import annotations

import math
from typing import Any


def finite(x: Any) -> Any:
    """``x`` with every NaN and infinity (in nested dicts, lists and tuples) replaced by None;
    tuples become lists, as JSON writes them."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [finite(v) for v in x]
    return x
