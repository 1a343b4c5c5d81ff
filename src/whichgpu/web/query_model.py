"""FastAPI's reading of a query-string request model, with its per-field plan worked out once.

A GET question is a request model read from the query string (``Annotated[Model, Query()]``).
For every request FastAPI 0.165 (``fastapi.dependencies.utils._request_param_model_to_args``)
walks every field of the model (57 on ``/memory``, ~80 on ``/recommend``) and works out
again what depends only on the model: each field's (validation alias, request key) pairs,
whether it is a JSON field or a list, and the set of the model's own names. That was ~40 % of
the web layer's own CPU on a REST ``memory`` request (issue 27; web10's profile, 2026-12-07).

:func:`install` puts :func:`request_param_model_to_args` in its place, once per process. For
a query string (starlette's ``QueryParams``) it reads the request with the plan remembered per
model and builds the same ``{alias: value}`` dict, in the same order, as FastAPI does, then
lets FastAPI validate it as before (the same model, the same errors, the same 422 sentences;
the OpenAPI schema is not touched). Headers, cookies, forms and anything else go to FastAPI's
own function unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

_ORIGINAL: list[Callable[..., tuple[Any, list[Any]]]] = []

# per field: its (validation alias, request key) pairs, whether it reads every value of a
# repeated key, whether its type is a sequence (an empty value counts as absent)
_Field = tuple[tuple[tuple[str, str], ...], bool, bool]
# model -> (the fields list it was made from, the plan of each field, the model's own names,
# request key -> the fields (by place) that read it)
_Plan = tuple[tuple[_Field, ...], frozenset[str], dict[str, tuple[int, ...]]]
_PLANS: dict[Any, tuple[Any, _Plan]] = {}


def install() -> None:
    """Use the planned reading in FastAPI's request parsing (idempotent; nothing where this
    FastAPI lacks the function or the helpers it is made of)."""
    from fastapi.dependencies import utils

    needed = ("_request_param_model_to_args", "_get_param_aliases", "_is_json_field",
              "_get_multidict_extras", "_validate_value_with_model_field",
              "get_cached_model_fields", "field_annotation_is_sequence", "Undefined")
    if _ORIGINAL or not all(hasattr(utils, name) for name in needed):
        return
    _ORIGINAL.append(utils._request_param_model_to_args)
    utils._request_param_model_to_args = request_param_model_to_args


def _plan(model: Any, fields: Any) -> _Plan:
    """Per field of ``model`` (FastAPI's fields list ``fields``), for a query string: its
    (validation alias, request key) pairs, whether it reads every value of a repeated key
    and whether its type is a sequence; the model's own names; which fields read each
    request key. Remembered per model (FastAPI keeps ``fields`` per model too: a new list
    means a new plan)."""
    held = _PLANS.get(model)
    if held is not None and held[0] is fields:
        return held[1]
    from fastapi.dependencies import utils

    per_field = []
    own: set[str] = set()
    readers: dict[str, list[int]] = {}
    for place, field in enumerate(fields):
        aliases = tuple(utils._get_param_aliases(field, convert_underscores=False))
        own.update(name for _, name in aliases)
        for _, name in aliases:
            if place not in readers.setdefault(name, []):
                readers[name].append(place)
        is_seq = bool(utils.field_annotation_is_sequence(field.field_info.annotation))
        per_field.append((aliases, is_seq and not utils._is_json_field(field), is_seq))
    plan = (tuple(per_field), frozenset(own),
            {name: tuple(places) for name, places in readers.items()})
    if len(_PLANS) < 256:  # the request models: a few dozen
        _PLANS[model] = (fields, plan)
    return plan


def request_param_model_to_args(model_field: Any, model: Any,
                                received_params: Mapping[str, Any]) -> tuple[Any, list[Any]]:
    """FastAPI's ``_request_param_model_to_args``: for a query string, from the model's
    remembered plan (the same values, keys and order); anything else, FastAPI's own."""
    from starlette.datastructures import QueryParams

    if type(received_params) is not QueryParams:
        return _ORIGINAL[0](model_field, model, received_params)
    from fastapi.dependencies import utils

    fields = utils.get_cached_model_fields(model)
    per_field, own_names, readers = _plan(model, fields)
    undefined = utils.Undefined
    params_to_process: dict[str, Any] = {}
    processed_keys = set()
    # only the fields that some key of the query names, in the model's order: a field none
    # names adds nothing to the values, and its key (absent) changes no extra
    named = {place for key in received_params.keys() for place in readers.get(key, ())}
    for place in sorted(named):
        aliases, reads_list, is_seq = per_field[place]
        for pair in aliases:
            if pair[1] in received_params:
                break
        else:
            pair = aliases[0]
        alias, request_alias = pair
        # FastAPI's _get_multidict_value for a query string (not a form: no file inputs);
        # absent, or an empty value of a sequence type: the default applies in validation
        value: Any = (received_params.getlist(request_alias) if reads_list
                      else received_params.get(request_alias, None))
        if value is not None and not (is_seq and len(value) == 0):
            params_to_process[alias] = value
        processed_keys.add(request_alias)
    params_to_process.update(utils._get_multidict_extras(received_params, processed_keys))

    field_info = model_field.field_info
    loc: tuple[str, ...] = (field_info.in_.value,)
    value = params_to_process
    if field_info.annotation is not model and not (
            own_names.intersection(received_params)
            or (model.model_config.get("extra") in ("allow", "forbid") and value)):
        value = undefined
    return utils._validate_value_with_model_field(field=model_field, value=value, values={},
                                                  loc=loc)
