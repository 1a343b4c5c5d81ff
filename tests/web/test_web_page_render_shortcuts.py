"""Issue 27: the pages' shortcuts give what the long ways gave: an option's rank without
comparing every option in full, a chart label's overlap test in one loop, text widths kept,
and numbers formatted with Babel's pattern and locale parsed once."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest
from babel.numbers import format_decimal

from whichgpu.web import charts, explain
from whichgpu.web.i18n import _BABEL_LOCALE, locale


@dataclasses.dataclass(frozen=True)
class _Option:
    gpu: object
    count: int
    price: float


def test_rank_is_the_place_list_index_gives():
    from whichgpu.advise.options import Option
    from whichgpu.catalog.gpus import default_catalog

    # rank compares in full only options of the same GPU and count: right only while an
    # option's equality includes both
    assert {f.name for f in dataclasses.fields(Option) if f.compare} >= {"gpu", "count"}
    gpus = default_catalog().gpus[:4]
    options = [_Option(g, n, 1.0 + i) for i, (g, n) in enumerate(
        (g, n) for n in (1, 2, 4) for g in gpus)]
    options.insert(7, _Option(gpus[1], 2, 99.0))  # same GPU and count, not equal
    rank_of = explain.ranks(options)  # the page's folded rows: indexed once, asked per row
    for o in options:
        assert explain.rank(options, o) == rank_of(o) == options.index(o) + 1
    # an equal copy further down ranks where the first equal one is, as list.index says
    twin = dataclasses.replace(options[3])
    assert twin is not options[3] and twin == options[3]
    assert explain.rank([*options, twin], twin) == 4
    with pytest.raises(ValueError):
        explain.rank(options[:2], options[5])


def test_clear_is_no_overlap_with_any_box():
    rng = random.Random(5)

    def box() -> charts.Box:
        x, y = rng.uniform(0, 300), rng.uniform(0, 200)
        return (x, y, x + rng.uniform(0, 80), y + rng.uniform(0, 20))

    for _ in range(2000):
        a, boxes = box(), [box() for _ in range(rng.randint(0, 6))]
        assert charts._clear(a, boxes) == (not any(charts._overlaps(a, b) for b in boxes))
    touching = [(10.0, 0.0, 20.0, 10.0)]
    assert charts._clear((22.0, 0.0, 30.0, 10.0), touching)  # exactly the 2 px gap apart
    assert not charts._clear((21.9, 0.0, 30.0, 10.0), touching)


def test_text_width_is_the_same_on_a_second_call():
    first = charts.text_width("H100 ×8 · 1,234 €", 11.0)
    assert charts.text_width("H100 ×8 · 1,234 €", 11.0) == first
    assert charts.text_width("H100 ×8 · 1,234 €", 12.0) == pytest.approx(first * 12 / 11)


def test_numbers_are_written_as_babel_writes_them():
    rng = random.Random(3)
    values = [0, 0.0, -0.0, 1, -1, 2.675, 0.125, 1e-7, 12345.678, 10**14, 999999999999.99]
    values += [rng.uniform(-1e6, 1e6) for _ in range(300)]
    values += [rng.expovariate(0.001) for _ in range(300)]
    for lang in ("en", "fr"):
        L, babel = locale(lang), _BABEL_LOCALE[lang]
        for x in values:
            for d in (0, 1, 2):
                pattern = "#,##0" + ("." + "0" * d if d else "")
                assert L.number(x, d) == format_decimal(x, format=pattern, locale=babel)
            a = abs(x)
            places = 0 if a >= 100 or a == 0 else min(6, max(0, 2 - math.floor(math.log10(a))))
            pattern = "#,##0" + ("." + "#" * places if places else "")
            assert L.sig(x) == format_decimal(round(x, places), format=pattern, locale=babel)
