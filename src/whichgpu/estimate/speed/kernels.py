"""Engine reality as data (``data/engine_kernels.toml``): which kernel an engine runs for a
weight format on an architecture, the peak it computes at, and the engine versions ("eras")
whose constants differ.

The efficiencies themselves live in speed_constants.toml (``prefill_kernel_efficiency``,
``decode_kernel_bandwidth_factor``), fitted by make calibrate where the validation rows allow;
this file says which of them applies, and why, with a source for each entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, cast

from whichgpu.estimate.memo import Table
from whichgpu.models.quant import QuantFormat
from whichgpu.units import EngineVersion

Phase = Literal["prefill", "decode"]


@dataclass(frozen=True)
class Kernel:
    """The kernel path of one (engine, phase, architecture, format)."""

    path: str
    efficiency: str  # key in prefill_kernel_efficiency / decode_kernel_bandwidth_factor
    peak: str | None = None  # prefill: the precision key of the peak it computes at
    speedup: float = 1.0  # measured throughput over the path its efficiency belongs to
    source: str = ""
    since: str | None = None
    experts_only: bool = False  # a decode path of MoE experts alone (not a dense model's)

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
           version: EngineVersion | None = None) -> Kernel | None:
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
            version: EngineVersion | None) -> Kernel | None:
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
                      k.get("source", ""), k.get("since"), bool(k.get("experts_only")))
    return None


def _in_build(entry: dict[str, Any], engine: str, version: EngineVersion | None) -> bool:
    """Whether a kernel entry with ``since_build`` (and ``since``, its date) is in the build
    ``version`` names: a build number, a date, or an era (today's when None)."""
    first = entry.get("since_build")
    if first is None or version is None:
        return True
    if version.build is not None:
        return version.build >= int(first)
    for v in eras(engine):
        if version.name == v["era"]:
            return "until" not in v or v["until"] >= str(entry.get("since", ""))
    if version.month and entry.get("since"):
        return version.month >= str(entry["since"])[:7]
    return True


def _named_era(known: list[dict[str, Any]], version: EngineVersion) -> str | None:
    """The era a version names (its name, or a word an era matches: 'ollama')."""
    for v in known:
        if version.name and (version.name == v["era"]
                             or ("match" in v and version.says(v["match"]))):
            return str(v["era"])
    return None


def version_label(engine: str, version: EngineVersion | None) -> str | None:
    """What a measurement says of the engine build, kept for the estimate: the era a name
    matches ('ollama'), else the build number ('b6910'), else the month ('2025-11'), else
    None (today's). :func:`era_of` maps each to its era; kernels with ``since_build`` compare
    it."""
    if not eras(engine) or version is None:
        return None
    era = _named_era(eras(engine), version)
    if era:
        return era
    if version.build is not None:
        return f"b{version.build}"
    return version.month


def eras(engine: str) -> list[dict[str, Any]]:
    return [v for v in _table().get("version", []) if v["engine"] == engine]


def default_era(engine: str) -> str | None:
    for v in eras(engine):
        if v.get("default"):
            return v["era"]
    return None


def era_of(engine: str, version: EngineVersion | None = None) -> str | None:
    """The era of an engine build: from its build number ('b6918', 'build 4458'), an era
    name, or its month ('2024-05'); today's era when none says."""
    known = eras(engine)
    if not known:
        return None
    if version is None:
        return default_era(engine)
    era = _named_era(known, version)
    if era:
        return era
    if version.build is not None:
        for v in known:
            if "max_build" in v and version.build <= int(v["max_build"]):
                return str(v["era"])
        return default_era(engine)
    if version.month:
        for v in known:
            if "until" in v and version.month <= v["until"][:7]:
                return str(v["era"])
    return default_era(engine)


def era_names(engine: str) -> list[str]:
    return [v["era"] for v in eras(engine)]
