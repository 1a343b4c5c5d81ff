"""An exclusion's words agree with its numbers: a card 'too slow' shows a rate below the one
wanted (19.6 < 20), never a rounded rate equal to it ('20 tokens/s ... 20 wanted')."""

import re

from whichgpu.advise.job import Job
from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.prices.selection import get_offers


def test_too_slow_shows_a_rate_below_the_one_wanted():
    w = build_workload("qwen3-32b", engine="vllm")
    rec = recommend(Job(w, users=20, tokens_per_s_each=20), get_offers())
    slow = [e for e in rec.excluded if e.kind == "speed"]
    assert slow, "the case needs at least one card excluded for speed"
    for e in slow:
        m = re.search(r"too slow: ([\d.,]+) tokens/s per user even alone, 20 wanted", str(e.reason))
        assert m, str(e.reason)
        shown = float(m.group(1).replace(",", ""))
        assert shown < 20, str(e.reason)
        assert abs(shown - (20 - e.shortfall)) <= 0.05 * 20
