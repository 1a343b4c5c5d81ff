"""MCP over streamable HTTP at ``/mcp``: the tools of ``whichgpu mcp``, answered as the REST
API answers (the web's request models and bounds, its context: no file of the server read,
the Hub bounded, offers shared per snapshot; the bounded work pool and its CPU-time limit;
answers remembered per price snapshot).

Stateless, with JSON answers (no session to keep: any worker of ``serve --workers N`` answers
any request). Reads only, like the REST API's GET endpoints: open to every client. Without
the ``mcp`` extra the path is not mounted (404) and the log says why.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route

from whichgpu.agents.tools import Answer
from whichgpu.answers.request import Request, for_web
from whichgpu.errors import InputError
from whichgpu.models.resolve import no_local_files

MCP_PATH = "/mcp"
#: an answer function's service on the web when its name differs
_SERVICES = {"prices_list": "prices_latest"}

log = logging.getLogger("whichgpu.web")


class WebSurface:
    """The web service's answers to the tools."""

    def request_model(self, model: type[Request], body: bool) -> type[Request]:
        return for_web(model, body=body)

    async def answer(self, answer: str, request: Request) -> Answer:
        from whichgpu.web import services, work
        from whichgpu.web.api import question_key
        from whichgpu.web.resolve import NO_FILES, prefetch

        name = _SERVICES.get(answer, answer)
        if name == "prices_latest":  # every offer unless limit says otherwise, as --json
            request = request.model_copy(update={"as_json": True})
        key, args = "mcp:" + name, (request,)
        with no_local_files(NO_FILES):  # copied into the worker thread, as for every request
            hit = services.recalled(key, args)
            if hit is not services.MISSING:
                return hit
            model = getattr(request, "model", None)
            await prefetch(model if isinstance(model, str) else None)
            return await work.run(services.remember, key, args,
                                  lambda: _computed(getattr(services, name), request),
                                  key=question_key(key, args), heavy=name in work.HEAVY)


def _computed(service: Any, request: Request) -> Answer:
    result = service(request)
    return Answer(result.to_json(), tuple(str(n) for n in getattr(result, "notes", ()) or ()))


class _Endpoint:
    """The ASGI endpoint at MCP_PATH: the session manager of the app's current lifespan (a
    manager runs once; an app started again gets a new one)."""

    def __init__(self) -> None:
        self.current: Any = None
        self.route: Route | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        scope["route"] = self.route  # /metrics counts it under its path, not 'unmatched'
        if self.current is None:  # not started: the app's lifespan has not run
            from fastapi.responses import JSONResponse

            await JSONResponse({"detail": "the MCP endpoint is not running"},
                               status_code=503)(scope, receive, send)
            return
        await self.current(scope, receive, send)


def install(app: FastAPI) -> None:
    """Mount the MCP endpoint on ``app``; its session manager runs in the app's lifespan."""
    from whichgpu.agents.server import require_sdk, streamable_http

    try:
        require_sdk(f"the MCP endpoint {MCP_PATH}")
    except InputError as exc:
        log.info("%s", exc)
        return
    endpoint = _Endpoint()
    endpoint.route = Route(MCP_PATH, endpoint, methods=["GET", "POST", "DELETE"],
                           include_in_schema=False)
    app.router.routes.append(endpoint.route)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any):
        handler, running = streamable_http(WebSurface())
        async with running():
            endpoint.current = handler
            try:
                async with inner(application) as state:
                    yield state
            finally:
                endpoint.current = None

    app.router.lifespan_context = lifespan
