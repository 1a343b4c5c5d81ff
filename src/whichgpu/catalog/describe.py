"""One GPU as JSON: every spec with its source, its offers, its best uses (CLI and web)."""

from __future__ import annotations

from typing import Any

from whichgpu.catalog.best_uses import best_uses
from whichgpu.catalog.gpus import ENGINE_LABELS, GPU, Catalog
from whichgpu.catalog.offers import Offer


def sources_of(g: GPU) -> list[str]:
    """The source keys (datasheets, article facts) behind a GPU's values, sorted."""
    return sorted({key for _field, key in g.source_refs()})


def platform_text(g: GPU, catalog: Catalog) -> str:
    """The software stack and the engines that run on it: 'Apple silicon (Metal): llama.cpp,
    MLC LLM, ...; not vLLM, SGLang, ...'."""
    info = catalog.platforms.get(str(g.platform.value))
    runs = catalog.engines_for(g)
    if info is None or runs is None:
        return str(g.platform.value)
    names = ", ".join(ENGINE_LABELS.get(e, e) for e in runs)
    return f"{info.name}: {names}" + (f" ({info.note})" if info.note else "")


def purchase_price_text(g: GPU) -> str:
    """The purchase price as a person reads it: a dated range, or "unknown" and why."""
    p = g.purchase_price
    if p is not None:
        span = f"{p.low:,.0f}" if p.low == p.high else f"{p.low:,.0f}-{p.high:,.0f}"
        return f"{span} {p.currency} ({p.date})"
    return "unknown: no public price"


def gpu_to_json(g: GPU, catalog: Catalog, offers: list[Offer], lang: str = "en",
                resolution_note: str | None = None) -> dict[str, Any]:
    """What ``whichgpu gpu ID --json`` prints."""
    data = g.model_dump(mode="json")
    data["memory_bytes"] = g.memory_bytes
    data["memory_usable_bytes"] = g.usable_memory_bytes
    data["bandwidth_bytes_per_s"] = g.bandwidth_bytes_per_s
    data["purchase_price_status"] = "known" if g.purchase_price else "unknown"
    data["sources"] = {k: catalog.source_url(k) for k in sources_of(g)}
    data["platform_name"] = (catalog.platforms[str(g.platform.value)].name
                             if str(g.platform.value) in catalog.platforms else None)
    runs = catalog.engines_for(g)
    data["runs_engines"] = list(runs) if runs is not None else None
    data["offers"] = [o.to_json() for o in offers]
    data["best_uses"] = [{"source": u.source, "text": u.text(lang)} for u in best_uses(g.id)]
    if resolution_note:
        data["resolution_note"] = resolution_note
    return data
