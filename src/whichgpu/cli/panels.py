"""Which help panel each request field's option is shown in, and its metavar.

The panels follow what a person decides in turn: the model, the job, the GPUs, then memory
and engine details, llama.cpp offload, training, images and video, prices and output. A field
not named here is shown under "Options".
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the request models load pydantic: 'whichgpu --help' renders without them
    from whichgpu.answers.request import Request

ARGUMENTS = "Arguments"
OTHER = "Options"

_PANELS: dict[str, tuple[str, ...]] = {
    "The model": ("params", "quant", "offline", "family", "models"),
    "The job": (
        "task", "context", "batch", "prompt_tokens", "output_tokens", "tokens", "images",
        "videos", "steps", "train_tokens", "examples", "epochs", "example_tokens", "users",
        "tokens_per_s_each", "tokens_per_day", "concurrency", "requests_per_s", "ttft", "tpot",
        "objective", "deadline", "max_price_per_hour", "budget", "duration", "work",
        "rate_of_work", "unit", "per", "max_throughput", "workload", "model",
        "budget_per_hour", "hours_per_month", "horizon_months", "lengths", "prefix_cache_hit"),
    "GPUs": (
        "gpu", "gpu_spec", "count", "gpus", "tp", "pp", "zero", "only", "max_gpus",
        "calibration", "precision", "vendor", "min_memory", "form_factor", "sort",
        "priced_only", "profile", "split_mode", "tensor_split", "interconnect",
        "gpus_per_node", "power_cap", "power_budget",
        "expert_parallel",
        "ring_degree"),
    "Memory and engine": (
        "kv_dtype", "engine", "engine_version", "flash_attention", "allow_long_context",
        "host_ram", "host_memory", "host_bandwidth", "speculative", "draft_tokens",
        "lora_adapters", "disaggregate", "kernel_db"),
    "llama.cpp offload": (
        "gpu_layers", "n_cpu_moe", "cpu_moe", "override_tensor", "ubatch", "mmap"),
    "Training": (
        "optimizer", "gradient_checkpointing", "master_weights", "fused_loss", "loss",
        "framework", "activation_offloading", "fp8_training", "lora_rank", "lora_targets",
        "compile", "activation_offload_layers"),
    "RL post-training": (
        "generations", "completion_tokens", "tuning", "rollout_engine", "rollout_gpus",
        "rollout_share"),
    "Images and video": (
        "resolution", "frames", "cfg", "offload", "vae_tiling", "sampling_steps",
        "cache_embeddings", "blocks_to_swap"),
    "Owning": (
        "purchase_price", "resale_value", "years", "host_share", "tdp", "load_factor",
        "utilization", "kwh_price", "pue", "cooling_per_hour", "maintenance_per_year",
        "rent_price", "curve", "vs"),
    "Prices": (
        "prices", "currency", "rate", "max_age", "spot", "on_demand", "provider",
        "checkpoint_every", "store", "feed", "vs_api", "cached_tokens", "api_prices"),
    "Output": ("as_json", "top", "export", "export_option", "limit", "lang"),
}
ORDER: tuple[str, ...] = tuple(_PANELS)
_BY_FIELD = {name: panel for panel, names in _PANELS.items() for name in names}
#: commands with fewer options than this keep them in one panel
MIN_OPTIONS_FOR_PANELS = 10

_SIZES = {"host_ram", "min_memory"}
_DURATIONS = {"deadline", "duration", "ttft", "tpot", "checkpoint_every", "wait"}
_MONEY = {"budget", "max_price_per_hour", "purchase_price", "rent_price", "kwh_price",
          "resale_value", "host_share", "cooling_per_hour", "maintenance_per_year",
          "budget_per_hour"}
_COUNTS = {"tokens", "images", "videos", "steps", "train_tokens", "tokens_per_day", "work",
           "per", "params", "examples"}
_TOKENS = {"context", "prompt_tokens", "output_tokens", "example_tokens"}
_NAMED = {"quant": "FORMAT", "kv_dtype": "FORMAT", "prices": "LIST", "currency": "CODE",
          "rate": "PAIR=RATE", "store": "FILE", "file": "FILE", "output": "FILE",
          "append": "FOLDER", "host_memory": "TYPE", "host_bandwidth": "BANDWIDTH",
          "resolution": "WxH", "rate_of_work": "RATE", "requests_per_s": "RATE",
          "utilization": "SHARE", "tdp": "POWER", "model": "MODEL", "lang": "LANG",
          "override_tensor": "PATTERN=CPU", "engine_version": "VERSION",
          "lora_targets": "MODULES", "sort": "KEY", "hours_per_month": "HOURS",
          "horizon_months": "MONTHS", "calibration": "PROFILE", "gpu": "GPU",
          "source": "SOURCE", "as_id": "GPU", "observed_at": "DATE", "feed": "FEED",
          "profile": "NAME"}


def panel(model: type[Request], name: str) -> str | None:
    """The help panel of a field's option (None: the default panel)."""
    if len(model.model_fields) < MIN_OPTIONS_FOR_PANELS:
        return None
    return _BY_FIELD.get(name)


def metavar(model: type[Request], name: str) -> str | None:
    """What the help shows after a field's flag: its Cli metavar, else one from its kind."""
    from whichgpu.answers.fields import base_type, cli_of, is_bool, is_list

    cli = cli_of(model, name)
    if cli.metavar:
        return cli.metavar
    if is_bool(model, name):
        return None
    if name in _NAMED:
        return _NAMED[name]
    if name in _SIZES:
        return "SIZE"
    if name in _DURATIONS:
        return "DURATION"
    if name in _MONEY:
        return "MONEY"
    if name in _COUNTS:
        return "COUNT"
    if name in _TOKENS:
        return "TOKENS"
    base = base_type(model.model_fields[name].annotation)
    if is_list(model, name):
        return "TEXT"
    if isinstance(base, type) and issubclass(base, Enum):
        return name.upper().replace("_", "-")
    if base is int or cli.text:
        return "N" if not cli.text else "NUMBER"
    if base is float:
        return "NUMBER"
    return name.upper().replace("_", "-")
