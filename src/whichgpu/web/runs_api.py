"""The REST API's measured runs: ``GET /api/v1/runs`` (open, as every read) and
``POST /api/v1/runs`` (a write: the operator's token, web/writes.py), which adds a results
file as ``whichgpu runs add`` does: every run checked, then all stored in one transaction or
none."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from whichgpu.catalog.runs.record import RunFormat
from whichgpu.errors import InputError
from whichgpu.messages import msg
from whichgpu.web.refusals import BEFORE_ROUTING
from whichgpu.web.writes import WRITE_ERRORS, require_token

reads = APIRouter(prefix="/api/v1", tags=["runs"], responses=BEFORE_ROUTING)
writes = APIRouter(prefix="/api/v1", tags=["writes"], responses=WRITE_ERRORS,
                   dependencies=[Depends(require_token)])


def _public(data: dict[str, Any]) -> dict[str, Any]:
    """Without the server's store location or file names."""
    return {k: v for k, v in data.items() if k not in ("store", "file")}


@reads.get("/runs", summary="The measured runs of this server's store")
def runs_list(gpu: Annotated[str | None, Query(max_length=100)] = None,
              engine: Annotated[str | None, Query(max_length=40)] = None) -> dict[str, Any]:
    """``whichgpu runs list``: every stored run (of one card or engine when asked), with its
    id, what it measured and where it came from."""
    from whichgpu.answers.runs import list_runs

    return _public(list_runs(None, gpu=gpu, engine=engine).to_json())


@writes.post("/runs", summary="Add measured runs (write token)",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/json": {"schema": {"type": "object"}},
                 "text/csv": {"schema": {"type": "string"}}}}})
async def runs_add(
        request: Request,
        format: Annotated[RunFormat | None, Query(description=(
            "The file's format (default: found from its content)."))] = None,
        gpu: Annotated[str | None, Query(max_length=100, description=(
            "The card, where the file does not say (vLLM, SGLang)."))] = None,
        count: Annotated[int | None, Query(ge=1, le=1024)] = None,
        engine: Annotated[str | None, Query(max_length=40)] = None,
        engine_version: Annotated[str | None, Query(max_length=60)] = None,
        model: Annotated[str | None, Query(max_length=200)] = None,
        quant: Annotated[str | None, Query(max_length=40)] = None,
        source: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """``whichgpu runs add`` of the request body (llama-bench JSON or CSV, a vLLM or SGLang
    serving benchmark result, whichgpu bench JSON, the runs CSV or a runs export): one bad
    run refuses the whole file, naming it and the field, and nothing is stored."""
    import anyio

    from whichgpu.answers.runs import add_text

    body = await request.body()  # at most MAX_BODY_BYTES (web/app.py answers 413 above it)
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(msg("runs.unreadable", "{file} cannot be read: {why}",
                             file="the uploaded file", why="not UTF-8")) from None
    options = {"gpu": gpu, "gpu_count": count, "engine": engine,
               "engine_version": engine_version, "model": model, "precision": quant,
               "source": source or "REST upload"}
    answer = await anyio.to_thread.run_sync(
        lambda: add_text(text, "the uploaded file", options, None, format))
    from whichgpu.web import services

    services.runs_changed()
    return _public(answer.to_json())
