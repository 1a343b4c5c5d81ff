"""The web server's Prometheus registry and its store probe, shared by the request metrics
(web/ops.py) and the refresh schedule's (web/schedule.py) without either importing the other's
module."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

PROBE_TIMEOUT_S = 3.0  # /readyz and /metrics wait at most this long for the store

#: Request metrics live here (single process) or in PROMETHEUS_MULTIPROC_DIR's files.
REGISTRY = CollectorRegistry(auto_describe=True)


def probe_store() -> Any:
    """The price store, opened with a short timeout (a probe must not hang a scrape)."""
    from whichgpu.catalog.prices import PriceStore

    return PriceStore(None, timeout_s=PROBE_TIMEOUT_S)
