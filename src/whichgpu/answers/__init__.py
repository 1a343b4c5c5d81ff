"""One answer layer for the command line, the REST API and the pages.

- ``requests``: every command's question, declared once (fields, types, bounds, help, the
  CLI flag, the web's words); ``request`` and ``fields`` hold their base and metadata.
- ``estimates``, ``advice``, ``money``, ``catalog``, ``prices``, ``validation``, ``bench``:
  one function per command, from a request to a typed answer that owns its ``to_json()``.
- ``context``: how a surface reaches models, offers and calibration profiles (the command
  line's :data:`~whichgpu.answers.context.LOCAL`; the web builds its own).

The CLI (cli/) and the web (web/) only parse, call these, and render.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# each command's answer function -> its module (imported on first use: the CLI's --help
# stays fast)
_ANSWERS: dict[str, str] = {
    "recommend": "advice", "checklist": "advice",
    "memory": "estimates", "speed": "estimates", "fits": "fitting",
    "cost": "money", "tco": "money",
    "gpus": "catalog", "gpu": "catalog", "models": "catalog", "model": "catalog",
    "prices_list": "prices", "prices_history": "prices", "prices_refresh": "prices",
    "prices_import": "prices", "prices_sources": "prices", "prices_prune": "prices",
    "prices_remove": "prices", "sources_add": "prices", "sources_remove": "prices",
    "validate_memory": "validation", "validate_speed": "validation",
    "validate_fits": "validation", "validate_serving": "validation",
    "bench_model": "bench", "compare": "bench",  # bench itself: whichgpu.answers.bench.bench
    "prices_api": "api_prices",
}

__all__ = sorted(_ANSWERS)


def __getattr__(name: str) -> Any:
    """An answer function, loaded on first use (PEP 562)."""
    if name not in _ANSWERS:
        raise AttributeError(f"module 'whichgpu.answers' has no attribute {name!r}")
    return getattr(import_module(f"whichgpu.answers.{_ANSWERS[name]}"), name)
