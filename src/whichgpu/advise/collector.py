"""The cyclic garbage collector paced for one recommendation (issue 27).

A whole-catalog recommendation keeps tens of thousands of container objects alive while it
runs (options, estimates, memo entries) and lets most of them go when it returns. At
CPython's default young-generation threshold (700 net new containers) the collector runs
every few hundred allocations, finds these objects alive and promotes them; once the
promoted objects reach a quarter of the long-lived ones, a full collection walks every
tracked object (catalog, presets, memos: 120-200k objects, 77-122 ms each on the shared
2-core machine). Raising the young threshold while an answer runs lets the collector see
far fewer of them before they are freed by reference counting.

Measured (2026-12-07, shared 2-core machine, load 5-8; the 21 questions of
tests/answer_set.py answered 3 times each in one warm process, CPU seconds of the collector
from ``gc.callbacks``): default threshold 2.0-2.3 s of collection; 5,000 0.82 s; 20,000
0.39 s; 50,000 0.32 s; 200,000 0.17 s. 20,000 keeps a young collection short (it walks at
most 20,000 objects) and the garbage a cycle can hold between collections small.

The threshold is process-wide: the first answer in flight raises it, the last one out puts
back what it found (threads of the web server answer at once), so nothing else's setting is
lost. Reference cycles are still collected, only less often during an answer.

A server keeps the raised threshold for its whole life (:func:`pace_for_serving`): between
its answers it makes little (reading a request, writing bytes), and its memos keep growing
what every full collection walks. At the default threshold the young collections of its
answers promoted their objects, and a full collection (walking every memo entry: 200-350 ms
on the shared machine) came every ~80 requests and stopped every thread; see the function.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the young generation's threshold while an answer runs (CPython's default is 700)
ANSWER_THRESHOLD = 20_000

_lock = threading.Lock()
_in_flight = [0]
_saved: list[tuple[int, ...]] = []


@contextmanager
def paced() -> Iterator[None]:
    """Run the block with the young-generation threshold at :data:`ANSWER_THRESHOLD` (never
    lowered: a higher one set by the process is kept)."""
    with _lock:
        if _in_flight[0] == 0:
            found = gc.get_threshold()
            _saved[:] = [found]
            if found[0] and found[0] < ANSWER_THRESHOLD:
                gc.set_threshold(ANSWER_THRESHOLD, *found[1:])
        _in_flight[0] += 1
    try:
        yield
    finally:
        with _lock:
            _in_flight[0] -= 1
            if _in_flight[0] == 0 and _saved:
                gc.set_threshold(*_saved.pop())


def pace_for_serving() -> None:
    """Keep the young-generation threshold at :data:`ANSWER_THRESHOLD` for the rest of the
    process (a server's start-up calls it; never lowered, and a process that switched
    collection off keeps it off). Measured (2026-12-07, shared 2-core machine, load 6-8):
    the 2,000 all-different requests of ``benchmarks/web_load.py --vary`` asked one at a time
    through the app in one process after the server's warm-up (/tmp harness, CPU seconds from
    ``gc.callbacks``): 25 full collections, 6.9 s of the collector's CPU in 38 s, the 99th
    percentile request 143 ms of CPU, at CPython's default; 1 full collection, 2.2 s, 66 ms
    with this; the same peak RSS (239 MB), and the full collections had found only 8,557
    objects to free in all."""
    with _lock:
        found = gc.get_threshold()
        if found[0] and found[0] < ANSWER_THRESHOLD:
            gc.set_threshold(ANSWER_THRESHOLD, *found[1:])
        if _in_flight[0] and _saved and 0 < _saved[0][0] < ANSWER_THRESHOLD:
            # answers in flight: the last one out puts back the server's setting, not the old
            _saved[:] = [(ANSWER_THRESHOLD, *_saved[0][1:])]
