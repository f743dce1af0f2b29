"""The what-if's 95 % point against the pipeline itself: at the smallest ε with pass_probability >= 0.95, the
private stages pass (14) in at least 95 % of independent draws, and at the noise-free point in about half.

Each check compares a binomial count of DRAWS runs with the probability pass_probability states, two-sided, at
a false-alarm rate of 1e-4 per check (scipy.stats.binom quantiles), so a wrong probability (or a 95 % point
that is really a 50 % point) fails with near certainty while a right one fails about once in 10^4 runs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from core.mechanisms.pipeline import run_private
from core.privacy.accounting import split_budget
from core.teaching.whatif import pass_probability, smallest_epsilon

SPLIT, DELTA, DRAWS, ALPHA = (1.0, 1.0, 1.0), 1e-6, 300, 1e-4


def pass_count(problem, epsilon: float, seed: int) -> int:
    rng = np.random.default_rng(seed)
    b = split_budget(epsilon, DELTA, SPLIT)
    return sum(run_private(problem, 0, b, rng, "paper", 0.95).test.passed for _ in range(DRAWS))


def assert_binomial(count: int, p: float) -> None:
    lo, hi = binom.ppf(ALPHA / 2, DRAWS, p), binom.isf(ALPHA / 2, DRAWS, p)
    assert lo <= count <= hi, (count, p, lo, hi)


@pytest.mark.parametrize("level", [None, 0.95])
def test_the_pass_point_holds_over_draws(robust_problem, level):
    e = smallest_epsilon(robust_problem, DELTA, SPLIT, level=level)
    assert e is not None
    p = pass_probability(robust_problem, e, DELTA, SPLIT)
    if level is None:
        assert 0.2 <= p <= 0.8  # the noise-free point is a coin flip, not a promise
    else:
        assert p >= 0.95 and pass_probability(robust_problem, e / 1.02, DELTA, SPLIT) < 0.95
    assert_binomial(pass_count(robust_problem, e, seed=17), p)
