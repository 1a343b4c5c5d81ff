"""Hugging Face Hub access: config.json / model_index.json and safetensors headers.

Only small files are fetched (configs of a few KB; safetensors headers through HTTP range
requests), never weights. ``huggingface_hub`` handles ``HF_TOKEN``, ``HF_HUB_OFFLINE`` and the
local cache; every failure becomes an error that says what to do next.

Every look-up runs under :func:`hub_limits`: a deadline for the whole look-up (every request
and every chunk of every download), a cap on the bytes of each response, and optionally no
retries. :func:`install_hub_limits` adds the hooks that enforce them to huggingface_hub's HTTP
client (huggingface_hub 1.0 and later, which use an httpx client); they do nothing for
requests made outside a look-up.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import importlib
import math
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from whichgpu.errors import DataError, InputError, WhichGPUError
from whichgpu.models.spec import CheckpointInfo, ModelSpec

TIMEOUT_S = 10.0  # per request; the Hub answers config requests in well under a second
LOOKUP_S = 120.0  # the whole look-up from the command line (the web sets its own, shorter)
# Before the first request to a host, one TCP connect tells whether it can be reached at all:
# with no network huggingface_hub would otherwise retry 5 times with back-off (about 24 s and
# 11 "Retrying..." lines) before failing. A name that does not resolve fails at once.
PROBE_S = 3.0
UNREACHABLE_KEEP_S = 30.0  # an unreachable host is not probed again for this long
MAX_CONFIG_BYTES = 2 * 2**20  # config.json / model_index.json: a few KB (the largest ~200 KB)
MAX_INDEX_BYTES = 32 * 2**20  # model.safetensors.index.json: DeepSeek-V3's is about 9 MB
MAX_SHARDS = 2000  # the largest checkpoints have a few hundred shards (DeepSeek-V3: 163)
SHARD_WORKERS = 8
# huggingface_hub's rule: letters, digits, '-', '_', '.'; no '--' or '..'; at most 96 chars
_ID = re.compile(r"^[A-Za-z0-9][\w.\-]{0,95}/[A-Za-z0-9][\w.\-]{0,95}$", re.ASCII)


def looks_like_hub_id(text: str) -> bool:
    """``org/name`` in the Hub's id syntax (not a path that exists, not a URL)."""
    return bool(_ID.match(text)) and ".." not in text and "--" not in text


def validate_hub_id(repo_id: str) -> str:
    text = repo_id.strip()
    if not looks_like_hub_id(text):
        raise InputError(f"{repo_id[:200]!r} is not a Hugging Face model id; ids look like "
                         "org/name, e.g. meta-llama/Llama-3.1-8B-Instruct")
    return text


def hub_offline(offline: bool | None = None) -> bool:
    """Whether Hub access is off: ``offline`` if given, else ``HF_HUB_OFFLINE``."""
    if offline is not None:
        return offline
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


# ------------------------------------------------------------------ limits of one look-up

class HubLimitExceeded(Exception):
    """A Hub request or download stopped by its look-up's limits (never retried)."""


class HubDeadlineExceeded(HubLimitExceeded):
    """The look-up's deadline has passed (a request would start, or a download go on)."""


class HubResponseTooLarge(HubLimitExceeded):
    """A response larger than the look-up allows for that file."""

    def __init__(self, url: str, limit: int) -> None:
        self.limit = limit
        super().__init__(f"{url}: more than {limit:,} bytes")


class HubUnreachable(HubLimitExceeded):
    """The Hub's host (or the proxy in the way) cannot be reached: no connection at all."""


class HubRetryRefused(HubLimitExceeded):
    """The same request again within one look-up (huggingface_hub retrying) when retries
    are off."""


@dataclasses.dataclass
class Limits:
    deadline: float  # time.monotonic() past which nothing more is sent or read
    max_bytes: int
    retries: bool = True
    connect_s: float | None = None  # at most this long to connect (a server: a few seconds)
    seen: set[tuple[str, str, str]] = dataclasses.field(default_factory=set)

    def left(self) -> float:
        return self.deadline - time.monotonic()


_local = threading.local()


def current_limits() -> Limits | None:
    return getattr(_local, "limits", None)


@contextmanager
def hub_limits(timeout_s: float, max_bytes: int = MAX_CONFIG_BYTES, *,
               retries: bool = True, connect_s: float | None = None) -> Iterator[Limits]:
    """Bound the Hub requests this thread makes inside the block: all done ``timeout_s`` from
    now, no response over ``max_bytes``, (``retries=False``) no request sent twice, and each
    connection made within ``connect_s``. A block inside another keeps the outer block's
    stricter settings."""
    outer = current_limits()
    deadline = time.monotonic() + timeout_s
    seen: set[tuple[str, str, str]] = set()
    if outer is not None:
        deadline = min(deadline, outer.deadline)
        retries = retries and outer.retries
        connect_s = outer.connect_s if connect_s is None else connect_s
        seen = outer.seen
    limits = Limits(deadline, max_bytes, retries, connect_s, seen)
    install_hub_limits()
    _local.limits = limits
    try:
        yield limits
    finally:
        _local.limits = outer


@contextmanager
def _adopt(limits: Limits | None) -> Iterator[None]:
    """Use a parent thread's limits in a worker thread."""
    before = current_limits()
    _local.limits = limits
    try:
        yield
    finally:
        _local.limits = before


# (host, port) -> (until when it counts as down, why); reachable hosts: (inf, None)
_reachable: dict[tuple[str, int], tuple[float, str | None]] = {}
_reachable_lock = threading.Lock()
_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def _first_hop(url: Any) -> tuple[str, int]:
    """Where a request's connection goes: the proxy when one is set, else the URL's host."""
    from urllib.parse import urlsplit

    for var in _PROXY_VARS:
        if proxy := os.environ.get(var, "").strip():
            parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            if parts.hostname:
                return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    parts = urlsplit(str(url))
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


def probe_host(host: str, port: int, timeout_s: float) -> str | None:
    """Why ``host:port`` cannot be reached (None when a TCP connection opens), remembered for
    a while when it cannot, so that one look-up fails once, not once per retry."""
    key = (host, port)
    now = time.monotonic()
    with _reachable_lock:
        known = _reachable.get(key)
    if known is not None and known[0] > now:
        return known[1]
    try:
        socket.create_connection(key, timeout=timeout_s).close()
    except OSError as exc:
        reason = (f"{host} does not resolve (no network or no DNS)"
                  if isinstance(exc, socket.gaierror)
                  else f"no connection to {host}:{port} ({exc.strerror or exc})")
        with _reachable_lock:
            _reachable[key] = (now + UNREACHABLE_KEEP_S, reason)
        return reason
    with _reachable_lock:
        _reachable[key] = (math.inf, None)  # reachable: not probed again in this process
    return None


def limits_request_hook(request: Any) -> None:
    """huggingface_hub request hook: no request to a host that cannot be reached (one quick
    TCP probe per host, instead of huggingface_hub's retries with back-off), none after the
    deadline, none that may outlive it (its timeouts are cut to the time left), no retry when
    retries are off, no compressed response (the byte cap is then the real size)."""
    limits = current_limits()
    if limits is None:  # not a whichgpu look-up
        return
    left = limits.left()
    if left <= 0:
        raise HubDeadlineExceeded("the time limit for this Hub look-up has passed")
    host, port = _first_hop(request.url)
    probe_s = min(PROBE_S, left, limits.connect_s or PROBE_S)
    if (why := probe_host(host, port, probe_s)) is not None:
        raise HubUnreachable(why)
    key = (request.method, str(request.url), request.headers.get("range", ""))
    if not limits.retries and key in limits.seen:
        raise HubRetryRefused(f"{request.method} {request.url}: not retried")
    limits.seen.add(key)
    request.headers["accept-encoding"] = "identity"
    timeout = request.extensions.get("timeout")
    if isinstance(timeout, dict):
        cut = {k: left if v is None else min(v, left) for k, v in timeout.items()}
        if limits.connect_s is not None and "connect" in cut:
            cut["connect"] = min(cut["connect"], limits.connect_s)
        request.extensions["timeout"] = cut


def _stream_class(module: str) -> type:
    return importlib.import_module(module).SyncByteStream


def limits_response_hook(response: Any) -> None:
    """huggingface_hub response hook: a body larger than the cap is refused from its
    Content-Length, and every chunk read checks the cap and the deadline."""
    found = current_limits()
    if found is None or response.request.method == "HEAD":
        return
    limits: Limits = found  # narrowed once, for the stream class below too
    url = str(response.request.url)
    length = response.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limits.max_bytes:
        response.close()
        raise HubResponseTooLarge(url, limits.max_bytes)
    inner = response.stream
    base = _stream_class(type(response).__module__.split(".")[0])

    class Bounded(base):  # type: ignore[misc, valid-type]  # base: the client's stream class
        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            for chunk in inner:
                seen += len(chunk)
                if seen > limits.max_bytes:
                    raise HubResponseTooLarge(url, limits.max_bytes)
                if limits.left() <= 0:
                    raise HubDeadlineExceeded(f"{url}: still arriving at the time limit")
                yield chunk

        def close(self) -> None:
            inner.close()

    response.stream = Bounded()


_installed: list[bool] = []
_install_lock = threading.Lock()


def install_hub_limits() -> bool:
    """Add the limit hooks to huggingface_hub's shared HTTP client, keeping whatever client
    factory was set before (huggingface_hub 1.0 and later). Returns whether they are in."""
    if _installed:
        return _installed[0]
    with _install_lock:
        if _installed:
            return _installed[0]
        try:
            import huggingface_hub
            from huggingface_hub.utils import _http
        except ImportError:  # pragma: no cover - a declared dependency
            _installed.append(False)
            return False
        previous = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None) or getattr(
            _http, "default_client_factory", None)
        setter = getattr(huggingface_hub, "set_client_factory", None)
        if previous is None or setter is None:  # huggingface_hub < 1.0 (requests)
            _installed.append(False)
            return False

        def client_factory():
            client = previous()
            hooks = client.event_hooks
            if limits_request_hook not in hooks["request"]:
                hooks["request"] = [*hooks["request"], limits_request_hook]
            if limits_response_hook not in hooks["response"]:
                hooks["response"] = [*hooks["response"], limits_response_hook]
            client.event_hooks = hooks
            return client

        setter(client_factory)
        _installed.append(True)
        return True


# ------------------------------------------------------------------ errors

def _instead() -> str:
    """What to give instead of a Hub id: a local config.json, or (on a server, which reads no
    local file) a pasted one."""
    from whichgpu.models.local_policy import local_files_refused

    if local_files_refused():
        return "paste the config.json or use a preset"
    return "pass a local config.json or a preset"


def _on_server() -> bool:
    """Whether the question came to a server (which reads no local file): its reader can set
    none of the server's variables (HF_ENDPOINT ...), so the error does not name them."""
    from whichgpu.models.local_policy import local_files_refused

    return local_files_refused() is not None


def _server_unreachable(repo_id: str, what: str) -> Any:
    from whichgpu.messages import msg

    return msg("hub.unreachable.server", "{repo}: this server cannot reach the Hugging Face Hub "
               "and has not cached the model's {what}: paste the config.json or use a preset",
               repo=repo_id, what=what)


def _hub_error(exc: BaseException, repo_id: str, what: str, offline: bool) -> WhichGPUError:
    """A whichgpu error for a huggingface_hub exception, saying what to do."""
    from huggingface_hub import errors as e

    from whichgpu.messages import msg

    if isinstance(exc, HubResponseTooLarge):
        return InputError(f"{repo_id}: {what} is larger than {exc.limit:,} bytes, which no "
                          "model's file of that kind is; not read")
    if isinstance(exc, HubUnreachable):
        if _on_server():
            return HubNotReached(_server_unreachable(repo_id, what))
        return HubNotReached(
            f"{repo_id}: the Hugging Face Hub cannot be reached ({exc}) and {what} is not "
            f"cached: check the network (or HF_ENDPOINT), set HF_HUB_OFFLINE=1 to use the cache "
            f"only, or {_instead()}")
    if isinstance(exc, HubLimitExceeded):
        if _on_server():
            return HubUnavailable(msg(
                "hub.slow.server", "{repo}: the Hugging Face Hub did not answer in time for the "
                "model's {what}: retry later, or paste the config.json or use a preset",
                repo=repo_id, what=what))
        return HubUnavailable(f"{repo_id}: the Hugging Face Hub did not answer in time for "
                              f"{what}; retry later, or {_instead()}")
    if isinstance(exc, e.GatedRepoError):
        if _on_server():  # the visitor can accept no licence for the server's token
            return InputError(msg(
                "hub.gated.server", "{repo} is gated on the Hugging Face Hub: this server "
                "cannot read its {what}; paste the config.json or use a preset",
                repo=repo_id, what=what))
        return InputError(
            f"{repo_id} is gated: accept its licence on https://huggingface.co/{repo_id} with "
            "your account, then set HF_TOKEN to a token of that account (or run 'hf auth "
            "login'); or use a preset if one matches ('whichgpu models')")
    if isinstance(exc, e.RepositoryNotFoundError):
        if _on_server():
            return InputError(msg(
                "hub.not_found.server", "{repo} was not found on the Hugging Face Hub (or it is "
                "private): check the id's spelling and case, or paste the config.json",
                repo=repo_id))
        return InputError(
            f"{repo_id} was not found on the Hugging Face Hub (or it is private): check the "
            "id's spelling and case; for a private repo set HF_TOKEN to a token that can read "
            "it")
    if isinstance(exc, e.RevisionNotFoundError):
        return InputError(f"{repo_id}: revision not found on the Hub")
    if isinstance(exc, e.LocalEntryNotFoundError):
        if offline and _on_server():  # the visitor can set none of the server's variables
            return InputError(msg(
                "hub.offline.server", "{repo}: this server does not look models up on the "
                "Hugging Face Hub and has not cached the model's {what}: paste the config.json "
                "or use a preset", repo=repo_id, what=what))
        if offline:
            return InputError(
                f"{repo_id}: {what} is not in the local Hugging Face cache and Hub access is "
                "off (HF_HUB_OFFLINE is set, or offline was asked): unset HF_HUB_OFFLINE to "
                f"fetch it (a few KB, no weights), or {_instead()}")
        kind = HubNotReached if connection_failed(exc) else HubUnavailable
        if _on_server():
            return kind(_server_unreachable(repo_id, what))
        return kind(
            f"{repo_id}: could not reach the Hugging Face Hub to fetch {what} and it is not "
            f"cached: check the network connection (or HF_ENDPOINT), or {_instead()}")
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
    kind = HubNotReached if connection_failed(exc) else HubUnavailable
    return kind(f"{repo_id}: could not fetch {what} from the Hugging Face Hub "
                          f"({type(exc).__name__}: {str(exc)[:200]}); check the network, or "
                          f"{_instead()}")


class HubUnavailable(WhichGPUError):
    """The Hub could not be reached (network down, timed out): not the id's fault."""


class HubNotReached(HubUnavailable):
    """No connection to the Hub at all (its host does not resolve, refuses or drops the
    connection, or the connection could not be opened in time): the Hub is down for every
    id, unlike one repository that is slow to send its files."""


def connection_failed(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is a failure to connect, as opposed to a
    connection that was made and then was slow or failed for that one request."""
    import httpx

    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, HubUnreachable | socket.gaierror | ConnectionRefusedError
                      | httpx.ConnectError | httpx.ConnectTimeout):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


# ------------------------------------------------------------------ files

def fetch_json(repo_id: str, filename: str, *, offline: bool | None = None,
               max_bytes: int = MAX_CONFIG_BYTES) -> Any:
    """A JSON file of a Hub repo (at most ``max_bytes``), from the cache or the Hub; errors
    say what to do."""
    import huggingface_hub as hf
    from huggingface_hub import errors as e

    from whichgpu.models.local_file import parse_json, read_regular

    off = hub_offline(offline)
    try:
        with hub_limits(LOOKUP_S, max_bytes):
            path = hf.hf_hub_download(repo_id, filename, local_files_only=off,
                                      etag_timeout=TIMEOUT_S)
    except e.HFValidationError as exc:
        raise InputError(f"{repo_id!r} is not a valid Hub id: {exc}") from exc
    except Exception as exc:  # HTTP errors, cache misses, transport errors of any version
        raise _hub_error(exc, repo_id, filename, off) from exc
    origin = f"hub:{repo_id}/{filename}"
    try:
        data = read_regular(os.path.realpath(path), max_bytes)
    except InputError as exc:
        raise DataError(origin, f"the cached copy cannot be read ({exc})") from exc
    return parse_json(data, origin)


def fetch_optional_json(repo_id: str, filename: str, *, offline: bool | None = None,
                        max_bytes: int = MAX_CONFIG_BYTES) -> Any:
    """Like :func:`fetch_json`, but None when the repo has no such file."""
    from huggingface_hub import errors as e

    try:
        return fetch_json(repo_id, filename, offline=offline, max_bytes=max_bytes)
    except InputError as exc:
        cause = exc.__cause__
        if isinstance(cause, e.EntryNotFoundError) and not isinstance(
                cause, e.LocalEntryNotFoundError):
            return None
        raise


def _shard_files(repo_id: str, offline: bool) -> list[str] | None:
    """The safetensors files of a repo: the shards its index names, else model.safetensors
    (None: no safetensors index; the single file is then tried)."""
    index = fetch_optional_json(repo_id, "model.safetensors.index.json", offline=offline,
                                max_bytes=MAX_INDEX_BYTES)
    if index is None:
        return None
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict):
        raise DataError(f"hub:{repo_id}/model.safetensors.index.json", "no weight_map object",
                        field="weight_map")
    files = sorted({f for f in weight_map.values() if isinstance(f, str)})
    if len(files) > MAX_SHARDS:
        raise DataError(f"hub:{repo_id}/model.safetensors.index.json",
                        f"{len(files):,} shards is not plausible (at most {MAX_SHARDS:,})")
    return files


def _file_headers(repo_id: str, files: list[str]) -> list[tuple[str, str, list[int]]]:
    """(name, dtype, shape) of every tensor in ``files``, read from their headers by range
    requests, a few files at a time, under the caller's limits."""
    import huggingface_hub as hf
    from huggingface_hub import constants

    limits = current_limits()
    header_cap = getattr(constants, "SAFETENSORS_MAX_HEADER_LENGTH", 25_000_000) + 2**20

    def one(filename: str):
        with _adopt(limits), hub_limits(LOOKUP_S, header_cap):
            try:
                return hf.parse_safetensors_file_metadata(repo_id, filename, timeout=TIMEOUT_S)
            except TypeError:  # releases before the timeout argument
                return hf.parse_safetensors_file_metadata(repo_id, filename)

    if len(files) == 1:
        metas = [one(files[0])]
    else:
        with cf.ThreadPoolExecutor(max_workers=min(SHARD_WORKERS, len(files)),
                                   thread_name_prefix="hub-shards") as pool:
            metas = list(pool.map(one, files))
    return [(name, t.dtype, list(t.shape)) for m in metas for name, t in m.tensors.items()]


def safetensors_checkpoint(repo_id: str, *, offline: bool | None = None
                           ) -> tuple[CheckpointInfo | None, str | None]:
    """Exact bytes per dtype from the repo's safetensors headers, and a note if unavailable.

    Never raises for a missing or unreadable header: the config alone still gives the spec.
    """
    if hub_offline(offline):
        return None, "offline: checkpoint bytes not read from the safetensors headers"
    from huggingface_hub import errors as e

    from whichgpu.models.safetensors_local import checkpoint_from_tensors

    try:
        files = _shard_files(repo_id, False) or ["model.safetensors"]
        tensors = _file_headers(repo_id, files)
        return checkpoint_from_tensors(tensors, f"safetensors:{repo_id}"), None
    except (e.EntryNotFoundError, e.NotASafetensorsRepoError):
        return None, "the repository has no safetensors weights: bytes from the config only"
    except DataError as exc:
        return None, f"checkpoint bytes unavailable ({exc})"
    except WhichGPUError as exc:
        return None, f"checkpoint bytes unavailable ({exc})"
    except Exception as exc:  # headers are a bonus; the config already resolved
        err = _hub_error(exc, repo_id, "safetensors headers", False)
        return None, f"checkpoint bytes unavailable ({err})"


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
