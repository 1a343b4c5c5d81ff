"""The page's numbers, remembered once written, are still Babel's text on every later call."""

from __future__ import annotations

import random

from babel.numbers import format_decimal

from whichgpu.web.i18n import _BABEL_LOCALE, _decimal_text, locale


def test_a_remembered_number_is_babels_text_for_that_very_value() -> None:
    # equal as keys of a plain dict, different as text: each must keep its own
    twins = [0.0, -0.0, 0, 1, 1.0, 2, 2.0, 1e-7, -1e-7]
    rng = random.Random(5)
    values = twins + [rng.uniform(-1e5, 1e5) for _ in range(200)]
    for lang in ("en", "fr"):
        L, babel = locale(lang), _BABEL_LOCALE[lang]
        for _ in range(2):  # the second time every text comes from the cache
            for x in values:
                for d in (0, 2):
                    pattern = "#,##0" + ("." + "0" * d if d else "")
                    assert L.number(x, d) == format_decimal(x, format=pattern, locale=babel)
    assert _decimal_text.cache_info().hits > 0
    # -0.0 is written with its sign, 0.0 without: a key of the value alone would mix them
    assert locale("en").number(-0.0, 2) != locale("en").number(0.0, 2)
