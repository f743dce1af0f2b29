"""The planner (core.teaching.planner) against the real pipeline on synthetic data.

The assumptions are a synthetic problem's true lambda_min and lambda_max (and its n, d, loss, domain, lambda_reg),
so the plan should predict what core.mechanisms.pipeline.run_private does on those data.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core.data import synthetic
from core.errors import InputError
from core.mechanisms.pipeline import Problem, prepare, run_private
from core.mechanisms.release import interval_half_width
from core.teaching import whatif
from core.teaching.planner import (
    MAX_EPSILON,
    PLAN_NOTE,
    Assumptions,
    ahead,
    lambda_min_from_kappa,
    largest_table,
    meets,
    plan,
    smallest_epsilon,
    smallest_n,
    smallest_table_epsilon,
    sweep_n,
)

SPLIT = (1.0, 1.0, 1.0)
DELTA = 1e-6
DRAWS = 30


def assume(problem: Problem, epsilon: float, **changes: object) -> Assumptions:
    """The problem's public facts and true eigenvalues as assumptions (the eigenvalues are NOT private)."""
    f, m = problem.fit, problem.model
    fields = dict(n=problem.n, d=problem.d, lambda_min=f.lambda_min, lambda_max=f.lambda_max, epsilon=epsilon,
                  delta=DELTA, loss=m.loss, domain=m.domain, radius=m.radius, lam_reg=m.lam_reg, split=SPLIT)
    return Assumptions(**{**fields, **changes})


@pytest.fixture(scope="module")
def ball_problem() -> Problem:
    data = synthetic(20_000, 3, "robust", theta_norm=1.0, seed=11)
    return prepare(data.X, data.y, "robust", "ball", radius=2.0)


@pytest.fixture(scope="module")
def logistic_problem_large() -> Problem:
    """Logistic, n = 200000, d = 3, with a ridge: the test (14) passes from epsilon about 0.5."""
    data = synthetic(200_000, 3, "logistic", theta_norm=1.0, seed=12)
    return prepare(data.X, data.y, "logistic", "cube", lam_reg=1e-3)


@pytest.fixture(params=["robust_problem", "ball_problem", "logistic_problem_large"])
def problem(request) -> Problem:
    return request.getfixturevalue(request.param)


def released_half_widths(problem: Problem, a: Assumptions) -> list[float | None]:
    """The half-width of run_private's released interval on DRAWS seeded draws (None for ⊥)."""
    halves = []
    for seed in range(DRAWS):
        rel = run_private(problem, 0, a.budget(), np.random.default_rng(seed), a.calibration, a.level).release
        halves.append(None if rel.interval is None else (rel.interval[1] - rel.interval[0]) / 2.0)
    return halves


@pytest.mark.parametrize("calibration,level", [("paper", 0.95), ("analytic", 0.9)])
def test_predicted_half_width_is_the_measured_one(problem, calibration, level):
    """At twice the noise-free boundary epsilon (the test passes w.p. ~1), every one of 30 seeded releases is made,
    and the mean of their half-widths (hi - lo)/2 is within 10 % of the plan's; each single draw is too, since the
    half-width moves with the private lambda_hat_min only (measured: within 0.1 %)."""
    e50 = whatif.smallest_epsilon(problem, DELTA, SPLIT)
    a = assume(problem, 2.0 * e50, calibration=calibration, level=level)
    p = plan(a)
    assert p.passed and p.pass_probability > 0.999 and p.half_width > 0
    halves = released_half_widths(problem, a)
    assert None not in halves
    assert abs(np.mean(halves) / p.half_width - 1.0) <= 0.10
    assert max(abs(h / p.half_width - 1.0) for h in halves) <= 0.10


def test_half_width_is_the_release_formula_exactly(robust_problem):
    """At a draw's own certified bounds, interval_half_width gives the released interval's half-width to 1e-12."""
    a = assume(robust_problem, 4.0)
    run = run_private(robust_problem, 1, a.budget(), np.random.default_rng(3), a.calibration, a.level)
    assert run.test.passed
    w_bar, half = interval_half_width(run.test, robust_problem.geometry, robust_problem.n, run.release.sigma, a.level)
    lo, hi = run.release.interval
    assert half == pytest.approx((hi - lo) / 2.0, rel=1e-12)
    assert w_bar == pytest.approx(run.release.w_bar, rel=1e-12)


def test_pass_prediction_is_the_noise_free_test(problem):
    """On a grid of epsilon around the boundary and three n, the plan's test is core.teaching.whatif's noise-free test
    of the problem itself, constant for constant, and its pass probability is whatif.pass_probability's."""
    e50 = whatif.smallest_epsilon(problem, DELTA, SPLIT)
    seen = set()
    for eps in e50 * np.array([0.5, 0.9, 1.0, 1.1, 2.0]):
        for n in (problem.n // 2, problem.n, 3 * problem.n):
            p = plan(assume(problem, float(eps), n=n), probability=False)
            free = whatif.noise_free_test(problem, float(eps), DELTA, SPLIT, n)
            assert p.test == free
            seen.add(p.passed)
            assert (p.half_width is not None) == p.passed
    assert seen == {True, False}
    p = plan(assume(problem, e50))
    assert p.pass_probability == whatif.pass_probability(problem, e50, DELTA, SPLIT)


def test_pass_probability_is_the_release_rate(ball_problem):
    """At the noise-free boundary the plan's P(pass) lies strictly inside (0, 1); 300 seeded run_private draws pass
    at a rate within 4 standard errors + 0.01 of it (false alarm below 1e-4 by the normal approximation)."""
    e50 = whatif.smallest_epsilon(ball_problem, DELTA, SPLIT)
    a = assume(ball_problem, e50)
    p = plan(a).pass_probability
    assert 0.05 < p < 0.95
    draws = 300
    hits = sum(run_private(ball_problem, 0, a.budget(), np.random.default_rng(seed)).test.passed
               for seed in range(draws))
    assert abs(hits / draws - p) < 4 * math.sqrt(p * (1 - p) / draws) + 0.01


@pytest.mark.parametrize("target", [0.05, 0.02, 0.005])
def test_smallest_epsilon_meets_the_target_and_one_percent_less_does_not(robust_problem, target):
    a = assume(robust_problem, 1.0)
    eps = smallest_epsilon(a, target)
    assert eps is not None
    best = plan(assume(robust_problem, eps), probability=False)
    assert best.passed and best.half_width <= target
    assert not meets(assume(robust_problem, 0.99 * eps), target)


@pytest.mark.slow
def test_smallest_epsilon_under_pld_accounting(robust_problem):
    """The PLD search starts from the basic answer and brackets outwards: the same two properties hold."""
    a = assume(robust_problem, 1.0, accounting="pld")
    eps = smallest_epsilon(a, 0.02)
    assert eps is not None
    assert meets(assume(robust_problem, eps, accounting="pld"), 0.02)
    assert not meets(assume(robust_problem, 0.99 * eps, accounting="pld"), 0.02)


def test_sweep_over_n_passes_from_some_n_on_and_narrows(robust_problem):
    a = assume(robust_problem, 4.0)
    plans = sweep_n(a, points=15)
    ns = [p.assumptions.n for p in plans]
    assert robust_problem.n in ns and ns == sorted(ns) and ns[0] == robust_problem.n // 100
    passed = [p.passed for p in plans]
    assert passed == sorted(passed) and passed[0] is False and passed[-1] is True
    halves = [p.half_width for p in plans if p.passed]
    assert all(b < a for a, b in zip(halves, halves[1:], strict=False))
    assert all(p.pass_probability is None for p in plans)


def test_smallest_n_meets_the_target_and_one_fewer_does_not(robust_problem):
    a = assume(robust_problem, 4.0)
    n = smallest_n(a, 0.01)
    assert n is not None and n > robust_problem.n  # the sample itself gives about 0.022 at epsilon 4
    assert meets(assume(robust_problem, 4.0, n=n), 0.01)
    assert not meets(assume(robust_problem, 4.0, n=n - 1), 0.01)
    assert not meets(assume(robust_problem, 4.0, n=int(0.99 * n)), 0.01)


def test_unreachable_targets_give_none(robust_problem):
    """At n = 200 the test (14) fails at every epsilon up to MAX_EPSILON; at epsilon = 1e-3 no n up to N_MAX
    gives a half-width of 1e-12."""
    assert smallest_epsilon(assume(robust_problem, 4.0, n=200), 1.0) is None
    assert smallest_n(assume(robust_problem, 1e-3), 1e-12) is None


def test_kappa_gives_lambda_min(robust_problem):
    f = robust_problem.fit
    lam = lambda_min_from_kappa(f.lambda_max / f.lambda_min, f.lambda_max)
    assert lam == pytest.approx(f.lambda_min, rel=1e-12)
    assert assume(robust_problem, 4.0).kappa == pytest.approx(f.kappa, rel=1e-12)


def test_the_plan_says_what_it_is(robust_problem):
    p = plan(assume(robust_problem, 4.0), probability=False)
    assert p.note == PLAN_NOTE and "not a measurement" in p.note and "reads no data" in p.note
    assert p.pass_probability is None
    assert 0 < p.lambda_hat_min < robust_problem.fit.lambda_min < robust_problem.fit.lambda_max < p.lambda_hat_max


GOOD = dict(n=20_000, d=3, lambda_min=0.1, lambda_max=0.2, epsilon=4.0, delta=1e-6)


@pytest.mark.parametrize("changes,control", [
    (dict(n=0), "Sample size n"), (dict(n=3), "Sample size n"), (dict(n=10**13), "Sample size n"),
    (dict(n=2.5e4), "Sample size n"), (dict(n=True), "Sample size n"), (dict(d=0), "Dimension d"),
    (dict(d=-3), "Dimension d"), (dict(d="3"), "Dimension d"),
    (dict(lambda_min=-0.1), "Assumed λmin"), (dict(lambda_min=0.0), "Assumed λmin"),
    (dict(lambda_min=math.nan), "Assumed λmin"), (dict(lambda_min=0.3), "Assumed λmin"),
    (dict(lambda_max=-1.0), "Assumed λmax"), (dict(lambda_max=math.inf), "Assumed λmax"),
    (dict(lambda_max=2.0), "Assumed λmax"),  # above G1 = 0.5 r^2 = 1.5 for the robust loss on the cube, d = 3
    (dict(epsilon=math.nan), "Total ε"), (dict(epsilon=0.0), "Total ε"), (dict(epsilon=-1.0), "Total ε"),
    (dict(epsilon=MAX_EPSILON * 10), "Total ε"), (dict(epsilon=math.inf), "Total ε"),
    (dict(delta=0.0), "Total δ"), (dict(delta=0.5), "Total δ"), (dict(delta=math.nan), "Total δ"),
    (dict(level=1.0), "Interval level"), (dict(level=0.0), "Interval level"), (dict(level=math.nan), "Interval level"),
    (dict(split=(1.0, 0.0, 1.0)), "Split"), (dict(split=(1.0, math.nan, 1.0)), "Split"),
    (dict(split=(1.0, 1.0)), "Split"),
    (dict(loss="hinge"), "Loss"), (dict(domain="torus"), "Covariate domain"), (dict(radius=2.0), "Ball radius R"),
    (dict(domain="ball", radius=-1.0), "radius"), (dict(domain="ball", radius=math.nan), "radius"),
    (dict(lam_reg=-1.0), "lambda_reg"), (dict(lam_reg=math.nan), "lambda_reg"),
    (dict(calibration="exact"), "σ calibration"), (dict(accounting="rdp"), "Accounting"),
])
def test_hostile_assumptions_are_input_errors(changes, control):
    with pytest.raises(InputError) as err:
        Assumptions(**{**GOOD, **changes})
    assert control in str(err.value)


@pytest.mark.parametrize("target", [0.0, -1.0, math.nan, math.inf, "0.1", None])
def test_hostile_targets_are_input_errors(target):
    a = Assumptions(**GOOD)
    for search in (smallest_epsilon, smallest_n):
        with pytest.raises(InputError, match="Target half-width"):
            search(a, target)


@pytest.mark.parametrize("kappa,lambda_max", [(0.5, 0.2), (math.nan, 0.2), (2.0, -0.2), (2.0, math.nan)])
def test_hostile_kappa_is_an_input_error(kappa, lambda_max):
    with pytest.raises(InputError, match="Assumed"):
        lambda_min_from_kappa(kappa, lambda_max)


@pytest.mark.parametrize("n", [20_000, 132_527])
def test_the_smallest_epsilon_for_an_informative_table_is_where_its_forecast_turns(n):
    """A census-like table (d = 17, the ball): at the suggested ε every row's forecast is informative; just below it
    (by the search's ratio, twice) it is not; more rows need more ε."""
    a = Assumptions(n=n, d=17, lambda_min=0.02, lambda_max=0.2, epsilon=4.0, delta=DELTA, loss="logistic",
                    domain="ball", radius=2.35)
    eps = smallest_table_epsilon(a)
    assert eps is not None and 0.001 < eps < MAX_EPSILON
    at = plan(replace(a, epsilon=eps), probability=False).table_forecast
    below = plan(replace(a, epsilon=eps / 1.001 ** 2), probability=False).table_forecast
    assert not at.uninformative and below.uninformative
    if n == 20_000:
        assert eps > smallest_table_epsilon(replace(a, n=132_527))


@pytest.mark.parametrize("n,epsilon", [(132_527, 2.0), (132_527, 3.15), (132_527, 4.0), (50_000, 10.0)])
def test_the_most_coefficients_a_table_may_hold_is_found_by_trying_every_count(n, epsilon):
    """Brute force over k = 1..d: the suggestion is the largest k whose table's rows are forecast informative, and
    every smaller table is informative too (the forecast worsens with k); the cells straddle where it turns."""
    a = Assumptions(n=n, d=17, lambda_min=0.02, lambda_max=0.2, epsilon=epsilon, delta=DELTA, loss="logistic",
                    domain="ball", radius=3.0)
    b = a.budget()
    test = whatif.noise_free_test(a.curvature(), epsilon, DELTA, a.weights, accounting=a.accounting)
    informative = [not ahead(a, b, test, k).uninformative for k in range(1, a.d + 1)]
    k = largest_table(a)
    assert informative == [True] * k + [False] * (a.d - k)
    assert {(132_527, 2.0): 0, (132_527, 3.15): 8, (132_527, 4.0): 17, (50_000, 10.0): 17}[(n, epsilon)] == k


def test_without_a_public_plausible_range_no_table_count_is_suggested():
    """The robust loss without a response bound: no range to judge a row by, so None (not 0, "not even one")."""
    a = Assumptions(n=100_000, d=5, lambda_min=0.09, lambda_max=0.17, epsilon=4.0, delta=DELTA)
    assert plan(a, probability=False).half_width < 0.01  # a narrow interval, which a 0 would have called useless
    assert largest_table(a) is None
