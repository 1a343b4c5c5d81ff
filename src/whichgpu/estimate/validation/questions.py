"""``whichgpu validate questions``: whole questions people asked, against their published
outcomes (validation/questions.csv).

Each row is a question as someone asked it in 2025-26 (an issue, a forum thread, a model card,
a trainer's documentation), written in the columns the other validation files use (model,
quant, engine, task, gpu, gpu_count, context, batch, prompt/output tokens, settings), with the
outcome its source published and the source's address. The tool answers it as ``memory`` or
``speed`` would, and the answer is judged by one rule:

- ``fits`` (it ran on that card) / ``no_fit`` (it ran out of memory there): the memory verdict
  on the card. Right: the same verdict; roughly: "borderline" (within the estimate's stated
  uncertainty of the card's memory); wrong: the opposite verdict. An RL post-training question
  (task ``grpo`` or ``ppo``; settings ``framework=``, ``tuning=``, ``generations=``, prompts per
  step in ``batch``, completion length in ``output_tokens``) is judged on the peak of the RL
  plan's training GPU, as ``memory --task grpo`` answers it.
- ``gpus_needed`` (the fewest cards it ran on): the fewest of 1, 2, 4, 8, 16, 32 (tensor
  parallel) on which the verdict is "fits" or "borderline". Right: the same count; roughly:
  one step off; wrong: further.
- ``decode_speed`` / ``prefill_speed`` (tokens/s measured), ``image_seconds`` /
  ``video_seconds`` (seconds per image or clip): right when the measurement is inside the
  stated 80 % range and within 1.5x of the typical value (a range wide enough to hold
  anything does not make an answer right); roughly when only one of the two holds; wrong when
  neither does.
- cannot answer: the tool refuses the question (an unknown model, card or format).

A question the tool gets wrong stays in the file, with its explanation in ``note``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from whichgpu.errors import InputError
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.vocabulary import RLTuning, Task

COUNTS = (1, 2, 4, 8, 16, 32)
ROUGHLY_FACTOR = 1.5


class Judgement(StrEnum):
    RIGHT = "right"
    ROUGHLY = "roughly"
    WRONG = "wrong"
    CANNOT = "cannot answer"


class Kind(StrEnum):
    FITS = "fits"
    NO_FIT = "no_fit"
    GPUS_NEEDED = "gpus_needed"
    DECODE_SPEED = "decode_speed"
    PREFILL_SPEED = "prefill_speed"
    IMAGE_SECONDS = "image_seconds"
    VIDEO_SECONDS = "video_seconds"


# what a speed question measured: (speed.csv metric, category)
_SPEED_METRICS = {Kind.DECODE_SPEED: ("decode_tokens_per_s", "decode"),
                  Kind.PREFILL_SPEED: ("prefill_tokens_per_s", "prefill"),
                  Kind.IMAGE_SECONDS: ("seconds_per_image", "diffusion"),
                  Kind.VIDEO_SECONDS: ("seconds_per_video", "video")}


@dataclass(frozen=True)
class Judged:
    """One question, what the tool answered and the judgement."""

    id: str
    kind: Kind
    question: str
    outcome: str
    answer: str
    judgement: Judgement
    source_url: str
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": str(self.kind), "question": self.question,
                "outcome": self.outcome, "answer": self.answer,
                "judgement": str(self.judgement), "source_url": self.source_url,
                "note": self.note}


def _verdict(row: dict[str, str], count: int | None = None) -> tuple[str, str]:
    """(verdict, detail) of the memory model for the row's job on ``count`` cards."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.memory.fit import memory_band, verdict
    from whichgpu.estimate.validation.rows import gpu_of, workload_of

    if count is not None:  # the same job on ``count`` cards, tensor-parallel over them
        row = {**row, "gpu_count": str(count), "tp": str(count)}
    if Task((row.get("task") or "inference").strip()).is_rl:
        return _rl_verdict(row)
    w = workload_of(row)
    gpu = gpu_of(row)
    e = estimate_memory(w)
    usable = gpu.usable_memory_bytes
    v = verdict(e.total_bytes, usable, memory_band(w), e.host_fits)
    return v, (f"{v}: {e.total_bytes / 1e9:.1f} GB per GPU of {usable / 1e9:.1f} GB usable "
               f"on {w.gpus} x {gpu.id}")


_RL_SETTINGS = ("framework", "tuning", "generations", "lora_rank")


def _rl_verdict(row: dict[str, str]) -> tuple[str, str]:
    """(verdict, detail) of the RL plan (estimate/rl.py) for the row's GRPO or PPO job: the
    training GPU's peak against the card's usable memory, with the training memory band."""
    from whichgpu.estimate.configure import configure_workload
    from whichgpu.estimate.constants import memory_constant
    from whichgpu.estimate.memory.fit import verdict
    from whichgpu.estimate.rl import plan, settings
    from whichgpu.estimate.validation.rows import gpu_of
    from whichgpu.estimate.validation.rows import settings as row_settings
    from whichgpu.models import resolve_model

    extra = row_settings(row)
    unknown = sorted(set(extra) - set(_RL_SETTINGS))
    if unknown:
        raise InputError(f"unknown RL setting(s) {', '.join(unknown)}; an RL question takes "
                         f"{', '.join(_RL_SETTINGS)}")

    def number(key: str) -> int | None:
        text = (row.get(key) or "").strip()
        return int(text) if text else None

    gpus = number("gpu_count") or 1
    s = settings(Task(row["task"].strip()),
                 tuning=RLTuning(extra["tuning"]) if "tuning" in extra else None,
                 framework=extra.get("framework"),
                 generations=int(extra["generations"]) if "generations" in extra else None,
                 prompts=number("batch") or 1, prompt_tokens=number("prompt_tokens"),
                 completion_tokens=number("output_tokens"), gpus=gpus)
    spec = resolve_model(row["model"].strip(), offline=True)
    given: dict[str, Any] = {}  # the row's own settings, as --lora-rank and --quant give them
    if "lora_rank" in extra:
        given["lora_rank"] = int(extra["lora_rank"])
    quant = (row.get("quant") or "").strip()
    if quant:
        given["quant"] = quant  # the policy's weight format
    gpu = gpu_of(row)
    p = plan(spec, s, lambda **c: configure_workload(spec, **{**given, **c}), gpu)
    usable = gpu.usable_memory_bytes
    need = max(p.peak_training_gpu_bytes, p.peak_rollout_gpu_bytes or 0)
    band = float(memory_constant("memory_uncertainty").value["training"])
    v = verdict(need, usable, band)
    return v, (f"{v}: {need / 1e9:.1f} GB per GPU of {usable / 1e9:.1f} GB usable on "
               f"{gpus} x {gpu.id} ({s.framework.name} {s.task} plan, {s.tuning})")


def _fits(v: str) -> bool:
    return v.startswith("fits")


def judge(row: dict[str, str]) -> Judged:
    """Answer one question and judge the answer by the module's rule."""
    kind = Kind(row["kind"].strip())
    base: dict[str, Any] = dict(id=row["id"], kind=kind, question=row.get("question", ""),
                                outcome=row.get("outcome", ""),
                                source_url=row.get("source_url", ""), note=row.get("note", ""))
    try:
        if kind in (Kind.FITS, Kind.NO_FIT):
            v, detail = _verdict(row)
            if v == "borderline":
                j = Judgement.ROUGHLY
            else:
                j = Judgement.RIGHT if _fits(v) == (kind == Kind.FITS) else Judgement.WRONG
            return Judged(answer=detail, judgement=j, **base)
        if kind == Kind.GPUS_NEEDED:
            want = int(float(row["value"]))
            fewest = next((n for n in COUNTS if _verdict(row, n)[0] != "does not fit"), None)
            if fewest is None:
                return Judged(answer=f"does not fit on {COUNTS[-1]} or fewer",
                              judgement=Judgement.WRONG, **base)
            steps = abs(COUNTS.index(fewest) - COUNTS.index(want)) if want in COUNTS else 9
            j = (Judgement.RIGHT if steps == 0 else Judgement.ROUGHLY if steps == 1
                 else Judgement.WRONG)
            return Judged(answer=f"fewest cards that fit: {fewest}", judgement=j, **base)
        return _speed(row, kind, base)
    except (InputError, KeyError, ValueError) as exc:
        return Judged(answer=f"cannot answer: {exc}", judgement=Judgement.CANNOT, **base)


def _speed(row: dict[str, str], kind: Kind, base: dict[str, Any]) -> Judged:
    from whichgpu.estimate.validation import speed as validation_speed

    metric, category = _SPEED_METRICS[kind]
    value, _, span = validation_speed.predict({**row, "metric": metric, "category": category})
    measured = float(row["value"])
    assert value is not None and span is not None  # a rate always has a range
    lo, hi = span
    j = speed_judgement(measured, value, lo, hi)
    unit = "s" if metric.startswith("seconds") else "tokens/s"
    return Judged(answer=f"{value:,.0f} {unit} (range {lo:,.0f}-{hi:,.0f})", judgement=j,
                  **base)


REQUIRED = ("id", "kind", "question", "model", "gpu", "outcome", "source_url")


def speed_judgement(measured: float, typical: float, low: float, high: float) -> Judgement:
    """The rule for a measured speed against the stated range and typical value."""
    inside = low <= measured <= high
    close = 1 / ROUGHLY_FACTOR <= measured / typical <= ROUGHLY_FACTOR
    if inside and close:
        return Judgement.RIGHT
    return Judgement.ROUGHLY if inside or close else Judgement.WRONG


def run(path: Path | None = None) -> list[Judged]:
    """Every question of the file judged; a file without the columns or with an unknown kind
    is refused with the reason."""
    from whichgpu.errors import DataError

    path = path or default_path("questions")
    rows = read_rows(path)
    missing = [c for c in REQUIRED if c not in rows[0]]
    if missing:
        raise DataError(path, f"expected the columns {', '.join(REQUIRED)}; missing "
                        f"{', '.join(missing)}")
    for row in rows:
        if (row.get("kind") or "").strip() not in set(Kind):
            raise DataError(path, f"row {row['id']!r}: kind must be one of "
                            f"{', '.join(Kind)}, got {row.get('kind')!r}")
    return [judge(row) for row in rows]


def shares(judged: list[Judged]) -> dict[str, float]:
    """The share of questions per judgement."""
    n = len(judged) or 1
    return {str(j): sum(1 for x in judged if x.judgement == j) / n for j in Judgement}
