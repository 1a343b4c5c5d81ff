"""One GPU as JSON: every spec with its source, its offers, its best uses (CLI and web)."""

from __future__ import annotations

from typing import Any

from whichgpu.catalog.best_uses import best_uses
from whichgpu.catalog.gpus import GPU, Catalog
from whichgpu.catalog.offers import Offer


def sources_of(g: GPU) -> list[str]:
    """The source keys (datasheets, article facts) behind a GPU's values, sorted."""
    keys: list[str] = []
    for name in ("architecture", "compute_capability", "launch_year", "memory_gb",
                 "memory_usable_mib", "memory_type", "bandwidth_gb_s", "tdp_w"):
        keys.append(getattr(g, name).source)
    keys += [t.source for t in g.throughput.values() if t.source]
    ic = g.interconnect
    keys += [ic.kind.source, ic.bandwidth_gb_s.source, ic.peer_to_peer.source]
    if g.purchase_price:
        keys.append(g.purchase_price.source)
    return sorted(set(keys))


def gpu_to_json(g: GPU, catalog: Catalog, offers: list[Offer], lang: str = "en",
                resolution_note: str | None = None) -> dict[str, Any]:
    """What ``whichgpu gpu ID --json`` prints."""
    data = g.model_dump(mode="json")
    data["memory_bytes"] = g.memory_bytes
    data["memory_usable_bytes"] = g.usable_memory_bytes
    data["bandwidth_bytes_per_s"] = g.bandwidth_bytes_per_s
    data["sources"] = {k: catalog.source_url(k) for k in sources_of(g)}
    data["offers"] = [o.to_json() for o in offers]
    data["best_uses"] = [{"source": u.source, "text": u.text(lang)} for u in best_uses(g.id)]
    if resolution_note:
        data["resolution_note"] = resolution_note
    return data
