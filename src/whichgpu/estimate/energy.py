"""Energy per token and per image: board power under load (measured where published, else a
sourced share of the TDP by phase), power caps and their cost in speed.

    board power   = measured watts of this card in this phase (data/board_power.csv), or
                    TDP x fraction(phase, batch) (data/power.toml: decode draws less than the
                    compute-bound prefill, images and training)
    at a cap C    = min(power, C); speed x curve(C / power) when C < power
    J per token   = board power x GPUs / tokens per second
    kWh per 1M    = J per token x 10^6 / 3.6 x 10^6

Board power only: the host, the power supply's loss and the facility (PUE) are not counted.
"""

from __future__ import annotations

import csv
import math
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from itertools import pairwise
from typing import Any

from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Range

JOULES_PER_KWH = 3.6e6


class PowerPhase(StrEnum):
    """What the card is doing: it sets how much of its TDP it draws."""

    DECODE = "decode"  # memory-bandwidth bound: draws least
    PREFILL = "prefill"  # compute bound
    IMAGE = "image"  # diffusion: compute bound
    TRAINING = "training"  # compute bound
    IDLE = "idle"


class PowerBasis(StrEnum):
    MEASURED = "measured"  # a published measurement of this card in this phase
    FALLBACK = "fallback"  # the phase's sourced share of the TDP


_COMPUTE = (PowerPhase.PREFILL, PowerPhase.IMAGE, PowerPhase.TRAINING)


@dataclass(frozen=True)
class Measurement:
    """One row of data/board_power.csv."""

    id: str
    gpu: str
    phase: PowerPhase
    batch: int
    engine: str
    model: str
    power_cap_w: float | None
    measured_w: float
    tokens_per_s: float | None
    source: str
    url: str
    date: str


@cache
def _config() -> dict[str, Any]:
    text = resources.files("whichgpu.estimate").joinpath("data/power.toml").read_text("utf-8")
    return tomllib.loads(text)


@cache
def measurements() -> tuple[Measurement, ...]:
    """The published board-power measurements shipped with whichgpu."""
    text = resources.files("whichgpu.estimate").joinpath("data/board_power.csv").read_text(
        "utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    rows = []
    for r in csv.DictReader(lines):
        rows.append(Measurement(
            r["id"], r["gpu"], PowerPhase(r["phase"]), int(r["batch"] or 0), r["engine"],
            r["model"], float(r["power_cap_w"]) if r["power_cap_w"] else None,
            float(r["measured_w"]), float(r["tokens_per_s"]) if r["tokens_per_s"] else None,
            r["source"], r["url"], r["date"]))
    return tuple(rows)


def source_text(key: str) -> str:
    """The citation behind a source key of power.toml."""
    return str(_config()["sources"][key])


def _consumer(gpu: GPU) -> bool:
    return getattr(gpu, "form_factor", None) == "consumer"


def fallback_fraction(gpu: GPU, phase: PowerPhase, batch: int = 1) -> Range:
    """The share of its TDP ``gpu`` draws in ``phase`` at ``batch`` when nothing is measured."""
    cfg = _config()["fallback"]
    if phase is PowerPhase.IDLE:
        f = float(cfg["idle"]["fraction"])
        return Range(f, f, f)
    if phase in _COMPUTE:
        c = cfg["compute"]
        return Range(float(c["low"]), float(c["typical"]), float(c["high"]))
    d = cfg["decode"]["consumer" if _consumer(gpu) else "datacenter"]
    t = min(max(math.log2(max(batch, 1)) / 7.0, 0.0), 1.0)  # 7 = log2(128)
    typical = float(d["batch_1"]) + (float(d["batch_128"]) - float(d["batch_1"])) * t
    return Range(min(typical * float(d["low_factor"]), 1.0), min(typical, 1.0),
                 min(typical * float(d["high_factor"]), 1.0))


def _fallback_sources(gpu: GPU, phase: PowerPhase) -> list[str]:
    cfg = _config()["fallback"]
    if phase is PowerPhase.IDLE:
        return list(cfg["idle"]["sources"])
    if phase in _COMPUTE:
        return list(cfg["compute"]["sources"])
    return list(cfg["decode"]["consumer" if _consumer(gpu) else "datacenter"]["sources"])


def _measured(gpu_id: str, phase: PowerPhase, batch: int) -> tuple[float, str] | None:
    """Uncapped measured watts of this card and phase at ``batch`` (interpolated in
    log2(batch) between measured batches, else the nearest) and the rows' ids."""
    rows = sorted((m for m in measurements()
                   if m.gpu == gpu_id and m.phase is phase and m.power_cap_w is None),
                  key=lambda m: m.batch)
    if not rows:
        return None
    x = math.log2(max(batch, 1))
    for m in rows:
        if m.batch == batch or (phase is PowerPhase.IDLE):
            return m.measured_w, m.id
    below = [m for m in rows if m.batch < batch]
    above = [m for m in rows if m.batch > batch]
    if below and above:
        a, b = below[-1], above[0]
        xa, xb = math.log2(max(a.batch, 1)), math.log2(max(b.batch, 1))
        w = a.measured_w + (b.measured_w - a.measured_w) * (x - xa) / (xb - xa)
        return w, f"{a.id}, {b.id}"
    m = below[-1] if below else above[0]
    return m.measured_w, m.id


@dataclass(frozen=True)
class PowerDraw:
    """What one GPU draws in a phase, with where the number comes from."""

    gpu: str
    phase: PowerPhase
    watts: Range  # per GPU, at the cap if there is one
    uncapped_watts: Range
    tdp_w: float
    basis: PowerBasis
    source: str  # short: the measurement ids, or the fallback's keys (power.toml)
    power_cap_w: float | None = None
    speed_factor: float = 1.0  # speed at the cap / speed without it
    citations: tuple[str, ...] = ()  # the full citations behind ``source``

    def to_json(self) -> dict[str, Any]:
        return {"phase": str(self.phase), "board_power_w": self.watts.to_json(),
                "uncapped_board_power_w": self.uncapped_watts.to_json(),
                "tdp_w": self.tdp_w, "basis": str(self.basis), "source": self.source,
                "sources": list(self.citations),
                "power_cap_w": self.power_cap_w, "speed_factor": round(self.speed_factor, 4)}


def _curve(phase: PowerPhase) -> tuple[list[tuple[float, float]], str]:
    c = _config()["cap_curve"]["memory" if phase is PowerPhase.DECODE else "compute"]
    return [(float(a), float(b)) for a, b in c["points"]], str(c["source"])


def _interp(points: list[tuple[float, float]], x: float) -> float:
    if x >= points[-1][0]:
        return points[-1][1]
    for (x0, y0), (x1, y1) in pairwise(points):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[0][1]


def cap_speed_factor(phase: PowerPhase, cap_share_of_draw: float) -> float:
    """Speed at a cap as a share of the uncapped speed, the cap given as a share of what the
    phase draws uncapped: 1 when the cap is at or above the draw."""
    if cap_share_of_draw >= 1.0:
        return 1.0
    points, _ = _curve(phase)
    return min(_interp(points, cap_share_of_draw), 1.0)


def lowest_cap_fraction(phase: PowerPhase) -> float:
    return _curve(phase)[0][0][0]


def board_power(gpu: GPU, phase: PowerPhase, batch: int = 1,
                power_cap_w: float | None = None) -> PowerDraw:
    """What ``gpu`` draws in ``phase``: a measurement where published, else a share of TDP."""
    tdp = float(gpu.tdp_watts or 0.0)
    if tdp <= 0:
        raise InputError(msg("energy.no_tdp", "{gpu}: its board power is not known; give its "
                             "TDP ({spec})", gpu=gpu.id, spec=Field("gpu_spec", "tdp=W")))
    m = _measured(gpu.id, phase, batch)
    if m is not None:
        w, ids = m
        f = fallback_fraction(gpu, phase, batch)  # the spread of a phase around its typical
        # another model or engine on the same card draws differently: the phase's spread
        uncapped = Range(w * f.low / f.typical, w, max(min(w * f.high / f.typical, tdp), w))
        keys = sorted({r.source for r in measurements() if r.id in ids.split(", ")})
        basis = PowerBasis.MEASURED
        source = f"measured {ids} ({', '.join(keys)})"
    else:
        uncapped = fallback_fraction(gpu, phase, batch).scale(tdp)
        basis = PowerBasis.FALLBACK
        keys = _fallback_sources(gpu, phase)
        source = f"share of TDP for {phase} ({', '.join(keys)})"
    if power_cap_w is None:
        return PowerDraw(gpu.id, phase, uncapped, uncapped, tdp, basis, source,
                         citations=tuple(source_text(k) for k in keys))
    check_power_cap(gpu, phase, power_cap_w)
    factor = cap_speed_factor(phase, power_cap_w / uncapped.typical)
    capped = Range(min(uncapped.low, power_cap_w), min(uncapped.typical, power_cap_w),
                   min(uncapped.high, power_cap_w))
    curve_key = _curve(phase)[1]
    return PowerDraw(gpu.id, phase, capped, uncapped, tdp, basis,
                     f"{source}; speed at the cap: {curve_key}", power_cap_w, factor,
                     tuple(source_text(k) for k in (*keys, curve_key)))


def check_power_cap(gpu: GPU, phase: PowerPhase, cap_w: float) -> None:
    """Refuse a cap no published curve reaches (below its lowest point) or a nonsense one."""
    tdp = float(gpu.tdp_watts or 0.0)
    if not (math.isfinite(cap_w) and cap_w > 0):
        raise InputError(msg("energy.cap_positive", "{field} must be a positive number of "
                             "watts", field=Field("power_cap")))
    # the curve's shares are written to three decimals (the sweep's 100 W of 350 W, 0.2857,
    # is 0.286): a cap at the lowest point as said in watts is inside it, not below
    lowest = (lowest_cap_fraction(phase) - 0.0005) * tdp
    if cap_w < lowest:
        raise InputError(msg("energy.cap_low", "{field} {cap:g} W is below {low:.0f} W, the "
                             "lowest share of {gpu}'s {tdp:g} W TDP a published power-limit "
                             "sweep reached", field=Field("power_cap"), cap=cap_w, low=lowest,
                             gpu=gpu.id, tdp=tdp))


@dataclass(frozen=True)
class Energy:
    """Energy of a speed answer: per token (output and prompt) or per image."""

    gpu: str
    count: int
    draws: tuple[PowerDraw, ...]  # the main phase first
    joules_per_token: Range | None = None
    joules_per_prompt_token: Range | None = None
    joules_per_image: Range | None = None
    joules_per_video: Range | None = None
    joules_per_step: Range | None = None  # a training step with no token rate (image LoRA)
    assumptions: tuple[Message, ...] = ()

    @property
    def kwh_per_million_tokens(self) -> Range | None:
        j = self.joules_per_token
        return None if j is None else j.scale(1e6 / JOULES_PER_KWH)

    @property
    def kwh_per_thousand_images(self) -> Range | None:
        j = self.joules_per_image
        return None if j is None else j.scale(1e3 / JOULES_PER_KWH)

    def to_json(self) -> dict[str, Any]:
        def r(x: Range | None, digits: int = 4) -> dict[str, float] | None:
            return None if x is None else {k: round(v, digits) for k, v in x.to_json().items()}

        return {
            "gpu": self.gpu, "count": self.count,
            "power": [d.to_json() for d in self.draws],
            "joules_per_token": r(self.joules_per_token),
            "joules_per_prompt_token": r(self.joules_per_prompt_token, 6),
            "kwh_per_million_tokens": r(self.kwh_per_million_tokens),
            "joules_per_image": r(self.joules_per_image, 1),
            "kwh_per_thousand_images": r(self.kwh_per_thousand_images),
            "joules_per_video": r(self.joules_per_video, 1),
            "kwh_per_video": r(None if self.joules_per_video is None else
                               self.joules_per_video.scale(1 / JOULES_PER_KWH)),
            "joules_per_step": r(self.joules_per_step, 1),
            "assumptions": list(self.assumptions),
        }


def _per_unit(watts: Range, count: int, rate: Range) -> Range:
    """Joules per unit from board power per GPU, the GPU count and units per second."""
    return Range(watts.low * count / rate.high, watts.typical * count / rate.typical,
                 watts.high * count / rate.low)


def _scaled(r: Range, f: float) -> Range:
    return Range(r.low * f, r.typical * f, r.high * f)


def energy_of(est: Any, gpu: GPU, count: int, power_cap_w: float | None = None,
              ) -> tuple[Energy, dict[str, Range], dict[str, Range]]:
    """The energy of a speed estimate, and its rates and times at the power cap.

    Decode rates take the decode phase's factor, prefill rates and the time to first token the
    compute phases' (the request time takes decode's); images and training run compute bound.
    """
    rates: dict[str, Range] = dict(est.rates)
    times: dict[str, Range] = dict(est.times)
    batch = int(est.scalars.get("batch") or 1)
    notes: list[Message] = [msg("energy.board_only", "board power only: the host, the power "
                                "supply's loss and the facility (PUE) are not counted")]
    if any(c.name.startswith("host RAM") and c.seconds > 0 for c in est.components):
        notes.append(msg("energy.offload", "part of the model runs from host RAM: the CPU's "
                         "and the RAM's power are not counted, and the GPU, waiting on them, "
                         "draws less than this"))
    if "images_per_min" in rates or "seconds_per_image" in times:
        main = board_power(gpu, PowerPhase.IMAGE, 1, power_cap_w)
        draws: tuple[PowerDraw, ...] = (main,)
        f = main.speed_factor
        rates = {k: _scaled(v, f) for k, v in rates.items()}
        times = {k: _scaled(v, 1 / f) for k, v in times.items()}
        per_image = rates["images_per_min"].scale(1 / 60) if "images_per_min" in rates else \
            times["seconds_per_image"].inverse()
        energy = Energy(gpu.id, count, draws, joules_per_image=_per_unit(main.watts, count,
                                                                          per_image),
                        assumptions=tuple(notes))
    elif "seconds_per_video" in times:  # video: compute-bound denoising, as images
        main = board_power(gpu, PowerPhase.IMAGE, 1, power_cap_w)
        draws = (main,)
        f = main.speed_factor
        rates = {k: _scaled(v, f) for k, v in rates.items()}
        times = {k: _scaled(v, 1 / f) for k, v in times.items()}
        energy = Energy(gpu.id, count, draws,
                        joules_per_video=_per_unit(main.watts, count,
                                                   times["seconds_per_video"].inverse()),
                        assumptions=tuple(notes))
    elif "decode_tokens_per_s" in rates:
        main = board_power(gpu, PowerPhase.DECODE, batch, power_cap_w)
        pre = board_power(gpu, PowerPhase.PREFILL, batch, power_cap_w)
        draws = (main, pre)
        for k in list(rates):
            rates[k] = _scaled(rates[k], pre.speed_factor if "prefill" in k else
                               main.speed_factor)
        for k in list(times):
            times[k] = _scaled(times[k], 1 / (pre.speed_factor if k == "ttft_s" else
                                              main.speed_factor))
        energy = Energy(gpu.id, count, draws,
                        joules_per_token=_per_unit(main.watts, count,
                                                   rates["decode_tokens_per_s"]),
                        joules_per_prompt_token=_per_unit(pre.watts, count,
                                                          rates["prefill_tokens_per_s"])
                        if "prefill_tokens_per_s" in rates else None,
                        assumptions=(*notes, msg(
                            "energy.decode_batch", "decode at a batch of {batch}: the more "
                            "sequences share a weight read, the fewer joules per token",
                            batch=batch)))
    elif "tokens_per_s" in rates:  # training
        main = board_power(gpu, PowerPhase.TRAINING, batch, power_cap_w)
        draws = (main,)
        rates = {k: _scaled(v, main.speed_factor) for k, v in rates.items()}
        times = {k: _scaled(v, 1 / main.speed_factor) for k, v in times.items()}
        energy = Energy(gpu.id, count, draws,
                        joules_per_token=_per_unit(main.watts, count, rates["tokens_per_s"]),
                        assumptions=tuple(notes))
    elif "step_s" in times:  # training steps with no token rate (image LoRA)
        main = board_power(gpu, PowerPhase.TRAINING, batch, power_cap_w)
        draws = (main,)
        rates = {k: _scaled(v, main.speed_factor) for k, v in rates.items()}
        times = {k: _scaled(v, 1 / main.speed_factor) for k, v in times.items()}
        energy = Energy(gpu.id, count, draws,
                        joules_per_step=_per_unit(main.watts, count, times["step_s"].inverse()),
                        assumptions=tuple(notes))
    else:
        raise InputError(msg("energy.no_rate", "this answer has no rate to give an energy "
                             "per token or per image for"))
    return energy, rates, times


#: The batch of a busy inference server, whose decode power stands for "under load" in
#: ownership costs (mlenergy-v3 measured H100 decode at batch 128).
BUSY_BATCH = 128


def busy_load_factor(gpu: GPU) -> tuple[float, str]:
    """The share of its TDP ``gpu`` draws while busy serving (decode at batch 128): measured
    where published, else the sourced fallback; with the citation."""
    d = board_power(gpu, PowerPhase.DECODE, BUSY_BATCH)
    return min(d.watts.typical / d.tdp_w, 1.0), f"{d.source}: {'; '.join(d.citations)}"
