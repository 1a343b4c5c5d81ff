"""Calibration profiles: what ``whichgpu bench`` measured on a real card, as a JSON file.

Schema ``whichgpu-calibration/1`` (documented in docs/calibration.md)::

    {"schema": "whichgpu-calibration/1", "created_at": "2026-11-30T12:00:00Z", "host": "...",
     "gpus": [{"index": 0, "name": "NVIDIA H200", "catalog_id": "h200-sxm",
               "matmul_tflops": {"bf16": 712.0, "fp8": 1350.0},
               "memory_bandwidth_bytes_per_s": 4.3e12,
               "h2d_bytes_per_s": 5.1e10, "d2h_bytes_per_s": 5.0e10, ...}],
     "topology": {"kind": "nvlink", "pairs": [{"a": 0, "b": 1, "link": "NV18", "p2p": "OK",
                                                "p2p_bytes_per_s": 3.6e11, ...}]}}

The speed model's efficiencies are fractions of datasheet peaks, as a healthy card reaches in
a plain matmul or copy benchmark. A profile rescales a card by how its measurement compares
with that reference: a card measured 10 % under the reference is predicted 10 % slower.
Several GPUs of one catalog id count by their median. With two or more GPUs of the id, the
measured topology also replaces the catalog's assumed link (S28: ``nvidia-smi topo -m`` shows
the real links).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whichgpu.errors import DataError
from whichgpu.paths import data_dir

SCHEMA = "whichgpu-calibration/1"


def default_profile_path() -> Path:
    return data_dir() / "calibration.json"


@dataclass(frozen=True)
class CalibrationProfile:
    path: str
    data: dict[str, Any]

    def entries(self, gpu_id: str) -> list[dict[str, Any]]:
        return [g for g in self.data.get("gpus", []) if g.get("catalog_id") == gpu_id]

    def scales_for(self, gpu_id: str, ref_matmul: float,
                   ref_bandwidth: float) -> tuple[float, float]:
        """(compute scale, bandwidth scale) for a catalog GPU; (1, 1) if it was not measured."""
        from whichgpu.catalog.gpus import get_gpu

        entries = self.entries(gpu_id)
        if not entries:
            return 1.0, 1.0
        g = get_gpu(gpu_id)
        cs = bs = 1.0
        ratios = []
        for e in entries:
            measured = e.get("matmul_tflops") or {}
            per_card = [measured[p] / g.tflops(p) for p in ("bf16", "fp16")
                        if measured.get(p) and g.tflops(p)]
            if per_card:
                ratios.append(max(per_card))
        if ratios:
            cs = statistics.median(ratios) / ref_matmul
        bws = [e["memory_bandwidth_bytes_per_s"] for e in entries
               if e.get("memory_bandwidth_bytes_per_s")]
        if bws:
            bs = statistics.median(bws) / g.bandwidth_bytes_per_s / ref_bandwidth
        return cs, bs

    def link_for(self, gpu_id: str, count: int) -> dict[str, Any] | None:
        """The measured link among ``count`` GPUs of ``gpu_id``, or None if not measured.

        ``{"kind": "nvlink" | "pcie_p2p" | "pcie_host", "one_way_bytes_per_s": float | None,
        "pairs": n}``: the weakest kind among the pairs of the first ``count`` such GPUs and
        the median of their measured one-way copy bandwidth.
        """
        indices = sorted(int(e["index"]) for e in self.entries(gpu_id)
                         if isinstance(e.get("index"), int))
        if count < 2 or len(indices) < count:
            return None
        chosen = set(indices[:count])
        pairs = [p for p in (self.data.get("topology") or {}).get("pairs", [])
                 if p.get("a") in chosen and p.get("b") in chosen and p.get("kind")]
        if not pairs:
            return None
        kind = min((p["kind"] for p in pairs if p["kind"] in LINK_KINDS),
                   key=LINK_KINDS.index, default=None)
        if kind is None:
            return None
        bws = [p["p2p_bytes_per_s"] for p in pairs if p.get("p2p_bytes_per_s")]
        return {"kind": kind, "one_way_bytes_per_s": statistics.median(bws) if bws else None,
                "pairs": len(pairs)}

    def describe(self) -> str:
        return f"calibration profile {self.path} ({self.data.get('created_at', 'undated')})"


def load_profile(path: str | Path) -> CalibrationProfile:
    """Read and check a profile; errors name the file and the field."""
    p = Path(path)
    try:
        from whichgpu.user_files import read_text

        data = json.loads(read_text(p))  # a regular file only: never a FIFO or /dev/zero
    except OSError as exc:
        raise DataError(p, f"cannot read the calibration profile ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise DataError(p, f"not valid JSON: {exc.msg} (line {exc.lineno})") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise DataError(p, f"not a whichgpu calibration profile (schema must be {SCHEMA!r})",
                        field="schema")
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.errors import closest

    ids = list(default_catalog().by_id())
    gpus = data.get("gpus")
    if not isinstance(gpus, list) or not gpus:
        raise DataError(p, "expected a non-empty list of measured GPUs", field="gpus")
    for i, g in enumerate(gpus):
        if not isinstance(g, dict) or not g.get("catalog_id"):
            raise DataError(p, "each GPU needs a catalog_id", row=i + 1, field="catalog_id")
        for key, value in (g.get("matmul_tflops") or {}).items():
            if not isinstance(value, int | float) or value <= 0:
                raise DataError(p, f"matmul_tflops.{key} must be a positive number",
                                row=i + 1, field=f"matmul_tflops.{key}")
        if g["catalog_id"] not in ids:
            hint = closest(str(g["catalog_id"]), ids)
            raise DataError(p, f"{g['catalog_id']!r} is not a catalog id"
                            + (f" (did you mean {', '.join(hint)}?)" if hint else ""),
                            row=i + 1, field="catalog_id")
        for key in ("memory_bandwidth_bytes_per_s", "h2d_bytes_per_s", "d2h_bytes_per_s"):
            _positive(p, g.get(key), key, i + 1)
    pairs = (data.get("topology") or {}).get("pairs") or []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, dict) or not all(isinstance(pair.get(k), int) for k in "ab"):
            raise DataError(p, "each pair needs GPU indices a and b", row=i + 1,
                            field="topology.pairs")
        if pair.get("kind") not in (None, *LINK_KINDS):
            raise DataError(p, f"kind must be one of {', '.join(LINK_KINDS)}", row=i + 1,
                            field="topology.pairs.kind")
        _positive(p, pair.get("p2p_bytes_per_s"), "topology.pairs.p2p_bytes_per_s", i + 1)
    return CalibrationProfile(str(p), data)


LINK_KINDS = ("nvlink", "pcie_p2p", "pcie_host")


def _positive(path: Path, value: Any, field: str, row: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                              or value <= 0):
        raise DataError(path, "must be a positive number", row=row, field=field)


def save_profile(data: dict[str, Any], path: str | Path | None = None) -> Path:
    """Write a profile (checked first); the default path is in the data directory."""
    p = Path(path) if path else default_profile_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(text, "utf-8")
    load_profile(tmp)  # never leave a profile that cannot be read back
    tmp.replace(p)
    return p


def profile_from_option(value: str | None) -> CalibrationProfile | None:
    """What ``--calibration`` means everywhere: nothing, ``default``, or a file."""
    if not value:
        return None
    if value == "default":
        profile = default_profile()
        if profile is None:
            from whichgpu.errors import InputError

            raise InputError(f"no calibration profile at {default_profile_path()}: run "
                             "'whichgpu bench' on the GPU first, or pass --calibration FILE")
        return profile
    return load_profile(value)


def default_profile() -> CalibrationProfile | None:
    """The profile saved by ``whichgpu bench`` in the data directory, if there is one."""
    p = default_profile_path()
    if not p.exists():
        return None
    return load_profile(p)
