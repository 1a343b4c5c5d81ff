"""scripts/calibrate.py loaded as a module (a script, not part of the package), afresh on each
call, as the tests of its fits and bands read it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from paths import ROOT


def calibrate() -> ModuleType:
    """The calibration script as the module ``calibrate``."""
    spec = importlib.util.spec_from_file_location("calibrate", ROOT / "scripts/calibrate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibrate"] = module
    spec.loader.exec_module(module)
    return module
