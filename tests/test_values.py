"""Exact values: sigma(eps, delta) of (7), the analytic calibration, t (9), (C1) and R (10)."""

import math

import pytest
from dp_accounting.pld import accountant, common
from scipy.stats import norm

from core.estimator.geometry import make_geometry
from core.estimator.losses import LOGISTIC, ROBUST
from core.mechanisms.recursion import c1_holds, c1_threshold, recursion_down, recursion_up, t_bound, up_recursion
from core.privacy.gaussian import sigma, sigma_analytic, sigma_naive, sigma_paper

CASES = [(1.0, 1e-6), (0.1, 1e-5), (4.0, 1e-6), (0.333, 1e-10), (10.0, 0.1), (2.0, 0.3)]


def tail_mass_7(s, eps):
    """The left side of (7), evaluated directly with the normal cdf."""
    return norm.cdf(-s * eps - 1 / (2 * s)) + norm.cdf(-s * eps + 1 / (2 * s))


@pytest.mark.parametrize("eps,delta", CASES)
def test_sigma_paper_is_the_infimum_of_7(eps, delta):
    s = sigma_paper(eps, delta)
    assert tail_mass_7(s, eps) <= delta
    assert tail_mass_7(s * (1 - 1e-9), eps) > delta
    assert s <= sigma_naive(eps, delta)


def test_sigma_paper_known_value():
    # eps = 1, delta = 1e-6: tail mass at 4.916014274 is delta to 10 digits (computed independently).
    s = sigma_paper(1.0, 1e-6)
    assert s == pytest.approx(4.9160142740135, rel=1e-11)
    assert tail_mass_7(4.9160142740135, 1.0) == pytest.approx(1e-6, rel=1e-9)


def balle_wang_delta(s, eps):
    """delta of the Gaussian mechanism with noise s and sensitivity 1 (Balle & Wang 2018, Thm 8)."""
    return norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * norm.cdf(-1 / (2 * s) - eps * s)


@pytest.mark.parametrize("eps,delta", CASES)
def test_sigma_analytic_matches_dp_accounting_pld_and_its_definition(eps, delta):
    s = sigma_analytic(eps, delta)
    # An independent route in dp_accounting: the PLD library's Gaussian privacy loss.
    pld_sigma = accountant.get_smallest_gaussian_noise(common.DifferentialPrivacyParameters(eps, delta))
    assert s == pytest.approx(pld_sigma, rel=1e-6)
    assert balle_wang_delta(s, eps) <= delta
    assert balle_wang_delta(s * (1 - 1e-6), eps) > delta
    assert s <= sigma_paper(eps, delta)


def test_sigma_dispatch_and_unknown_calibration():
    assert sigma(1.0, 1e-6, "analytic") == sigma_analytic(1.0, 1e-6)
    with pytest.raises(ValueError, match="unknown calibration 'exact'"):
        sigma(1.0, 1e-6, "exact")


# Hand-computed (30-digit arithmetic) at d = 4 on the cube, robust loss, n = 1000:
# r = 2, G0 = 2, G1 = 2, alpha = 1.2332, rho = 1/2.
G = make_geometry(ROBUST, "cube", 4)
N = 1000


def test_constants_cube_and_ball():
    assert (G.r, G.G0, G.G1, G.d_p) == (2.0, 2.0, 2.0, 4.0)
    assert G.G2 == pytest.approx(0.19245008972987526 * 8)
    b = make_geometry(LOGISTIC, "ball", 9, radius=3.0)
    assert (b.r, b.G0, b.G1, b.d_p) == (3.0, 3.0, 9 * 0.25, 1.0)


def test_t_at_hand_computed_points():
    assert t_bound(0.5, G, N) == pytest.approx(0.00816440404160992472619, rel=1e-13)
    assert t_bound(0.05, G, N) == pytest.approx(0.109658340996408870545, rel=1e-13)
    # 8 alpha r G0/(lam n) > 1: no bound.
    assert t_bound(0.03, G, N) == math.inf
    assert t_bound(0.0, G, N) == math.inf


def test_c1_at_hand_computed_points():
    # 4 G0 alpha r/(rho(1-rho) n) + G1/(rho n) = 0.0789248 + 0.004
    assert c1_threshold(G, N) == pytest.approx(0.0829248, rel=1e-14)
    assert c1_holds(0.0830, G, N, 0.0)
    assert not c1_holds(0.0828, G, N, 0.0)
    assert c1_holds(0.05, G, N, 0.02)  # 0.05 + 0.02/rho = 0.09


def test_recursion_down_at_hand_computed_points():
    assert recursion_down(0.5, G, N, 0.0) == pytest.approx(0.489768574166639485081, rel=1e-12)
    assert recursion_down(0.2, G, N, 0.0) == pytest.approx(0.189380285007880996794, rel=1e-12)
    assert recursion_down(0.05, G, N, 0.02) == pytest.approx(0.0406211522573083004790, rel=1e-12)
    assert recursion_down(0.05, G, N, 0.0) == 0.0  # (C1) fails


def test_recursion_up_is_affine_below_its_cap():
    a = 1 + math.expm1(2 * t_bound(0.5, G, N))
    assert recursion_up(0.3, 0.5, G, N, 0.0) == pytest.approx(0.3 * a + 2 / N, rel=1e-14)
    assert recursion_up(1.99, 0.5, G, N, 0.0) == 2.0  # capped at G1
    rec = up_recursion(0.5, G, N, 0.0)
    x = 0.3
    for k in range(1, 200):
        x = rec.step(x)
        assert rec.power(0.3, k) == pytest.approx(x, rel=1e-11)


def test_threshold_of_14_for_tiny_delta():
    from core.mechanisms.stability import threshold

    assert threshold(1.0, 1e-6) == pytest.approx(2 / (1 + norm.isf(5e-7) ** 2), rel=1e-12)
    # 1 - delta/2 would round to 1 here; the quantile must stay finite
    assert threshold(1.0, 1e-40) == pytest.approx(2 / (1 + norm.isf(5e-41) ** 2), rel=1e-12)
    assert threshold(1.0, 1e-40) > 0
