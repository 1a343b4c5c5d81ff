"""Typed, bounded requests: one pydantic model per endpoint, read from the query string (GET)
or a JSON body (POST). Field names are the CLI's flags (``--kv-dtype`` -> ``kv_dtype``), and
values are the strings the CLI reads (``8k``, ``1M``, ``2EUR``, ``60%``), so the same input
gives the same answer, or the same one-line error, everywhere.

Bounds keep one request cheap: short strings, small lists, counts a GPU job can have.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

MAX_BODY_BYTES = 128 * 1024  # a pasted config.json is a few KB
MAX_QUERY_BYTES = 4096

Short = Annotated[str, Field(max_length=40)]
Name = Annotated[str, Field(max_length=200)]
Rates = Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=8)]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def fields(self, *names: str) -> dict[str, Any]:
        return {n: getattr(self, n) for n in names}


# ------------------------------------------------------------------ workloads

class WorkloadQuery(_In):
    """A workload, as ``whichgpu memory``/``speed``/``recommend`` read it."""

    model: Name | None = Field(None, description="Preset alias, Hub id (org/name) or a size "
                               "such as 70B. The server reads no files: paste a config.json "
                               "with POST instead.", examples=["llama-3.1-70b"])
    params: Short | None = Field(None, description="A generic dense model of this many "
                                 "parameters (70e9, 70B).")
    task: Short = Field("inference", description="inference, lora, qlora, full-ft, pretrain, "
                        "image, video or image-lora.")
    quant: Short | None = Field(None, description="bf16, fp8, awq, gptq, nf4, q4_k_m ...")
    kv_dtype: Short = Field("f16", description="f16, fp8, q8_0, q4_0.")
    context: Short | None = Field(None, description="Tokens per sequence, e.g. 8k.")
    batch: int = Field(1, ge=1, le=4096, description="Concurrent sequences / micro-batch.")
    engine: Short | None = Field(None, description="llamacpp, vllm, sglang, trtllm, "
                                 "transformers, exllamav2 or mlc.")
    optimizer: Short = "adamw"
    gradient_checkpointing: bool | None = None
    lora_rank: int = Field(16, ge=1, le=4096)
    lora_targets: Short = "all-linear"
    resolution: Short | None = Field(None, description="WxH, e.g. 1024x1024.")
    frames: int | None = Field(None, ge=1, le=10_000)
    cfg: bool | None = None
    offload: Short = "none"


class MemoryQuery(WorkloadQuery):
    """``whichgpu memory``: the VRAM selector."""

    master_weights: bool | None = None
    fused_loss: bool = False
    flash_attention: bool = True
    gpus: int = Field(1, ge=1, le=1024)
    tp: int | None = Field(None, ge=1, le=1024)
    pp: int = Field(1, ge=1, le=1024)
    zero: int | None = Field(None, ge=0, le=3)
    vae_tiling: bool = False
    gpu: Name | None = Field(None, description="Ask whether it fits this GPU.")


class SpeedQuery(WorkloadQuery):
    """``whichgpu speed``: throughput on one GPU configuration."""

    gpu: Name = Field(..., description="Catalog GPU id, e.g. h100 or rtx-4090.")
    count: int = Field(1, ge=1, le=1024)
    prompt_tokens: Short | None = None
    output_tokens: Short | None = None
    tp: int | None = Field(None, ge=1, le=1024)
    pp: int = Field(1, ge=1, le=1024)
    zero: int | None = Field(None, ge=0, le=3)
    steps: int | None = Field(None, ge=1, le=10_000, description="Diffusion steps.")


class RecommendQuery(WorkloadQuery):
    """``whichgpu recommend``: the cheapest configuration that can run a job."""

    prompt_tokens: Short | None = None
    output_tokens: Short | None = None
    sampling_steps: int | None = Field(None, ge=1, le=10_000)
    tokens: Short | None = Field(None, description="Tokens to generate, e.g. 1M.")
    images: Short | None = Field(None, description="Images to generate, e.g. 1000.")
    videos: Short | None = None
    steps: Short | None = Field(None, description="Training steps, e.g. 2000.")
    train_tokens: Short | None = None
    users: int | None = Field(None, ge=1, le=1_000_000)
    tokens_per_s_each: float | None = Field(None, gt=0, le=100_000)
    tokens_per_day: Short | None = None
    concurrency: int | None = Field(None, ge=1, le=4096)
    objective: Short = "cost"
    deadline: Short | None = Field(None, description="e.g. 2h or 3d.")
    max_price_per_hour: Short | None = Field(None, description="e.g. 2EUR.")
    budget: Short | None = Field(None, description="Total budget, e.g. 50EUR.")
    prices: Name | None = Field(None, description="Price source, e.g. vramfarm-2026-11.")
    currency: Short | None = None
    rate: Rates = Field(default_factory=list, description="Exchange rates, EURUSD=1.08.")
    max_age: float | None = Field(None, gt=0, le=36_500)
    spot: bool = False
    top: int = Field(10, ge=0, le=500, description="Options to return (0: all).")
    max_gpus: int | None = Field(None, ge=1, le=1024,
                                 description="At most this many GPUs (1: single cards).")
    only: Annotated[str, Field(max_length=400)] | None = Field(
        None, description="Compare only these catalog GPUs (comma-separated ids); the web's "
        "cost-per-task page uses it. Default: the whole catalog.")


class WorkloadBody(BaseModel):
    """A pasted config.json, bounded by the request size."""

    config: dict[str, Any] | None = Field(None, description="The contents of a model's "
                                          "config.json (instead of model).")


class MemoryBody(MemoryQuery, WorkloadBody):
    pass


class SpeedBody(SpeedQuery, WorkloadBody):
    pass


class RecommendBody(RecommendQuery, WorkloadBody):
    pass


# ------------------------------------------------------------------ catalog and prices

class GpusQuery(_In):
    """``whichgpu gpus``: the catalog with cost per TFLOP."""

    precision: Short = "bf16"
    prices: Name | None = None
    currency: Short | None = None
    max_age: float | None = Field(None, gt=0, le=36_500)
    vendor: Short | None = None
    min_memory: Short | None = Field(None, description="e.g. 48GB.")
    form_factor: Short | None = None
    sort: Short = "cost-per-tflop"
    priced_only: bool = False
    rate: Rates = Field(default_factory=list)


class PricesQuery(_In):
    """``whichgpu prices list``: offers, cheapest first, with their age and source."""

    gpu: Name | None = None
    spot: bool = False
    on_demand: bool = False
    currency: Short | None = None
    prices: Name | None = None
    provider: Name | None = None
    limit: int = Field(25, ge=0, le=1000)
    max_age: float | None = Field(None, gt=0, le=36_500)


class HistoryQuery(_In):
    """``whichgpu prices history``: how a GPU's cheapest price moved."""

    gpu: Name
    feed: Name | None = None


# ------------------------------------------------------------------ money

class TcoQuery(_In):
    """``whichgpu tco``: owning vs renting one GPU (every input editable)."""

    gpu: Name = Field(..., examples=["h100"])
    purchase_price: Short | None = Field(None, description="e.g. 25000USD.")
    resale_value: Short | None = None
    years: float | None = Field(None, gt=0, le=30)
    host_share: Short | None = None
    tdp: float | None = Field(None, gt=0, le=5000)
    load_factor: float | None = Field(None, gt=0, le=1)
    utilization: Short | None = Field(None, description="0.6 or 60%.")
    hours_per_month: float | None = Field(None, gt=0, le=730)
    kwh_price: Short | None = Field(None, description="e.g. 0.10USD.")
    pue: float | None = Field(None, ge=1, le=3)
    cooling_per_hour: Short | None = None
    maintenance_per_year: Short | None = None
    rent_price: Short | None = Field(None, description="e.g. 3.15USD.")
    prices: Name = "article-000"
    currency: Short | None = None
    rate: Rates = Field(default_factory=list)


class CostQuery(_In):
    """``whichgpu cost``: what a run costs on the cheapest offer."""

    gpu: Name
    duration: Short = Field(..., description="3h20m, 2h..4h or 2h..3h..4h.")
    count: int = Field(1, ge=1, le=1024)
    prices: Name = "article-000"
    spot: bool = False
    work: Short | None = None
    unit: Short = "task"
    per: Short = "1"
    currency: Short | None = None
    rate: Rates = Field(default_factory=list)


class ChecklistQuery(_In):
    """``whichgpu checklist``: the five questions of S13."""

    workload: Short = Field(..., description="training, fine-tuning or inference.")
    model: Name = Field(..., description="A size (7B) or a model name.")
    budget_per_hour: Short = Field(..., description="e.g. 1USD, or none.")
    hours_per_month: Short = Field(..., description="Hours of use a month.")
    horizon_months: Short = Field(..., description="Months needed.")
    prices: Name | None = None
    currency: Short | None = None
    rate: Rates = Field(default_factory=list)
