"""The analytic calibration checked in 80-digit arithmetic against Balle & Wang's exact delta.

delta(s) = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s) is the exact delta of the Gaussian
mechanism with noise s and sensitivity 1 (Balle & Wang 2018, Thm 8). The returned multiplier must
satisfy delta(s) <= delta exactly, and sit within a relative 1e-6 of the infimum.
"""

import itertools

import mpmath
import pytest
from dp_accounting import gaussian_mechanism

from core.privacy.gaussian import SAFETY, log_delta_analytic_bound, sigma_analytic, sigma_paper

EPSILONS = (1e-5, 1e-3, 0.1, 1.0, 4.0, 10.0, 50.0)
DELTAS = (1e-3, 1e-6, 1e-12, 1e-30, 1e-50, 1e-100)
GRID = list(itertools.product(EPSILONS, DELTAS))
DIGITS = 80


def exact_delta(s, eps):
    """Balle & Wang's delta at the float s, in 80-digit arithmetic."""
    with mpmath.workdps(DIGITS):
        s, eps = mpmath.mpf(s), mpmath.mpf(eps)
        return mpmath.ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * mpmath.ncdf(-1 / (2 * s) - eps * s)


def exact_infimum(eps, delta, near):
    """inf{s : delta(s) <= delta} by bisection in 80 digits, from a bracket around `near`."""
    with mpmath.workdps(DIGITS):
        target = mpmath.mpf(delta)
        lo, hi = mpmath.mpf(near) * (1 - mpmath.mpf("1e-4")), mpmath.mpf(near) * (1 + mpmath.mpf("1e-4"))
        assert exact_delta(lo, eps) > target and exact_delta(hi, eps) <= target
        for _ in range(60):  # bracket width 2e-4 / 2^60: far below the 1e-6 asked of the calibration
            mid = (lo + hi) / 2
            if exact_delta(mid, eps) <= target:
                hi = mid
            else:
                lo = mid
        return hi


@pytest.mark.parametrize("eps,delta", GRID)
def test_sigma_analytic_meets_its_delta_exactly(eps, delta):
    s = sigma_analytic(eps, delta)
    with mpmath.workdps(DIGITS):
        assert exact_delta(s, eps) <= mpmath.mpf(delta)


@pytest.mark.parametrize("eps,delta", GRID)
def test_sigma_analytic_is_within_1e6_of_the_infimum(eps, delta):
    s = sigma_analytic(eps, delta)
    with mpmath.workdps(DIGITS):
        gap = mpmath.mpf(s) / exact_infimum(eps, delta, s) - 1
    assert 0 <= gap <= 1e-6


@pytest.mark.parametrize("eps,delta", GRID)
def test_sigma_analytic_is_never_above_the_paper_calibration(eps, delta):
    assert sigma_analytic(eps, delta) <= sigma_paper(eps, delta)


@pytest.mark.parametrize("eps,delta", GRID)
def test_verification_only_ever_adds_noise(eps, delta):
    """The verified multiplier is never below dp_accounting's root plus the tolerance and margin."""
    unverified = (float(gaussian_mechanism.get_sigma_gaussian(eps, delta, tol=1e-13)) + 2e-13) * (1.0 + SAFETY)
    assert sigma_analytic(eps, delta) >= unverified


@pytest.mark.filterwarnings("ignore:divide by zero encountered in log1p:RuntimeWarning")
@pytest.mark.parametrize("eps,delta", [(1e-7, 1e-30), (3e-12, 1e-200), (0.5, 0.999999), (1e-3, 1e-310)])
def test_sigma_analytic_meets_its_delta_at_extremes(eps, delta):
    """Far outside the grid dp_accounting's root can miss by much more (at eps = 3e-12 it is 47% low)."""
    s = sigma_analytic(eps, delta)
    with mpmath.workdps(DIGITS):
        assert exact_delta(s, eps) <= mpmath.mpf(delta)
        assert exact_delta(s * (1 - 1e-6), eps) > mpmath.mpf(delta)


def test_log_delta_bound_is_an_upper_bound_and_tight():
    """The float64 evaluation used for the verification, on the grid's solutions and around them."""
    for eps, delta in GRID:
        s0 = sigma_analytic(eps, delta)
        for factor in (0.5, 0.99, 1.0 - 1e-7, 1.0, 1.0 + 1e-7, 1.01, 2.0):
            s = s0 * factor
            bound = log_delta_analytic_bound(s, eps)
            with mpmath.workdps(DIGITS):
                true_log = mpmath.log(exact_delta(s, eps))
                assert bound >= true_log
                assert bound - true_log <= 1e-7 * max(1.0, abs(float(true_log)))


def test_log_delta_bound_on_random_points():
    import random

    rng = random.Random(2025)
    for _ in range(300):
        eps = 10 ** rng.uniform(-8, 2)
        s = 10 ** rng.uniform(-2, 9)
        with mpmath.workdps(DIGITS):
            d = exact_delta(s, eps)
            if not d > mpmath.mpf("1e-300"):
                continue
            true_log = mpmath.log(d)
        bound = log_delta_analytic_bound(s, eps)
        assert bound >= true_log, (eps, s)
        assert bound - true_log <= 1e-7 * max(1.0, abs(float(true_log))), (eps, s)




def test_the_posterior_an_attacker_can_reach():
    """From a 50 % prior the odds can grow by e^eps at most: 1/2 at eps = 0, 3/4 at eps = ln 3."""
    import math

    from core.privacy.gaussian import epsilon_warning, posterior_bound

    assert posterior_bound(0.0) == 0.5
    assert posterior_bound(math.log(3.0)) == pytest.approx(0.75, rel=1e-15)
    assert epsilon_warning(5.0) is None and "99.34 %" in epsilon_warning(5.01)


def test_large_factors_read_as_powers_of_ten_and_never_as_certainty():
    from core.privacy.gaussian import certainty, epsilon_warning, magnitude

    assert [magnitude(x) for x in (54.598, 999.9, 22026.47, 5.18e21)] == ["54.6", "1,000", "22,000", "5.18 × 10²¹"]
    assert certainty(4.0) == "98.2 %" and certainty(20.0) == "all but 1 in 4.85 × 10⁸"
    text = epsilon_warning(50.0)
    assert "5.18 × 10²¹" in text and "100.00 %" not in text and "5,184,705" not in text
