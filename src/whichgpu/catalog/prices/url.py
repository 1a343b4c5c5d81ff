"""Offers from a URL serving whichgpu's JSON offer schema (``{"offers": [...]}``).

Safe by default: https only (``allow_http`` for a server on your own network), a deadline on
the whole download (not per read: a server that trickles one byte every few seconds is cut off
at the deadline), a size limit, no redirect to plain http. Rows whose GPU cannot be mapped are
reported and left out; any other bad row fails the fetch, and the store keeps the previous
snapshot.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

from whichgpu.catalog.prices.file import parse_feed
from whichgpu.catalog.prices.sources import (
    FeedResult,
    PriceSource,
    Progress,
    check_online,
    utc_now,
)
from whichgpu.errors import InputError

TIMEOUT_S = 20.0
MAX_BYTES = 20 * 1024 * 1024
_CHUNK = 64 * 1024


def check_url(url: str, allow_http: bool = False) -> str:
    """The URL, if its scheme is allowed; else an InputError saying what to do."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" or (allow_http and parts.scheme == "http"):
        if not parts.hostname:
            raise InputError(f"{url!r} has no host name")
        return url
    if parts.scheme == "http":
        raise InputError(f"{url!r} is plain http; price sources must use https "
                         "(allow http explicitly for a server on your own network)")
    raise InputError(f"{url!r} is not an https URL")


class _SafeRedirects(urllib.request.HTTPRedirectHandler):
    def __init__(self, allow_http: bool) -> None:
        self.allow_http = allow_http

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        check_url(newurl, self.allow_http)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class DeadlineError(TimeoutError):
    """The whole download took longer than its deadline."""


def _shrink_timeout(response, remaining: float) -> None:
    """Make the next socket read wait at most ``remaining`` seconds (best effort)."""
    sock = getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)
    if sock is not None:
        try:
            sock.settimeout(max(remaining, 0.001))
        except OSError:
            pass


def download(url: str, *, allow_http: bool = False, timeout_s: float = TIMEOUT_S,
             max_bytes: int = MAX_BYTES, progress: Progress | None = None,
             accept: str = "application/json") -> bytes:
    """The body of ``url``: https only, bounded in size and by a deadline of ``timeout_s``
    seconds on the whole download (connect, headers and every read together). Raises OSError
    (``DeadlineError`` past the deadline) on failure."""
    check_url(url, allow_http)
    deadline = time.monotonic() + timeout_s
    opener = urllib.request.build_opener(_SafeRedirects(allow_http))
    request = urllib.request.Request(url, headers={"Accept": accept,
                                                   "User-Agent": "whichgpu-prices"})
    with opener.open(request, timeout=timeout_s) as response:
        length = response.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            raise OSError(f"the response is {int(length):,} bytes, over the "
                          f"{max_bytes:,}-byte limit")
        total = int(length) if length and length.isdigit() else None
        body = bytearray()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DeadlineError(f"the download took longer than {timeout_s:g} s "
                                    f"({len(body):,} bytes received)")
            _shrink_timeout(response, remaining)
            try:
                chunk = response.read1(_CHUNK)  # returns what one read brings, not 64 KiB
            except TimeoutError:
                raise DeadlineError(f"the download took longer than {timeout_s:g} s "
                                    f"({len(body):,} bytes received)") from None
            if not chunk:
                break
            body += chunk
            if len(body) > max_bytes:
                raise OSError(f"the response is over the {max_bytes:,}-byte limit")
            if progress:
                progress("downloading", len(body), total)
    return bytes(body)


class UrlSource(PriceSource):
    """A URL serving the JSON offer schema; its feed is the source's name."""

    kind = "url"
    network = True

    def __init__(self, name: str, url: str, *, allow_http: bool = False,
                 timeout_s: float = TIMEOUT_S, max_bytes: int = MAX_BYTES) -> None:
        check_url(url, allow_http)
        self.name = name
        self.url = url
        self.allow_http = allow_http
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes

    @classmethod
    def from_url(cls, url: str, allow_http: bool = False) -> UrlSource:
        """An unregistered URL: named after its host and path."""
        parts = urllib.parse.urlsplit(url)
        name = re.sub(r"[^a-z0-9.]+", "-", f"{parts.hostname}{parts.path}".lower()).strip("-")
        return cls(f"url/{name}", url, allow_http=allow_http)

    def describe(self) -> str:
        return self.url

    def fetch(self, progress: Progress | None = None) -> Iterator[FeedResult]:
        check_online(f"price source {self.name!r}")
        fetched_at = utc_now()
        try:
            body = download(self.url, allow_http=self.allow_http, timeout_s=self.timeout_s,
                            max_bytes=self.max_bytes, progress=progress)
        except urllib.error.HTTPError as exc:
            yield self._failed(f"{self.url}: HTTP {exc.code} {exc.reason}")
            return
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            yield self._failed(f"{self.url}: {reason}")
            return
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            yield self._failed(f"{self.url}: the response is not UTF-8 text")
            return
        yield parse_feed(text, path=self.url, fmt="json", feed=self.name, source=self.name,
                         kind=self.kind, fetched_at=fetched_at, lenient_gpu=True)

    def _failed(self, message: str) -> FeedResult:
        return FeedResult(feed=self.name, source=self.name, kind=self.kind, error=message)
