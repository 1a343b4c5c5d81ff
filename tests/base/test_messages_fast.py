"""A message's English comes from the built-in ``str.format_map`` (fast); it must say exactly
what the reference ``string.Formatter`` subclass says, for every kind of parameter."""

from __future__ import annotations

import pytest

from whichgpu.messages import _ENGLISH, Field, Join, Message, Some, english, msg
from whichgpu.units import Duration, Money
from whichgpu.vocabulary import Task

CASES = [
    ("{n:,} tokens, {gb:.1f} GB, {share:.0%}", {"n": 131072, "gb": 39.94, "share": 0.125}),
    ("{task} on {gpu}", {"task": Task.LORA, "gpu": "h100-sxm"}),
    ("{task:>10}|{flag}|{flag:<20}|", {"task": Task.INFERENCE, "flag": Field("quant", "fp8")}),
    ("off: {flag}", {"flag": Field("spot", False)}),
    ("{why}; {inner}", {"why": msg("a.b", "nested {x:.2f}", x=1 / 3),
                        "inner": Message("c.d", "{n:,}", {"n": 10**6})}),
    ("{items}", {"items": Join(["a", Task.LORA, msg("x", "m{v}", v=2)], ", ", " or ")}),
    ("{items:>4}", {"items": Join([1, 22, 333])}),
    ("{items}", {"items": Some([f"g{i}" for i in range(9)], 3)}),
    ("{items}", {"items": Join([Join(["x", "y"], "+"), "z"])}),
    ("{price} per {d:short}", {"price": Money(1.97, "EUR"), "d": Duration(5400)}),
    ("{price:0}", {"price": Money(1234.5, "USD")}),
    ("{values!r} {s!s} {{braces}}", {"values": [1, 2], "s": Task.PRETRAIN}),
    ("{pair[0]} {pair[1]:.1f}", {"pair": (3, 2.25)}),
    ("no parameters, {{literal}}", {}),
]


@pytest.mark.parametrize(("template", "params"), CASES)
def test_fast_english_equals_the_reference_formatter(template: str, params: dict) -> None:
    reference = _ENGLISH.vformat(template, (), dict(params))
    assert str(Message("t.id", template, params)) == reference
    assert english(template, params) == reference


def test_a_malformed_template_raises_as_the_reference_does() -> None:
    with pytest.raises(KeyError):
        Message("t.missing", "{absent}", {})
    with pytest.raises(ValueError):
        Message("t.spec", "{n:q}", {"n": 1})
