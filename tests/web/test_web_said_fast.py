"""Issue 27: the pages' shortcuts in saying numbers and messages give what the long ways gave:
a share as a percent from a bounded memo of Babel's text, and a message's template read once
and filled field by field as ``string.Formatter.vformat`` fills it."""

from __future__ import annotations

import random

import pytest
from babel.numbers import format_percent

from whichgpu.messages import Field, Message, msg
from whichgpu.units import Money
from whichgpu.web import words
from whichgpu.web.i18n import _babel, _percent_text, locale


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_a_percent_is_babels_text_for_the_rounded_share(lang):
    rng = random.Random(7)
    values = [0, 1, 0.0, -0.0, 1.0, 0.5, 0.125, 0.999, 1.2345, -0.07, 12.5, 3, 250.0]
    values += [rng.uniform(-2, 12) for _ in range(300)]
    L = locale(lang)
    for x in values:
        for digits in (0, 1, 2):
            shown = round(x, 2 + digits)
            expected = format_percent(shown, locale=_babel(lang), decimal_quantization=False)
            assert L.percent(x, digits) == expected, (x, digits)
    assert L.percent(0.5) != L.percent(0.25)  # a new share, new words
    assert L.percent(-0.0) == format_percent(-0.0, locale=_babel(lang),
                                             decimal_quantization=False)


def test_the_percent_memo_is_bounded():
    assert _percent_text.cache_info().maxsize == 8192
    for i in range(50):
        locale("en").percent(i / 1000)
    assert _percent_text.cache_info().currsize <= 8192


TEMPLATES = [
    ("plain", "no fields at all", {}),
    ("named", "{n:,} tokens on {gpu} ({share:.0%})", dict(n=123456, gpu="h100-sxm",
                                                        share=0.375)),
    ("repr", "cannot read {v!r} as a number", dict(v="abc")),
    ("braces", "{{literal}} {x} }}{{", dict(x=3)),
    ("nested", "{inner}; then {money}", dict(inner=msg("term.split", ", split over {n} GPUs",
                                                       n=4), money=Money(2.5, "USD"))),
    ("field", "set {flag} to change", dict(flag=Field("quant", "fp8"))),
    ("float", "{x:.2f} GB and {y:g}", dict(x=1.23456, y=0.5)),
    ("positional", "{0} and {1}", {}),  # the whole Formatter (and its IndexError)
    ("dotted", "{a.real} x", dict(a=3)),
    ("missing", "{nothere} x", dict(other=1)),
    ("malformed", "{open", dict(open=1)),
]


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("name,template,params", TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_a_template_is_filled_as_vformat_fills_it(lang, name, template, params):
    L = locale(lang)
    reference = words._Formatter(L)
    try:
        expected: object = reference.vformat(template, (), dict(params))
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        expected = type(exc)
    ours = words._Formatter(L)
    try:
        got: object = words._fill(ours, template, dict(params))
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        got = type(exc)
    assert got == expected
    assert ours.complete == reference.complete


def test_real_messages_are_said_as_before():
    """Every message of a memory answer (terms, assumptions, suggestions), said in French and
    English with the shortcut and with the whole Formatter."""
    import whichgpu.answers as answers
    from whichgpu.answers import requests as r

    found: list[Message] = []

    def walk(value: object, depth: int = 0) -> None:
        if isinstance(value, Message):
            found.append(value)
            for p in value.params.values():
                walk(p, depth + 1)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v, depth + 1)
        elif hasattr(value, "__dataclass_fields__") and depth < 6:
            for k in value.__dataclass_fields__:
                walk(getattr(value, k, None), depth + 1)

    walk(answers.memory(r.Memory(model="llama-3.1-70b", quant="q4_k_m", context="8k",
                                 batch=64)).report)
    assert len(found) > 30
    for lang in ("en", "fr"):
        L = locale(lang)
        for m in found:
            template = words.translated(L, m.id, m.template) or m.template
            f = words._Formatter(L)
            assert words.say_text(L, m).text == f.vformat(template, (), dict(m.params)), m.id
