"""Issue 27: the web server's own bounds are read from each web model's ``Web(...)`` once
(answers/request.py _web_limits), and check_web_bounds refuses exactly what the field-by-field
reading refused, with the same sentence."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from whichgpu.answers import request as rq
from whichgpu.answers import requests as r
from whichgpu.answers.fields import web_of
from whichgpu.errors import InputError

MODELS = [r.Memory, r.Speed, r.Recommend, r.Checklist, r.Tco, r.Cost, r.Gpus, r.Fits,
          r.PricesList]


def _reference(request: Any) -> None:
    """check_web_bounds as it read each field's Web(...) on every request (before issue 27's
    change), the reference the new reading must equal."""
    cls = type(request)
    for name in cls.model_fields:
        web = web_of(cls, name)
        cap = web.max
        value = getattr(request, name)
        longest = web.max_length or rq.DEFAULT_WEB_LENGTH
        texts = value if isinstance(value, list) else [value]
        if isinstance(value, list) and web.max_items is not None and len(value) > web.max_items:
            raise InputError(rq._TOO_MANY(field=rq.field_flag(cls, name), n=web.max_items))
        if any(isinstance(t, str) and len(t) > longest for t in texts):
            raise InputError(rq._TOO_LONG(field=rq.field_flag(cls, name), n=longest))
        if cap is not None and isinstance(value, int | float) and not isinstance(value, bool) \
                and value > cap:
            text = cls.BOUND_TEXT.get(name, (None, None))[1]
            if text:
                raise InputError(text(v=rq._number_text(value), field=rq._bound_flag(cls, name)))
            if isinstance(value, int):
                raise InputError(rq._SERVER_WHOLE(field=rq.field_named(cls, name),
                                                  limit=f"{cap:g}", v=value))
            raise InputError(rq._SERVER_MAX(field=rq.field_named(cls, name), limit=f"{cap:g}",
                                            v=rq._number_text(value)))


def _outcome(check, request) -> str | None:
    try:
        check(request)
    except InputError as exc:
        return str(exc)
    return None


def _variants(web: type) -> list[dict[str, Any]]:
    """Per field: a value within every bound, and one past each bound it has."""
    out: list[dict[str, Any]] = [{}]
    for name in web.model_fields:
        w = web_of(web, name)
        longest = w.max_length or rq.DEFAULT_WEB_LENGTH
        out.append({name: "x" * longest})
        out.append({name: "x" * (longest + 1)})
        out.append({name: ["a", "b" * (longest + 1)]})
        if w.max_items is not None:
            out.append({name: ["a"] * (w.max_items + 1)})
        if w.max is not None:
            out += [{name: w.max}, {name: int(w.max) + 1}, {name: w.max * 1.5},
                    {name: True}]
    return out


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_web_bounds_refuse_what_the_field_by_field_reading_refused(model):
    web = rq.for_web(model)
    refused = passed = 0
    for values in _variants(web):
        # a required field left out has no attribute at all: None (no bound applies) instead
        given = {n: None for n, f in web.model_fields.items() if f.is_required()} | values
        request = web.model_construct(**given)
        expected = _outcome(_reference, request)
        assert _outcome(rq.check_web_bounds, request) == expected, values
        refused += expected is not None
        passed += expected is None
    assert refused and passed


def test_the_limits_are_read_once_per_model():
    web = rq.for_web(r.Memory)
    first = rq._web_limits(web)
    assert rq._web_limits(web) is first
    assert [n for n, *_ in first] == list(web.model_fields)


def test_of_two_denormals_the_first_field_is_named():
    """_no_denormals reads the validated values in field order: with two denormal values the
    sentence names the field that comes first, as the by-name reading did."""
    field_named = rq.field_named
    names = ["hours_per_month", "years", "load_factor", "tdp"]
    order = [n for n in r.Tco.model_fields if n in names]
    assert sorted(order) == sorted(names)
    for first, second in itertools.pairwise(order):
        for a, b in ((first, second), (second, first)):  # given in either order
            with pytest.raises(ValueError) as refused:  # InputError, in a ValidationError
                r.Tco(gpu="h100-sxm", **{a: 1e-320, b: 1e-320})
            said = refused.value.errors()[0]["msg"]  # the sentence, not the input echoed
            assert field_named(r.Tco, first) in said and "too small" in said, said
            assert field_named(r.Tco, second) not in said, said
