"""A training answer's energy is per token trained, never 'per output token' (training
generates no output tokens); a serving answer's stays per output token (cli/energy_view.py)."""

from __future__ import annotations

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.cli.energy_view import energy_lines
from whichgpu.estimate.energy import energy_of
from whichgpu.estimate.speed import estimate_speed


def _energy_line(task: str) -> str:
    gpu = default_catalog().get("rtx-4090")
    w = build_workload("qwen2.5-1.5b", task=task, engine="vllm" if task == "inference" else None)
    est = estimate_speed(w, gpu, 1, check_fit=False)
    e, _, _ = energy_of(est, gpu, 1)
    return next(line for line in energy_lines(e) if line.startswith("Energy:"))


def test_training_energy_is_per_training_token():
    line = _energy_line("qlora")
    assert "J per training token" in line and "output" not in line


def test_serving_energy_stays_per_output_token():
    assert "J per output token" in _energy_line("inference")
