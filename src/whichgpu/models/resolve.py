"""One entry point: whatever the user names → a ModelSpec.

Order: an explicit ``params`` count; an existing path (config.json, a model folder, a
diffusers pipeline folder, a .gguf file); a preset (alias or Hub id, offline); a bare size
("70B", or "106B-A12B" for a MoE); a Hub id (online, through huggingface_hub). Anything else
is an unknown model with the closest preset names as suggestions.

A server resolves names for visitors with ``files=False`` (or inside :func:`no_local_files`):
then no name is ever looked up on the file system, not even to see whether it exists, and a
name shaped like a path is refused from its text alone. Every spec, however it was built,
passes the plausibility bounds of :mod:`whichgpu.models.bounds`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whichgpu.errors import InputError, NotFoundError, WhichGPUError
from whichgpu.messages import Join, msg
from whichgpu.models.bounds import PASTED, check_spec
from whichgpu.models.generic import bare_size_spec, generic_spec
from whichgpu.models.local_file import file_kind, read_json, stat_path
from whichgpu.models.local_policy import (  # re-exported: the web asks here
    local_files_refused,
    no_local_files,
)
from whichgpu.models.preset_index import find_preset, load_preset, preset_names
from whichgpu.models.spec import ModelSpec

_HINT = msg("model.hint", "give a preset alias (see 'whichgpu models'), a Hub id like "
            "org/name, a path to a config.json, a model folder or a .gguf file, or a size like "
            "70B (106B-A12B for a MoE)")
MAX_NAME_CHARS = 1000  # a Hub id is at most 96 + 1 + 96 characters; paths rarely pass 300
MODEL_FILE_SUFFIXES = (".json", ".gguf", ".safetensors", ".bin", ".pt", ".pth", ".ckpt",
                       ".csv", ".toml")

HubLookup = Callable[[str], ModelSpec]


def looks_like_path(text: str) -> bool:
    """A file name or a path, judged from the text alone (nothing is looked up)."""
    t = text.strip()
    return (t.startswith(("/", "./", "../", "~", "\\", ".")) or "\x00" in t or ".." in t
            or ":\\" in t or t.lower().endswith(MODEL_FILE_SUFFIXES) or "//" in t)


def resolve_model(name: str | None, *, params: float | None = None,
                  offline: bool | None = None, files: bool = True,
                  hub: HubLookup | None = None,
                  config: dict[str, Any] | None = None) -> ModelSpec:
    """A ModelSpec for ``name``: alias, Hub id, config.json/folder path, .gguf path or size.

    ``params`` (e.g. ``70e9``) asks for a generic dense decoder of that size, marked
    ``approximate``; ``config`` is a config.json's contents (pasted on the web).
    ``offline=True`` never touches the network; None follows ``HF_HUB_OFFLINE``.
    ``files=False`` never reads or even looks for a local file (a server resolving a
    visitor's name). ``hub(repo_id)`` replaces the Hub look-up (a server's bounded one).
    """
    if params is not None:
        return check_spec(generic_spec(params, label=None))
    if config is not None:
        return check_spec(_pasted(config), PASTED)
    if not isinstance(name, str) or not name.strip():
        raise InputError(msg("model.missing", "no model given; {hint}", hint=_HINT))
    text = name.strip()
    if len(text) > MAX_NAME_CHARS:
        raise InputError(msg("model.too_long", "a model name of {n:,} characters is not a "
                             "model name; {hint}", n=len(text), hint=_HINT))
    refused = local_files_refused() or (None if files else
                                        msg("model.no_files", "local files are not read here: "
                                            "{hint}", hint=_HINT))
    if refused is None:
        path = Path(text).expanduser() if text.startswith("~") else Path(text)
        found = stat_path(path)
        if found is not None:
            return check_spec(_from_path(path, found.st_mode), str(path))
        if text.lower().endswith(MODEL_FILE_SUFFIXES) or text.startswith(("./", "../", "~/")):
            raise InputError(f"file not found: {text}")
    elif looks_like_path(text):
        raise InputError(refused)

    preset = find_preset(text)
    if preset is not None:
        return check_spec(load_preset(preset, requested=text))

    size = bare_size_spec(text)  # 70B, or 106B-A12B for a MoE
    if size is not None:
        return check_spec(size)

    from whichgpu.models.hub import looks_like_hub_id

    if looks_like_hub_id(text):
        from whichgpu.models.hub import spec_from_hub

        try:
            spec = hub(text) if hub is not None else spec_from_hub(text, offline=offline)
        except WhichGPUError as exc:
            raise _with_closest_presets(exc, text) from exc
        return check_spec(spec, f"hub:{text}")
    raise NotFoundError("model", text[:200], preset_names(), hint=refused or _HINT)


def _pasted(config: dict[str, Any]) -> ModelSpec:
    """A config.json's contents as given (nothing is read from disk)."""
    from whichgpu.models.config_parse import parse_config
    from whichgpu.models.local_file import MAX_JSON_DEPTH, json_depth

    if "_class_name" in config:
        raise InputError(msg("paste.model_index", "a diffusers model_index.json cannot be "
                             "pasted: name the pipeline's preset or Hub id instead"))
    if json_depth(config) > MAX_JSON_DEPTH:
        raise InputError(msg("paste.depth", "the pasted config.json nests more than {n} levels "
                             "deep; a model config nests a few", n=MAX_JSON_DEPTH))
    return parse_config(config, origin=PASTED, source="config:pasted",
                        model_id="pasted config.json")


def _with_closest_presets(exc: WhichGPUError, repo_id: str) -> WhichGPUError:
    """A Hub look-up's error with the closest shipped presets by Hub id, which answer
    offline (the same kind of error, so that a server still answers 422 or 503)."""
    from whichgpu.models.hub import HubUnavailable
    from whichgpu.models.preset_index import closest_by_hub_id

    if type(exc) not in (InputError, HubUnavailable, WhichGPUError):
        return exc
    close = closest_by_hub_id(repo_id)
    if not close:
        return exc
    said = exc.args[0] if exc.args else str(exc)
    return type(exc)(msg("hub.closest_presets", "{error}; closest presets by Hub id (offline): "
                         "{close}", error=said, close=Join(close)))


def _from_path(path: Path, mode: int) -> ModelSpec:
    if stat.S_ISDIR(mode):
        if _is_file(path / "model_index.json"):
            return _pipeline_folder(path)
        if _is_file(path / "config.json"):
            return _config_file(path / "config.json", folder=path)
        ggufs = sorted(p for p in path.glob("*.gguf") if _is_file(p))
        if len(ggufs) == 1:
            return _gguf(ggufs[0])
        raise InputError(f"{path}: no config.json, model_index.json or single .gguf file in "
                         "this folder")
    if not stat.S_ISREG(mode):
        raise InputError(f"{path} is {file_kind(mode)}, not a regular file: give a "
                         "config.json, a model folder or a .gguf file")
    if path.suffix.lower() == ".gguf":
        return _gguf(path)
    if path.name == "model_index.json":
        return _pipeline_folder(path.parent)
    return _config_file(path)


def _is_file(path: Path) -> bool:
    """A regular file (a FIFO or a device named config.json is not one)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_json_file(path: Path) -> object:
    """Parsed JSON of a regular file, or a DataError naming the file (see local_file)."""
    return read_json(path)


def _config_file(path: Path, folder: Path | None = None) -> ModelSpec:
    import dataclasses

    from whichgpu.models.config_parse import parse_config

    spec = parse_config(read_json_file(path), origin=str(path), source=f"config:{path}",
                        model_id=str(folder or path))
    if folder is not None:
        from whichgpu.models.safetensors_local import checkpoint_from_folder

        ckpt = checkpoint_from_folder(folder)
        if ckpt is not None:
            spec = dataclasses.replace(spec, checkpoint=ckpt)
    return spec


def _pipeline_folder(folder: Path) -> ModelSpec:
    from whichgpu.models.diffusion import parse_pipeline

    def read(rel: str):
        f = folder.joinpath(*rel.split("/"))
        return read_json_file(f) if _is_file(f) else None

    return parse_pipeline(read, origin=str(folder), source=f"pipeline:{folder}",
                          name=folder.name, local_folder=folder)


def _gguf(path: Path) -> ModelSpec:
    from whichgpu.models.gguf_file import spec_from_gguf

    return spec_from_gguf(path)


__all__ = ["MAX_NAME_CHARS", "looks_like_path", "no_local_files",
           "read_json_file", "resolve_model"]
