"""The registry of price sources: the built-in ones and the URL sources a store registered,
found by name. Above every source module (it constructs them), so that ``sources.py``, which
they all import, imports none of them."""

from __future__ import annotations

from whichgpu.catalog.prices.gpuhunt_source import GpuhuntSource
from whichgpu.catalog.prices.shipped import ShippedSource
from whichgpu.catalog.prices.skypilot import SkyPilotSource
from whichgpu.catalog.prices.sources import PriceSource
from whichgpu.catalog.prices.store import PriceStore
from whichgpu.catalog.prices.url import UrlSource
from whichgpu.errors import NotFoundError
from whichgpu.messages import msg


def builtin_sources() -> dict[str, PriceSource]:
    """The sources every install has: the shipped article sets, the SkyPilot catalog (its
    shipped snapshot seeds the store; a refresh downloads it) and gpuhunt (an optional
    extra)."""
    return {"shipped": ShippedSource(), "skypilot": SkyPilotSource(),
            "gpuhunt": GpuhuntSource()}


def all_sources(store: PriceStore) -> list[PriceSource]:
    """Built-in sources plus the URL sources registered in ``store``."""
    sources = list(builtin_sources().values())
    sources += [UrlSource(name, url, allow_http=allow_http)
                for name, url, allow_http in store.url_sources()]
    return sources


def get_source(name: str, store: PriceStore) -> PriceSource:
    """A source by name: 'shipped', 'gpuhunt', 'gpuhunt/aws', a registered URL source, or a
    ``https://`` URL given directly."""
    builtin = builtin_sources()
    if name in builtin:
        return builtin[name]
    if name.startswith("gpuhunt/"):
        return GpuhuntSource(providers=[name.split("/", 1)[1]])
    if name.startswith("skypilot/"):
        return SkyPilotSource(clouds=[name.split("/", 1)[1]])
    for src_name, url, allow_http in store.url_sources():
        if src_name == name:
            return UrlSource(src_name, url, allow_http=allow_http)
    if "://" in name:
        return UrlSource.from_url(name)
    known = [*builtin, *(n for n, _, _ in store.url_sources())]
    raise NotFoundError("price source", name, known,
                        hint=msg("prices.sources_hint", "'whichgpu prices sources' lists them"))
