"""Turn a validation row (memory.csv / speed.csv) into a Workload and a GPU configuration."""

from __future__ import annotations

from functools import cache

from whichgpu.catalog.gpus import GPU, get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.workload import ENGINES, Workload, as_task
from whichgpu.units import GB, MB, EngineVersion, GiB, MiB

# Engines named in published measurements, mapped to the engine model that behaves alike.
ENGINE_ALIASES = {
    "ollama": "llamacpp", "llamacpp-vulkan": "llamacpp", "llama.cpp": "llamacpp",
    "llamacpp-rocm": "llamacpp", "llamacpp-metal": "llamacpp", "llamacpp-sycl": "llamacpp",
    "lmstudio": "llamacpp", "exllama": "exllamav2", "mlc-llm": "mlc",
    "gpt-fast": "vllm",  # torch.compile + CUDA graphs: a compiled decode loop like vLLM's
    "nim": "trtllm", "tensorrt": "trtllm", "tensorrt-llm": "trtllm",
    "litgpt": "transformers", "torchtune": "transformers", "peft": "transformers",
    "unsloth": "transformers", "axolotl": "transformers", "trl": "transformers",
    "deepspeed": "transformers", "torchtitan": "transformers", "llm-foundry": "transformers",
    "vectorlm": "transformers", "megatron": "transformers",
    "whichgpu-bench": "transformers",  # whichgpu bench model: eager PyTorch, random weights
    # diffusion split over GPUs by sequence parallelism (xDiT's USP, cache-dit's and
    # ParaAttention's context parallelism): the layout the model has as SGLang Diffusion's
    # (diffusion_parallel.py); a ring degree is the setting ring_degree=N
    "xdit": "sglang", "cache-dit": "sglang", "para-attn": "sglang",
}
UNITS = {"B": 1, "MB": MB, "MiB": MiB, "GB": GB, "GiB": GiB}
_BOOLS = ("imatrix", "mmap", "vae_tiling", "vae_slicing", "tiny_vae", "fused_loss",
          "flash_attention", "master_weights", "cfg", "gradient_checkpointing",
          "optimizer_in_backward", "fp8_training", "activation_offloading",
          "selective_checkpointing", "expert_parallel", "moe_kernels")
_TARGETS = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj",
            "up": "up_proj", "down": "down_proj"}


@cache
def _model(hub_id: str):
    from whichgpu.models import resolve_model

    return resolve_model(hub_id, offline=True)


def settings(row: dict[str, str]) -> dict[str, str]:
    """Extra settings from the optional ``settings`` column: 'offload=model; steps=50'."""
    out = {}
    for part in (row.get("settings") or "").split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _int(row: dict[str, str], key: str) -> int | None:
    v = (row.get(key) or "").strip()
    return int(float(v)) if v else None


def _bool(text: str | None) -> bool | None:
    if text is None or text.strip() == "":
        return None
    return text.strip().lower() in ("true", "1", "yes", "on")


def engine_of(row: dict[str, str]) -> str | None:
    e = (row.get("engine") or "").strip().lower()
    if not e or e in ("wan-generate", "lightx2v", "wan2gp", "tensorrt", "flux-fp8-api"):
        return None
    if e in ("diffusers", "comfyui"):
        return e
    e = ENGINE_ALIASES.get(e, e)
    if e not in ENGINES:
        raise InputError(f"engine {row.get('engine')!r} has no model here")
    return e


def workload_of(row: dict[str, str], *, global_batch: bool = False) -> Workload:
    """The Workload a row describes (its model resolved offline from the presets).

    ``global_batch``: the row's batch counts sequences across all data-parallel GPUs (speed.csv
    training rows); the Workload's batch is per replica.
    """
    extra = settings(row)
    model = _model(row["model"].strip())
    task = (row.get("task") or "inference").strip()
    engine = engine_of(row) if task in ("inference", "image", "video") else None
    # a measured run happened, so its context was possible (RoPE scaling, ALiBi ...)
    kw: dict = {"model": model, "task": task, "engine": engine, "allow_long_context": True}
    named_engine = (row.get("engine") or "").strip().lower()
    if engine == "llamacpp" and named_engine.startswith("llamacpp-"):
        kw["backend"] = named_engine.split("-", 1)[1]  # the ggml backend the row names
    if engine:
        from whichgpu.estimate.speed.kernels import eras, version_label
        from whichgpu.units import parse_engine_version

        if eras(engine):
            # the build measured: its engine_version, else its date (blank on neither: today's)
            label = version_label(engine, measured_build(row))
            kw["engine_version"] = parse_engine_version(label) if label else None
    quant = (row.get("quant") or "").strip()
    if quant and task in ("full-ft", "pretrain") and quant == "fp8":
        kw["fp8_training"] = True  # FP8 training keeps bf16 weights
    elif quant:
        kw["quant"] = quant
    context = _int(row, "context") or _int(row, "seq_len")
    prompt = _int(row, "prompt_tokens")
    output = _int(row, "output_tokens")
    if context:
        kw["context"] = context
    elif prompt or output:
        kw["context"] = (prompt or 0) + (output or 0)
    if prompt:
        kw["prompt_tokens"] = prompt
    if output:
        kw["output_tokens"] = output
    batch = _int(row, "batch")
    if batch and batch > 0:
        kw["batch"] = batch
        if global_batch and task in ("full-ft", "pretrain", "lora", "qlora"):
            replicas = max(1, (_int(row, "gpu_count") or 1) // (_int(row, "tp") or 1))
            kw["batch"] = max(1, batch // replicas)
    kv = (row.get("kv_dtype") or "").strip()
    if kv:
        kw["kv_dtype"] = kv
    opt = (row.get("optimizer") or "").strip()
    if opt:
        kw["optimizer"] = opt
    gc = _bool(row.get("gradient_checkpointing"))
    if gc is not None:
        kw["gradient_checkpointing"] = gc
    rank = _int(row, "lora_rank")
    if rank:
        kw["lora_rank"] = rank
    targets = (row.get("lora_targets") or "").strip()
    if targets:
        kw["lora_targets"] = ("all-linear",) if targets == "all-linear" else tuple(
            _TARGETS.get(t.strip(), t.strip()) for t in targets.split(","))
    gpus = _int(row, "gpu_count") or 1
    kw["gpus"] = gpus
    tp = _int(row, "tp")
    if tp:
        kw["tp"] = tp
    res = (row.get("resolution") or "").strip()
    if res:
        w_, h_ = res.lower().split("x")
        kw["resolution"] = (int(w_), int(h_))
    frames = _int(row, "frames")
    if frames:
        kw["frames"] = frames
    steps = _int(row, "steps")
    if steps:
        kw["steps"] = steps
    cfg = _bool(row.get("cfg"))
    if cfg is not None:
        kw["cfg"] = cfg
    if "unmodelled" in extra:
        raise InputError(extra["unmodelled"])
    host_args: dict[str, str] = {}
    for key, value in extra.items():
        if key in ("zero", "pp", "steps", "batch", "lora_rank", "ubatch",
                   "activation_offload_layers", "ring_degree"):
            kw[key] = int(value)
        elif key in ("n_cpu_moe", "ngl"):
            _llamacpp_offload(kw, key, value, model)
        elif key == "ot":
            kw["tensor_overrides"] = kw.get("tensor_overrides", ()) + tuple(
                tuple(part.split("=", 1)) for part in value.split(",") if "=" in part)
        elif key in ("host_ram", "host_memory", "host_bandwidth"):
            host_args[key] = value
        elif key in _BOOLS:
            kw[key] = _bool(value)
        elif key == "lora_targets":
            kw[key] = tuple(_TARGETS.get(t.strip(), t.strip()) for t in value.split(","))
        elif key in ("offload", "engine", "quant", "quant_scope", "optimizer", "kv_dtype",
                     "loss", "framework"):
            kw[key] = value
        elif key in ("cache_embeddings", "blocks_to_swap"):  # image-lora: _diffusion_trainer
            continue
        else:
            raise InputError(f"unknown setting {key!r}")
    if host_args:
        kw["host"] = _host(host_args)
    if task in ("lora", "qlora", "full-ft", "pretrain"):
        _apply_framework(kw, row, task)
    if task == "image-lora":
        _diffusion_trainer(kw, row, extra)
    return Workload(**kw)


def _diffusion_trainer(kw: dict, row: dict[str, str], extra: dict[str, str]) -> None:
    """An image-lora row's trainer (settings ``framework=``, else its engine column) sets what
    stays resident, as ``--framework`` does; ``cache_embeddings`` and ``blocks_to_swap``."""
    from whichgpu.estimate.diffusion_trainers import trainer_name

    name = trainer_name(kw.pop("framework", None) or row.get("engine"))
    if name:
        kw["diffusion_trainer"] = name
    if "cache_embeddings" in extra:
        kw["cache_embeddings"] = _bool(extra["cache_embeddings"])
    if "blocks_to_swap" in extra:
        kw["blocks_to_swap"] = int(extra["blocks_to_swap"])


def _apply_framework(kw: dict, row: dict[str, str], task: str) -> None:
    """A training row's framework (settings ``framework=``, else its engine column) fills what
    the row does not state, as ``--framework`` does on the CLI."""
    from whichgpu.estimate.frameworks import apply_framework, framework_id

    name = kw.get("framework") or TRAINING_FRAMEWORKS.get(
        (row.get("engine") or "").strip().lower())
    if not name:
        kw.pop("framework", None)
        return
    kw["framework"] = framework_id(name)
    given = {k: kw.get(k) for k in ("optimizer", "gradient_checkpointing",
                                    "activation_offloading", "loss", "master_weights",
                                    "optimizer_in_backward", "lora_rank", "lora_targets", "quant",
                                    "selective_checkpointing")}
    if kw.get("fused_loss") and given["loss"] is None:
        given["loss"] = "fused"
    for key, value in apply_framework(kw["framework"], as_task(task), given).items():
        if value is None:
            continue
        if key == "lora_targets" and isinstance(value, str):
            value = ("all-linear",) if value == "all-linear" else tuple(
                _TARGETS.get(t.strip(), t.strip()) for t in value.split(","))
        kw[key] = value


# Training frameworks named in the engine column of published measurements -> profile names
# (estimate/frameworks.py); LitGPT and others are modelled with the plain defaults.
TRAINING_FRAMEWORKS = {"unsloth": "unsloth", "torchtune": "torchtune", "axolotl": "axolotl",
                       "peft": "transformers", "trl": "transformers",
                       "transformers": "transformers", "llm-foundry": "llm-foundry",
                       "torchtitan": "torchtitan"}


def _llamacpp_offload(kw: dict, key: str, value: str, model) -> None:
    """``n_cpu_moe=N`` / ``n_cpu_moe=all`` (--cpu-moe) and ``ngl=N`` / ``ngl=all``."""
    v = value.strip().lower()
    if key == "n_cpu_moe":
        kw["cpu_moe_layers"] = model.num_layers if v == "all" else int(v)
    elif v not in ("all", "999", "99"):
        kw["gpu_layers"] = int(v)


def gpu_of(row: dict[str, str]) -> GPU:
    gid = (row.get("gpu") or "").strip()
    if not gid:
        raise InputError("no GPU given")
    return get_gpu(gid)


def measured_bytes(row: dict[str, str]) -> tuple[float, str]:
    if (row.get("bytes") or "").strip():
        return float(row["bytes"]), "bytes"
    return float(row["value"]) * UNITS[row["unit"].strip()], "bytes"


def _host(args: dict[str, str]):
    """The Host a row's settings state (``host_ram=96GB; host_bandwidth=102GB/s``): data, read
    here; a person's flags are read in answers/inputs/host.py."""
    from whichgpu.estimate.host import MemorySpec, host_with
    from whichgpu.units import parse_memory_type, parse_size

    ram, bw, mem = args.get("host_ram"), args.get("host_bandwidth"), args.get("host_memory")
    return host_with(parse_size(ram) if ram else None,
                     MemorySpec(*parse_memory_type(mem)) if mem else None,
                     float(parse_size(bw.removesuffix("/s"))) if bw else None)


def measured_build(row: dict[str, str]) -> EngineVersion | None:
    """The engine build a validation row measured, read from its engine and engine_version
    columns ('llama.cpp b6918', 'Ollama (Sep 2025)') and its date, which wins over a date
    in the text (None when all are blank)."""
    from whichgpu.units import parse_engine_version

    named = f"{row.get('engine') or ''} {row.get('engine_version') or ''}".strip()
    return parse_engine_version(named, row.get("date"))


def serving_build(row: dict[str, str], engine: str) -> EngineVersion | None:
    """The engine build a run measured, as the speed model's engine eras take it
    (estimate/data/engine_kernels.toml ``[[version]]``; None: today's build, also for an engine
    without eras). A row naming a numbered release is that release, matched by its number
    ('SGLang 0.4.2.post4' is the 0.4 era), and its date does not move it into an era: 'SGLang
    0.5.3' dated '2025' (read as June 2025) is not SGLang 0.4. A row naming no release is
    placed by its date, as the speed validation does (:func:`measured_build`)."""
    from whichgpu.estimate.speed.kernels import eras, version_label
    from whichgpu.estimate.speed.serving_engine import version_tuple
    from whichgpu.units import parse_engine_version

    if not eras(engine):
        return None
    text = (row.get("engine_version") or "").strip()
    dated = None if version_tuple(text) else row.get("date")
    label = version_label(engine, parse_engine_version(f"{engine} {text}".strip(), dated))
    return parse_engine_version(label) if label else None
