"""Hugging Face Hub access: config.json / model_index.json and safetensors headers.

Only small files are fetched (configs of a few KB; safetensors headers through HTTP range
requests), never weights. ``huggingface_hub`` handles ``HF_TOKEN``, ``HF_HUB_OFFLINE`` and the
local cache; every failure becomes an error that says what to do next.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from typing import Any

from whichgpu.errors import DataError, InputError, WhichGPUError
from whichgpu.models.spec import CheckpointInfo, ModelSpec

TIMEOUT_S = 10.0  # per request; the Hub answers config requests in well under a second
# huggingface_hub's rule: letters, digits, '-', '_', '.'; no '--' or '..'; at most 96 chars
_ID = re.compile(r"^[A-Za-z0-9][\w.\-]{0,95}/[A-Za-z0-9][\w.\-]{0,95}$")


def looks_like_hub_id(text: str) -> bool:
    """``org/name`` in the Hub's id syntax (not a path that exists, not a URL)."""
    return bool(_ID.match(text)) and ".." not in text and "--" not in text


def validate_hub_id(repo_id: str) -> str:
    text = repo_id.strip()
    if not looks_like_hub_id(text):
        raise InputError(f"{repo_id!r} is not a Hugging Face model id; ids look like "
                         "org/name, e.g. meta-llama/Llama-3.1-8B-Instruct")
    return text


def _offline(offline: bool | None) -> bool:
    if offline is not None:
        return offline
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _hub_error(exc: BaseException, repo_id: str, what: str, offline: bool) -> WhichGPUError:
    """A whichgpu error for a huggingface_hub exception, saying what to do."""
    from huggingface_hub import errors as e

    if isinstance(exc, e.GatedRepoError):
        return InputError(
            f"{repo_id} is gated: accept its licence on https://huggingface.co/{repo_id} with "
            "your account, then set HF_TOKEN to a token of that account (or run 'hf auth "
            "login'); or use a preset if one matches ('whichgpu models')")
    if isinstance(exc, e.RepositoryNotFoundError):
        return InputError(
            f"{repo_id} was not found on the Hugging Face Hub (or it is private): check the "
            "id's spelling and case; for a private repo set HF_TOKEN to a token that can read "
            "it")
    if isinstance(exc, e.RevisionNotFoundError):
        return InputError(f"{repo_id}: revision not found on the Hub")
    if isinstance(exc, e.LocalEntryNotFoundError):
        if offline:
            return InputError(
                f"{repo_id}: {what} is not in the local Hugging Face cache and Hub access is "
                "off (HF_HUB_OFFLINE is set, or offline was asked): unset HF_HUB_OFFLINE to "
                f"fetch it (a few KB, no weights), or pass a local config.json or a preset")
        return WhichGPUError(
            f"{repo_id}: could not reach the Hugging Face Hub to fetch {what} and it is not "
            "cached: check the network connection (or HF_ENDPOINT), or pass a local "
            "config.json or a preset")
    if isinstance(exc, e.EntryNotFoundError):
        return InputError(f"{repo_id} has no {what}: it is not a transformers model or "
                          "diffusers pipeline repository")
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status == 429:
        return WhichGPUError(
            f"the Hugging Face Hub is rate-limiting requests for {repo_id} (HTTP 429): wait a "
            "minute and retry, or set HF_TOKEN (authenticated requests get a higher limit)")
    if status in (401, 403):
        return InputError(f"{repo_id}: access denied by the Hub (HTTP {status}): set HF_TOKEN "
                          "to a token with read access")
    if status is not None and status >= 500:
        return WhichGPUError(f"the Hugging Face Hub failed (HTTP {status}) for {repo_id}: "
                             "retry later")
    return WhichGPUError(f"{repo_id}: could not fetch {what} from the Hugging Face Hub "
                         f"({type(exc).__name__}: {exc}); check the network, or use a preset "
                         "or a local config.json")


def fetch_json(repo_id: str, filename: str, *, offline: bool | None = None) -> Any:
    """A JSON file of a Hub repo, from the cache or the Hub; errors say what to do."""
    import huggingface_hub as hf
    from huggingface_hub import errors as e

    off = _offline(offline)
    try:
        path = hf.hf_hub_download(repo_id, filename, local_files_only=off,
                                  etag_timeout=TIMEOUT_S)
    except e.HFValidationError as exc:
        raise InputError(f"{repo_id!r} is not a valid Hub id: {exc}") from exc
    except Exception as exc:  # HTTP errors, cache misses, transport errors of any version
        raise _hub_error(exc, repo_id, filename, off) from exc
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"hub:{repo_id}/{filename}", f"cannot be read as JSON: {exc}") from exc


def fetch_optional_json(repo_id: str, filename: str, *, offline: bool | None = None) -> Any:
    """Like :func:`fetch_json`, but None when the repo has no such file."""
    from huggingface_hub import errors as e

    try:
        return fetch_json(repo_id, filename, offline=offline)
    except InputError as exc:
        cause = exc.__cause__
        if isinstance(cause, e.EntryNotFoundError) and not isinstance(
                cause, e.LocalEntryNotFoundError):
            return None
        raise


def safetensors_checkpoint(repo_id: str, *, offline: bool | None = None
                           ) -> tuple[CheckpointInfo | None, str | None]:
    """Exact bytes per dtype from the repo's safetensors headers, and a note if unavailable.

    Never raises for a missing or unreadable header: the config alone still gives the spec.
    """
    if _offline(offline):
        return None, "offline: checkpoint bytes not read from the safetensors headers"
    import huggingface_hub as hf
    from huggingface_hub import errors as e

    try:
        try:
            meta = hf.get_safetensors_metadata(repo_id, timeout=TIMEOUT_S)
        except TypeError:  # huggingface_hub releases before the timeout argument
            meta = hf.get_safetensors_metadata(repo_id)
    except e.NotASafetensorsRepoError:
        return None, "the repository has no safetensors weights: bytes from the config only"
    except Exception as exc:  # headers are a bonus; the config already resolved
        err = _hub_error(exc, repo_id, "safetensors headers", False)
        return None, f"checkpoint bytes unavailable ({err})"
    from whichgpu.models.safetensors_local import checkpoint_from_tensors

    tensors = [(name, t.dtype, list(t.shape))
               for fm in meta.files_metadata.values() for name, t in fm.tensors.items()]
    return checkpoint_from_tensors(tensors, f"safetensors:{repo_id}"), None


def spec_from_hub(repo_id: str, *, offline: bool | None = None) -> ModelSpec:
    """The ModelSpec of any Hub model (config.json) or diffusers pipeline (model_index.json)."""
    repo_id = validate_hub_id(repo_id)
    config = fetch_optional_json(repo_id, "config.json", offline=offline)
    if config is None:
        index = fetch_optional_json(repo_id, "model_index.json", offline=offline)
        if index is None:
            raise InputError(f"{repo_id} has neither config.json nor model_index.json: it is "
                             "not a transformers model or a diffusers pipeline")
        from whichgpu.models.diffusion import parse_pipeline

        def read(rel: str) -> Any:
            if rel == "model_index.json":
                return index
            return fetch_optional_json(repo_id, rel, offline=offline)

        return parse_pipeline(read, origin=f"hub:{repo_id}", source=f"hub:{repo_id}",
                              name=repo_id.split("/")[-1], hub_id=repo_id)
    from whichgpu.models.config_parse import parse_config

    spec = parse_config(config, origin=f"hub:{repo_id}/config.json", source=f"hub:{repo_id}",
                        hub_id=repo_id)
    ckpt, note = safetensors_checkpoint(repo_id, offline=offline)
    notes = spec.notes + ((note,) if note else ())
    return dataclasses.replace(spec, checkpoint=ckpt, notes=notes)
