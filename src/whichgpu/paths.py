"""Where whichgpu keeps the user's data: the price store, calibration profiles, caches.

``WHICHGPU_HOME`` overrides everything (tests set it to a temporary folder); otherwise the
platform's user data directory is used (``~/.local/share/whichgpu`` on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """The folder for whichgpu's own files (created on first use by whoever writes there)."""
    home = os.environ.get("WHICHGPU_HOME")
    if home:
        return Path(home).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("whichgpu", appauthor=False))


def cache_dir() -> Path:
    return data_dir() / "cache"
