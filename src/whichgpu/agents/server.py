"""The tools and resources of agents/tools.py as an MCP server, on the official ``mcp`` SDK
(the ``mcp`` extra; its low-level ``Server``, so that each input schema is the request
model's own rather than one the SDK infers from a function).

- A tool's result: a short summary in words, then the answer's JSON as text (for clients
  that read only text), and the same JSON as the structured content.
- Bad input (and an answer that cannot be given: no price store, the server busy): a tool
  result with ``isError`` set, its text the one-line reason the command line prints after
  ``error:`` and its structured content the REST API's 422 body (``detail``, ``message``).
  MCP reports a tool's own errors this way so that the model reads the reason and can ask
  again; an unknown tool or resource is a protocol error (JSON-RPC -32602).
- Transports: stdio (:func:`serve_stdio`, ``whichgpu mcp``) and streamable HTTP
  (:func:`streamable_http`, mounted by the web service at ``/mcp``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from whichgpu.agents.tools import (
    RESOURCES,
    TOOLS,
    Surface,
    UnknownTool,
    call,
    input_schema,
    read,
)
from whichgpu.errors import WhichGPUError
from whichgpu.messages import Message
from whichgpu.strict_json import finite

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

INSTRUCTIONS = (
    "whichgpu answers which GPU to rent or buy for an AI job (LLM inference or fine-tuning, "
    "image or video generation), what it costs and how sure that is. Start with 'recommend' "
    "(a model such as llama-3.1-8b or a Hugging Face id, a task, an amount of work); 'fits' "
    "and 'memory' say what fits a card, 'speed' how fast, 'cost' and 'prices' what renting "
    "costs, 'rent_or_buy' whether to buy, 'export' writes a launcher task file. Values are "
    "typed as on the command line: 8k, 10M, 2EUR, 3h. Every range is low/typical/high.")


def _version() -> str:
    try:
        return version("whichgpu")
    except PackageNotFoundError:
        return "0"


def error_body(exc: WhichGPUError) -> dict[str, Any]:
    """A refused call's structured content: the REST API's 422 body."""
    reason = exc.args[0] if exc.args else str(exc)
    body: dict[str, Any] = {"detail": str(exc)}
    if isinstance(reason, Message):
        body["message"] = reason.to_json()
    return body


def require_sdk(what: str = "whichgpu mcp") -> None:
    """The SDK is installed, or InputError (exit 2) saying how to install it."""
    try:
        import mcp.server.lowlevel  # noqa: F401
    except ImportError:
        from whichgpu.errors import InputError

        raise InputError(f"{what} needs the MCP Python SDK, which is not installed: pip "
                         "install 'whichgpu[mcp]'") from None


def build_server(surface: Surface, *, name: str = "whichgpu") -> Server:
    """An MCP server whose tools and resources ``surface`` answers."""
    import mcp.types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    tools = [types.Tool(
        name=t.name.value, title=t.title, description=t.description,
        input_schema=input_schema(surface.request_model(t.model, t.body)),
        annotations=types.ToolAnnotations(title=t.title, read_only_hint=True,
                                          idempotent_hint=True, destructive_hint=False))
        for t in TOOLS]
    resources = [types.Resource(name=res.name.value, title=res.title, uri=res.uri,
                                description=res.description, mime_type="application/json")
                 for res in RESOURCES]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer, said = await call(surface, params.name, params.arguments)
        except UnknownTool as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        except WhichGPUError as exc:
            return types.CallToolResult(content=[types.TextContent(text=str(exc))],
                                        structured_content=error_body(exc), is_error=True)
        data = finite(answer.data)
        return types.CallToolResult(
            content=[types.TextContent(text=said),
                     types.TextContent(text=json.dumps(data, ensure_ascii=False))],
            structured_content=data)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resources)

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams,
                            ) -> types.ReadResourceResult:
        try:
            answer = await read(surface, str(params.uri))
        except UnknownTool as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        except WhichGPUError as exc:  # no store, the server busy: said in one line
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
        text = json.dumps(finite(answer.data), ensure_ascii=False)
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=str(params.uri), mime_type="application/json", text=text)])

    return Server(name, version=_version(), title="whichgpu", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_resources=list_resources, on_read_resource=read_resource)


async def serve_stdio(surface: Surface) -> None:
    """Serve ``surface`` over this process's stdin and stdout until the client closes."""
    from mcp.server.stdio import stdio_server

    server = build_server(surface)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def streamable_http(surface: Surface) -> tuple[Any, Callable[[], AbstractAsyncContextManager]]:
    """(the ASGI app that answers MCP's streamable HTTP at one path, the context its
    session manager must run in: the web app's lifespan). Stateless, JSON answers: any
    worker of ``serve --workers N`` answers any request, no session to keep."""
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )

    manager = StreamableHTTPSessionManager(app=build_server(surface), json_response=True,
                                           stateless=True)
    return StreamableHTTPASGIApp(manager), manager.run
