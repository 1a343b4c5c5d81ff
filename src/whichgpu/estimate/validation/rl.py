"""Check RL post-training memory and the multi-LoRA throughput cost against published figures
(``validation/rl-memory.csv``, ``validation/multi-lora.csv``) and print the errors:

    python -m whichgpu.estimate.validation.rl

Few published figures exist: Unsloth's GRPO table (its own estimate of Unsloth and of TRL, not
a torch peak) and two relative measurements on a 0.6B model; no per-part measurement of verl or
OpenRLHF memory was found. Multi-LoRA rows give the fraction of throughput lost against the same
engine without adapters; the rows marked ``fit`` set the range, the ``holdout`` rows did not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.units import GB


@dataclass(frozen=True)
class Checked:
    """One published figure against whichgpu's answer."""

    id: str
    measured: float
    predicted: float
    unit: str
    split: str
    low: float | None = None  # the answer's range, where it gives one
    high: float | None = None
    source_url: str = ""

    @property
    def error(self) -> float:
        """Relative error of the typical answer (predicted / measured - 1)."""
        return self.predicted / self.measured - 1

    @property
    def inside(self) -> bool | None:
        if self.low is None or self.high is None:
            return None
        return self.low <= self.measured <= self.high

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "measured": self.measured, "predicted": self.predicted,
                "unit": self.unit, "split": self.split, "error": round(self.error, 4),
                "low": self.low, "high": self.high, "inside": self.inside,
                "source_url": self.source_url}


def _rl_total(model: str, framework: str, tuning: str, generations: int, prompts: int,
              prompt: int, completion: int, rollout_engine: str | None = None) -> int:
    """Per-training-GPU memory of a GRPO job with no GPU named (the rollouts' own need)."""
    from whichgpu.estimate.configure import configure_workload
    from whichgpu.estimate.rl import plan, settings
    from whichgpu.models import resolve_model
    from whichgpu.units import parse_count
    from whichgpu.vocabulary import RLTuning, Task

    if model[:1].isdigit():
        spec = resolve_model(None, params=float(parse_count(model)))
    else:
        spec = resolve_model(model)
    s = settings(Task.GRPO, tuning=RLTuning(tuning), framework=framework,
                 generations=generations, prompts=prompts, prompt_tokens=prompt,
                 completion_tokens=completion, rollout_engine=rollout_engine)
    return plan(spec, s, lambda **c: configure_workload(spec, **c)).peak_training_gpu_bytes


def rl_rows(path: str | None = None) -> list[Checked]:
    """validation/rl-memory.csv: absolute totals (GB) and ratios between two settings."""
    from pathlib import Path

    from whichgpu.estimate.validation import default_path, read_rows

    out = []
    for r in read_rows(Path(path) if path else default_path("rl-memory")):
        gens = [int(g) for g in r["generations"].split("/")]
        tunings = r["tuning"].split("/")
        args: dict[str, Any] = dict(
            model=r["model"], framework=r["framework"], prompts=int(r["prompts"]),
            prompt=int(r["prompt_tokens"]), completion=int(r["completion_tokens"]),
            # the engine the source's figure counts (empty: the framework's default)
            rollout_engine=r.get("rollout_engine") or None)
        measured = float(r["value"])
        if r["measured"] == "ratio":
            if len(tunings) == 2:  # second over first: 16-bit (lora) over 4-bit (qlora)
                a = _rl_total(tuning=tunings[0], generations=gens[0], **args)
                b = _rl_total(tuning=tunings[1], generations=gens[0], **args)
                predicted = b / a
            else:
                a = _rl_total(tuning=tunings[0], generations=gens[0], **args)
                b = _rl_total(tuning=tunings[0], generations=gens[1], **args)
                predicted = b / a
            unit = "x"
        else:
            predicted = _rl_total(tuning=tunings[0], generations=gens[0], **args) / GB
            unit = "GB"
        out.append(Checked(r["id"], measured, predicted, unit, "holdout",
                           source_url=r["source_url"]))
    return out


def lora_rows(path: str | None = None) -> list[Checked]:
    """validation/multi-lora.csv: the throughput lost, against the answer's range."""
    from pathlib import Path

    from whichgpu.estimate.multi_lora import cost_range
    from whichgpu.estimate.validation import default_path, read_rows

    cost = cost_range()
    return [Checked(r["id"], float(r["measured_cost"]), cost.typical, "fraction", r["split"],
                    low=cost.low, high=cost.high, source_url=r["source_url"])
            for r in read_rows(Path(path) if path else default_path("multi-lora"))]


def report() -> str:
    """The two tables as text, with the median absolute error of each."""
    from statistics import median

    lines = []
    for title, rows in (("RL post-training memory (validation/rl-memory.csv)", rl_rows()),
                        ("multi-LoRA throughput cost (validation/multi-lora.csv)",
                         lora_rows())):
        lines.append(title)
        lines.append(f"{'id':34} {'split':8} {'measured':>9} {'predicted':>9} {'error':>8} "
                     "inside")
        for c in rows:
            inside = "" if c.inside is None else ("yes" if c.inside else "no")
            lines.append(f"{c.id:34} {c.split:8} {c.measured:9.3f} {c.predicted:9.3f} "
                         f"{c.error:+8.1%} {inside}")
        held = [abs(c.error) for c in rows if c.split == "holdout"]
        if held:
            lines.append(f"median |error| over {len(held)} holdout row(s): {median(held):.1%}")
        inside_rows = [c for c in rows if c.inside is not None]
        if inside_rows:
            n = sum(1 for c in inside_rows if c.inside)
            lines.append(f"inside the range: {n} of {len(inside_rows)}")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
