"""Random rich tables for the CLI's table tests: columns of random words, justification,
overflow and wrapping, rows of random phrases (the same ``rng`` gives the same table)."""

from __future__ import annotations

import random

from rich.table import Table


def random_table(rng: random.Random, words: list[str], *, title: str = "t",
                 max_columns: int = 6, max_words: int = 6) -> Table:
    """A table of 2 to ``max_columns`` columns and 1 to 6 rows, each cell 0 to ``max_words``
    of ``words``."""
    t = Table(title=title, pad_edge=rng.random() < 0.5)
    ncols = rng.randint(2, max_columns)
    for _ in range(ncols):
        t.add_column(rng.choice(words), justify=rng.choice(["left", "right"]),
                     overflow=rng.choice(["fold", "ellipsis"]), no_wrap=rng.random() < 0.2)
    for _ in range(rng.randint(1, 6)):
        t.add_row(*(" ".join(rng.choice(words) for _ in range(rng.randint(0, max_words)))
                    for _ in range(ncols)))
    return t
