"""A video split over several GPUs is answered beside the same GPUs each generating whole
videos (brief flaws10, item 8: the known gap of independent pipelines against sequence
parallelism), timed from the answer's own one-GPU option of the card, in rounds."""

from __future__ import annotations

import math

ARGS = ("recommend", "wan-2.2-14b", "--videos", "20", "--objective", "time", "--only", "b200",
        "--top", "0", "--json")


def test_one_video_per_gpu_is_said_with_its_rounds_and_time(cli):
    out = cli(*ARGS, "--max-gpus", "4")
    assert out.code == 0, out.err
    data = out.json()
    best, one = data["options"][0], next(o for o in data["options"] if o["count"] == 1)
    assert best["count"] == 4
    rounds = math.ceil(20 / 4)
    whole = one["time_s"]["typical"] * rounds / 20
    assert whole < best["time_s"]["typical"]  # the split does not scale 4x on this card
    (said,) = [m for m in data["what_would_change"] if m.startswith("One video per GPU")]
    assert f"({rounds} round(s) of up to 4)" in said
    assert f"about {round(whole / 60)} min" in said


def test_a_single_gpu_answer_says_nothing_of_it(cli):
    data = cli(*ARGS, "--max-gpus", "1").json()
    assert not any(m.startswith("One video per GPU") for m in data["what_would_change"])
