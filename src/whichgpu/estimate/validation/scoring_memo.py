"""The serving rows' outcomes kept by value while a refit scores them again and again.

A serving refit (scripts/calibrate_serving.py: the grid searches of ``serving_fit.fit_all``,
then the leave-one-source-out refits of ``serving_fit.loso``) scores the same runs under the
same constant values many times: each source left out refits only the keys its rows drive, on
the other sources' rows, through the grid values the full fit already tried with the other
keys at the values they hold again. Inside :func:`scoring_memo`, ``validation.serving.
evaluate_rows`` keeps the outcomes of each run (the rows of one ``group``, in the order given)
by the run's rows, the holdout rule and the values of every constant table, and gives them
back when all three are the same.

Exact: a run's outcomes depend only on its own rows in their order (``evaluate_rows`` shares a
run's simulation between its rows and nothing between runs), on the holdout rule and on the
constants (code and data files do not change inside one process's refit). Constants are
compared by value (``repr``: the TOML's numbers, strings, tables and lists), so a value a grid
search sets again finds what it gave before. Outside the scope nothing is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from whichgpu.estimate.constants import Constant, _load

TABLES = ("speed_constants", "serving_constants", "memory_constants")


class _Memo:
    def __init__(self) -> None:
        self.outcomes: dict[tuple[int, frozenset[str], tuple], list[Any]] = {}
        # the constants' values as a number: one per distinct set of values
        self.values: dict[tuple[str, ...], int] = {}
        # id(Constant) -> (it, repr of its value): a Constant is replaced, never changed
        self.reprs: dict[int, tuple[Constant, str]] = {}

    def constants(self) -> int:
        out: list[str] = []
        for table in TABLES:
            for name, c in _load(table).items():
                hit = self.reprs.get(id(c))
                if hit is None or hit[0] is not c:
                    hit = self.reprs[id(c)] = (c, repr(c.value))
                out.append(name)
                out.append(hit[1])
        return self.values.setdefault(tuple(out), len(self.values))


_MEMO: list[_Memo | None] = [None]


@contextmanager
def scoring_memo() -> Iterator[None]:
    """Keep the serving runs' outcomes by value until the outermost scope ends."""
    if _MEMO[0] is not None:
        yield
        return
    _MEMO[0] = _Memo()
    try:
        yield
    finally:
        _MEMO[0] = None


def active() -> bool:
    return _MEMO[0] is not None


def by_run(rows: Sequence[dict[str, str]], held: frozenset[str],
           evaluate: Callable[[Sequence[dict[str, str]], frozenset[str]], list[Any]]
           ) -> list[Any]:
    """``evaluate(rows, held)``, each run's outcomes from the memo when kept (a run: the rows
    sharing ``evaluate_rows``'s memo key, their group or else their id)."""
    memo = _MEMO[0]
    if memo is None:
        return evaluate(rows, held)
    runs: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        runs.setdefault(row.get("group") or row["id"], []).append(i)
    values = memo.constants()
    out: list[Any] = [None] * len(rows)
    for where in runs.values():
        mine = [rows[i] for i in where]
        key = (values, held, tuple(tuple(r.items()) for r in mine))
        got = memo.outcomes.get(key)
        if got is None:
            got = memo.outcomes[key] = evaluate(mine, held)
        for i, o in zip(where, got, strict=True):
            out[i] = o
    return out
