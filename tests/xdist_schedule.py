"""pytest-xdist's ``--dist loadgroup`` scheduler with its bookkeeping kept as counts.

pytest-xdist 3.8's LoadScopeScheduling counts a worker's pending tests by walking every group
it was ever given (``_pending_of``) after each finished test, and finds each test's index in
the collection with ``list.index``: both grow with the suite, so the controller's work grew
with its square. With 5,200 tests (make test-fast) that was 2.5 CPU-s of the controller
(tests/project/test_xdist_schedule.py's replay, shared machine, 2026-12-07), taken from the
two cores the workers run on. Here each worker's pending count is kept as tests are assigned
and finished, and the indexes are a dict: the same groups, sent in the same order.
"""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler.loadgroup import LoadGroupScheduling


class CountedLoadGroupScheduling(LoadGroupScheduling):
    """LoadGroupScheduling whose pending counts and collection indexes are looked up, not
    recomputed."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self._pending: dict[int, int] = {}  # id(a worker's assigned_work dict) -> pending
        self._indexes: dict[Any, dict[str, int]] = {}

    def _index(self, node: Any) -> dict[str, int]:
        index = self._indexes.get(node)
        if index is None:
            index = {}
            for i, nodeid in enumerate(self.registered_collections[node]):
                index.setdefault(nodeid, i)  # list.index's answer: the first
            self._indexes[node] = index
        return index

    def _pending_of(self, workload: dict[str, dict[str, bool]]) -> int:
        counted = self._pending.get(id(workload))
        return super()._pending_of(workload) if counted is None else counted

    def _assign_work_unit(self, node: Any) -> None:
        scope, work_unit = self.workqueue.popitem(last=False)
        assigned = self.assigned_work.setdefault(node, {})
        if id(assigned) not in self._pending:
            self._pending[id(assigned)] = super()._pending_of(assigned)
        assigned[scope] = work_unit
        index = self._index(node)
        indexes = [index[nodeid] for nodeid, completed in work_unit.items() if not completed]
        self._pending[id(assigned)] += len(indexes)
        node.send_runtest_some(indexes)

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        nodeid = self.registered_collections[node][item_index]
        workload = self.assigned_work[node]
        unit = workload[self._split_scope(nodeid)]
        if not unit[nodeid] and id(workload) in self._pending:
            self._pending[id(workload)] -= 1
        unit[nodeid] = True
        self._reschedule(node)

    def remove_node(self, node: Any) -> str | None:
        workload = self.assigned_work.get(node)
        if workload is not None:  # counted again by walking it, as the base class does
            self._pending.pop(id(workload), None)
        self._indexes.pop(node, None)
        return super().remove_node(node)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The counted scheduler for ``--dist loadgroup``; any other mode is xdist's own."""
    if getattr(config.option, "dist", None) == "loadgroup":
        return CountedLoadGroupScheduling(config, log)
    return None
