"""The request models' annotations are evaluated by the base class before pydantic reads them
(answers/request.py ``_evaluate_annotations``, issue 27: start-up time): the fields, defaults
and schema are those pydantic gives the same text itself, forward references included."""

from __future__ import annotations

import inspect
from typing import Annotated, ClassVar

from pydantic import BaseModel, Field

from whichgpu.answers import requests as req
from whichgpu.answers.request import Request

Size = Annotated[int, Field(ge=1, description="how many")]


class _Plain(BaseModel):
    """The same fields on pydantic's own evaluation (no Request base)."""

    model_config = Request.model_config

    COMMAND: ClassVar[str] = "plain"
    size: Size = 1
    name: str | None = None
    units: list[str] = Field(default_factory=list)
    ahead: Ahead | None = None  # defined below this class: a forward reference


class _Evaluated(Request):

    COMMAND: ClassVar[str] = "plain"
    size: Size = 1
    name: str | None = None
    units: list[str] = Field(default_factory=list)
    ahead: Ahead | None = None


class Ahead(BaseModel):
    n: int = 0


_Plain.model_rebuild()
_Evaluated.model_rebuild()


def test_fields_and_schema_are_pydantics_own() -> None:
    plain, evaluated = _Plain.model_fields, _Evaluated.model_fields
    assert list(evaluated) == list(plain) == ["size", "name", "units", "ahead"]
    for name, field in plain.items():
        assert repr(evaluated[name]) == repr(field)
    schema = _Evaluated.model_json_schema()
    assert schema["properties"] == _Plain.model_json_schema()["properties"]
    assert schema["properties"]["size"]["minimum"] == 1
    assert _Evaluated(units=["y"], ahead={"n": 2}).ahead == Ahead(n=2)


def test_only_what_cannot_be_evaluated_yet_stays_text() -> None:
    own = inspect.get_annotations(_Evaluated)
    assert own["size"] is Size
    assert own["units"] == list[str]
    assert own["COMMAND"] == ClassVar[str]
    assert own["ahead"] == "Ahead | None"  # a forward reference, left to pydantic


def test_the_shipped_request_models_are_evaluated_once_at_definition() -> None:
    """No text left for pydantic to compile again in the command models (the point)."""
    for model in (req.Memory, req.Recommend, req.Speed, req.Workload):
        text = [n for n, a in inspect.get_annotations(model).items() if isinstance(a, str)]
        assert text == [], model.__name__
