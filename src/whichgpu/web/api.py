"""The REST API under ``/api/v1``: the same JSON as the CLI's ``--json``.

Reads use GET with query parameters; computations take either GET query parameters or a POST
JSON body (the body may carry a pasted config.json). Bad input answers 422 with
``{"detail": "<the CLI's one-line reason>"}``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from whichgpu.answers import requests as r
from whichgpu.answers.request import for_web
from whichgpu.strict_json import finite
from whichgpu.web import services as s
from whichgpu.web import work
from whichgpu.web.refusals import BEFORE_ROUTING, Problem
from whichgpu.web.resolve import prefetch

ERRORS: dict[int | str, dict[str, Any]] = {
    **BEFORE_ROUTING,
    422: {"model": Problem, "description": "Bad input (the same reason text as the CLI)"},
    503: {"model": Problem, "description": "A dependency failed (the Hub, the price store) or "
          "the server is busy (Retry-After says when to retry)"},
}

def json_bytes(content: Any) -> bytes:
    """The CLI's JSON as is, compact UTF-8; a non-finite number is written as null."""
    try:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        text = json.dumps(finite(content), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8")


class JSON(JSONResponse):
    """The CLI's JSON as is (no re-validation); a non-finite number is written as null."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


class Rendered(JSON):
    """JSON already written by :func:`json_bytes` (a remembered answer): the same bytes and
    headers as :class:`JSON` would send, without writing them again."""

    def render(self, content: Any) -> bytes:
        return content


router = APIRouter(prefix="/api/v1", responses=ERRORS, default_response_class=JSON)

# The command line's request models, as the server takes them (its own bounds, no files):
# query strings for GET, JSON bodies (a body may carry a pasted config.json) for POST.
if TYPE_CHECKING:  # the same fields as the command line's models
    from whichgpu.answers.requests import (
        Checklist,
        Cost,
        Fits,
        Gpu,
        Gpus,
        Memory,
        Model,
        Models,
        PricesHistory,
        PricesList,
        Recommend,
        Speed,
        Tco,
    )
    # one name per line: mypy takes these as type aliases (a tuple assignment is not one)
    ChecklistBody = Checklist
    MemoryBody = Memory
    RecommendBody = Recommend
    SpeedBody = Speed
    TcoBody = Tco
else:
    Gpus, Gpu, Models, Model = (for_web(m) for m in (r.Gpus, r.Gpu, r.Models, r.Model))
    Memory, Speed, Recommend, Checklist = (
        for_web(m) for m in (r.Memory, r.Speed, r.Recommend, r.Checklist))
    Tco, Cost, PricesList, PricesHistory = (
        for_web(m) for m in (r.Tco, r.Cost, r.PricesList, r.PricesHistory))
    MemoryBody, SpeedBody, RecommendBody, ChecklistBody, TcoBody = (
        for_web(m, body=True) for m in (r.Memory, r.Speed, r.Recommend, r.Checklist, r.Tco))
    Fits = for_web(r.Fits)


def question_key(name: str, args: tuple) -> str:
    """A short fingerprint of a question (what the work pool remembers a refusal by: a
    pasted config can be 128 KB, its digest is 32 bytes)."""
    import hashlib

    text = name + ":" + "|".join(a.model_dump_json() if isinstance(a, BaseModel) else repr(a)
                                 for a in args)
    return name + ":" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


async def _out(name: str, args: tuple, compute, model: str | None = None) -> JSON:
    """The JSON of a result, remembered as the bytes sent (see services.remember).

    A repeated question is answered on the event loop; a new one first has its Hub model (if
    any) looked up without holding a worker, then is computed and written in the bounded work
    pool under its CPU-time limit (see web/work.py), so a long computation never holds up the
    others. The memo keeps the bytes, not the JSON's objects nor the typed answer (see
    services.unkept): measuring them is ``len`` (a walk of a recommendation's dicts took
    ~3 ms), and a repeat writes nothing again.
    """
    hit = s.recalled("json:" + name, args)
    if hit is s.MISSING:
        await prefetch(model)
        hit = await work.run(s.remember, "json:" + name, args,
                             lambda: (json_bytes(s.unkept(compute)),),
                             key=question_key(name, args), heavy=name in work.HEAVY)
    return Rendered(hit[0])


@router.get("/health", tags=["meta"], summary="The server answers")
async def health() -> JSON:
    from importlib.metadata import version

    from whichgpu.web.resolve import hub_status
    from whichgpu.web.writes import writes

    return JSON({"status": "ok", "version": version("whichgpu"), "hub": hub_status(),
                 "work": work.load(), "writes": writes().value})


# ------------------------------------------------------------------ catalog

@router.get("/gpus", tags=["catalog"], summary="The GPU catalog with cost per TFLOP")
async def gpus(q: Annotated[Gpus, Query()]) -> JSON:
    """``whichgpu gpus --json``."""
    return await _out("gpus", (q,), lambda: s.gpus(q).to_json())


@router.get("/gpus/{gpu_id}", tags=["catalog"],
            summary="One GPU: every spec with its source, offers, best uses")
async def gpu(gpu_id: Annotated[str, Path(max_length=200)],
              lang: Annotated[str, Query(max_length=10, description="en or fr (fr-FR and any "
                                         "fr-* mean fr)")] = "en") -> JSON:
    """``whichgpu gpu ID --json [--lang fr]``."""
    q = Gpu.parse({"gpu": gpu_id, "lang": lang})
    return await _out("gpu", (q,), lambda: s.gpu(q).to_json())


@router.get("/models", tags=["models"], summary="The shipped model presets")
async def models(q: Annotated[Models, Query()]) -> JSON:
    """``whichgpu models --json``."""
    return await _out("models", (q,), lambda: s.models(q).to_json())


@router.get("/models/{model_id:path}", tags=["models"],
            summary="One model's architecture and parameters")
async def model(model_id: Annotated[str, Path(max_length=200)],
                params: Annotated[str | None, Query(max_length=40)] = None) -> JSON:
    """``whichgpu model MODEL --json``: a preset, a size such as 70B, or a Hub id
    (checked before any look-up; the look-up has a time limit)."""
    q = Model.parse({"model": model_id, "params": params})
    return await _out("model", (q,), lambda: s.model(q).to_json(), model_id)


# ------------------------------------------------------------------ estimates

@router.get("/memory", tags=["estimate"], summary="The VRAM selector")
async def memory(q: Annotated[Memory, Query()]) -> JSON:
    """``whichgpu memory --json``: memory terms, the GPUs that hold it, what would fit."""
    return await _out("memory", (q,), lambda: s.memory(q).to_json(), q.model)


@router.post("/memory", tags=["estimate"], summary="The VRAM selector (JSON body)")
async def memory_post(body: MemoryBody) -> JSON:
    return await _out("memory", (body,), lambda: s.memory(body).to_json(), body.model)


@router.get("/speed", tags=["estimate"], summary="Throughput on one GPU configuration")
async def speed(q: Annotated[Speed, Query()]) -> JSON:
    """``whichgpu speed --json``."""
    return await _out("speed", (q,), lambda: s.speed(q).to_json(), q.model)


@router.get("/fits", tags=["estimate"], summary="What runs on my card")
async def fits(q: Annotated[Fits, Query()]) -> JSON:
    """``whichgpu fits --json``: the models that fit a card (best format, longest context,
    speed), ranked."""
    return await _out("fits", (q,), lambda: s.fits(q).to_json())


@router.post("/speed", tags=["estimate"], summary="Throughput (JSON body)")
async def speed_post(body: SpeedBody) -> JSON:
    return await _out("speed", (body,), lambda: s.speed(body).to_json(), body.model)


# ------------------------------------------------------------------ advice

@router.get("/recommend", tags=["advise"], summary="The cheapest configuration for a job")
async def recommend(q: Annotated[Recommend, Query()]) -> JSON:
    """``whichgpu recommend --json``: options ranked, exclusions with reasons, explanation."""
    return await _out("recommend", (q,), lambda: s.recommend(q).to_json(), q.model)


@router.post("/recommend", tags=["advise"], summary="Recommend (JSON body)")
async def recommend_post(body: RecommendBody) -> JSON:
    return await _out("recommend", (body,), lambda: s.recommend(body).to_json(), body.model)


@router.get("/checklist", tags=["advise"], summary="The five questions of S13")
async def checklist(q: Annotated[Checklist, Query()]) -> JSON:
    """``whichgpu checklist --json``."""
    return await _out("checklist", (q,), lambda: s.checklist(q).to_json(), q.model)


@router.post("/checklist", tags=["advise"], summary="The checklist (JSON body)")
async def checklist_post(body: ChecklistBody) -> JSON:
    return await _out("checklist", (body,), lambda: s.checklist(body).to_json(), body.model)


# ------------------------------------------------------------------ money

@router.get("/tco", tags=["cost"], summary="Owning vs renting one GPU")
async def tco(q: Annotated[Tco, Query()]) -> JSON:
    """``whichgpu tco --json``: ownership terms, break-even, the curve, rent-or-buy advice."""
    return await _out("tco", (q,), lambda: s.tco(q).to_json())


@router.post("/tco", tags=["cost"], summary="Owning vs renting (JSON body)")
async def tco_post(body: TcoBody) -> JSON:
    return await _out("tco", (body,), lambda: s.tco(body).to_json())


@router.get("/cost", tags=["cost"], summary="What a run costs on the cheapest offer")
async def cost(q: Annotated[Cost, Query()]) -> JSON:
    """``whichgpu cost --json``."""
    return await _out("cost", (q,), lambda: s.cost(q).to_json())


# ------------------------------------------------------------------ prices

@router.get("/prices", tags=["prices"], summary="Latest offers, with their age and source")
async def prices(q: Annotated[PricesList, Query()]) -> JSON:
    """``whichgpu prices list --json``: every offer unless ``limit`` is given, as there."""
    q = q.model_copy(update={"as_json": True})
    return await _out("prices_latest", (q,), lambda: s.prices_latest(q).to_json())


@router.get("/prices/api", tags=["prices"],
            summary="Per-token API prices of open-weight models, their date and source")
async def prices_api(model: Annotated[str | None, Query(max_length=200, description=(
        "Only this model (a preset id, e.g. llama-3.3-70b)."))] = None) -> JSON:
    """``whichgpu prices api --json``: the table ``vs_api`` compares with (the store's latest
    refreshed snapshot, else the shipped table) and the store's recent refreshes. Reading only:
    a refresh is ``POST /api/v1/prices/api/refresh`` with the write token."""
    import anyio

    from whichgpu.answers.api_prices import prices_api as answer
    from whichgpu.answers.requests import PricesApi

    q = PricesApi(model=model)
    return JSON(await anyio.to_thread.run_sync(lambda: answer(q).to_json()))


@router.get("/prices/history", tags=["prices"], summary="A GPU's price history")
async def prices_history(q: Annotated[PricesHistory, Query()]) -> JSON:
    """``whichgpu prices history GPU --json``."""
    return await _out("prices_history", (q,), lambda: s.prices_history(q).to_json())
