"""The server's warm-up (web/warm.py) builds what every first request would otherwise pay
for: every request model's validator (they are built on first use, pydantic's defer_build),
each language's catalog, the templates and one whole-catalog answer."""

from __future__ import annotations

import pytest

from whichgpu.answers import requests as r

pytestmark = pytest.mark.slow  # loads the web app's pages and templates (~1 s of CPU)


def test_warm_builds_every_request_validator(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_core import SchemaValidator

    from whichgpu.web import services, warm

    asked: list[str] = []  # the answers themselves are the services' tests; here, that it asks
    monkeypatch.setattr(services, "memory", lambda q: asked.append(q.COMMAND))
    monkeypatch.setattr(services, "recommend", lambda q: asked.append(q.COMMAND))
    monkeypatch.setattr(warm, "_freeze", lambda: None)  # (test_web_warm_pages checks it)
    monkeypatch.setenv(warm.WARM_ENV, "1")
    assert warm.wanted()
    seconds = warm.warm()
    assert seconds > 0
    assert asked[:2] == ["memory", "recommend"]  # then the pages ask (test_web_warm_pages)
    for command in r.COMMANDS:
        assert isinstance(command.__pydantic_validator__, SchemaValidator), command.__name__


def test_a_deferred_model_still_refuses_bad_input_on_first_use() -> None:
    from whichgpu.errors import InputError

    with pytest.raises(InputError):
        r.Tco.parse({"gpu": "h100-sxm", "no_such_field": 1})
