"""The REST API under ``/api/v1``: the same JSON as the CLI's ``--json``.

Reads use GET with query parameters; computations take either GET query parameters or a POST
JSON body (the body may carry a pasted config.json). Bad input answers 422 with
``{"detail": "<the CLI's one-line reason>"}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from whichgpu.web import forms as f
from whichgpu.web import services as s


class Problem(BaseModel):
    """An error: one line saying what is wrong and what to do next."""

    detail: str


ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"model": Problem, "description": "Request body too large"},
    414: {"model": Problem, "description": "Query string too long"},
    422: {"model": Problem, "description": "Bad input (the same reason text as the CLI)"},
    503: {"model": Problem, "description": "A dependency failed (e.g. the Hub)"},
}

router = APIRouter(prefix="/api/v1", responses=ERRORS)
JSON = dict[str, Any]


@router.get("/health", tags=["meta"], summary="The server answers")
def health() -> JSON:
    from importlib.metadata import version

    return {"status": "ok", "version": version("whichgpu")}


# ------------------------------------------------------------------ catalog

@router.get("/gpus", tags=["catalog"], summary="The GPU catalog with cost per TFLOP")
def gpus(q: Annotated[f.GpusQuery, Query()]) -> JSON:
    """``whichgpu gpus --json``."""
    return s.gpus(q).to_json()


@router.get("/gpus/{gpu_id}", tags=["catalog"],
            summary="One GPU: every spec with its source, offers, best uses")
def gpu(gpu_id: Annotated[str, Path(max_length=200)],
        lang: Annotated[str, Query(max_length=5, pattern="^(en|fr)$")] = "en") -> JSON:
    """``whichgpu gpu ID --json [--lang fr]``."""
    return s.gpu(gpu_id, lang).to_json()


@router.get("/models", tags=["models"], summary="The shipped model presets")
def models(family: Annotated[str | None, Query(max_length=20)] = None) -> JSON:
    """``whichgpu models --json``."""
    return s.models(family)


@router.get("/models/{model_id:path}", tags=["models"],
            summary="One model's architecture and parameters")
def model(model_id: Annotated[str, Path(max_length=200)],
          params: Annotated[str | None, Query(max_length=40)] = None) -> JSON:
    """``whichgpu model MODEL --json``: a preset, a size such as 70B, or a Hub id
    (checked before any look-up; the look-up has a time limit)."""
    return s.model(model_id, params)


# ------------------------------------------------------------------ estimates

@router.get("/memory", tags=["estimate"], summary="The VRAM selector")
def memory(q: Annotated[f.MemoryQuery, Query()]) -> JSON:
    """``whichgpu memory --json``: memory terms, the GPUs that hold it, what would fit."""
    return s.memory(q).to_json()


@router.post("/memory", tags=["estimate"], summary="The VRAM selector (JSON body)")
def memory_post(body: f.MemoryBody) -> JSON:
    return s.memory(body).to_json()


@router.get("/speed", tags=["estimate"], summary="Throughput on one GPU configuration")
def speed(q: Annotated[f.SpeedQuery, Query()]) -> JSON:
    """``whichgpu speed --json``."""
    return s.speed(q)


@router.post("/speed", tags=["estimate"], summary="Throughput (JSON body)")
def speed_post(body: f.SpeedBody) -> JSON:
    return s.speed(body)


# ------------------------------------------------------------------ advice

@router.get("/recommend", tags=["advise"], summary="The cheapest configuration for a job")
def recommend(q: Annotated[f.RecommendQuery, Query()]) -> JSON:
    """``whichgpu recommend --json``: options ranked, exclusions with reasons, explanation."""
    return s.recommend(q).to_json()


@router.post("/recommend", tags=["advise"], summary="Recommend (JSON body)")
def recommend_post(body: f.RecommendBody) -> JSON:
    return s.recommend(body).to_json()


@router.get("/checklist", tags=["advise"], summary="The five questions of S13")
def checklist(q: Annotated[f.ChecklistQuery, Query()]) -> JSON:
    """``whichgpu checklist --json``."""
    return s.checklist(q).to_json()


@router.post("/checklist", tags=["advise"], summary="The checklist (JSON body)")
def checklist_post(body: f.ChecklistQuery) -> JSON:
    return s.checklist(body).to_json()


# ------------------------------------------------------------------ money

@router.get("/tco", tags=["cost"], summary="Owning vs renting one GPU")
def tco(q: Annotated[f.TcoQuery, Query()]) -> JSON:
    """``whichgpu tco --json``: ownership terms, break-even, the curve, rent-or-buy advice."""
    return s.tco(q).to_json()


@router.post("/tco", tags=["cost"], summary="Owning vs renting (JSON body)")
def tco_post(body: f.TcoQuery) -> JSON:
    return s.tco(body).to_json()


@router.get("/cost", tags=["cost"], summary="What a run costs on the cheapest offer")
def cost(q: Annotated[f.CostQuery, Query()]) -> JSON:
    """``whichgpu cost --json``."""
    return s.cost(q)


# ------------------------------------------------------------------ prices

@router.get("/prices", tags=["prices"], summary="Latest offers, with their age and source")
def prices(q: Annotated[f.PricesQuery, Query()]) -> JSON:
    """``whichgpu prices list --json``."""
    return s.prices_latest(q).to_json()


@router.get("/prices/history", tags=["prices"], summary="A GPU's price history")
def prices_history(q: Annotated[f.HistoryQuery, Query()]) -> JSON:
    """``whichgpu prices history GPU --json``."""
    return s.prices_history(q).to_json()
