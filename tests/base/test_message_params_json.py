"""params_json's fast path for plain values gives the JSON the type-by-type rules give."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from whichgpu.messages import Field, Join, Message, data_text, msg, params_json


class Colour(StrEnum):
    RED = "red"


def reference(value: Any) -> Any:
    """The rules written out one by one, with no shortcut for plain types."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, Join):
        return [reference(i) for i in value.items]
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, list | tuple):
        return [reference(i) for i in value]
    return value


def test_every_kind_of_parameter_is_written_as_its_rules_say() -> None:
    inner = msg("t.inner", "{n:,} tokens", n=8192)
    params = {"i": 3, "f": 0.25, "s": "h100-sxm", "b": True, "none": None,
              "message": inner, "field": Field("quant", "fp8"), "enum": Colour.RED,
              "data": data_text("a note"), "join": Join([Colour.RED, inner]),
              "list": [1, Colour.RED, Field("kv_dtype")], "tuple": (inner, 2.5)}
    got = params_json(params)
    assert got == {k: reference(v) for k, v in params.items()}
    # the str subclasses are not taken for plain strings
    assert got["message"] == {"id": "t.inner", "text": "8,192 tokens",
                              "params": {"n": 8192}}
    assert got["field"]["flag"] == "--quant fp8" and got["enum"] == "red"
    assert type(got["enum"]) is str and got["join"][1]["id"] == "t.inner"


def test_a_message_in_a_message_is_written_whole() -> None:
    outer = Message("t.outer", "because {why}", {"why": msg("t.why", "{gb:.1f} GB", gb=1.5)})
    assert outer.to_json()["params"]["why"] == {"id": "t.why", "text": "1.5 GB",
                                               "params": {"gb": 1.5}}
