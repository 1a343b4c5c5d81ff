"""Whether this request may read local files: a server turns them off for its visitors.

Apart from :mod:`whichgpu.models.resolve` so that the Hub client (``models/hub.py``), which
:func:`~whichgpu.models.resolve.resolve_model` calls, can ask too without importing it back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# None: local files may be read; a sentence: they may not, and this says why (set per request
# by a server, see no_local_files).
_NO_FILES: ContextVar[str | None] = ContextVar("whichgpu_no_local_files", default=None)


@contextmanager
def no_local_files(reason: str) -> Iterator[None]:
    """Within this block (this context and the threads that copy it), :func:`resolve_model`
    reads no local file, whoever calls it; ``reason`` is the error for a path-like name."""
    token = _NO_FILES.set(reason)
    try:
        yield
    finally:
        _NO_FILES.reset(token)


def local_files_refused() -> str | None:
    """The reason local files may not be read here, or None when they may."""
    return _NO_FILES.get()
