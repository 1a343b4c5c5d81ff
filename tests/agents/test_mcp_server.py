"""The MCP server, driven by the SDK's own client (ClientSession) over stdio (``whichgpu mcp``,
a real subprocess) and over streamable HTTP (the web app at /mcp, served by uvicorn on a
socket): the tools and their input schemas, the same JSON as ``--json`` for the questions of
the parity tests, bad input as a tool error with the CLI's one-line reason, the resources."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from parity_questions import PRICES, QUESTIONS, cli_args, summary
from whichgpu.agents.tools import TOOLS, ToolName
from whichgpu.answers import requests as r

VOLATILE = {"age_s", "stale"}  # how old a price is depends on the second it is asked
SERVER_PATH = {"store"}  # the CLI names its store file; the web never shows the server's path
WHICHGPU = str(Path(sys.executable).with_name("whichgpu"))


def stable(data, drop=VOLATILE):
    if isinstance(data, dict):
        return {k: stable(v, drop) for k, v in data.items() if k not in drop}
    if isinstance(data, list):
        return [stable(v, drop) for v in data]
    return data


def stdio_session(scenario):
    """Run ``scenario(session)`` against ``whichgpu mcp`` started by the SDK's stdio client
    (with this test's environment: its own store, no network)."""
    params = StdioServerParameters(command=WHICHGPU, args=["mcp"], env=dict(os.environ))

    async def run():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await scenario(s)

    return anyio.run(run)


class HttpServer:
    """The whole web app (create_app) on a socket of this machine, in a thread."""

    def __enter__(self):
        import uvicorn

        from whichgpu.web import services
        from whichgpu.web.app import create_app

        services.clear_cache()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the web app did not start"
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)

    def session(self, scenario):
        async def run():
            async with streamable_http_client(self.url + "/mcp") as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()
                return await scenario(s)

        return anyio.run(run)


def question(q: dict[str, str]) -> dict[str, str]:
    return {**q, "prices": PRICES}


async def _recommend_all(s):
    out = {}
    for kind, q in QUESTIONS.items():
        result = await s.call_tool("recommend", question(q))
        assert not result.is_error, (kind, result.content[0].text)
        out[kind] = result
    return out


# ------------------------------------------------------------------ stdio


def test_stdio_lists_the_tools_with_the_request_models_schemas():
    async def scenario(s):
        return (await s.list_tools()).tools, (await s.list_resources()).resources

    tools, resources = stdio_session(scenario)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {t.value for t in ToolName}
    # one declaration: each schema is the command line's request model, less --json
    for name, model in (("recommend", r.Recommend), ("memory", r.Memory), ("speed", r.Speed),
                        ("cost", r.Cost), ("rent_or_buy", r.Tco), ("prices", r.PricesList)):
        schema = by_name[name].input_schema
        assert set(schema["properties"]) == set(model.model_fields) - {"as_json"}, name
        for field, prop in schema["properties"].items():
            assert prop.get("description") == model.model_fields[field].description, field
    assert by_name["memory"].input_schema["properties"]["batch"]["minimum"] == 1
    assert by_name["fits_gpu"].input_schema["required"] == ["gpu"]
    assert set(by_name["fits"].input_schema["properties"]) == set(r.Fits.model_fields) - {
        "as_json"}
    assert "export" in by_name["export"].input_schema["required"]
    assert "gpu" not in by_name["memory"].input_schema.get("required", [])
    assert all(t.annotations.read_only_hint for t in tools)
    assert {str(x.uri) for x in resources} == {"whichgpu://gpus", "whichgpu://prices"}


def test_stdio_recommend_is_the_cli_json_for_every_parity_question(cli):
    results = stdio_session(_recommend_all)
    for kind, q in QUESTIONS.items():
        out = cli(*cli_args(q))
        assert out.code == 0, out.err
        expected = json.loads(out.out)
        got = results[kind].structured_content
        assert stable(got) == stable(expected), kind
        # the text: a summary that names the winner, then the same JSON for text-only clients
        first, as_text = results[kind].content[0].text, results[kind].content[1].text
        if expected["options"]:
            assert expected["explanation"][0] in first
        assert stable(json.loads(as_text)) == stable(expected)


def test_stdio_other_tools_are_their_commands_json(cli):
    calls = {
        "memory": ({"model": "llama-3.1-8b", "context": "8k"},
                   ["memory", "llama-3.1-8b", "--context", "8k"]),
        "fits_gpu": ({"model": "llama-3.1-8b", "gpu": "rtx-4090"},
                     ["memory", "llama-3.1-8b", "--gpu", "rtx-4090"]),
        "fits": ({"gpu": "rtx-3060-12gb", "models": "llama-3.1-8b,qwen3-32b"},
                 ["fits", "--gpu", "rtx-3060-12gb", "--models", "llama-3.1-8b,qwen3-32b"]),
        "speed": ({"model": "llama-3.1-8b", "gpu": "h100-sxm", "batch": 8},
                  ["speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "8"]),
        "cost": ({"gpu": "rtx-4090", "duration": "10h", "prices": PRICES},
                 ["cost", "--gpu", "rtx-4090", "--duration", "10h", "--prices", PRICES]),
        "rent_or_buy": ({"gpu": "h100-sxm", "purchase_price": "25000USD",
                         "rent_price": "3.15USD"},
                        ["tco", "h100-sxm", "--purchase-price", "25000USD", "--rent-price",
                         "3.15USD"]),
        "prices": ({"prices": PRICES}, ["prices", "list", "--prices", PRICES]),
    }

    async def scenario(s):
        return {name: await s.call_tool(name, args) for name, (args, _) in calls.items()}

    results = stdio_session(scenario)
    for name, (_, argv) in calls.items():
        out = cli(*argv, "--json")
        assert out.code == 0, (name, out.err)
        assert not results[name].is_error, (name, results[name].content[0].text)
        assert stable(results[name].structured_content) == stable(out.json()), name
    fit = results["fits_gpu"].structured_content["target"]
    assert fit["gpu"] == "rtx-4090" and fit["verdict"] in results["fits_gpu"].content[0].text
    runs = results["fits"].structured_content["models"]
    assert runs and runs[0]["name"] in results["fits"].content[0].text
    assert "Decision: " in results["rent_or_buy"].content[0].text


def test_stdio_export_is_the_cli_export(cli):
    q = {**QUESTIONS["steps"], "export": "skypilot"}  # the shipped market prices

    async def scenario(s):
        return await s.call_tool("export", q)

    result = stdio_session(scenario)
    assert not result.is_error, result.content[0].text
    out = cli("recommend", "llama-3.1-8b", "--task", "lora", "--steps", "2000", "--export",
              "skypilot", "--json")
    assert out.code == 0, out.err
    expected, got = out.json()["export"], result.structured_content["export"]
    assert got["filename"] == expected["filename"] and got["option"] == expected["option"]

    def body(yaml: str) -> list[str]:  # the header names the command line that asked
        return [line for line in yaml.splitlines() if not line.startswith("# Reproduce:")]

    assert body(got["yaml"]) == body(expected["yaml"])
    assert "# Reproduce: whichgpu recommend llama-3.1-8b --task lora --steps 2000 --export " \
        "skypilot" in got["yaml"]
    assert expected["filename"] in result.content[0].text


def test_stdio_bad_input_is_a_tool_error_with_the_cli_reason(cli):
    bad = [("memory", {"model": "llama-3.1-8b", "batch": 0},
            ["memory", "llama-3.1-8b", "--batch", "0"]),
           ("recommend", {"model": "llama-3.1-8b", "gpu": "h10"},
            ["recommend", "llama-3.1-8b", "--gpu", "h10"]),
           ("memory", {"model": "llama-3.1-8b", "colour": "blue"},
            ["memory", "llama-3.1-8b", "--colour", "blue"])]

    async def scenario(s):
        results = [await s.call_tool(name, args) for name, args, _ in bad]
        results.append(await s.call_tool("fits_gpu", {"model": "llama-3.1-8b"}))
        try:
            await s.call_tool("which_gpu", {})
        except MCPError as exc:
            return results, exc
        return results, None

    results, unknown = stdio_session(scenario)
    for (name, _, argv), result in zip(bad[:2], results, strict=False):
        out = cli(*argv)
        assert out.code == 2, out.err
        reason = out.err.strip().removeprefix("error: ")
        assert result.is_error, name
        assert result.content[0].text == reason
        assert result.structured_content["detail"] == reason
    assert results[2].is_error and "No such option: --colour" in results[2].content[0].text
    assert results[3].is_error and results[3].content[0].text == "Missing option '--gpu'."
    assert results[3].structured_content["message"]["id"] == "parse.missing"
    assert unknown is not None and "unknown tool 'which_gpu'" in str(unknown)


def test_stdio_resources_are_the_catalog_and_the_offers(cli):
    async def scenario(s):
        return (await s.read_resource("whichgpu://gpus"),
                await s.read_resource("whichgpu://prices"))

    gpus, offers = stdio_session(scenario)
    assert stable(json.loads(gpus.contents[0].text)) == stable(cli("gpus", "--json").json())
    assert stable(json.loads(offers.contents[0].text)) == stable(
        cli("prices", "list", "--json").json())


# ------------------------------------------------------------------ streamable HTTP


def test_http_tools_answer_as_the_cli_and_the_rest_api(cli, web):
    with HttpServer() as server:
        async def scenario(s):
            tools = (await s.list_tools()).tools
            return tools, await _recommend_all(s)

        tools, results = server.session(scenario)
        rest = {kind: web.get("/api/v1/recommend", params=question(q)).json()
                for kind, q in QUESTIONS.items()}
    assert {t.name for t in tools} == {t.name.value for t in TOOLS}
    schema = next(t for t in tools if t.name == "recommend").input_schema
    assert "config" in schema["properties"]  # the web's body: a pasted config.json
    assert "calibration" in schema["properties"] and "store" not in schema["properties"]
    for kind, q in QUESTIONS.items():
        out = cli(*cli_args(q))
        assert out.code == 0, out.err
        got = results[kind].structured_content
        assert summary(got) == summary(out.json()), kind
        assert stable(got, VOLATILE | SERVER_PATH) == stable(out.json(), VOLATILE | SERVER_PATH)
        assert stable(got) == stable(rest[kind]), kind


def test_http_other_tools_are_the_rest_api_json(web):
    calls = {  # tool: (arguments, the REST endpoint that answers the same question)
        "memory": ({"model": "llama-3.1-8b", "context": "8k"}, "/api/v1/memory"),
        "fits_gpu": ({"model": "llama-3.1-8b", "gpu": "rtx-4090"}, "/api/v1/memory"),
        "fits": ({"gpu": "rtx-3060-12gb", "models": "llama-3.1-8b,qwen3-32b"},
                 "/api/v1/fits"),
        "speed": ({"model": "llama-3.1-8b", "gpu": "h100-sxm", "batch": 8}, "/api/v1/speed"),
        "cost": ({"gpu": "rtx-4090", "duration": "10h", "prices": PRICES}, "/api/v1/cost"),
        "rent_or_buy": ({"gpu": "h100-sxm", "purchase_price": "25000USD",
                         "rent_price": "3.15USD"}, "/api/v1/tco"),
        "prices": ({"prices": PRICES}, "/api/v1/prices"),
    }
    with HttpServer() as server:
        async def scenario(s):
            return {name: await s.call_tool(name, args) for name, (args, _) in calls.items()}

        results = server.session(scenario)
    for name, (args, url) in calls.items():
        assert not results[name].is_error, (name, results[name].content[0].text)
        rest = web.get(url, params=args)
        assert rest.status_code == 200, (name, rest.text[:300])
        assert stable(results[name].structured_content) == stable(rest.json()), name


def test_http_refuses_what_the_web_refuses():
    with HttpServer() as server:
        async def scenario(s):
            return (await s.call_tool("memory", {"model": "/etc/passwd"}),
                    await s.call_tool("recommend", {"model": "llama-3.1-8b",
                                                    "prices": "./offers.csv"}),
                    await s.call_tool("prices", {"store": "/tmp/x.sqlite"}))

        passwd, offers, store = server.session(scenario)
        import httpx

        metrics = httpx.get(server.url + "/metrics").text
    assert 'whichgpu_http_requests_total{method="POST",route="/mcp",status="200"}' in metrics
    assert passwd.is_error and "reads no files" in passwd.content[0].text
    assert offers.is_error and "reads no offer files" in offers.content[0].text
    assert store.is_error and "No such option: --store" in store.content[0].text


def test_help_does_not_import_the_sdk():
    code = ("import sys\nfrom whichgpu.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\nprint('mcp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_without_the_sdk_mcp_says_how_to_install_it(cli, monkeypatch):
    from fastapi.testclient import TestClient

    from whichgpu.web.app import create_app

    monkeypatch.setitem(sys.modules, "mcp.server.lowlevel", None)  # import fails
    out = cli("mcp")
    assert out.code == 2
    assert out.err.strip() == ("error: whichgpu mcp needs the MCP Python SDK, which is not "
                               "installed: pip install 'whichgpu[mcp]'")
    with TestClient(create_app()) as client:  # the web app starts, without /mcp
        assert client.post("/mcp", json={}).status_code == 404
        assert client.get("/api/v1/health").status_code == 200
