"""Schemathesis generates requests from the OpenAPI schema (bounded examples per operation):
no input, however odd, gets a server error, and every status is one the schema declares."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import status_code_conformance

from whichgpu.web.app import create_app

schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())


@schema.parametrize()
@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_no_input_gets_a_server_error(case):
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance])
