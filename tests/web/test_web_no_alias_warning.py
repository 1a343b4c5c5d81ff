"""A served app prints no pydantic warning when a REST question arrives: FastAPI builds each
query-string request model (``q: Annotated[Memory, Query()]``) with ``Field(alias="q")``, which
pydantic 2.12+ reports as an UnsupportedFieldAttributeWarning on the operator's terminal at the
first question (``make run`` showed it). The alias is FastAPI's own and harmless; the app
silences exactly that warning, and no other."""

from __future__ import annotations

import warnings

from fastapi.testclient import TestClient
from pydantic.warnings import UnsupportedFieldAttributeWarning


def _alias_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record
            if issubclass(w.category, UnsupportedFieldAttributeWarning)]


def test_rest_questions_raise_no_alias_warning():
    from whichgpu.web.app import create_app

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")  # every warning counted, none hidden by an earlier one
        client = TestClient(create_app())
        assert client.get("/api/v1/memory?model=llama-3.1-8b&context=2k").status_code == 200
        assert client.post("/api/v1/memory", json={"model": "llama-3.1-8b"}).status_code == 200
    assert _alias_warnings(record) == []


def test_other_pydantic_warnings_still_show():
    from whichgpu.web.app import create_app

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        create_app()
        warnings.warn("another attribute", UnsupportedFieldAttributeWarning, stacklevel=1)
    assert _alias_warnings(record) == ["another attribute"]
