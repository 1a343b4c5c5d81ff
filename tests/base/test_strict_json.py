"""One strict-JSON rule for every surface: NaN and the infinities are null (whichgpu.strict_json),
written once and used by the CLI's --json, the REST API and the MCP tools."""

from __future__ import annotations

import json
import math

from whichgpu.strict_json import finite


def test_nan_and_infinities_become_null_at_any_depth():
    data = {"a": math.nan, "b": [1.5, math.inf, {"c": -math.inf}], "d": (0.0, "x", None, 2),
            "e": True, "f": 10**400}
    got = finite(data)
    assert got == {"a": None, "b": [1.5, None, {"c": None}], "d": [0.0, "x", None, 2],
                   "e": True, "f": 10**400}
    json.dumps(got, allow_nan=False)  # strict JSON


def test_every_surface_writes_through_the_one_function():
    from whichgpu.agents import server
    from whichgpu.cli import common
    from whichgpu.web import api

    assert common.finite is server.finite is api.finite is finite
