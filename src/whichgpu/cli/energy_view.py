"""The energy lines under a speed answer: board power, joules per token or image, kWh."""

from __future__ import annotations

from typing import Any

from whichgpu.cli.common import console


def _r(r: Any, digits: int = 2) -> str:
    return f"{r.typical:,.{digits}f} ({r.low:,.{digits}f}-{r.high:,.{digits}f})"


def energy_lines(e: Any) -> list[str]:
    """Plain sentences for an estimate/energy.Energy (English; the JSON has the numbers)."""
    lines = []
    for d in e.draws:
        cap = (f" at a {d.power_cap_w:g} W cap (speed x {d.speed_factor:.2f})"
               if d.power_cap_w is not None else "")
        lines.append(f"Board power, {d.phase}: {_r(d.watts, 0)} W per GPU{cap}, "
                     f"{d.basis} ({'of this card' if d.basis == 'measured' else 'share of the'}"
                     f"{'' if d.basis == 'measured' else f' {d.tdp_w:g} W TDP'})")
    if e.joules_per_token is not None:  # training has no output tokens: its tokens trained
        training = bool(e.draws) and str(e.draws[0].phase) == "training"
        unit = "training token" if training else "output token"
        lines.append(f"Energy: {_r(e.joules_per_token)} J per {unit} = "
                     f"{_r(e.kwh_per_million_tokens)} kWh per million tokens")
    if e.joules_per_prompt_token is not None:
        lines.append(f"Prefill: {_r(e.joules_per_prompt_token, 4)} J per prompt token")
    if e.joules_per_image is not None:
        lines.append(f"Energy: {_r(e.joules_per_image, 0)} J per image = "
                     f"{_r(e.kwh_per_thousand_images, 3)} kWh per 1,000 images")
    return lines + [f"- {a}" for a in e.assumptions]


def print_energy(e: Any) -> None:
    for line in energy_lines(e):
        console.print(f"[dim]{line}[/dim]" if line.startswith("- ") else line)


def print_power_budget(b: Any) -> None:
    """The ranked options within a power budget (board power of their GPUs, busy)."""
    shown = ", ".join(f"#{o.rank} {o.gpus} x {o.gpu} ({o.watts:,.0f} W)" for o in b.within[:5])
    console.print(f"Within {b.budget_w:,.0f} W (GPU board power, busy; host and cooling on top): "
                  + (shown if shown else "none of the options shown")
                  + (f"; {len(b.over)} option(s) draw more" if b.over else ""))
