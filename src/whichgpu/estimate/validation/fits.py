"""``whichgpu validate fits``: set-ups people demonstrably run (validation/fits.csv) must never
come out "does not fit".

Each row is a model, a format, an engine, a card (and how many) and what the source says about
the host and the flags. The verdict is the memory model's on that card: fits, borderline
(within the estimate's own uncertainty of the card's usable memory), fits with llama.cpp
offload (the row's own -ngl / --n-cpu-moe; when the row gives none, or gives a maintainers'
recommendation rather than a measured run ("not a measurement" in its conditions) whose flags
do not fit as printed, the layout llama.cpp's --fit or Ollama's automatic split would choose),
or does not fit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from whichgpu.errors import InputError
from whichgpu.estimate.validation import default_path, read_rows

FitVerdict = Literal["fits", "borderline", "fits with offload", "does not fit", "not modelled"]

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(GB|GiB|TB)", re.I)
_DDR = re.compile(r"(LPDDR5X|DDR5|DDR4)[- ]?(\d{4,5})?", re.I)
_CHANNELS = {"dual": 2, "quad": 4, "octa": 8, "eight": 8, "twelve": 12, "single": 1}
# fits.csv settings that change memory, as the Workload spells them; others (fa, parallel,
# split_mode, mmap, threads) do not change what the estimate holds
_KEYS = {"n_cpu_moe": "n_cpu_moe", "ngl": "ngl", "ub": "ubatch", "ubatch": "ubatch",
         "kv": "kv_dtype"}


@dataclass(frozen=True)
class FitOutcome:
    id: str
    verdict: FitVerdict
    detail: str
    per_gpu_bytes: int | None = None
    usable_bytes: int | None = None
    host_bytes: int | None = None
    source_url: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "verdict": self.verdict, "detail": self.detail,
                "per_gpu_bytes": self.per_gpu_bytes, "usable_bytes": self.usable_bytes,
                "host_bytes": self.host_bytes, "source_url": self.source_url}


def host_of(text: str | None):
    """A Host from fits.csv's free-text ``host_ram`` ('64 GB DDR5-6000 (dual channel)');
    the defaults for what it does not state."""
    from whichgpu.estimate.host import MemorySpec, host_with
    from whichgpu.units import parse_memory_type, parse_size

    t = (text or "").strip()
    if not t or t.lower().startswith("not "):
        return None
    size = _SIZE.search(t)
    ram = f"{size.group(1)}{size.group(2)}" if size else None
    mem = None
    ddr = _DDR.search(t)
    if ddr:
        mem = ddr.group(1).lower() + (f"-{ddr.group(2)}" if ddr.group(2) else "")
        for word, n in _CHANNELS.items():
            if f"{word} channel" in t.lower() or f"{word}-channel" in t.lower():
                mem += f"x{n}"
                break
    return host_with(parse_size(ram) if ram else None,
                     MemorySpec(*parse_memory_type(mem)) if mem else None, None)


def row_settings(text: str | None) -> dict[str, str]:
    """The memory-relevant ``key=value`` pairs of a fits.csv settings cell (first word of each
    value: 'kv=q8_0 or f16' reads q8_0)."""
    out = {}
    for part in (text or "").split(";"):
        if "=" not in part:
            continue
        key, value = part.split("=", 1)
        key = key.strip().lower()
        if key in _KEYS and value.strip():
            out[_KEYS[key]] = value.strip().split()[0]
    return out


def judge(row: dict[str, str]) -> FitOutcome:
    """The memory model's verdict for one fits.csv row."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import layout_for, memory_band, verdict
    from whichgpu.estimate.memory.offload_plan import offload_plan
    from whichgpu.estimate.validation.rows import engine_of, gpu_of
    from whichgpu.estimate.validation.rows import workload_of as row_workload

    rid = row["id"]
    try:
        gpu = gpu_of(row)
        engine = engine_of(row)
        settings = row_settings(row.get("settings"))
        count = int(float(row.get("gpu_count") or 1))
        cells = {"model": row["model"], "task": "inference", "quant": row.get("quant", ""),
                 "engine": row.get("engine", ""), "gpu": row["gpu"], "gpu_count": str(count),
                 "context": row.get("context", ""), "kv_dtype": settings.pop("kv_dtype", ""),
                 "settings": "; ".join(f"{k}={v}" for k, v in settings.items())}
        w = row_workload(cells)
        host = host_of(row.get("host_ram"))
        if host is not None:
            w = w.with_(host=host)
        wl = layout_for(w, count)
        est = estimate_memory(wl)
    except (InputError, KeyError, ValueError) as exc:
        return FitOutcome(rid, "not modelled", str(exc), source_url=row.get("source_url", ""))
    usable = gpu.usable_memory_bytes
    v = verdict(est.total_bytes, usable, memory_band(wl), est.host_fits)
    detail = (f"{est.total_bytes / 1e9:.1f} GB per GPU of {usable / 1e9:.1f} GB"
              + (f"; {est.host_total_bytes / 1e9:.1f} GB in host RAM" if est.host_terms else ""))
    # no flags published (llama.cpp's --fit or Ollama chose the split), or flags that are a
    # recommendation rather than a measured run: the layout llama.cpp itself would choose
    advisory = "not a measurement" in (row.get("conditions") or "").lower()
    if v == "does not fit" and engine in ("llamacpp", None) and (
            advisory or not wl.offload_requested):
        plain = w.with_(gpu_layers=None, cpu_moe_layers=0, tensor_overrides=())
        plan = offload_plan(plain, gpu, count)
        if plan is not None and plan.host_ok:
            why = (f"the published flags leave {est.total_bytes / 1e9:.1f} GB per GPU; "
                   if wl.offload_requested else "")
            return FitOutcome(rid, "fits with offload", why + plan.describe(),
                              plan.memory.total_bytes, usable, plan.host_bytes,
                              row.get("source_url", ""))
    return FitOutcome(rid, v, detail, est.total_bytes, usable, est.host_total_bytes,
                      row.get("source_url", ""))


def run(path: Path | None = None) -> list[FitOutcome]:
    return [judge(r) for r in read_rows(path or default_path("fits"))]
