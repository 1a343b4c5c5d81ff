"""The FastAPI application: REST API, pages, static files, errors and limits.

``create_app()`` builds it; ``whichgpu serve`` runs it with uvicorn on 127.0.0.1. Every asset
is served from the package (no CDN); the OpenAPI page at ``/docs`` uses a local Swagger UI.
"""

from __future__ import annotations

import json
import logging
import math
import os
import typing
from importlib import resources
from typing import Annotated, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException

from whichgpu.answers.fields import Text
from whichgpu.answers.request import reason
from whichgpu.catalog.prices.store import StoreError
from whichgpu.errors import InputError, WhichGPUError
from whichgpu.messages import Message
from whichgpu.models.resolve import no_local_files
from whichgpu.web import api, mcp_mount, ops, pages, schedule, work, writes
from whichgpu.web.i18n import lang_code, negotiate
from whichgpu.web.resolve import NO_FILES

log = logging.getLogger("whichgpu.web")

MAX_BODY_BYTES = 128 * 1024  # a pasted config.json is a few KB
MAX_QUERY_BYTES = 4096

CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
DOCS_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
            "script-src 'self' 'unsafe-inline'; object-src 'none'; frame-ancestors 'none'")


def error_json(reason: str) -> dict[str, Any]:
    """A 422's body: ``detail`` (the English sentence, as the CLI says it) and, when the
    engine said it as a message, ``message`` (its id and parameters, to say it another way)."""
    data: dict[str, Any] = {"detail": str(reason)}
    if isinstance(reason, Message):
        data["message"] = json_safe(reason.to_json())
    return data


def json_safe(value: Any) -> Any:
    """``value`` with every infinity or NaN written as text ('inf'): strict JSON has no
    such numbers, and a value someone sent (``1e999``) must still be said back in a 422."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


_BAD_JSON = Text("web.json_invalid", "the request body is not valid JSON: {why} at character "
                 "{pos}; send one object, e.g. {example}")
_NOT_OBJECT = Text("web.json_not_object", "the request body must be one JSON object of the "
                   "fields, e.g. {example}")
_EXAMPLE = '{"model": "llama-3.1-8b", "context": 8192}'
_STORE_DOWN = Text("web.store_down", "the server's price store cannot be used right now, so "
                   "this page cannot be shown (the server's log says why); try again in a "
                   "minute")


def _validation_reason(request: Request, exc: RequestValidationError) -> str:
    """Pydantic's errors as one line, in the CLI's words (see ``answers.request.reason``);
    a body that is not JSON, or not an object, says so (not "38: JSON decode error")."""
    errors = list(exc.errors())
    for e in errors:
        loc = tuple(e.get("loc") or ())
        if e.get("type") == "json_invalid":
            pos = loc[1] if len(loc) > 1 else 0
            return _BAD_JSON(why=str((e.get("ctx") or {}).get("error") or e.get("msg")),
                             pos=pos, example=_EXAMPLE)
        if loc == ("body",) and e.get("type") in ("model_attributes_type", "dict_type",
                                                  "model_type"):
            return _NOT_OBJECT(example=_EXAMPLE)
    return reason(errors, _form_model(request))


def _form_model(request: Request) -> type[BaseModel] | None:
    """The request model of the endpoint that was called (for its bounds and wording)."""
    endpoint = getattr(request.scope.get("route"), "endpoint", None)
    if endpoint is None:
        return None
    try:
        hints = typing.get_type_hints(endpoint, include_extras=True)
    except (NameError, TypeError):
        return None
    for hint in hints.values():
        base = typing.get_args(hint)[0] if typing.get_origin(hint) is Annotated else hint
        if isinstance(base, type) and issubclass(base, BaseModel):
            return base
    return None


def _wants_html(request: Request) -> bool:
    return not request.url.path.startswith("/api/") and \
        "text/html" in request.headers.get("accept", "")


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed(request: Request) -> str:
    """The methods some route serves at this path (a path served by a GET route and a POST
    route answered 405 with only the first route's ``Allow: GET``)."""
    from starlette.routing import Match

    routes = request.app.router.routes
    return ", ".join(m for m in _METHODS if any(
        r.matches({**request.scope, "method": m})[0] == Match.FULL for r in routes))


CALIBRATION_ENV = "WHICHGPU_WEB_CALIBRATION"  # how 'serve --workers N' passes --calibration


def _quiet_fastapi_query_aliases() -> None:
    """FastAPI builds a query-string request model (``q: Annotated[Memory, Query()]``) with
    ``Field(alias="q")`` (``body`` for a JSON one), which pydantic 2.12+ reports as an
    UnsupportedFieldAttributeWarning at the first question: harmless, and only noise on the
    operator's terminal. That warning alone is silenced; any other still shows."""
    import warnings

    try:
        from pydantic.warnings import UnsupportedFieldAttributeWarning
    except ImportError:  # pydantic before 2.12 has no such warning
        return
    warnings.filterwarnings("ignore", r"The 'alias' attribute with value '(q|body)' ",
                            UnsupportedFieldAttributeWarning)


def create_app(calibration: str | None = None) -> FastAPI:
    """The whole web app: API under /api/v1, pages at /, assets under /static.

    ``calibration``: which profile a request's ``calibration=default`` uses ('default': the
    one 'whichgpu bench' saved; a file the operator chose; 'none'). Default: the environment's
    WHICHGPU_WEB_CALIBRATION, else 'default'.
    """
    from whichgpu.models.hub import install_hub_limits
    from whichgpu.web import services
    from whichgpu.web.resolve import hub_status

    services.set_calibration(calibration if calibration is not None
                             else os.environ.get(CALIBRATION_ENV, "default"))
    install_hub_limits()
    _quiet_fastapi_query_aliases()
    from whichgpu.web.query_fields import install as remember_query_field_kinds

    remember_query_field_kinds()
    from whichgpu.web.query_model import install as read_query_models_by_plan

    read_query_models_by_plan()
    hub = hub_status()
    log.info("Hugging Face Hub %s: %s", hub["mode"], hub["detail"])
    app = FastAPI(
        title="whichgpu", version=_version(), docs_url=None, redoc_url=None,
        description="Which GPU to rent or buy for an AI job, what it costs, and how sure "
                    "that is. The same JSON as the CLI's `--json`; bad input answers 422 "
                    "with the CLI's one-line reason.")
    static = resources.files("whichgpu.web").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    swagger = _swagger_dir()
    if swagger:
        app.mount("/docs-assets", StaticFiles(directory=swagger), name="swagger")

    @app.exception_handler(InputError)
    async def input_error(request: Request, exc: InputError):
        if _wants_html(request):
            return pages.error_page(request, pages.said(exc), 422)
        return JSONResponse(error_json(pages.said(exc)), status_code=422)

    @app.exception_handler(StoreError)
    async def store_fault(request: Request, exc: StoreError):
        """The server's price store cannot be used: a server fault (503), said without the
        store's path (the server log has it)."""
        log.error("price store: %s", exc)
        if _wants_html(request):  # in the page's words; the reason is in the server's log
            return pages.error_page(request, _STORE_DOWN(), 503)
        text = f"the server's price store cannot be used: {exc.reason}"
        return JSONResponse({"detail": text}, status_code=503)

    @app.exception_handler(WhichGPUError)
    async def failure(request: Request, exc: WhichGPUError):
        retry = getattr(exc, "retry_after", None)  # the server is busy: say when to retry
        headers = {"Retry-After": str(retry)} if retry else None
        if _wants_html(request):
            response = pages.error_page(request, pages.said(exc), 503)
            if headers:
                response.headers.update(headers)
            return response
        return JSONResponse({"detail": str(exc)}, status_code=503, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        text = _validation_reason(request, exc)
        if _wants_html(request):
            return pages.error_page(request, text, 422)
        return JSONResponse(error_json(text), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 400:  # a body that is not JSON at all: bad input like any other
            return JSONResponse({"detail": "the request body is not valid JSON (UTF-8)"},
                                status_code=422)
        if _wants_html(request) and exc.status_code == 404:
            return pages.error_page(request, None, 404)
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:  # every method the path serves, not its first route's
            headers = {**(headers or {}), "Allow": _allowed(request)}
        return JSONResponse({"detail": str(exc.detail)}, status_code=exc.status_code,
                            headers=headers)

    @app.exception_handler(Exception)
    async def bug(request: Request, exc: Exception):  # raised outside Guard's reach
        return fault_response(request, exc)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        if not swagger:
            return HTMLResponse('<p>Swagger UI is not installed; the schema is at '
                                '<a href="/openapi.json">/openapi.json</a>.</p>')
        return get_swagger_ui_html(
            openapi_url="/openapi.json", title="whichgpu API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/static/favicon.svg",
            swagger_ui_parameters={"validatorUrl": None})  # no call to swagger.io

    app.include_router(api.router)
    from whichgpu.web import profile_query

    app.include_router(profile_query.router)  # GET /api/v1/profiles
    app.include_router(writes.router)  # the store's writes: the operator's token
    from whichgpu.web import runs_api

    app.include_router(runs_api.reads)  # measured runs: read open, added with the token
    app.include_router(runs_api.writes)
    app.include_router(pages.router)
    app.add_middleware(profile_query.ProfileQuery)  # ?profile=NAME (inside Guard's bounds)
    app.add_middleware(Guard)
    mcp_mount.install(app)  # MCP's streamable HTTP at /mcp (the 'mcp' extra)
    schedule.install(app)  # the price refresh every WHICHGPU_REFRESH_EVERY, if set
    ops.install(app)  # /healthz, /readyz, /metrics, access logs (outermost middleware)
    from whichgpu.web import warm

    if warm.wanted():  # 'serve': shared data loaded before the first request
        app.router.on_startup.append(warm.warm)
        app.router.on_startup.append(work.share_the_interpreter)  # quick answers come first
        from whichgpu.advise.collector import pace_for_serving

        app.router.on_startup.append(pace_for_serving)  # fewer full collections (its note)
    return app


class Guard:
    """ASGI middleware: bounded query strings and bodies, the page language (``?lang=``,
    cookie, Accept-Language) in ``request.state.lang``, and security headers.

    A body is read in full (at most MAX_BODY_BYTES) before the app sees it, so one sent in
    chunks without a Content-Length is refused with 413 as soon as it passes the limit.
    """

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if len(scope.get("query_string", b"")) > MAX_QUERY_BYTES:
            await _reject(send, 414, f"query string longer than {MAX_QUERY_BYTES} bytes")
            return
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            await _reject(send, 413, f"request body larger than {MAX_BODY_BYTES} bytes")
            return
        body = await _read_body(receive)
        if body is None:
            await _reject(send, 413, f"request body larger than {MAX_BODY_BYTES} bytes")
            return
        if body is _DISCONNECTED or not isinstance(body, bytes):
            return
        query_lang = request.query_params.get("lang")
        lang = negotiate(query_lang, request.cookies.get("lang"),
                         request.headers.get("accept-language"))
        scope.setdefault("state", {})["lang"] = lang
        path = scope["path"]
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = DOCS_CSP if path == "/docs" else CSP
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "same-origin"
                if not path.startswith(("/static", "/api")):
                    headers["Vary"] = "Accept-Language, Cookie"
                if query_lang and lang_code(query_lang):
                    headers.append("Set-Cookie", f"lang={lang}; Max-Age=31536000; "
                                                 "Path=/; SameSite=Lax; HttpOnly")
            await send(message)

        started = False

        async def send_tracked(message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send_with_headers(message)

        with no_local_files(NO_FILES):  # whatever a request resolves, it reads no local file
            try:
                await self.app(scope, replay, send_tracked)
            except Exception as exc:  # answered here, so the connection stays open
                if started:
                    raise
                await _fault(request, exc, send_tracked)


async def _fault(request: Request, exc: Exception, send) -> None:
    await fault_response(request, exc)(request.scope, _no_body, send)


def fault_response(request: Request, exc: Exception):
    """The answer to an exception no handler took: a bug (500, logged with its traceback) or
    a server that cannot answer now (out of memory: 503), never a traceback to the visitor."""
    if isinstance(exc, MemoryError):
        status, text = 503, "the server ran out of memory for this request; retry later"
        log.error("out of memory on %s", request.url.path)
    else:
        status = 500
        text = (f"internal error: {type(exc).__name__}; this is a bug in whichgpu, please "
                "report it with the request")
        log.error("internal error on %s", request.url.path, exc_info=exc)
    if _wants_html(request):
        return pages.error_page(request, text, status)
    return JSONResponse({"detail": text}, status_code=status)


async def _no_body():
    return {"type": "http.disconnect"}


_DISCONNECTED = object()  # the client left before its body arrived


async def _read_body(receive) -> bytes | object | None:
    """The whole request body; None once it passes MAX_BODY_BYTES."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return _DISCONNECTED
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _reject(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("whichgpu")
    except PackageNotFoundError:
        return "0"


def _swagger_dir() -> str | None:
    """Swagger UI's files from the swagger-ui-bundle package (served locally)."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    return str(swagger_ui_path)
