"""Typed, bounded requests: one pydantic model per endpoint, read from the query string (GET)
or a JSON body (POST). Field names are the CLI's flags (``--kv-dtype`` -> ``kv_dtype``), and
values are the strings the CLI reads (``8k``, ``1M``, ``2EUR``, ``60%``), so the same input
gives the same answer, or the same one-line error, everywhere.

Bounds keep one request cheap: short strings, small lists, counts a GPU job can have, and
magnitudes no real job reaches (so a page never has to print a 31-digit number). Where the
engine bounds a value itself, its bound and its sentence answer, as on the command line
(contexts and batches: ``estimate.workload.LIMITS``; ownership money:
``cost.ownership.MONEY_CAPS_USD``; a run's length, work and GPU count: ``cost.build``). The
web adds bounds only where the engine has none:

- an amount of work for the advisor (tokens, images, videos, steps, training tokens, tokens a
  day) of at most ``MAX_WORK`` (10^15: about 70 times the 15T tokens Llama 3 was pre-trained
  on);
- a budget or an hourly price cap of at most ``MAX_MONEY`` (10^12, in whatever currency it is
  written);
- a deadline of at most ``MAX_DURATION_S`` (100 years);
- an exchange rate between ``MIN_RATE`` and ``MAX_RATE`` (10^-7 to 10^7).

A value the parsers cannot read at all is passed on, so the CLI's own reason is the answer.
Out-of-bounds numbers get the CLI's sentence where the CLI has one (``reason``).
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

MAX_BODY_BYTES = 128 * 1024  # a pasted config.json is a few KB
MAX_QUERY_BYTES = 4096
MAX_WORK = 10**15
MAX_MONEY = 1e12
MAX_DURATION_S = 100 * 365.25 * 86400
MIN_RATE, MAX_RATE = 1e-7, 1e7

Short = Annotated[str, Field(max_length=40)]
Name = Annotated[str, Field(max_length=200)]
Rates = Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=8)]


class _In(BaseModel):
    # NaN and infinities are refused at parse time: no answer can be computed from them, and
    # strict JSON has no way to write them back
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    # field -> (sentence below the lower bound, sentence above the upper bound); {v} is the
    # value. Only where the CLI words it differently from the generic sentences in ``reason``.
    BOUND_TEXT: ClassVar[dict[str, tuple[str | None, str | None]]] = {}

    def fields(self, *names: str) -> dict[str, Any]:
        return {n: getattr(self, n) for n in names}

    @field_validator("tokens", "images", "videos", "steps", "train_tokens", "tokens_per_day",
                     check_fields=False)
    @classmethod
    def _work(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):  # steps is a number of diffusion steps in speed
            return value
        return _at_most_count(value, info.field_name, MAX_WORK, "")

    @field_validator("max_price_per_hour", "budget", "budget_per_hour", check_fields=False)
    @classmethod
    def _money(cls, value: str | None, info: ValidationInfo) -> str | None:
        from whichgpu.errors import InputError
        from whichgpu.units import parse_money

        if value is None:
            return value
        try:
            amount = parse_money(value, default_currency="USD").amount
        except (InputError, ValueError, OverflowError):
            return value  # not money at all: the CLI's parser says why
        if abs(amount) > MAX_MONEY:
            raise ValueError(f"{_label(info.field_name)} must be at most 10^12 "
                             f"(1,000,000,000,000) in any currency, got {value!r}")
        return value

    @field_validator("deadline", check_fields=False)
    @classmethod
    def _duration(cls, value: str | None, info: ValidationInfo) -> str | None:
        from whichgpu.errors import InputError
        from whichgpu.units import parse_duration

        if value is None:
            return value
        try:
            longest = max(parse_duration(part) for part in value.split(".."))
        except (InputError, ValueError, OverflowError):
            return value
        if longest > MAX_DURATION_S:
            raise ValueError(f"{_label(info.field_name)} must be at most 100 years, "
                             f"got {value!r}")
        return value

    @field_validator("calibration", check_fields=False)
    @classmethod
    def _calibration(cls, value: str | None) -> str | None:
        if value is None or value.strip().lower() in ("", "none"):
            return None
        if value.strip().lower() != "default":
            raise ValueError("calibration must be 'default' (this server's calibration "
                             "profile) or 'none': the web server reads no file named in a "
                             "request")
        return "default"

    @field_validator("rate", check_fields=False)
    @classmethod
    def _rates(cls, value: list[str]) -> list[str]:
        from whichgpu.errors import InputError

        for text in value:
            try:
                from whichgpu.cost.currency import parse_rate

                rate = parse_rate(text)[2]
            except (InputError, ValueError, OverflowError):
                continue
            if not MIN_RATE <= rate <= MAX_RATE:
                raise ValueError(f"exchange rate {text!r} must be between 10^-7 and 10^7")
        return value


def _label(name: str) -> str:
    return name.replace("_", " ")


def _at_most_count(value: str | None, name: str, limit: int, unit: str) -> str | None:
    from whichgpu.errors import InputError
    from whichgpu.units import parse_count

    if value is None:
        return value
    try:
        n = parse_count(value, what=_label(name))
    except (InputError, ValueError, OverflowError):
        return value  # unreadable: the CLI's parser gives the reason
    if n > limit:
        shown = f"{limit:,}" if limit < 10**9 else "10^15"
        raise ValueError(f"{_label(name)} must be at most {shown}{' ' + unit if unit else ''}, "
                         f"got {value!r}")
    return value


# ------------------------------------------------------------------ errors in the CLI's words

_CLI_BOUNDS: dict[str, tuple[str | None, str | None]] = {
    # the CLI's sentences (estimate/workload.py, cost/ownership.py, cost/build.py, advise)
    "tp": ("tensor parallel degree must be >= 1, got {v}", None),
    "zero": ("ZeRO stage must be 0, 1, 2 or 3, got {v}",) * 2,
    "frames": ("frames must be >= 1, got {v}", None),
    "tdp": ("TDP must be more than 0 W and at most 5,000 W, got {v}",) * 2,
    "load_factor": ("load factor (share of TDP drawn while busy) must be more than 0 and at "
                    "most 1, got {v}",) * 2,
    "pue": ("PUE must be between 1 and 3, got {v}",) * 2,
    "concurrency": ("concurrency must be at least 1", None),
}
_LABELS = {"lora_rank": "lora rank"}


def _number_text(text: Any) -> str:
    try:
        v = float(text)
    except (TypeError, ValueError):
        return repr(text)
    return str(int(v)) if v.is_integer() and abs(v) < 1e16 else f"{v:g}"


def _bounds(model: type[BaseModel] | None, name: str) -> tuple[Any, bool, Any, bool]:
    """(low, low inclusive, high, high inclusive) of a numeric field."""
    low = high = None
    low_in = high_in = True
    field = model.model_fields.get(name) if model else None
    for m in getattr(field, "metadata", ()):
        if getattr(m, "ge", None) is not None:
            low = m.ge
        if getattr(m, "gt", None) is not None:
            low, low_in = m.gt, False
        if getattr(m, "le", None) is not None:
            high = m.le
        if getattr(m, "lt", None) is not None:
            high, high_in = m.lt, False
    return low, low_in, high, high_in


def _is_int(model: type[BaseModel] | None, name: str) -> bool:
    field = model.model_fields.get(name) if model else None
    return field is not None and int in (field.annotation, *typing.get_args(field.annotation))


def _bound_sentence(model: type[BaseModel] | None, name: str, kind: str, value: Any,
                    ctx: dict[str, Any]) -> str:
    v = _number_text(value)
    texts = {**_CLI_BOUNDS, **(getattr(model, "BOUND_TEXT", None) or {})}.get(name, (None, None))
    below = kind in ("greater_than", "greater_than_equal")
    special = texts[0] if below else texts[1]
    if special:
        return special.format(v=v)
    label = _LABELS.get(name, _label(name))
    low, low_in, high, high_in = _bounds(model, name)
    if (low if below else high) is None:  # no model to read the bounds from: pydantic's
        limit = next(iter(ctx.values()), "?")
        words = {"greater_than": "more than", "greater_than_equal": "at least",
                 "less_than": "less than", "less_than_equal": "at most"}[kind]
        return f"{label} must be {words} {limit}, got {v}"
    if _is_int(model, name):
        if below:
            return f"{label} must be a whole number >= {low}, got {v}"
        return f"{label} must be a whole number <= {high} (the web server's limit), got {v}"
    if low is not None and high is not None:
        if not low_in and high_in:
            return f"{label} must be more than {low:g} and at most {high:g}, got {v}"
        if low_in and high_in:
            return f"{label} must be between {low:g} and {high:g}, got {v}"
    if below:
        return f"{label} must be {'at least' if low_in else 'more than'} {low:g}, got {v}"
    return f"{label} must be {'at most' if high_in else 'less than'} {high:g}, got {v}"


def reason(errors: list[dict[str, Any]], model: type[BaseModel] | None = None) -> str:
    """Pydantic's errors as one line, in the CLI's words where the CLI has them:
    'batch must be a whole number >= 1, got 0', 'No such option: --colour'."""
    parts = []
    for err in errors[:5]:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("query", "body", "path")]
        name = loc[0] if loc else ""
        flag = "--" + name.replace("_", "-")
        kind = err.get("type", "")
        value = err.get("input")
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal") \
                and len(loc) == 1:
            parts.append(_bound_sentence(model, name, kind, value, err.get("ctx") or {}))
        elif kind in ("int_parsing", "int_from_float") and len(loc) == 1:
            parts.append(f"Invalid value for '{flag}': {value!r} is not a valid integer.")
        elif kind == "float_parsing" and len(loc) == 1:
            parts.append(f"Invalid value for '{flag}': {value!r} is not a valid float.")
        elif kind == "finite_number" and len(loc) == 1:
            parts.append(f"Invalid value for '{flag}': {value!r} is not a finite number.")
        elif kind == "bool_parsing" and len(loc) == 1:
            parts.append(f"Invalid value for '{flag}': {value!r} is not a valid boolean.")
        elif kind == "missing" and len(loc) == 1:
            parts.append(f"Missing option '{flag}'.")
        elif kind == "extra_forbidden" and len(loc) == 1:
            parts.append(f"No such option: {flag}")
        elif kind == "string_too_long" and len(loc) == 1:
            limit = (err.get("ctx") or {}).get("max_length")
            parts.append(f"{flag} must be at most {limit} characters")
        elif kind == "value_error":
            parts.append(msg)  # our validators write whole sentences
        else:
            parts.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return "; ".join(parts) or "invalid request"


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
    host_ram: Short | None = Field(None, description="System RAM for llama.cpp offload, e.g. "
                                   "64GB (default 64GB).")
    host_memory: Short | None = Field(None, description="System RAM type: ddr4, ddr5-6000, "
                                      "ddr5-4800x8 (default ddr5-5600x2).")
    host_bandwidth: Short | None = Field(None, description="System RAM bandwidth, e.g. "
                                         "90GB/s (overrides host_memory).")
    optimizer: Short | None = Field(None, description="adamw, adamw-8bit, paged-adamw-8bit "
                                    "... (default: the framework's, else adamw).")
    gradient_checkpointing: bool | None = None
    lora_rank: int | None = Field(None, ge=1, le=4096, description="Default: the "
                                  "framework's, else 16.")
    lora_targets: Short | None = Field(None, description="all-linear or module names "
                                       "(default: the framework's, else all-linear).")
    resolution: Short | None = Field(None, description="WxH, e.g. 1024x1024.")
    frames: int | None = Field(None, ge=1, le=10_000)
    cfg: bool | None = None
    offload: Short = "none"
    vae_tiling: bool = Field(False, description="Diffusion: tiled VAE decode.")
    framework: Short | None = Field(None, description="Training framework whose defaults and "
                                    "memory savers apply: pytorch, transformers (PEFT), "
                                    "unsloth, torchtune, axolotl, llm-foundry, torchtitan, "
                                    "megatron.")
    activation_offloading: bool | None = Field(None, description="Training: saved "
                                               "activations in CPU RAM.")
    loss: Short | None = Field(None, description="Training loss kernel: full, chunked or "
                               "fused.")
    fp8_training: bool = Field(False, description="Training: FP8 matmuls on bf16 weights.")


class MemoryQuery(WorkloadQuery):
    """``whichgpu memory``: the VRAM selector."""

    master_weights: bool | None = None
    fused_loss: bool = False
    flash_attention: bool = True
    gpus: int = Field(1, ge=1, le=1024)
    tp: int | None = Field(None, ge=1, le=1024)
    pp: int = Field(1, ge=1, le=1024)
    zero: int | None = Field(None, ge=0, le=3)
    allow_long_context: bool = Field(False, description="Allow a context beyond the model's "
                                     "trained maximum (RoPE scaling).")
    gpu: Name | None = Field(None, description="Ask whether it fits this GPU: a catalog id, "
                             "or your card's memory such as 12GB.")
    gpu_spec: Name | None = Field(None, description="Your own card instead of a catalog id: "
                                  "memory=12GB,bandwidth=360GB/s,fp16=51,tdp=170W,price=329USD "
                                  "(memory alone answers the fit).")
    gpu_layers: int | None = Field(None, ge=0, le=1024, description="llama.cpp -ngl: layers "
                                   "on the GPU (default all).")
    n_cpu_moe: int | None = Field(None, ge=0, le=1024, description="llama.cpp: the MoE experts "
                                  "of the first N layers in host RAM.")
    cpu_moe: bool = Field(False, description="llama.cpp: every MoE expert in host RAM.")
    override_tensor: Short | None = Field(None, description="llama.cpp -ot PATTERN=CPU, "
                                          "comma-separated.")


class SpeedQuery(WorkloadQuery):
    """``whichgpu speed``: throughput on one GPU configuration."""

    gpu: Name | None = Field(None, description="Catalog GPU id, e.g. h100 or rtx-4090 (or "
                             "gpu_spec for your own card).")
    gpu_spec: Name | None = Field(None, description="Your own card instead of a catalog id: "
                                  "memory=12GB,bandwidth=360GB/s,fp16=51,tdp=170W,price=329USD "
                                  "(memory alone answers the fit).")
    count: int = Field(1, ge=1, le=1024)
    gpu_layers: int | None = Field(None, ge=0, le=1024, description="llama.cpp -ngl: layers "
                                   "on the GPU (default all).")
    n_cpu_moe: int | None = Field(None, ge=0, le=1024, description="llama.cpp: the MoE experts "
                                  "of the first N layers in host RAM.")
    cpu_moe: bool = Field(False, description="llama.cpp: every MoE expert in host RAM.")
    override_tensor: Short | None = Field(None, description="llama.cpp -ot PATTERN=CPU, "
                                          "comma-separated.")
    prompt_tokens: Short | None = None
    output_tokens: Short | None = None
    tp: int | None = Field(None, ge=1, le=1024)
    pp: int = Field(1, ge=1, le=1024)
    zero: int | None = Field(None, ge=0, le=3)
    steps: int | None = Field(None, ge=1, le=100_000, description="Diffusion: denoising "
                              "steps. Training: optimizer steps to time.")
    train_tokens: Short | None = Field(None, description="Training: tokens to train on "
                                       "(e.g. 1B); gives the total time.")
    compile: bool = Field(False, description="torch.compile (training) / CUDA graphs "
                          "(diffusion).")
    calibration: Short | None = Field(
        None, description="'default': this server's calibration profile (saved by 'whichgpu "
        "bench' on the server, or chosen with 'whichgpu serve --calibration'); 'none' or "
        "empty: datasheet figures. The server never reads a file named in a request.")
    max_throughput: bool = Field(False, description="Serving engines: output tokens/s at the "
                                 "largest batch that fits, the batch and what bounds it.")

    BOUND_TEXT: ClassVar[dict[str, tuple[str | None, str | None]]] = {
        "count": ("gpus must be a whole number >= 1, got {v}", None)}  # --count is gpus


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
    requests_per_s: Short | None = Field(None, description="Serving: requests per second to "
                                         "size for, e.g. 20 or 1200/min.")
    ttft: Short | None = Field(None, description="Serving: mean time to first token target, "
                               "e.g. 2s or 500ms.")
    tpot: Short | None = Field(None, description="Serving: mean time per output token "
                               "target, e.g. 50ms.")
    objective: Short = "cost"
    deadline: Short | None = Field(None, description="e.g. 2h or 3d.")
    max_price_per_hour: Short | None = Field(None, description="e.g. 2EUR.")
    budget: Short | None = Field(None, description="Total budget, e.g. 50EUR.")
    prices: Name | None = Field(None, description="Price source, e.g. vramfarm-2026-11.")
    currency: Short | None = None
    rate: Rates = Field(default_factory=list, description="Exchange rates, EURUSD=1.08.")
    max_age: float | None = Field(None, gt=0, le=36_500)
    spot: bool = False
    checkpoint_every: Short | None = Field(None, description="Training on spot: checkpoint "
                                           "interval, e.g. 30m (the default), or none.")
    export: Literal["skypilot", "dstack"] | None = Field(
        None, description="Also return the chosen option as a launcher task file (the YAML "
        "in the 'export' field), as --export.")
    export_option: int | None = Field(None, ge=1, le=500, description="Which ranked option "
                                      "to export (default: the best the launcher can launch).")
    top: int = Field(10, ge=0, le=500, description="Options to return (0: all).")
    max_gpus: int | None = Field(None, ge=1, le=1024,
                                 description="At most this many GPUs (1: single cards).")
    only: Annotated[str, Field(max_length=400)] | None = Field(
        None, description="Compare only these catalog GPUs (comma-separated ids); the web's "
        "cost-per-task page uses it. Default: the whole catalog.")
    calibration: Short | None = Field(
        None, description="'default': this server's calibration profile (saved by 'whichgpu "
        "bench' on the server, or chosen with 'whichgpu serve --calibration'); 'none' or "
        "empty: datasheet figures. The server never reads a file named in a request.")
    gpu: Name | None = Field(None, description="Your own card, shown beside the rentals as "
                             "owned hardware: a catalog id or its memory (12GB).")
    gpu_spec: Name | None = Field(None, description="Your own card instead of a catalog id: "
                                  "memory=12GB,bandwidth=360GB/s,fp16=51,tdp=170W,price=329USD "
                                  "(memory alone answers the fit).")
    count: int = Field(1, ge=1, le=64, description="How many of your cards you have.")

    @field_validator("export", mode="before")
    @classmethod
    def _launcher(cls, value: Any) -> Any:
        """Any case, as the CLI's --export (SkyPilot, DSTACK)."""
        return value.strip().lower() if isinstance(value, str) else value


class WorkloadBody(BaseModel):
    """A pasted config.json, bounded by the request size, its nesting and strict JSON."""

    config: dict[str, Any] | None = Field(None, description="The contents of a model's "
                                          "config.json (instead of model).")

    @field_validator("config")
    @classmethod
    def _config(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        from whichgpu.models.local_file import MAX_JSON_DEPTH, json_depth

        if value is None:
            return value
        if json_depth(value) > MAX_JSON_DEPTH:
            raise ValueError(f"the pasted config.json nests more than {MAX_JSON_DEPTH} levels "
                             "deep; a model config nests a few")
        if not _all_finite(value):
            raise ValueError("the pasted config.json holds NaN or Infinity, which are not JSON "
                             "numbers")
        from whichgpu.errors import DataError
        from whichgpu.models.bounds import check_config

        try:  # dimensions no model has: refused here, before the request takes a worker
            check_config(value, "pasted config.json")
        except DataError as exc:
            raise ValueError(str(exc)) from None
        return value


def _all_finite(data: Any) -> bool:
    import math

    todo = [data]
    while todo:
        item = todo.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return True


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

    gpu: Name | None = Field(None, examples=["h100"])
    gpu_spec: Name | None = Field(None, description="Your own card instead of a catalog id: "
                                  "memory=12GB,bandwidth=360GB/s,fp16=51,tdp=170W,price=329USD "
                                  "(memory alone answers the fit).")
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
    prices: Name | None = Field(None, description="Price source; none: the store's current "
                                "prices, as the CLI.")
    currency: Short | None = None
    rate: Rates = Field(default_factory=list)

    BOUND_TEXT: ClassVar[dict[str, tuple[str | None, str | None]]] = {
        "hours_per_month": ("--hours-per-month must be more than 0 and at most 730 (24/7), "
                            "got {v}",) * 2}


class CostQuery(_In):
    """``whichgpu cost``: what a run costs on the cheapest offer."""

    gpu: Name
    duration: Short = Field(..., description="3h20m, 2h..4h or 2h..3h..4h.")
    count: int = Field(1, description="GPUs the run uses (the CLI's bounds apply).")
    prices: Name | None = Field(None, description="Price source; none: the store's current "
                                "prices, as the CLI.")
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
    max_age: float | None = Field(None, gt=0, le=36_500)
    only: Annotated[str, Field(max_length=400)] | None = Field(
        None, description="Consider only these GPUs (comma-separated), as --only.")
    currency: Short | None = None
    rate: Rates = Field(default_factory=list)
