"""Issue 27: the pages' long lists that are the same on every page (the presets, the catalog's
GPUs as a datalist) are escaped once: what the template's loop wrote, from a bounded memo."""

from __future__ import annotations

from dataclasses import dataclass

from whichgpu.catalog.gpus import default_catalog
from whichgpu.models.preset_index import list_presets
from whichgpu.web import pages

LOOP = ('{% for i in items %}<option value="{{ i.a }}">{{ i.b }}</option>{% endfor %}')


@dataclass(frozen=True)
class _Item:
    a: object
    b: object


def _loop(items) -> str:
    return pages.ENV.from_string(LOOP).render(items=items)


def test_the_options_are_what_the_loop_wrote():
    tricky = [_Item("a&b", "<x> \"q\" 'y'"), _Item(3, 4.5), _Item("é", "l’été")]
    catalog = [_Item(g.id, g.name) for g in default_catalog().gpus]
    presets = [_Item(p.alias, p.name) for p in list_presets()]
    for items in (tricky, catalog, presets, []):
        assert str(pages.datalist_options(items, "a", "b")) == _loop(items)
    # a changed list is a changed answer, not the memo's old one
    assert pages.datalist_options(tricky[:2], "a", "b") != pages.datalist_options(tricky, "a",
                                                                                "b")


def test_the_options_memo_is_bounded():
    for i in range(40):
        pages.datalist_options([_Item(f"id{i}", "n")], "a", "b")
    info = pages._options.cache_info()
    assert info.maxsize == 16 and info.currsize <= 16
