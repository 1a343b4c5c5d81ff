"""Model names from the web: presets, sizes, Hub ids and pasted config.json, never paths.

``resolve_model`` in the models package also reads files and folders; a server must not read
its own disk on a visitor's say-so, so the web resolves names itself, in the same order minus
the path step. Hub ids are checked against the Hub's id syntax before any look-up, and the
look-up runs under a time limit.

The limit also binds huggingface_hub itself: after a timeout it retries (a 60 s request, then
up to five more with back-off), which would keep a hub worker busy long after the visitor got
the 503. ``install_hub_deadline`` adds a request hook to huggingface_hub's HTTP client that
shortens each request to the time left and refuses to start one after the deadline, so the
worker is free again within a second or two of it.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from whichgpu.errors import InputError, NotFoundError, WhichGPUError
from whichgpu.models.generic import bare_size_spec, generic_spec, parse_bare_size
from whichgpu.models.hub import looks_like_hub_id
from whichgpu.models.preset_index import find_preset, load_preset, preset_names
from whichgpu.models.resolve import _HINT as MODEL_HINT
from whichgpu.models.spec import ModelSpec
from whichgpu.units import parse_count

HUB_TIMEOUT_S = 20.0
NO_FILES = ("the web server reads no files: give a preset alias, a Hub id (org/name) or a "
            "size such as 70B, or paste the contents of a config.json")
_pool = cf.ThreadPoolExecutor(max_workers=4, thread_name_prefix="hub")
T = TypeVar("T")


def looks_like_path(text: str) -> bool:
    """A file name or path, which the server refuses to read."""
    t = text.strip()
    return (t.startswith(("/", "./", "../", "~", "\\")) or t.lower().endswith(
        (".json", ".gguf", ".safetensors", ".csv")) or ":\\" in t or ".." in t)


def check_name(text: str) -> str:
    """Refuse names that would make the models package read a path on the server."""
    t = text.strip()
    if looks_like_path(t) or (not looks_like_hub_id(t) and Path(t).exists()):
        raise InputError(NO_FILES)
    return t


class HubDeadlineExceeded(Exception):
    """A Hub request the web would start after its look-up's time limit (never retried)."""


_deadline = threading.local()


def hub_deadline_hook(request: Any) -> None:
    """huggingface_hub request hook: no request after the look-up's deadline, and none that
    may outlive it (its timeouts are cut to the time left)."""
    end = getattr(_deadline, "at", None)
    if end is None:  # not a web look-up (e.g. the CLI in the same process)
        return
    left = end - time.monotonic()
    if left <= 0:
        raise HubDeadlineExceeded("the web's time limit for this Hub look-up has passed")
    timeout = request.extensions.get("timeout")
    if isinstance(timeout, dict):
        request.extensions["timeout"] = {k: left if v is None else min(v, left)
                                         for k, v in timeout.items()}


def install_hub_deadline() -> bool:
    """Add :func:`hub_deadline_hook` to huggingface_hub's shared HTTP client (huggingface_hub
    1.0 and later; older releases keep their own retries). Returns whether it is installed."""
    try:
        import huggingface_hub
        from huggingface_hub.utils import _http
    except ImportError:
        return False
    factory = getattr(_http, "default_client_factory", None)
    setter = getattr(huggingface_hub, "set_client_factory", None)
    if factory is None or setter is None:
        return False

    def client_factory():
        client = factory()
        if hub_deadline_hook not in client.event_hooks["request"]:
            client.event_hooks["request"] = [*client.event_hooks["request"],
                                             hub_deadline_hook]
        return client

    setter(client_factory)
    return True


def with_timeout(fn: Callable[[], T], what: str, timeout_s: float | None = None) -> T:
    """Run ``fn`` (which may reach the Hugging Face Hub) for at most ``timeout_s``
    (``HUB_TIMEOUT_S``); its Hub requests stop at the same deadline."""
    limit = HUB_TIMEOUT_S if timeout_s is None else timeout_s
    end = time.monotonic() + limit

    def too_slow() -> WhichGPUError:
        return WhichGPUError(f"{what}: the Hugging Face Hub did not answer within {limit:g} s; "
                             "retry later, or use a preset or a pasted config.json")

    def bounded() -> T:
        _deadline.at = end
        try:
            return fn()
        except WhichGPUError:
            if time.monotonic() >= end:  # stopped by the deadline: say so, as the caller does
                raise too_slow() from None
            raise
        finally:
            _deadline.at = None

    future = _pool.submit(bounded)
    try:
        return future.result(timeout=limit)
    except cf.TimeoutError:
        raise too_slow() from None


def is_hub_lookup(name: str | None) -> bool:
    """Whether resolving ``name`` would ask the Hub (not a preset, not a size)."""
    if not name:
        return False
    t = name.strip()
    return find_preset(t) is None and parse_bare_size(t) is None and looks_like_hub_id(t)


def web_model(name: str | None, *, config: dict[str, Any] | None = None,
              params: str | None = None) -> ModelSpec:
    """The ModelSpec of a preset, a size, a Hub id or a pasted config.json."""
    if params:
        return generic_spec(float(parse_count(params, what="parameter count")), label=None)
    if config is not None:
        from whichgpu.models.config_parse import parse_config

        if "_class_name" in config:
            raise InputError("a diffusers model_index.json cannot be pasted: name the "
                             "pipeline's preset or Hub id instead")
        return parse_config(config, origin="pasted config.json", source="config:pasted",
                            model_id="pasted config.json")
    if name is None or not name.strip():
        raise InputError(f"no model given; {MODEL_HINT}")
    text = check_name(name)
    preset = find_preset(text)
    if preset is not None:
        return load_preset(preset, requested=text)
    size = bare_size_spec(text)  # 70B, or 106B-A12B for a MoE
    if size is not None:
        return size
    if looks_like_hub_id(text):
        from whichgpu.models.hub import spec_from_hub

        return with_timeout(lambda: spec_from_hub(text), text)
    raise NotFoundError("model", text, preset_names(), hint=MODEL_HINT)
