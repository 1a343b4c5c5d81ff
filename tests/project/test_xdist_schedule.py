"""tests/xdist_schedule.py's scheduler hands out the same groups, in the same order, as
pytest-xdist's LoadGroupScheduling, and says the same about what is pending and finished."""

from __future__ import annotations

from xdist.scheduler.loadgroup import LoadGroupScheduling

from xdist_schedule import CountedLoadGroupScheduling


class _Log:
    def __getattr__(self, name: str) -> _Log:
        return self

    def __call__(self, *args: object) -> None:
        pass


class _Config:
    class option:
        loadscopereorder = True
        dist = "loadgroup"
        numprocesses = 2


class _Worker:
    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[list[int]] = []
        self.queue: list[int] = []

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.append(list(indexes))
        self.queue.extend(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def _collection(tests: int) -> list[str]:
    """Groups of 15 (a file with a module fixture) first, then tests one by one."""
    grouped = [f"tests/g{g}.py::t{i}@g{g}" for g in range(6) for i in range(15)]
    return grouped + [f"tests/f{i // 20}.py::test_{i}" for i in range(tests - len(grouped))]


def _replay(cls, tests: int, monkeypatch) -> tuple[list, list]:
    """Finish the tests as two workers would (alternately, in the order each was sent them):
    what each was sent, and what the scheduler said at each step."""
    import xdist.scheduler.loadscope as loadscope

    monkeypatch.setattr(loadscope, "parse_tx_spec_config", lambda config: ["popen"] * 2)
    sched = cls(_Config(), _Log())
    workers = [_Worker("gw0"), _Worker("gw1")]
    for w in workers:
        sched.add_node(w)
    for w in workers:
        sched.add_node_collection(w, _collection(tests))
    sched.schedule()
    said = []
    turn = 0
    while sched.has_pending:
        w = workers[turn % 2] if workers[turn % 2].queue else workers[(turn + 1) % 2]
        turn += 1
        sched.mark_test_complete(w, w.queue.pop(0))
        said.append((sched.has_pending, sched.tests_finished))
    return [w.sent for w in workers], said


def test_the_counted_scheduler_sends_what_xdists_sends(monkeypatch):
    sent, said = _replay(LoadGroupScheduling, 600, monkeypatch)
    counted_sent, counted_said = _replay(CountedLoadGroupScheduling, 600, monkeypatch)
    assert counted_sent == sent
    assert counted_said == said
    assert sorted(i for w in sent for batch in w for i in batch) == list(range(600))


def test_it_never_walks_a_workers_groups_to_count_them(monkeypatch):
    """xdist's own count walks every group a worker was given, after every test (its
    controller's work grew with the square of the suite: 2.5 CPU-s for make test-fast's 5,200
    tests, in this replay); here the count is kept, so the walk is never needed."""
    from xdist.scheduler.loadscope import LoadScopeScheduling

    walks = []
    walk = LoadScopeScheduling._pending_of
    monkeypatch.setattr(LoadScopeScheduling, "_pending_of",
                        lambda self, workload: walks.append(len(workload)) or walk(self, workload))
    _replay(CountedLoadGroupScheduling, 300, monkeypatch)
    assert all(size == 0 for size in walks)  # only a worker's first, empty, workload
