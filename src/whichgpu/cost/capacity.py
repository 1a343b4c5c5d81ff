"""How many GPUs of one kind one provider plausibly rents one customer on demand.

The ceiling is a stated assumption with its basis (``data/capacity.toml``); a provider may
have its own entry, and ``$WHICHGPU_PROVIDER_GPU_CEILING`` overrides every one. An answer
that needs more than the ceiling from one provider is flagged (issue 26): the number it
needs, the ceiling and where it comes from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from whichgpu.errors import InputError
from whichgpu.messages import msg

ENV = "WHICHGPU_PROVIDER_GPU_CEILING"
SERVER_GPUS = 8  # GPUs in one server (HGX/DGX boards); more than this is a cluster


class Spread(StrEnum):
    """How the machines of one answer work together (advise/machines.py, cost --count)."""

    ONE = "one machine"  # every GPU in one machine
    SEPARATE = "separate machines"  # independent parts, nothing links the machines
    CLUSTER = "cluster"  # whole servers linked by a cluster network (training)


@dataclass(frozen=True)
class Ceiling:
    """At most ``gpus`` GPUs of one kind from ``provider`` on demand, and why we think so."""

    provider: str
    gpus: int
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "gpus": self.gpus, "source": self.source}


@cache
def _data() -> dict[str, Any]:
    from whichgpu.parse_cache import cached_toml

    return cached_toml("whichgpu.cost", "data/capacity.toml")


def _override() -> int | None:
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(msg("capacity.env", "{env} must be a whole number of GPUs of at least "
                             "1, got {v!r}", env=ENV, v=raw))
    return value


def ceiling(provider: str) -> Ceiling:
    """The ceiling for ``provider`` (its own entry, else the default; the override wins)."""
    override = _override()
    if override is not None:
        return Ceiling(provider, override, f"set by {ENV}")
    entry = _data().get("providers", {}).get(provider) or _data()["default"]
    return Ceiling(provider, int(entry["gpus"]), str(entry["source"]))
