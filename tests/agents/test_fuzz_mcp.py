"""The MCP endpoint (/mcp, issue 34) takes infinities, NaN, 400-digit integers and denormals in
every numeric argument of every tool without a server error (issue 36): each is a tool result
marked isError with a one-line reason, as the REST API's 422.

The calls are raw JSON-RPC bodies, so the odd numbers reach the server as written (the SDK's
client would send an infinity as null)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

pytest.importorskip("mcp")

from test_mcp_server import HttpServer

from whichgpu.agents.tools import TOOLS, input_schema

ODD = ("Infinity", "-Infinity", "NaN", "1e999", "9" * 400, "-" + "9" * 400, "1e-320")


def _numeric_fields(schema: dict) -> list[str]:
    def numeric(prop: dict) -> bool:
        kinds = [prop.get("type")] + [b.get("type") for b in prop.get("anyOf", [])]
        return bool({"number", "integer"} & set(kinds))

    return [name for name, prop in schema.get("properties", {}).items() if numeric(prop)]


def _base(tool) -> dict:
    """The smallest arguments that ask the tool a real question."""
    fields = set(tool.model.model_fields)
    args: dict = {}
    if "model" in fields:
        args["model"] = "llama-3.1-8b"
    if "gpu" in fields:
        args["gpu"] = "rtx-4090"
    if tool.name.value == "export":
        args["export"] = "skypilot"
    return args


def _call(url: str, name: str, arguments: str) -> tuple[int, str]:
    head = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": "ARGS"}})
    body = head.replace('"ARGS"', arguments)
    req = urllib.request.Request(url + "/mcp", data=body.encode(), method="POST",
                                 headers={"content-type": "application/json",
                                          "accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _strict(constant: str) -> None:
    pytest.fail(f"{constant} in an answer: strict JSON has no way to write it")


def test_every_tool_refuses_odd_numbers_with_a_one_line_reason_never_a_server_error():
    cases = [(tool, field, value) for tool in TOOLS
             for field in _numeric_fields(input_schema(tool.model)) for value in ODD]
    assert len(cases) > 100  # the fuzz reaches the numeric fields of every tool
    refused = 0
    with HttpServer() as server:
        for tool, field, value in cases:
            base = json.dumps(_base(tool))
            arguments = base[:-1] + (", " if base != "{}" else "") + f'"{field}": {value}}}'
            status, text = _call(server.url, tool.name.value, arguments)
            where = (tool.name.value, field, value[:12])
            assert status < 500, (where, status, text[:300])
            reply = json.loads(text, parse_constant=_strict)
            if "error" in reply:  # a protocol error (a body the server cannot read)
                assert status in (200, 400), (where, status)
                refused += 1
                continue
            result = reply["result"]
            if result.get("isError"):
                reason = result["content"][0]["text"]
                assert reason and "\n" not in reason and "Traceback" not in reason, where
                refused += 1
    # a denormal may be in bounds where 0 is (a share), nothing else is
    assert refused >= len(cases) * 6 / len(ODD), (refused, len(cases))
