"""Structure of the published rows collected in validation/incoming/ (issues 28 and 29).

The incoming files are not read by calibration or validation yet; these checks keep them
wire-ready: the same columns as the main file each one extends, ids that clash with nothing,
and every row carrying a source, a date, a positive value and a known vocabulary.
``check_rows`` is the checker; the last tests feed it malformed rows to show it catches them.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

from paths import ROOT
from whichgpu.catalog.gpus import load_catalog

VALIDATION = ROOT / "validation"
INCOMING = VALIDATION / "incoming"

# incoming file -> the main file whose header it must repeat
PAIRS = {
    "speed-2026.csv": "speed.csv",
    "memory-2026.csv": "memory.csv",
    "serving-2026.csv": "serving.csv",
}

# Vocabularies from validation/README.md (column tables of each file).
SPEED_CATEGORIES = {"decode", "prefill", "serving", "training", "diffusion", "video"}
SPEED_METRICS = {
    "decode_tokens_per_s", "prefill_tokens_per_s", "output_tokens_per_s", "ttft_s",
    "train_tokens_per_s", "train_tokens_per_s_per_gpu", "mfu", "seconds_per_image",
    "images_per_min",
    "it_per_s", "seconds_per_video", "seconds_per_step",
}
MEMORY_CATEGORIES = {
    "weights", "inference", "lora", "qlora", "full-ft", "pretrain", "image", "video",
}
MEMORY_MEASURED = {
    "file_bytes", "weights_bytes", "kv_cache_bytes", "peak_allocated_bytes", "peak_reserved_bytes",
    "nvidia_smi_bytes", "engine_total_bytes",
}
UNIT_BYTES = {"B": 1, "MB": 10**6, "MiB": 2**20, "GB": 10**9, "GiB": 2**30}
TASKS = {"inference", "lora", "qlora", "full-ft", "pretrain", "image", "video", "image-lora"}
SERVING_KINDS = {"max_throughput", "latency_under_load"}
SERVING_METRICS = {
    "output_tokens_per_s", "total_tokens_per_s", "input_tokens_per_s", "requests_per_s",
    "ttft_ms_mean", "ttft_ms_median", "ttft_ms_p90", "ttft_ms_p99",
    "tpot_ms_mean", "tpot_ms_median", "tpot_ms_p99",
    "itl_ms_mean", "itl_ms_median", "itl_ms_p99",
    "e2e_s_mean", "e2e_s_median", "e2e_s_p99", "output_tokens_per_s_per_user",
}
DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def check_rows(kind: str, rows: list[dict[str, str]], gpu_ids: set[str]) -> list[str]:
    """Every problem in ``rows`` of an incoming file of ``kind`` (speed, memory, serving)."""
    problems: list[str] = []
    for row in rows:
        rid = row.get("id") or "<no id>"

        def bad(what: str, rid: str = rid) -> None:
            problems.append(f"{kind} {rid}: {what}")

        if not row.get("id"):
            bad("no id")
        if not (row.get("source_url") or "").startswith(("https://", "http://")):
            bad("no source URL")
        if not DATE.match(row.get("date") or ""):
            bad(f"date {row.get('date')!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
        try:
            value = float(row.get("value") or "nan")
        except ValueError:
            value = math.nan
        if not (value > 0 and math.isfinite(value)):
            bad(f"value {row.get('value')!r} is not a positive number")
        gpu = row.get("gpu") or ""
        if gpu and gpu not in gpu_ids:
            bad(f"gpu {gpu!r} is not a catalog id")
        if not row.get("conditions"):
            bad("no conditions")
        if kind == "speed":
            if row.get("category") not in SPEED_CATEGORIES:
                bad(f"category {row.get('category')!r}")
            if row.get("metric") not in SPEED_METRICS:
                bad(f"metric {row.get('metric')!r}")
            if row.get("task") not in TASKS:
                bad(f"task {row.get('task')!r}")
            if not gpu:
                bad("no gpu")
        elif kind == "memory":
            if row.get("category") not in MEMORY_CATEGORIES:
                bad(f"category {row.get('category')!r}")
            if row.get("measured") not in MEMORY_MEASURED:
                bad(f"measured {row.get('measured')!r}")
            unit = row.get("unit") or ""
            if unit not in UNIT_BYTES:
                bad(f"unit {unit!r}")
            elif math.isfinite(value):
                try:
                    stored = int(row.get("bytes") or "")
                except ValueError:
                    bad(f"bytes {row.get('bytes')!r} is not an integer")
                else:
                    if abs(stored - value * UNIT_BYTES[unit]) > 1:
                        bad(f"bytes {stored} is not value x unit ({value} {unit})")
        elif kind == "serving":
            if row.get("kind") not in SERVING_KINDS:
                bad(f"kind {row.get('kind')!r}")
            if row.get("metric") not in SERVING_METRICS:
                bad(f"metric {row.get('metric')!r}")
            if row.get("per_gpu") not in {"true", "false"}:
                bad(f"per_gpu {row.get('per_gpu')!r}")
            if not gpu:
                bad("no gpu")
    return problems


@pytest.fixture(scope="module")
def gpu_ids() -> set[str]:
    return {g.id for g in load_catalog().gpus}


@pytest.mark.parametrize("incoming, main", sorted(PAIRS.items()))
def test_header_is_the_main_files(incoming: str, main: str) -> None:
    header, rows = read(INCOMING / incoming)
    main_header, _ = read(VALIDATION / main)
    assert header == main_header
    assert rows, f"{incoming} has no rows"


@pytest.mark.parametrize("incoming", sorted(PAIRS))
def test_rows_are_well_formed(incoming: str, gpu_ids: set[str]) -> None:
    _, rows = read(INCOMING / incoming)
    assert check_rows(incoming.split("-")[0], rows, gpu_ids) == []


def test_ids_are_unique_and_clash_with_no_existing_id() -> None:
    existing: set[str] = set()
    for name in ("speed.csv", "memory.csv", "serving.csv", "fits.csv"):
        existing |= {r["id"] for r in read(VALIDATION / name)[1]}
    seen: set[str] = set()
    for name in PAIRS:
        for row in read(INCOMING / name)[1]:
            assert row["id"] not in existing, f"{name}: {row['id']} is already an id in validation/"
            assert row["id"] not in seen, f"{name}: {row['id']} appears twice"
            seen.add(row["id"])


def test_serving_groups_differ_only_in_metric() -> None:
    """Rows of one condition set (group) agree on every column but id, kind, metric and value."""
    header, rows = read(INCOMING / "serving-2026.csv")
    varying = {"id", "kind", "metric", "value"}
    first: dict[str, dict[str, str]] = {}
    for row in rows:
        ref = first.setdefault(row["group"], row)
        diff = [c for c in header if c not in varying and row[c] != ref[c]]
        assert not diff, f"group {row['group']}: {row['id']} differs from {ref['id']} in {diff}"


def _good(kind: str) -> dict[str, str]:
    _, rows = read(INCOMING / f"{kind}-2026.csv")
    return dict(rows[0])


@pytest.mark.parametrize(
    "kind, column, bad_value",
    [
        ("speed", "source_url", ""),
        ("speed", "date", "last year"),
        ("speed", "value", "-3"),
        ("speed", "value", "fast"),
        ("speed", "category", "inference"),
        ("speed", "metric", "tokens_per_s"),
        ("speed", "gpu", "rtx-9090"),
        ("memory", "unit", "GiB/s"),
        ("memory", "bytes", "1"),
        ("memory", "measured", "vram"),
        ("serving", "kind", "throughput"),
        ("serving", "metric", "ttft"),
        ("serving", "date", ""),
    ],
)
def test_checker_catches_a_malformed_row(
    kind: str, column: str, bad_value: str, gpu_ids: set[str]
) -> None:
    good = _good(kind)
    assert check_rows(kind, [good], gpu_ids) == []
    broken = dict(good, **{column: bad_value})
    assert check_rows(kind, [broken], gpu_ids), f"a {kind} row with {column}={bad_value!r} passed"
