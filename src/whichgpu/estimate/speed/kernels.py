"""Engine reality as data (``data/engine_kernels.toml``): which kernel an engine runs for a
weight format on an architecture, the peak it computes at, and the engine versions ("eras")
whose constants differ.

The efficiencies themselves live in speed_constants.toml (``prefill_kernel_efficiency``,
``decode_kernel_bandwidth_factor``), fitted by make calibrate where the validation rows allow;
this file says which of them applies, and why, with a source for each entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, cast

from whichgpu.estimate.memo import Table
from whichgpu.models.quant import QuantFormat

Phase = Literal["prefill", "decode"]
BUILD = re.compile(r"(?:\bb|build[: ]+|version[: ]+|\()(\d{3,5})\b", re.I)
DATE = re.compile(r"(20\d\d)(?:-(\d\d))?")


@dataclass(frozen=True)
class Kernel:
    """The kernel path of one (engine, phase, architecture, format)."""

    path: str
    efficiency: str  # key in prefill_kernel_efficiency / decode_kernel_bandwidth_factor
    peak: str | None = None  # prefill: the precision key of the peak it computes at
    speedup: float = 1.0  # measured throughput over the path its efficiency belongs to
    source: str = ""
    since: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "efficiency": self.efficiency, "peak": self.peak,
                "speedup": self.speedup, "source": self.source, "since": self.since}


@cache
def _table() -> dict[str, Any]:
    from whichgpu.parse_cache import cached_toml

    return cached_toml("whichgpu.estimate", "data/engine_kernels.toml")


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def format_family(quant: QuantFormat, engine: str) -> str:
    """The family a kernel table keys a format by: the ggml type family of a GGUF file type
    (float, legacy, k, iq, fp4), else the format's compute ('fp8', 'fp4', 'int8',
    'weight-only', or 'float' for 16/32-bit)."""
    from whichgpu.estimate.memory.weights import gguf_ftype
    from whichgpu.models.gguf_recipe import FTYPES, ggml_type

    ftype = gguf_ftype(quant, engine)
    if ftype:
        return ggml_type(FTYPES[ftype]).family
    if quant.compute in ("bf16", "fp16", "fp32"):
        return "float"
    return quant.compute


_KERNELS = Table(1024)  # (engine, phase, arch, id(quant), version) -> (quant, kernel)


def kernel(engine: str, phase: Phase, arch: str, quant: QuantFormat,
           version: str | None = None) -> Kernel | None:
    """The first entry of engine_kernels.toml for this engine, phase, architecture and format
    that the engine ``version`` has (None: the engine's generic model applies).

    Remembered by value (the format by identity, held by the entry): a recommendation asks
    the same few paths once per GPU x count (estimate/memo.py's bounded tables)."""
    key = (engine, phase, arch, id(quant), version)
    hit = _KERNELS.get(key)
    if hit is not None and hit[0] is quant:
        return cast("Kernel | None", hit[1])
    return cast("Kernel | None", _KERNELS.put(key, (quant, _kernel(engine, phase, arch, quant,
                                                                   version)))[1])


def _kernel(engine: str, phase: Phase, arch: str, quant: QuantFormat,
            version: str | None) -> Kernel | None:
    base, _, backend = engine.partition("-")  # 'llamacpp-metal': llama.cpp on Metal
    if base != "llamacpp":
        base, backend = engine, ""
    family = format_family(quant, base)
    for k in _table().get("kernel", []):
        listed = _listed(k["engine"])
        if (engine not in listed and base not in listed) or k["phase"] != phase:
            continue
        if "backend" in k and (backend or "cuda") not in _listed(k["backend"]):
            continue
        if not _in_build(k, engine, version):
            continue
        if "eras" in k and era_of(base, version) not in _listed(k["eras"]):
            continue  # a path of older builds only (``eras``): not today's
        if k.get("arch", "*") not in ("*", arch):
            continue
        if "formats" in k and quant.name not in _listed(k["formats"]):
            continue
        if "family" in k and family not in _listed(k["family"]):
            continue
        return Kernel(k["path"], k["efficiency"], k.get("peak"), float(k.get("speedup", 1.0)),
                      k.get("source", ""), k.get("since"))
    return None


def _in_build(entry: dict[str, Any], engine: str, version: str | None) -> bool:
    """Whether a kernel entry with ``since_build`` (and ``since``, its date) is in the build
    ``version`` names: a build number, a date, or an era (today's when None)."""
    first = entry.get("since_build")
    if first is None or not version:
        return True
    text = version.strip()
    build = BUILD.search(text)
    if build:
        return int(build.group(1)) >= int(first)
    for v in eras(engine):
        if text == v["era"]:
            return "until" not in v or v["until"] >= str(entry.get("since", ""))
    when = DATE.search(text)
    if when and entry.get("since"):
        return f"{when.group(1)}-{when.group(2) or '06'}" >= str(entry["since"])[:7]
    return True


def version_label(engine: str, version: str | None = None, date: str | None = None
                  ) -> str | None:
    """What a measurement says of the engine build, kept for the estimate: the era a name
    matches ('ollama'), else the build number ('b6910'), else the date ('2025-11'), else None
    (today's). :func:`era_of` maps each to its era; kernels with ``since_build`` compare it."""
    if not eras(engine):
        return None
    text = (version or "").strip()
    for v in eras(engine):
        if text and (text == v["era"] or ("match" in v and v["match"] in text.lower())):
            return v["era"]
    build = BUILD.search(text)
    if build:
        return f"b{int(build.group(1))}"
    when = DATE.search(date or "") or DATE.search(text)
    if when:
        return f"{when.group(1)}-{when.group(2) or '06'}"
    return None


def eras(engine: str) -> list[dict[str, Any]]:
    return [v for v in _table().get("version", []) if v["engine"] == engine]


def default_era(engine: str) -> str | None:
    for v in eras(engine):
        if v.get("default"):
            return v["era"]
    return None


def era_of(engine: str, version: str | None = None, date: str | None = None) -> str | None:
    """The era of an engine build: from a build number in ``version`` ('b6918', 'build 4458',
    'version: 8763', '(7340)'), an era name, or the ``date`` of the measurement ('2024-05');
    today's era when neither says."""
    known = eras(engine)
    if not known:
        return None
    text = (version or "").strip()
    for v in known:
        if text and (text == v["era"] or ("match" in v and v["match"] in text.lower())):
            return v["era"]
    build = BUILD.search(text)
    if build:
        b = int(build.group(1))
        for v in known:
            if "max_build" in v and b <= int(v["max_build"]):
                return v["era"]
        return default_era(engine)
    when = DATE.search(date or "") or DATE.search(text)
    if when:
        stamp = f"{when.group(1)}-{when.group(2) or '06'}"
        for v in known:
            if "until" in v and stamp <= v["until"][:7]:
                return v["era"]
    return default_era(engine)


def era_names(engine: str) -> list[str]:
    return [v["era"] for v in eras(engine)]
