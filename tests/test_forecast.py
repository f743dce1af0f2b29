"""core.mechanisms.forecast: the interval a release will likely have, before its noise, by one rule for the preview and
the Planner. Exact where the interval is known before the release; the certification chance checked against a brute
force simulation of the step it forecasts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from core.data.spec import SyntheticSpec
from core.estimator.model import ModelSpec
from core.mechanisms.fallback import fallback_half_width
from core.mechanisms.forecast import (
    LOGISTIC_PLAUSIBLE,
    certification_chance,
    forecast,
    plausible_half_range,
    worst_case,
)
from core.mechanisms.full_vector import op_parameters
from core.mechanisms.pipeline import certify, finish, make_rng, planned_half_width, prepare_spec
from core.mechanisms.split import CURVATURE_SHARE, SHARE_GRID, stand_in
from core.privacy.accounting import make_budget

SPEC = SyntheticSpec("logistic", 20_000, 3, 1.0, 1.0, 0)


@pytest.fixture(scope="module")
def problem():
    return prepare_spec(SPEC.load(), ModelSpec("logistic").resolve(3), SPEC)


def ahead(problem, c, fallback=True):
    lmax = None if c.lambda_max is None else c.lambda_max.lambda_hat
    return forecast(problem.geometry, problem.model, problem.n, c.budget, c.test, c.lambda_min.lambda_hat, lmax,
                    "paper", 0.95, fallback, probed=c.probe is not None,
                    curvature=stand_in(c.lambda_min.lambda_hat, c.probe))


def half(run) -> float:
    """The released half-width, read back from the interval (value +- half): exact to a few units in the last place."""
    lo, hi = run.release.interval
    return (hi - lo) / 2


def test_a_passed_test_forecasts_the_exact_half_width(problem):
    b = make_budget(40.0, 1e-6, (1, 1, 18))
    c = certify(problem, 1, b, make_rng(3), True)
    assert c.test.passed
    f = ahead(problem, c)
    assert f.branch == "released" and f.low == f.high == planned_half_width(problem, c, "paper", 0.95)
    assert half(finish(problem, c, make_rng(4), "paper", 0.95, True)) == pytest.approx(f.low, rel=1e-12)


def test_without_a_curvature_bound_the_fallback_forecasts_its_exact_half_width(problem):
    """At ε = 0.01 nothing is certified at this n: the released half-width is the forecast's `wide`, to the bit."""
    b = make_budget(0.01, 1e-6, (1, 1, 18))
    for seed in range(5):
        c = certify(problem, 1, b, make_rng(seed), True)
        run = finish(problem, c, make_rng(seed + 100), "paper", 0.95, True)
        f = ahead(problem, c)
        assert f.branch == "fallback" and run.release.fallback_curvature.bound is None
        assert half(run) == pytest.approx(f.wide, rel=1e-12)
        assert f.low * (1 - 1e-12) <= half(run) <= f.high * (1 + 1e-12)  # the interval's endpoints round the width
        assert f.uninformative and f.high >= LOGISTIC_PLAUSIBLE and "Planner" in f.advice


def test_where_the_curvature_is_certified_the_half_width_lies_in_the_forecast(problem):
    b = make_budget(4.0, 1e-6, (1, 1, 18))
    inside = 0
    for seed in range(20):
        c = certify(problem, 1, b, make_rng(seed), True)
        f = ahead(problem, c)
        run = finish(problem, c, make_rng(seed + 100), "paper", 0.95, True)
        assert run.release.fallback_interval is not None  # the proven interval was given
        assert f.certified is not None and f.certified > 0.95 and not f.uninformative
        inside += f.low <= half(run) <= f.high
    assert inside == 20


def test_the_fallback_off_forecasts_nothing(problem):
    c = certify(problem, 1, make_budget(0.5, 1e-6, (1, 1, 18)), make_rng(1), False)
    f = ahead(problem, c, fallback=False)
    assert f.branch == "bottom" and f.low is None and not f.uninformative


def test_the_worst_case_is_the_fallback_with_nothing_certified(problem):
    b = make_budget(1.0, 1e-6, (1, 1, 18))
    wide, plausible = worst_case(problem.geometry, problem.model, problem.n, b, "paper", 0.95)
    # stage 2's share too when nothing is certified, less the probe's half of it
    eps = 2 * b.release.epsilon + b.lambda_max.epsilon / 2
    dlt = b.lambda_max.delta + (1 + math.exp(b.release.epsilon)) * b.release.delta
    # the split is chosen from the probe, not yet drawn: the widest over the rule's grid
    halves = [fallback_half_width(*op_parameters(problem.geometry, problem.n, eps - share * eps, dlt / 2), 0.95,
                                  problem.geometry) for share in SHARE_GRID]
    assert wide == pytest.approx(max(halves), rel=1e-12) and max(halves) > min(halves)
    assert plausible == LOGISTIC_PLAUSIBLE == math.log(100)


def test_the_plausible_range_is_public():
    assert plausible_half_range(ModelSpec("logistic")) == math.log(100)
    assert plausible_half_range(ModelSpec("robust", response_bound=3.0)) == 3.0
    assert plausible_half_range(ModelSpec("robust")) is None


@pytest.mark.parametrize("mu_factor", [2.0, 3.5, 5.0, 8.0])
def test_the_certification_chance_is_step_ones_by_simulation(problem, mu_factor):
    """Step 1 draws mu - shift + Laplace(scale); the curvature interval is given when that is above G1/n (step 2
    runs): the chance the forecast states, against 200,000 simulated draws (binomial standard error <= 0.0012: checked
    to 5 of them)."""
    g, n = problem.geometry, problem.n
    step = g.G1 / n
    mu = (20 + 5 * mu_factor) * step  # near the threshold: step 1 subtracts about 25 G1/n at these shares
    share, delta_share, log_share = CURVATURE_SHARE
    curvature = (share * 2.0, delta_share * 1e-6)
    s, lam = 1e-9, 1.0  # noise too small to raise the bar above step 2's
    chance, need, _, scale = certification_chance(g, n, mu, curvature, log_share, 0.95, s, lam)
    assert need == step
    assert scale == step / (share * 2.0 * (1 - log_share))  # step 1's share of the curvature's ε
    delta_1 = delta_share * 1e-6  # the Laplace branch of log_noise keeps all of the curvature's δ for step 1
    draws = mu - scale * math.log(1 / (2 * delta_1)) + np.random.default_rng(0).laplace(0, scale, 200_000)
    assert chance == pytest.approx(float(np.mean(draws > need)), abs=0.006)
    higher, *_ = certification_chance(g, n, 2 * mu, curvature, log_share, 0.95, s, lam)
    assert higher >= chance
    # larger noise: the proven interval needs lambda_hat above r s chi_3(0.995) e^{r l(lam)}, not only above G1/n
    noisy, floor, *_ = certification_chance(g, n, mu, curvature, log_share, 0.95, 10 * mu, lam)
    assert floor == pytest.approx(g.r * 10 * mu * math.sqrt(stats.chi2.ppf(0.995, 3)), rel=1e-6) and noisy < 1e-6


def test_the_count_hint_is_a_lower_bound_but_one_time_in_ten_thousand(problem):
    """Stage 1's count read at its 99.99 % lower quantile: never below λ̂min (a less cautious offset), and below stage
    1's statistic in every one of 400 draws (a miss rate of 1e-4 gives a miss among 400 with probability 0.04; the
    seeds are fixed)."""
    from core.mechanisms.certificates import lambda_min_certificate
    from core.mechanisms.forecast import count_hint

    g, f = problem.geometry, problem.fit
    below = positive = 0
    for seed in range(400):
        bound = lambda_min_certificate(f, g, 0.05, 1e-7, make_rng(seed))
        hint = count_hint(bound, g, problem.n, problem.model.lam_reg)
        assert hint >= bound.lambda_hat
        below += hint <= bound.statistic
        positive += hint > 0
    assert below == 400 and positive >= 300  # informative where λ̂min is 0 in every draw
