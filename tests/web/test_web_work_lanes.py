"""The web's work pool has a lane of its own for the answers that span the whole catalog
(web/work.py HEAVY): a quick question never waits for a slot behind them (issue 27: the load
test's p50 with all-different questions)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from whichgpu.web import work


def _blocked(release: threading.Event, started: list[str], name: str):
    def fn() -> str:
        started.append(name)
        release.wait(5)
        return name
    return fn


def test_a_quick_question_runs_while_every_heavy_slot_is_taken() -> None:
    async def main() -> tuple[float, list[str]]:
        release, started = threading.Event(), []
        heavy = [asyncio.create_task(work.run(_blocked(release, started, f"h{i}"),
                                              heavy=True))
                 for i in range(work.HEAVY_WORKERS + 1)]  # one more than the lane holds
        while len(started) < work.HEAVY_WORKERS:
            await asyncio.sleep(0.01)
        t0 = time.monotonic()
        assert await work.run(lambda: "quick") == "quick"
        waited = time.monotonic() - t0
        queued = list(started)  # the extra heavy one is still waiting for its lane
        release.set()
        await asyncio.gather(*heavy)
        return waited, queued

    waited, started = asyncio.run(main())
    assert waited < 1.0
    assert len(started) == work.HEAVY_WORKERS


def test_heavy_questions_wait_for_their_own_lane_only() -> None:
    """With every quick slot taken, a heavy question still starts."""
    async def main() -> str:
        release, started = threading.Event(), []
        quick = [asyncio.create_task(work.run(_blocked(release, started, f"q{i}")))
                 for i in range(work.WORKERS)]
        while len(started) < work.WORKERS:
            await asyncio.sleep(0.01)
        answer = await asyncio.wait_for(work.run(lambda: "heavy", heavy=True), 2)
        release.set()
        await asyncio.gather(*quick)
        return answer

    assert asyncio.run(main()) == "heavy"


# (values no other test asks: a remembered answer would not reach the pool)
@pytest.mark.parametrize(("path", "heavy"), [
    ("/api/v1/recommend?model=qwen2.5-0.5b&tokens=1234567", True),
    ("/api/v1/memory?model=qwen2.5-0.5b&context=1234", True),
    ("/api/v1/tco?gpu=h100-sxm&purchase_price=25123USD&rent_price=3.15USD", False),
    ("/api/v1/gpus?min_memory=7.5GB", False),
    ("/?model=qwen2.5-0.5b&tokens=1234567", True),
    ("/rent-or-buy?gpu=h100-sxm&hours_per_month=123", False),
])
def test_whole_catalog_answers_take_the_heavy_lane(web, monkeypatch: pytest.MonkeyPatch,
                                                   path: str, heavy: bool) -> None:
    from whichgpu.errors import InputError
    from whichgpu.web import services

    def quick(q):  # the lane is chosen before the answer: no whole-catalog answer is computed
        raise InputError("not computed in this test")

    monkeypatch.setattr(services, "recommend", quick)
    monkeypatch.setattr(services, "memory", quick)
    lanes: list[bool] = []
    real = work.run

    async def spy(fn, *args, key=None, heavy=False):
        lanes.append(heavy)
        return await real(fn, *args, key=key, heavy=heavy)

    monkeypatch.setattr(work, "run", spy)
    assert web.get(path, headers={"Accept": "text/html"}).status_code in (200, 422)
    assert lanes == [heavy]
