"""core.methods.compare's per-method summaries: release rate, coverage of the intervals, median half-width.

Statistical tests are seeded and state their false-alarm rate (the chance that a correct implementation
fails for a fresh seed); with the seed fixed, each outcome is deterministic.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import beta, binom, norm

from core.data.spec import SyntheticSpec
from core.errors import InputError
from core.estimator.model import ModelSpec
from core.mechanisms.baselines import fallback_budget
from core.mechanisms.curvature import ridge_quantile
from core.mechanisms.full_vector import objective_perturbation_parameters
from core.mechanisms.pipeline import make_rng, prepare_spec
from core.mechanisms.release import directional_sensitivity
from core.mechanisms.stability import solver_slack
from core.methods.compare import RATE_CONFIDENCE, MethodSummary, MethodTrials, compare, rate, summaries, summarise
from core.privacy.accounting import split_budget
from core.privacy.gaussian import sigma
from core.privacy.marks import not_private

K = 400  # draws per method in the statistical tests


def synthetic(n: int, d: int) -> tuple:
    spec = SyntheticSpec("robust", n, d, sample_seed=0)
    data = spec.load()
    return prepare_spec(data, ModelSpec("robust"), spec), data.theta_star


@pytest.fixture(scope="module")
def easy():
    """Test (14) passes on every draw here (n = 10^5, d = 5, eps = 4)."""
    return synthetic(100_000, 5)


@pytest.fixture(scope="module")
def hard():
    """lambda_hat_min = 0 on most draws and (14) fails on every one (n = 2000, d = 2, eps = 1)."""
    return synthetic(2000, 2)


def band(k_draws: int, p: float) -> tuple[float, float]:
    """The central 99.9 % range of Binomial(k_draws, p): a correct rate leaves it with probability <= 0.1 %."""
    return binom.interval(0.999, k_draws, p)


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact interval from its beta-quantile form, independently of scipy's binomtest."""
    a = 1 - RATE_CONFIDENCE
    low = 0.0 if k == 0 else beta.ppf(a / 2, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(1 - a / 2, k + 1, n - k)
    return low, high


@pytest.mark.parametrize("level", [0.8, 0.95])
def test_the_oracles_exact_interval_covers_at_its_level(easy, level):
    """T = u^T theta + Delta sigma Z, so T +- z Delta sigma covers u^T theta(P_n) w.p. exactly `level`.

    False-alarm rate 0.1 % per level (two-sided 99.9 % binomial band over K = 400 draws).
    """
    problem, theta_star = easy
    c = compare(problem, 0, split_budget(4.0, 1e-6), K, make_rng(11), ("oracle",), theta_star, level=level)
    s = summaries(c)["oracle"]
    lo, hi = band(K, level)
    assert s.released.k == K and s.coverage_fit.n == K
    assert lo <= s.coverage_fit.k <= hi, (s.coverage_fit, (lo, hi))
    assert s.level == level and not s.private


def test_algorithm5_covers_the_sample_coefficient_at_least_at_its_level(easy):
    """Algorithm 5's interval (w_bar >= the true multiplier) covers w.p. >= (1 - a)(1 - delta_a).

    At a = 0.5, so that an interval too short would show. False-alarm rate 0.1 % (one-sided binomial bound).
    """
    problem, theta_star = easy
    budget = split_budget(4.0, 1e-6)
    c = compare(problem, 0, budget, 200, make_rng(12), ("local",), theta_star, level=0.5)
    s = summaries(c)["local"]
    assert s.released.k == 200
    assert s.coverage_fit.k >= binom.ppf(0.001, 200, 0.5 * (1 - budget.lambda_min.delta))
    assert s.coverage_star is not None  # synthetic data know theta*


def test_release_rate_is_one_where_the_test_always_passes_and_zero_where_it_always_fails(easy, hard):
    budget = split_budget(4.0, 1e-6)
    passed = summaries(compare(easy[0], 0, budget, 200, make_rng(1), ("local",)))["local"]
    assert (passed.released.k, passed.released.share) == (200, 1.0)
    assert passed.released.high == 1.0 and passed.released.low == pytest.approx(0.025 ** (1 / 200), rel=1e-9)
    failed = summaries(compare(hard[0], 0, split_budget(1.0, 1e-6), 200, make_rng(1), ("local",)))["local"]
    assert (failed.released.k, failed.released.share) == (0, 0.0)
    assert failed.released.low == 0.0 and failed.released.high == pytest.approx(1 - 0.025 ** (1 / 200), rel=1e-9)
    # an interval is stated but none was drawn: no coverage and no width, never 0 %
    assert failed.has_interval and failed.coverage_fit is None and failed.median_half_width is None


def test_fallback_releases_count_as_released_and_are_reported_apart(hard):
    problem, _ = hard
    budget = split_budget(1.0, 1e-6)
    c = compare(problem, 0, budget, 200, make_rng(2), ("local_fallback",), level=0.9)
    s = summaries(c)["local_fallback"]
    m = c.methods["local_fallback"]
    # (14) fails on every draw here, so a value is released exactly when the fallback released it
    assert 0 < s.fallback.k < 200
    assert s.released.k == s.fallback.k == sum(m.fallbacks) == sum(v is not None for v in m.values)
    assert s.coverage_fit.n == s.fallback.k
    # each fallback interval is the ridge coefficient's t_d s / lam + l(lam) at level 0.9 (core.mechanisms.fallback)
    lam, noise = objective_perturbation_parameters(problem, *fallback_budget(budget))
    expected = ridge_quantile(problem.d, 0.9) * noise / lam + solver_slack(lam, problem.geometry)
    assert s.median_half_width == pytest.approx(expected, rel=1e-12)


def test_the_oracles_median_half_width_is_z_delta_sigma(easy):
    problem, _ = easy
    c = compare(problem, 1, split_budget(2.0, 1e-5), 5, make_rng(3), ("oracle",), level=0.9)
    e1 = np.eye(problem.d)[1]
    by_hand = norm.ppf(0.95) * directional_sensitivity(problem.fit, problem.geometry, e1) * sigma(2.0, 1e-5)
    assert summaries(c)["oracle"].median_half_width == pytest.approx(by_hand, rel=1e-12)


def trials(values, intervals, fallbacks=None, method="local") -> MethodTrials:
    k = len(values)
    return MethodTrials(method, tuple(values), 1.0, True, 1.0, 1e-6, 0.0, (0.0,) * k,
                        None if intervals is None else tuple(intervals), fallbacks or (False,) * k)


def test_summary_by_hand():
    m = trials([1.0, None, 1.5, 1.0], [(0.0, 2.0), None, (1.0, 2.0), (-1.0, 3.0)])
    s = summarise(m, 1.5, 2.5, 0.95)
    assert s.median_half_width == 1.0  # the half-widths 1, 0.5, 2 of the released draws
    assert (s.released.k, s.released.n) == (3, 4)
    assert (s.coverage_fit.k, s.coverage_fit.n) == (3, 3)
    assert (s.coverage_star.k, s.coverage_star.n) == (1, 3)  # only [-1, 3] holds 2.5
    assert (s.coverage_star.low, s.coverage_star.high) == pytest.approx(clopper_pearson(1, 3), rel=1e-9)
    assert (s.released.low, s.released.high) == pytest.approx(clopper_pearson(3, 4), rel=1e-9)
    assert s.fallback is None and summarise(m, 1.5, None, 0.95).coverage_star is None


def test_a_method_without_an_interval_has_no_coverage_rather_than_zero(easy):
    problem, theta_star = easy
    c = compare(problem, 0, split_budget(4.0, 1e-6), 3, make_rng(4),
                ("output_perturbation", "objective_perturbation", "algorithm3"), theta_star)
    for s in summaries(c).values():
        assert s.released.k == 3 and not s.has_interval
        assert s.coverage_fit is s.coverage_star is s.median_half_width is None
    assert c.methods["output_perturbation"].intervals is None


def test_summaries_are_immutable_and_mark_the_coverages_not_private():
    s = summarise(trials([1.0], [(0.0, 2.0)]), 1.0, None, 0.95)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.median_half_width = 0.0  # type: ignore[misc]
    assert not_private(MethodSummary) == {"coverage_fit", "coverage_star"}


def test_rate_of_no_draws_is_none_and_of_some_is_clopper_pearson():
    assert rate(0, 0) is None
    r = rate(7, 20)
    assert (r.low, r.high) == pytest.approx(clopper_pearson(7, 20), rel=1e-9) and r.share == 0.35


@pytest.mark.parametrize("level", [0.0, 1.0, -0.5, math.nan, True, "0.9"])
def test_compare_refuses_a_bad_interval_level(easy, level):
    with pytest.raises(InputError, match="interval level"):
        compare(easy[0], 0, split_budget(4.0, 1e-6), 1, make_rng(0), ("oracle",), level=level)
