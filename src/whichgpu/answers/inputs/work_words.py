"""What each amount-of-work field is called in its error sentences ('token count').

Below both the typed request values (answers/inputs/values.py), which read the amounts as they
validate, and the job builder (answers/inputs/job.py).
"""

from __future__ import annotations

from whichgpu.messages import msg

_TOKEN_COUNT = msg("what.token_count", "token count")
_IMAGE_COUNT = msg("what.image_count", "image count")
_VIDEO_COUNT = msg("what.video_count", "video count")
_STEP_COUNT = msg("what.step_count", "step count")
_TOKENS = msg("what.tokens", "tokens")
_WORK_WORDS = {"tokens": _TOKEN_COUNT, "images": _IMAGE_COUNT, "videos": _VIDEO_COUNT,
               "steps": _STEP_COUNT, "train_tokens": _TOKEN_COUNT, "tokens_per_day": _TOKENS}


def work_words(field: str) -> str:
    """What an amount-of-work field is called in its sentences ('token count')."""
    return _WORK_WORDS.get(field, field.replace("_", " "))
