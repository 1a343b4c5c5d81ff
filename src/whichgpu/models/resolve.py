"""One entry point: whatever the user names → a ModelSpec.

Order: an explicit ``params`` count; an existing path (config.json, a model folder, a
diffusers pipeline folder, a .gguf file); a preset (alias or Hub id, offline); a bare size
("70B", or "106B-A12B" for a MoE); a Hub id (online, through huggingface_hub). Anything else
is an unknown model with the closest preset names as suggestions.
"""

from __future__ import annotations

import json
from pathlib import Path

from whichgpu.errors import DataError, InputError, NotFoundError
from whichgpu.models.generic import bare_size_spec, generic_spec
from whichgpu.models.preset_index import find_preset, load_preset, preset_names
from whichgpu.models.spec import ModelSpec

_HINT = ("give a preset alias (see 'whichgpu models'), a Hub id like org/name, a path to a "
         "config.json, a model folder or a .gguf file, or a size like 70B (106B-A12B for a MoE)")


def resolve_model(name: str, *, params: float | None = None,
                  offline: bool | None = None) -> ModelSpec:
    """A ModelSpec for ``name``: alias, Hub id, config.json/folder path, .gguf path or size.

    ``params`` (e.g. ``70e9``) asks for a generic dense decoder of that size, marked
    ``approximate``. ``offline=True`` never touches the network; None follows
    ``HF_HUB_OFFLINE``.
    """
    if params is not None:
        return generic_spec(params, label=None)
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"no model given; {_HINT}")
    text = name.strip()

    path = Path(text).expanduser()
    if path.exists():
        return _from_path(path)
    if text.lower().endswith((".gguf", ".json")) or text.startswith(("./", "../", "~/")):
        raise InputError(f"file not found: {text}")

    preset = find_preset(text)
    if preset is not None:
        return load_preset(preset, requested=text)

    size = bare_size_spec(text)  # 70B, or 106B-A12B for a MoE
    if size is not None:
        return size

    from whichgpu.models.hub import looks_like_hub_id

    if looks_like_hub_id(text):
        from whichgpu.models.hub import spec_from_hub

        return spec_from_hub(text, offline=offline)
    raise NotFoundError("model", text, preset_names(), hint=_HINT)


def _from_path(path: Path) -> ModelSpec:
    if path.is_dir():
        if (path / "model_index.json").is_file():
            return _pipeline_folder(path)
        if (path / "config.json").is_file():
            return _config_file(path / "config.json", folder=path)
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return _gguf(ggufs[0])
        raise InputError(f"{path}: no config.json, model_index.json or single .gguf file in "
                         "this folder")
    if path.suffix.lower() == ".gguf":
        return _gguf(path)
    if path.name == "model_index.json":
        return _pipeline_folder(path.parent)
    return _config_file(path)


def read_json_file(path: Path) -> object:
    """Parsed JSON, or a DataError naming the file."""
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise DataError(path, "not a UTF-8 text file (is it a weights file?)") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                        f"{exc.msg}") from exc


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
        return read_json_file(f) if f.is_file() else None

    return parse_pipeline(read, origin=str(folder), source=f"pipeline:{folder}",
                          name=folder.name, local_folder=folder)


def _gguf(path: Path) -> ModelSpec:
    from whichgpu.models.gguf_file import spec_from_gguf

    return spec_from_gguf(path)
