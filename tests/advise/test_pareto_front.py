"""The Pareto flag of a ranking is worked out by one sort and sweep (advise/ranking.py
``pareto_front``) instead of every option compared with every other: both give the same
flags, ties, equal pairs, infinities and negative times (serving ranks by -rate) included,
and NaN falls back to the pairwise test."""

import math
import random

import pytest

from whichgpu.advise.ranking import _dominated, pareto_front


def _pairwise(pairs: list[tuple[float, float]]) -> list[bool]:
    return [not _dominated(pairs, c, t) for c, t in pairs]


@pytest.mark.parametrize("seed", range(40))
def test_the_sweep_flags_what_the_pairwise_test_flags(seed: int) -> None:
    rng = random.Random(seed)
    # few distinct values, so that equal costs, equal times and equal pairs are common
    values = [rng.choice([-3.0, 0.0, 1.0, 1.5, 2.0, 7.0, math.inf, -math.inf])
              for _ in range(6)] + [rng.uniform(-5, 5) for _ in range(4)]
    pairs = [(rng.choice(values), rng.choice(values)) for _ in range(rng.randint(0, 60))]
    assert pareto_front(pairs) == _pairwise(pairs)


def test_a_pair_alone_and_equal_pairs_are_on_the_front() -> None:
    assert pareto_front([(1.0, 1.0)]) == [True]
    assert pareto_front([(1.0, 1.0), (1.0, 1.0)]) == [True, True]
    assert pareto_front([(1.0, 2.0), (1.0, 1.0), (0.5, 3.0), (2.0, 1.0)]) == \
        [False, True, True, False]
    assert pareto_front([(math.inf, math.inf), (math.inf, math.inf)]) == [True, True]


def test_nan_is_compared_pairwise() -> None:
    pairs = [(math.nan, 1.0), (1.0, 2.0), (0.5, math.nan), (2.0, 3.0)]
    assert pareto_front(pairs) == _pairwise(pairs)
