"""Profiles over REST: ``GET /api/v1/profiles`` lists the profiles saved on the server's
machine (``whichgpu profile save``), and ``?profile=NAME`` on a GET question fills the fields
the query leaves out from that profile, as ``--profile NAME`` does on the command line
(answers/profiles.py decides which fields). Only a named profile applies: the server never
applies its default one to a visitor. The answer says what was filled in its
``X-Whichgpu-Profile`` header."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from whichgpu.errors import WhichGPUError
from whichgpu.web.refusals import BEFORE_ROUTING

router = APIRouter(prefix="/api/v1", tags=["profiles"], responses=BEFORE_ROUTING)
PREFIX = "/api/v1/"
HEADER = "X-Whichgpu-Profile"


@router.get("/profiles", summary="The profiles saved on this server's machine")
async def profiles() -> JSONResponse:
    """``whichgpu profile list --json``, with the commands each profile applies to."""
    from whichgpu.answers.profiles import public

    return JSONResponse(public())


class ProfileQuery:
    """ASGI middleware: a GET question's ``profile=NAME`` replaced by the profile's fields."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        raw = scope.get("query_string", b"") if scope["type"] == "http" else b""
        if (b"profile=" not in raw or scope.get("method") != "GET"
                or not scope["path"].startswith(PREFIX)):
            await self.app(scope, receive, send)
            return
        params = parse_qsl(raw.decode("latin-1"), keep_blank_values=True)
        names = [v for k, v in params if k == "profile"]
        if not names:
            await self.app(scope, receive, send)
            return
        from whichgpu.answers.profiles import REST_PATHS, fill_query

        command = REST_PATHS.get(scope["path"][len(PREFIX):].rstrip("/"))
        rest = [(k, v) for k, v in params if k != "profile"]
        try:
            if command is None:
                raise _refused("profile applies to " + ", ".join(
                    "/api/v1/" + p for p in REST_PATHS) + f", not {scope['path']}")
            if len(names) > 1:
                raise _refused("give profile once")
            rest, filled = fill_query(command, rest, names[0].strip())
        except WhichGPUError as exc:
            await JSONResponse({"detail": str(exc)}, status_code=422)(scope, receive, send)
            return
        said = f"{names[0].strip()}: " + (", ".join(f"{k}={v}" for k, v in rest
                                                     if k in filled) or "nothing to fill")

        async def send_said(message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", []).append(
                    (HEADER.lower().encode(), json.dumps(said)[1:-1].encode("latin-1",
                                                                          "replace")))
            await send(message)

        scope = dict(scope, query_string=urlencode(rest).encode("latin-1"))
        await self.app(scope, receive, send_said)


def _refused(text: str) -> WhichGPUError:
    from whichgpu.errors import InputError

    return InputError(text)
