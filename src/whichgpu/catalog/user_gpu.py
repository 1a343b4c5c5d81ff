"""A GPU the user describes instead of naming: ``--gpu 12GB`` or ``--gpu-spec KEY=VALUE,...``.

``--gpu 12GB`` is memory only: it answers whether a job fits; a speed needs the card's memory
bandwidth and 16-bit tensor rate, and says so instead of inventing them. ``--gpu-spec`` gives
the rest::

    memory=12GB,bandwidth=360GB/s,fp16=51,fp8=...,tdp=170W,interconnect=pcie4x16,price=329USD

Keys (one line each in :data:`SPEC_KEYS`): ``memory`` is required; ``bandwidth`` and ``fp16``
(or ``bf16``) are needed for speed; ``tdp`` and ``price`` for the cost of owning it. A card
sold as "12 GB" has 12 GiB of memory: ``12GB`` is read as the marketed size (12 x 1,024 MiB
usable, the catalog's convention for a card without ECC); ``usable=12282MiB`` gives the exact
figure nvidia-smi prints.
"""

from __future__ import annotations

import re
from typing import Any

from whichgpu.catalog.gpus import (
    GPU,
    PLATFORMS,
    PRECISIONS,
    FormFactor,
    Interconnect,
    PurchasePrice,
    Resolution,
    Sourced,
    Throughput,
    resolve_gpu,
)
from whichgpu.errors import InputError
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import GB, GiB, MiB, parse_money, parse_power, parse_size

SOURCE = "user-spec"
#: Every key ``--gpu-spec`` takes, and what it is for.
SPEC_KEYS = {
    "memory": "memory as sold, e.g. 12GB (required; the fit needs only this)",
    "usable": "memory a process can use, e.g. 12282MiB (default: memory in GiB)",
    "bandwidth": "memory bandwidth, e.g. 360GB/s or 1.8TB/s (needed for speed)",
    "fp16": "dense FP16/BF16 tensor TFLOPS at FP32 accumulate (needed for speed)",
    "bf16": "dense BF16 tensor TFLOPS (default: fp16)",
    "fp16_acc16": "dense FP16 TFLOPS with FP16 accumulate (GeForce: twice fp16)",
    "fp8": "dense FP8 TFLOPS (none: the card has no FP8)",
    "fp4": "dense FP4 TFLOPS",
    "int8": "dense INT8 TOPS",
    "fp32": "FP32 vector TFLOPS",
    "tdp": "board power, e.g. 170W (for electricity in ownership costs)",
    "interconnect": "pcie3x16, pcie4x8, pcie5x16, nvlink:600 (GB/s) or none",
    "p2p": "true or false: peer-to-peer between cards",
    "price": "purchase price, e.g. 329USD (for the cost of owning it)",
    "platform": f"software stack: {', '.join(PLATFORMS)} (default cuda)",
    "name": "a label for the answers (letters, digits, dashes)",
}
_PCIE = re.compile(r"pcie([345])(?:x(1|2|4|8|16))?")
_MEMORY_ONLY = re.compile(r"\s*\d+(?:[.,]\d+)?\s*(gb|gib|g|mb|mib|tb|tib)\s*", re.I)


def is_memory_only(text: str) -> bool:
    """Whether a --gpu value is a bare size ("12GB", "24 GiB") rather than a GPU name."""
    return bool(_MEMORY_ONLY.fullmatch(str(text)))


def _bad(key: str, value: str, want: Message | str) -> InputError:
    return InputError(msg("gpu_spec.bad", "{field} {key}={v!r}: {want}", field=Field("gpu_spec"),
                          key=key, v=value, want=want))


def _float(key: str, value: str, unit: str = "") -> float:
    text = value.strip().lower().replace(" ", "")
    if unit and text.endswith(unit):
        text = text[: -len(unit)]
    try:
        number = float(text)
    except ValueError:
        raise _bad(key, value, msg("gpu_spec.number_of", "expected a number of {unit}", unit=unit)
                   if unit else msg("gpu_spec.number", "expected a number")) from None
    if not number > 0 or number != number or number == float("inf"):
        raise _bad(key, value, msg("gpu_spec.positive", "must be a positive number"))
    return number


def _tdp(value: str) -> float:
    try:
        return parse_power(value, what="tdp")
    except InputError:
        raise _bad("tdp", value, "write it like 170W or 1.1kW (a positive power)") from None


def _bandwidth_gb_s(value: str) -> float:
    text = value.strip().lower().replace(" ", "")
    for unit, scale in (("tb/s", 1000.0), ("gb/s", 1.0)):
        if text.endswith(unit):
            return _float("bandwidth", text[: -len(unit)]) * scale
    raise _bad("bandwidth", value, msg("gpu_spec.bandwidth", "write it like 360GB/s or 1.8TB/s"))


def _memory_mib(key: str, value: str, marketed: bool) -> tuple[float, int]:
    """(GB as sold, usable MiB) from a size; a bare GB figure is the marketed GiB size."""
    try:
        n = parse_size(value)
    except InputError:
        raise _bad(key, value, msg("gpu_spec.size", "write it like 12GB, 24GiB or 12282MiB")
                   ) from None
    if n <= 0:
        raise _bad(key, value, msg("gpu_spec.above_zero", "must be more than 0"))
    unit = re.sub(r"[\d.,\s]", "", value.lower())
    if marketed and unit in ("gb", "g"):  # "12 GB" cards carry 12 GiB
        return n / GB, int(round(n / GB * 1024))
    return n / GB, n // MiB


def _interconnect(value: str, p2p: bool | None) -> dict[str, Any]:
    text = value.strip().lower()
    if text == "none":
        kind, bw, domain = "none", 1.0, 1
    elif text.startswith("nvlink"):
        _, _, rate = text.partition(":")
        kind, bw, domain = "nvlink-bridge", _float("interconnect", rate or "112.5"), 8
    else:
        m = _PCIE.fullmatch(text)
        if not m:
            raise _bad("interconnect", value, msg("gpu_spec.interconnect", "use pcie3x16, "
                                                  "pcie4x8, pcie5x16, nvlink:600 or none"))
        gen, lanes = int(m.group(1)), int(m.group(2) or 16)
        kind, bw, domain = f"pcie{gen}", {3: 32, 4: 64, 5: 128}[gen] * lanes / 16, 8
    link = {"kind": kind, "bandwidth_gb_s": bw, "direction": "bidirectional",
            "peer_to_peer": bool(p2p) if p2p is not None else kind.startswith("nvlink"),
            "domain_gpus": domain, "host_link": kind if kind.startswith("pcie") else "pcie4"}
    return {k: Sourced(value=v, source=SOURCE) for k, v in link.items()}


def parse_gpu_spec(text: str) -> dict[str, str]:
    """``KEY=VALUE,KEY=VALUE`` into a dict, refusing unknown or repeated keys by name."""
    spec: dict[str, str] = {}
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or not value.strip():
            raise InputError(msg("gpu_spec.pair", "{field}: {v!r} is not KEY=VALUE (keys: "
                                 "{keys})", field=Field("gpu_spec"), v=part,
                                 keys=", ".join(SPEC_KEYS)))
        if key not in SPEC_KEYS:
            raise InputError(msg("gpu_spec.key", "{field}: unknown key {v!r}; use {keys}",
                                 field=Field("gpu_spec"), v=key, keys=", ".join(SPEC_KEYS)))
        if key in spec:
            raise InputError(msg("gpu_spec.twice", "{field}: {key} is given twice",
                                 field=Field("gpu_spec"), key=key))
        spec[key] = value.strip()
    if "memory" not in spec:
        raise InputError(msg("gpu_spec.memory", "{field} needs memory=SIZE (e.g. memory=12GB); "
                             "bandwidth= and fp16= add a speed", field=Field("gpu_spec")))
    return spec


def user_gpu(spec: dict[str, str] | str) -> GPU:
    """A GPU from a ``--gpu-spec`` (dict or text); every value marked as the user's."""
    if isinstance(spec, str):
        spec = parse_gpu_spec(spec)
    gb, mib = _memory_mib("memory", spec["memory"], marketed=True)
    if "usable" in spec:
        _, mib = _memory_mib("usable", spec["usable"], marketed=False)
        if mib * MiB > gb * GiB * 1.01:
            raise _bad("usable", spec["usable"], msg("gpu_spec.usable", "more than the memory "
                                                     "({memory})", memory=spec["memory"]))
    name = spec.get("name", "").strip().lower()
    if name and not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", name):
        raise _bad("name", spec["name"], msg("gpu_spec.name", "letters, digits and dashes only"))
    platform = spec.get("platform", "cuda").lower()
    if platform not in PLATFORMS:
        raise _bad("platform", spec["platform"], msg("gpu_spec.platform", "use one of {choices}",
                                                     choices=", ".join(PLATFORMS)))
    throughput: dict[str, Throughput] = {}
    for key in ("fp16", "bf16", "fp16_acc16", "fp8", "fp4", "int8", "fp32"):
        if key not in spec:
            continue
        if spec[key].strip().lower() in ("none", "no", "0"):
            throughput[key] = Throughput(precision=key, status="unsupported", source=SOURCE)
            continue
        throughput[key] = Throughput(precision=key, status="supported", source=SOURCE,
                                     tflops=_float(key, spec[key], "tflops"))
    if "fp16" in throughput and "bf16" not in throughput:
        throughput["bf16"] = throughput["fp16"].model_copy(update={"precision": "bf16"})
    if "bf16" in throughput and "fp16" not in throughput:
        throughput["fp16"] = throughput["bf16"].model_copy(update={"precision": "fp16"})
    assert set(throughput) <= set(PRECISIONS)
    p2p = None
    if "p2p" in spec:
        if spec["p2p"].lower() not in ("true", "false", "yes", "no"):
            raise _bad("p2p", spec["p2p"], msg("gpu_spec.bool", "true or false"))
        p2p = spec["p2p"].lower() in ("true", "yes")
    price = None
    if "price" in spec:
        try:
            money = parse_money(spec["price"], "USD")
        except InputError as exc:
            raise _bad("price", spec["price"], exc.args[0] if exc.args else str(exc)) from None
        if not money.amount > 0:
            raise _bad("price", spec["price"], msg("gpu_spec.above_zero", "must be more than 0"))
        price = PurchasePrice(low=money.amount, high=money.amount, currency=money.currency,
                              date="user", source=SOURCE, note="your price")
    label = name or f"{gb:g}gb"
    sv = lambda v: Sourced(value=v, source=SOURCE)  # noqa: E731
    return GPU(
        id=f"your-{label}", name=f"your card: {_describe(spec)}", vendor="other",
        family=f"your-{label}", form_factor=_form_factor(throughput), form_factor_source=SOURCE,
        platform=sv(platform), architecture=sv("user-described"), compute_capability=sv("?"),
        launch_year=sv(2026), memory_gb=sv(gb), memory_usable_mib=sv(mib),
        memory_type=sv("?"),
        bandwidth_gb_s=sv(_bandwidth_gb_s(spec["bandwidth"]) if "bandwidth" in spec else 0.0),
        tdp_w=sv(_tdp(spec["tdp"]) if "tdp" in spec else 0.0),
        purchase_price=price,
        no_public_price=None,
        throughput=throughput,
        interconnect=Interconnect(**_interconnect(spec.get("interconnect", "pcie4x16"), p2p)),
        user_spec=True,
    )


def _form_factor(throughput: dict[str, Throughput]) -> FormFactor:
    """GeForce-like (the speed model's FP16-accumulate path) when the user gave an FP16-
    accumulate rate above the FP32-accumulate one; a plain PCIe card otherwise."""
    a16, f16 = throughput.get("fp16_acc16"), throughput.get("fp16")
    if a16 and f16 and a16.tflops and f16.tflops and a16.tflops > f16.tflops:
        return "consumer"
    return "pcie"


def _describe(spec: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name")


def missing_for_speed(gpu: GPU, w: Any = None) -> list[str]:
    """The --gpu-spec keys a speed estimate of this card still needs ([] when none)."""
    if not gpu.user_spec:
        return []
    need = []
    if not gpu.bandwidth_gb_s.value:
        need.append("bandwidth=GB/s")
    if gpu.tflops("bf16") is None and gpu.tflops("fp16") is None:
        need.append(msg("gpu_spec.need.fp16", "fp16=TFLOPS (dense, FP32 accumulate)"))
    return need


def require_speed_figures(gpu: GPU, w: Any = None) -> None:
    """Refuse a speed for a described card that lacks the figures a speed rests on."""
    need = missing_for_speed(gpu, w)
    if need:
        raise InputError(msg(
            "gpu_spec.speed_figures", "{gpu} is described by its memory only: a speed needs its "
            "{need}; give {spec} (the fit is answered without them)", gpu=gpu.id,
            need=Join(need, ", ", " and "),
            spec=Field("gpu_spec", f"memory={gpu.memory_gb.value:g}GB,bandwidth=...,fp16=...")))


def resolve_gpu_arg(text: str | None, spec: str | None = None) -> Resolution | None:
    """A --gpu value (a catalog name or a bare size) and/or a --gpu-spec, as one GPU."""
    if spec:
        if text and not is_memory_only(text):
            raise InputError(msg("flags.not_both", "give {a} or {b}, not both",
                                 a=Field("gpu", "NAME"), b=Field("gpu_spec")))
        parsed = parse_gpu_spec(spec if "memory=" in spec.lower() or not text
                                else f"memory={text},{spec}")
        return Resolution(gpu=user_gpu(parsed), query=spec)
    if not text:
        return None
    if is_memory_only(text):
        return Resolution(gpu=user_gpu({"memory": text.strip()}), query=text,
                          note=msg("gpu.memory_only", "{size}: your card, by its memory only "
                                   "(add {spec} for a speed)", size=text.strip(),
                                   spec=Field("gpu_spec", "bandwidth=...,fp16=...")))
    return resolve_gpu(text)
