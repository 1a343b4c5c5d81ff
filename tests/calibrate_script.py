"""scripts/calibrate.py loaded as a module (a script, not part of the package), afresh on each
call, as the tests of its fits and bands read it; and what the tests of its row-estimate memo
share (a few calibration rows, a count of the rows a load of the script estimates)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from paths import ROOT


def calibrate(name: str = "calibrate") -> ModuleType:
    """The calibration script as the module ``name`` (another name: another load, with its own
    (empty) memo, as in another process)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts/calibrate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def memo_rows() -> list[dict]:
    """Two calibration rows of the exllamav2 decode group and two vLLM decode rows."""
    from whichgpu.estimate.validation import default_path, read_rows, split_of

    every = [r for r in read_rows(default_path("speed")) if split_of(r["id"]) == "calibration"]
    ex = [r for r in every if r["category"] == "decode" and r["engine"] == "exllamav2"][:2]
    other = [r for r in every if r["engine"] == "vllm" and r["category"] == "decode"][:2]
    assert len(ex) == len(other) == 2
    return ex + other


def counting(cal: ModuleType, monkeypatch) -> list[str]:
    """The ids of the rows ``cal`` estimates from now on (its ``_outcomes`` counted)."""
    estimated: list[str] = []
    outcomes = cal._outcomes

    def counted(rows):
        estimated.extend(r["id"] for r in rows)
        return outcomes(rows)

    monkeypatch.setattr(cal, "_outcomes", counted)
    return estimated
