"""``whichgpu prices import FILE``: a user's offer file stored as a dated snapshot."""

from __future__ import annotations

import re
from pathlib import Path

from whichgpu.catalog.offers import shipped_offer_sets
from whichgpu.catalog.prices.file import FileSource
from whichgpu.catalog.prices.refresh import FeedOutcome, Guards, record
from whichgpu.catalog.prices.registry import builtin_sources
from whichgpu.catalog.prices.selection import ensure_shipped, open_store
from whichgpu.catalog.prices.sources import parse_time
from whichgpu.catalog.prices.store import PriceStore
from whichgpu.errors import InputError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def feed_name(path: Path, name: str | None) -> str:
    """The feed an import goes to: ``name``, or the file's name made safe ('my quotes' ->
    'my-quotes')."""
    if name is not None:
        if not _NAME.fullmatch(name):
            raise InputError(f"feed name {name!r}: use letters, digits, '.', '_' and '-'")
        chosen = name
    else:
        chosen = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-.") or "import"
    if chosen in builtin_sources() or chosen in shipped_offer_sets():
        raise InputError(f"{chosen!r} is a built-in source or shipped set; give --name")
    return chosen


def import_file(path: str | Path, *, name: str | None = None, observed_at: str | None = None,
                force: bool = False, store: PriceStore | str | Path | None = None,
                guards: Guards = Guards()) -> FeedOutcome:
    """Parse ``path`` strictly (any bad row is an error naming the row, and nothing is
    stored), then store it as the feed's new snapshot. Re-importing the same name adds a
    snapshot to its history; the guards of a refresh apply (``force`` overrides them)."""
    path = Path(path)
    if observed_at is not None and parse_time(observed_at) is None:
        raise InputError(f"--observed-at {observed_at!r} is not an ISO date or datetime")
    st = open_store(store)
    ensure_shipped(st)
    source = FileSource(path, name=feed_name(path, name), observed_at=observed_at)
    (result,) = list(source.fetch())
    outcome = record(st, result, force=force, guards=guards)
    if outcome.status == "failed":
        raise InputError(f"{path}: {outcome.message}")
    if outcome.status == "rejected":
        kept = (f"; snapshot #{outcome.previous.id} of {outcome.feed!r} is kept"
                if outcome.previous else "")
        raise InputError(f"{path}: {outcome.message}{kept}. Check the file, or import it with "
                         "--force if the prices really moved that much")
    return outcome


def remove_import(feed: str, *, store: PriceStore | str | Path | None = None) -> int:
    """Undo ``prices import``: delete the imported feed and all its snapshots (its history
    too: an import is the user's own data, and removing it means it was not wanted). Only
    imported feeds can be removed; shipped and refreshed feeds are not the user's to delete
    (``prices prune`` thins their history). Returns the number of snapshots deleted."""
    from whichgpu.errors import NotFoundError

    st = open_store(store)
    snaps = [s for s in st.snapshots() if s.feed == feed]
    if not snaps:
        imported = sorted({s.feed for s in st.snapshots() if s.kind == "file"})
        raise NotFoundError("imported feed", feed, imported,
                            hint="'whichgpu prices sources' lists the feeds")
    kinds = {s.kind for s in snaps}
    if kinds != {"file"}:
        raise InputError(f"{feed!r} is not an imported feed (it comes from "
                         f"{', '.join(sorted({s.source for s in snaps}))}); only imports can "
                         "be removed. 'whichgpu prices prune' drops old snapshots")
    return st.remove_feed(feed)
