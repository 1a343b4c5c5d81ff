"""Calibration profile files for tests (the `whichgpu bench` JSON): one GPU entry, one file."""

from __future__ import annotations

import json

from whichgpu.bench.profile import SCHEMA


def _entry(index: int, gpu: str = "h200-sxm", bf16: float = 600.0, bw: float = 3.6e12):
    return {"index": index, "name": "NVIDIA H200", "catalog_id": gpu,
            "matmul_tflops": {"bf16": bf16}, "memory_bandwidth_bytes_per_s": bw}


def _profile(tmp_path, gpus, topology=None, name="profile.json"):
    data = {"schema": SCHEMA, "created_at": "2026-11-30T12:00:00Z", "host": "test",
            "gpus": gpus}
    if topology is not None:
        data["topology"] = topology
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path
