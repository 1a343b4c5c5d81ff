"""The memory estimate's confidence label, by the one rule every answer uses
(estimate/speed/result.py ``label_for``): the width of the stated range and the evidence
behind it (issue 30).

A memory estimate's range is the 80 % interval of measured / estimated of the calibration
rows of its task group (``memory_range``, written by make calibrate), ``high / low`` wide (the
fit verdict's borderline is a separate figure, ``memory_uncertainty``); the evidence is the
calibration rows of the same task group on the same engine (or training framework) in
validation/memory.csv (``memory_evidence``, written by make calibrate): some on that engine is
level 2, only on other engines level 1, none level 0. A generic model from a bare size is
level 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from whichgpu.estimate.constants import memory_value
from whichgpu.messages import Message, msg
from whichgpu.vocabulary import Task

if TYPE_CHECKING:
    from whichgpu.estimate.frameworks import Framework
    from whichgpu.vocabulary import Engine


class MemoryConfidence(NamedTuple):
    label: str
    why: Message


def task_group(task: Task) -> str:
    from whichgpu.estimate.workload import DIFFUSION_TASKS, TRAINING_TASKS

    # as memory_band groups them (fit.py): image LoRA training is training
    return ("training" if task in TRAINING_TASKS else
            "diffusion" if task in DIFFUSION_TASKS else "inference")


def memory_range(group: str) -> tuple[float, float]:
    """(low, high) multipliers of a memory estimate of a task group (inference, training,
    diffusion): its stated 80 % range."""
    lo, hi = memory_value("memory_range")[group]
    return float(lo), float(hi)


def memory_confidence(task: Task, engine: Engine | Framework,
                      approximate: bool = False) -> MemoryConfidence:
    """The label (high / medium / low) of a memory estimate of ``task`` on ``engine`` (for
    training, its framework) and why."""
    from whichgpu.estimate.speed.result import label_for

    group = task_group(task)
    low, high = memory_range(group)
    width = high / low
    evidence = memory_value("memory_evidence")
    mine = int(evidence.get(f"{group}/{engine}", 0))
    in_group = sum(int(n) for k, n in evidence.items() if k.split("/")[0] == group)
    level = 2 if mine else 1 if in_group else 0
    if approximate:
        level = 0
    label = label_for(width, level)
    said = {"inference": msg("memory.group.inference", "inference"),
            "training": msg("memory.group.training", "training"),
            "diffusion": msg("memory.group.diffusion", "image and video")}[group]
    why = msg("memory.confidence.range", "{low:+.0%} to {high:+.0%} of the estimate (80 in 100 "
              "of {rows} measured {group} jobs fall within it), {mine} of them on "
              "{engine}{generic}", low=low - 1, high=high - 1,
              rows=in_group, group=said, mine=mine, engine=engine,
              generic=msg("memory.confidence.generic", "; a generic model from a bare size")
              if approximate else "")
    return MemoryConfidence(label, why)
