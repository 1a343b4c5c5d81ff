"""What the served app refuses before any route sees the request (web/app.py): a body or a
query string over its limit. Every router of the REST API lists these in its OpenAPI
responses, so a client reading the schema knows every status it can get."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Problem(BaseModel):
    """An error: one line saying what is wrong and what to do next."""

    detail: str


BEFORE_ROUTING: dict[int | str, dict[str, Any]] = {
    413: {"model": Problem, "description": "Request body too large"},
    414: {"model": Problem, "description": "Query string too long"},
}
