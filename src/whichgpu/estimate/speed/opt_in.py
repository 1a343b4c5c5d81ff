"""Whether the measured-kernel path (``kernel_db``) is asked for, without loading it.

The ranking asks this for every configuration; keeping the switch apart means a question
that never takes the measured path (training, images, the default) does not import
``kernel_db`` and the serving step modules it needs (about 36 ms of start-up, perf27i).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator

#: the environment variable that opts in (``1``, ``true``, ``yes`` or ``on``)
ENV = "WHICHGPU_KERNEL_DB"

_opt_in: contextvars.ContextVar[bool | None] = contextvars.ContextVar("kernel_db", default=None)


def opted_in() -> bool:
    """Whether the measured-kernel path is asked for (use_kernel_db, else WHICHGPU_KERNEL_DB)."""
    on = _opt_in.get()
    if on is not None:
        return on
    return os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes", "on")


@contextlib.contextmanager
def use_kernel_db(on: bool = True) -> Iterator[None]:
    """Ask for (or refuse) the measured-kernel path within the block."""
    token = _opt_in.set(on)
    try:
        yield
    finally:
        _opt_in.reset(token)
