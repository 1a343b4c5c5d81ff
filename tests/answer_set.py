"""A fixed set of questions whose full JSON answers must not change when only speed changes.

``tests/answers/test_answers_identical.py`` compares every answer of this set with the answers
recorded in ``tests/data/answers/answers.json.gz``; ``benchmarks/recommend_time.py`` times the
same questions. When an answer changes on purpose (a new constant, a new sentence), record
the set again and review the diff:

    make answers-fixture            # = python tests/answer_set.py --write

The answers are computed as the test suite computes them: a fresh ``WHICHGPU_HOME`` (the
price store seeded with the shipped snapshots), offline, and prices never stale, so the
record does not age with the calendar.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "data" / "answers" / "answers.json.gz"

# (command, request fields); recommend questions rank the whole catalog ("top": 0 keeps every
# option in the JSON, so every ranked number is compared, not only the ten shown)
QUESTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    # the table (market prices: the store's default source)
    "8b-10M-tokens": ("recommend", {"model": "llama-3.1-8b", "tokens": "10M", "top": 0}),
    "flux-1000-images": ("recommend", {"model": "flux.1-dev", "task": "image",
                                       "images": "1000", "top": 0}),
    "70b-50-users": ("recommend", {"model": "llama-3.3-70b", "users": 50,
                                   "tokens_per_s_each": 20, "top": 0}),
    # benchmarks/recommend_time.py's questions
    "70b-awq-1M-tokens": ("recommend", {"model": "llama-3.1-70b", "quant": "awq",
                                        "tokens": "1M", "prompt_tokens": 512,
                                        "output_tokens": 512, "top": 0}),
    "flux-fp8-1000-images": ("recommend", {"model": "flux.1-dev", "task": "image",
                                           "quant": "fp8", "images": "1000", "top": 0}),
    "7b-lora-2000-steps": ("recommend", {"model": "llama-2-7b", "task": "lora",
                                         "context": "512", "steps": "2000", "top": 0}),
    "70b-q4-serving": ("recommend", {"model": "llama-3.1-70b", "quant": "q4_k_m",
                                     "context": "8k", "users": 1, "tokens_per_s_each": 5,
                                     "top": 0}),
    "70b-pretrain-2B": ("recommend", {"model": "llama-3.1-70b", "task": "pretrain",
                                      "train_tokens": "2B", "top": 0}),
    # serving at a request rate, with time targets
    "8b-rate-20": ("recommend", {"model": "llama-3.1-8b", "engine": "vllm",
                                 "requests_per_s": "20", "prompt_tokens": 1000,
                                 "output_tokens": 200, "ttft": "2s", "tpot": "50ms",
                                 "top": 0}),
    "8b-daily-50M": ("recommend", {"model": "llama-3.1-8b", "tokens_per_day": "50M"}),
    "video-wan-10": ("recommend", {"model": "wan-2.2-5b", "task": "video", "videos": "10",
                                   "top": 0}),
    "8b-qlora-none": ("recommend", {"model": "llama-3.1-8b", "task": "qlora"}),
    "0.5b-pretrain-1B": ("recommend", {"model": "qwen2.5-0.5b", "task": "pretrain",
                                       "train_tokens": "1B", "top": 0}),
    # shipped offer sets, a currency, spot, a deadline, an owned card
    "8b-q4-vramfarm": ("recommend", {"model": "llama-3.1-8b", "quant": "q4_k_m",
                                     "tokens": "10M", "prices": "vramfarm-2026-11",
                                     "top": 0}),
    "8b-time-article": ("recommend", {"model": "llama-3.1-8b", "tokens": "10M",
                                      "objective": "time", "prices": "article-000",
                                      "top": 0}),
    "8b-lora-spot-eur": ("recommend", {"model": "llama-3.1-8b", "task": "lora",
                                       "steps": "2000", "spot": True, "currency": "EUR",
                                       "top": 0}),
    "70b-deadline-owned": ("recommend", {"model": "llama-3.1-70b", "tokens": "5M",
                                         "deadline": "2h", "gpu": "rtx-4090", "count": 2}),
    # the other estimates
    "memory-70b-q4-8k": ("memory", {"model": "llama-3.1-70b", "quant": "q4_k_m",
                                    "context": "8k"}),
    "memory-flux": ("memory", {"model": "flux.1-dev", "task": "image"}),
    "speed-8b-h100": ("speed", {"model": "llama-3.1-8b", "gpu": "h100-sxm"}),
    "speed-70b-lora-a100": ("speed", {"model": "llama-3.1-70b", "task": "lora",
                                      "gpu": "a100-80gb", "count": 4}),
}

# recorded with the answers but not part of them: where the store lives and how old its
# snapshots are today
_VOLATILE = ("store", "fetched_at", "age_s", "snapshot_id")


def environment(home: str) -> dict[str, str]:
    """The environment the answers are computed in (as the test suite's conftest sets it)."""
    return {"WHICHGPU_HOME": home, "WHICHGPU_OFFLINE": "1",
            "WHICHGPU_PRICE_MAX_AGE_DAYS": "100000"}


def request(command: str, fields: dict[str, Any]) -> Any:
    """The typed request of one question."""
    from whichgpu.answers import requests

    cls = {"recommend": requests.Recommend, "memory": requests.Memory,
           "speed": requests.Speed}[command]
    return cls(**fields)


def answer(command: str, fields: dict[str, Any]) -> dict[str, Any]:
    """One question's full JSON answer, less what ages with the calendar."""
    import whichgpu.answers as answers

    data = getattr(answers, command)(request(command, fields)).to_json()
    return _stable(json.loads(json.dumps(data)))


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def all_answers() -> dict[str, dict[str, Any]]:
    return {name: answer(command, fields) for name, (command, fields) in QUESTIONS.items()}


def recorded() -> dict[str, dict[str, Any]]:
    """The recorded answers (name -> JSON)."""
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        data: dict[str, dict[str, Any]] = json.load(f)
    return data


def differences(old: Any, new: Any, path: str = "", limit: int = 10) -> list[str]:
    """Where two JSON values differ (at most ``limit`` paths, each with both values)."""
    out: list[str] = []
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(old.keys() | new.keys()):
            if k not in old or k not in new:
                out.append(f"{path}/{k}: {'added' if k in new else 'removed'}")
            else:
                out += differences(old[k], new[k], f"{path}/{k}", limit - len(out))
            if len(out) >= limit:
                break
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out += differences(a, b, f"{path}/{i}", limit - len(out))
            if len(out) >= limit:
                break
    elif old != new:
        out.append(f"{path}: {json.dumps(old)[:200]} -> {json.dumps(new)[:200]}")
    return out[:limit]


def main() -> None:
    if "--write" not in sys.argv[1:]:
        sys.exit("usage: python tests/answer_set.py --write   (records tests/data/answers/)")
    before = recorded() if FIXTURE.exists() else {}
    with tempfile.TemporaryDirectory() as home:
        os.environ.update(environment(home))
        data = all_answers()
    for name in data:
        for line in differences(before.get(name, {}), data[name], name) if before else []:
            print("changed:", line)
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=0, sort_keys=True) + "\n"
    with open(FIXTURE, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(text.encode("utf-8"))  # mtime 0: the same answers give the same bytes
    print(f"wrote {FIXTURE} ({len(data)} answers, {FIXTURE.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
