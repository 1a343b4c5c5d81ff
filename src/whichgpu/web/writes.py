"""Who may write: the REST API's endpoints that change the price store, behind a token.

Reads stay open to everyone. A write (``POST /api/v1/prices/refresh``,
``POST /api/v1/prices/import``, ``POST /api/v1/runs`` in web/runs_api.py) needs
``Authorization: Bearer <token>`` where the token is the operator's:

* ``WHICHGPU_WRITE_TOKEN_FILE``: a file holding it (a Docker or Kubernetes secret; read at
  each write, so a rotated secret applies at once; surrounding whitespace ignored), else
* ``WHICHGPU_WRITE_TOKEN``: the token itself.

No token configured (or one shorter than MIN_TOKEN_CHARS, or a file that cannot be read):
every write is refused (403) and the server says so, whatever the client's address: a
reverse proxy makes every client look local, so "open on loopback" would open it to all.
A personal server needs no web writes: the command line writes the same store.

No token sent: 401 with ``WWW-Authenticate: Bearer``; a wrong one: 403. The comparison takes
the same time wherever the tokens differ (``hmac.compare_digest``); the token is never
logged, echoed or put in an error. A refused write changes nothing.
"""

from __future__ import annotations

import hmac
import logging
import os
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from whichgpu.errors import InputError
from whichgpu.web.refusals import BEFORE_ROUTING

TOKEN_ENV = "WHICHGPU_WRITE_TOKEN"
TOKEN_FILE_ENV = "WHICHGPU_WRITE_TOKEN_FILE"
MIN_TOKEN_CHARS = 16  # a guessable token is no lock: shorter ones turn writes off

log = logging.getLogger("whichgpu.web")


class Writes(StrEnum):
    """Whether this server takes writes now."""

    TOKEN = "token"  # with the operator's token
    OFF = "off"  # no (usable) token configured: every write refused


NO_TOKEN = ("this server takes no writes: its operator configured no write token "
            f"({TOKEN_ENV} or {TOKEN_FILE_ENV}, at least {MIN_TOKEN_CHARS} characters)")
MISSING = "this write needs the server's write token: send 'Authorization: Bearer <token>'"
WRONG = "the write token is not this server's"


def configured_token() -> str | None:
    """The operator's token, or None (writes off). Problems are logged, never the token."""
    path = os.environ.get(TOKEN_FILE_ENV, "").strip()
    if path:
        try:
            token = Path(path).read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            log.error("write token file %s cannot be read (%s): writes refused", path,
                      type(exc).__name__)
            return None
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        return None
    if len(token) < MIN_TOKEN_CHARS:
        log.error("the write token is shorter than %d characters: writes refused",
                  MIN_TOKEN_CHARS)
        return None
    return token


def writes() -> Writes:
    return Writes.TOKEN if configured_token() is not None else Writes.OFF


_bearer = HTTPBearer(auto_error=False, description=(
    "The operator's write token (WHICHGPU_WRITE_TOKEN or WHICHGPU_WRITE_TOKEN_FILE); reads "
    "need none"))


def require_token(credentials: Annotated[HTTPAuthorizationCredentials | None,
                                         Depends(_bearer)]) -> None:
    """401 without a token, 403 with a wrong one or when writes are off."""
    expected = configured_token()
    if expected is None:
        raise HTTPException(403, NO_TOKEN)
    if credentials is None or not credentials.credentials:
        raise HTTPException(401, MISSING, headers={"WWW-Authenticate": 'Bearer realm="whichgpu"'})
    if not hmac.compare_digest(credentials.credentials.encode("utf-8"),
                               expected.encode("utf-8")):
        raise HTTPException(403, WRONG)


WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    **BEFORE_ROUTING,
    401: {"description": "No write token sent (WWW-Authenticate: Bearer)"},
    403: {"description": "A wrong write token, or this server takes no writes (no token "
          "configured)"},
}

router = APIRouter(prefix="/api/v1", tags=["writes"], responses=WRITE_ERRORS,
                   dependencies=[Depends(require_token)])


def _public(data: dict[str, Any]) -> dict[str, Any]:
    """A write's JSON without the server's paths."""
    return {k: v for k, v in data.items() if k != "store"}


@router.post("/prices/refresh", summary="Refresh the prices (write token)")
async def prices_refresh() -> dict[str, Any]:
    """``whichgpu prices refresh`` on the server's store: every available source, one refresh
    at a time across workers and machines (another one running: this one is skipped, and
    says so). Failures keep the previous prices."""
    import anyio

    from whichgpu.answers.prices import prices_refresh as refresh
    from whichgpu.answers.requests import PricesRefresh

    answer = await anyio.to_thread.run_sync(refresh, PricesRefresh())
    return _public(answer.to_json())


@router.post("/prices/api/refresh", summary="Refresh the per-token API prices (write token)")
async def prices_api_refresh() -> dict[str, Any]:
    """``whichgpu prices api --refresh`` on the server's store, from genai-prices' data file
    (its own default URL; a client cannot name another source). A failure is recorded and
    keeps the stored prices."""
    import anyio

    from whichgpu.answers.api_prices import prices_api
    from whichgpu.answers.requests import PricesApi

    answer = await anyio.to_thread.run_sync(prices_api, PricesApi(refresh=True))
    return _public(answer.to_json())


_KINDS = {"text/csv": "csv", "application/csv": "csv", "text/plain": "csv",
          "application/json": "json"}


@router.post("/prices/import", summary="Import your own offers (write token)",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "text/csv": {"schema": {"type": "string"}},
                 "application/json": {"schema": {"type": "object"}}}}})
async def prices_import(
        request: Request,
        name: Annotated[str, Query(max_length=100, description=(
            "The feed the offers go to (letters, digits, '.', '_' and '-'); importing the "
            "same name again adds a snapshot to its history."))],
        observed_at: Annotated[str | None, Query(max_length=40, description=(
            "Date for rows without observed_at (default: now).")) ] = None,
) -> dict[str, Any]:
    """``whichgpu prices import`` of the request body (a CSV or JSON offer file, as the
    command line reads it): checked row by row (any bad row refuses the whole file, naming
    the row, and nothing is stored), then stored as the feed's new snapshot."""
    import anyio

    from whichgpu.catalog.prices.imports import import_file

    kind = _KINDS.get(request.headers.get("content-type", "").split(";")[0].strip().lower())
    if kind is None:
        raise InputError("send the offers as text/csv or application/json")
    body = await request.body()
    with tempfile.TemporaryDirectory(prefix="whichgpu-import-") as folder:
        path = Path(folder) / f"upload.{kind}"
        path.write_bytes(body)
        try:
            outcome = await anyio.to_thread.run_sync(
                lambda: import_file(path, name=name, observed_at=observed_at))
        except InputError as exc:  # said without the server's temporary path
            raise InputError(str(exc).replace(str(path), "the uploaded file")) from None
    return _public(outcome.to_json())
