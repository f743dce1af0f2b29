"""The fallback's proven intervals (docs/privacy.md, "Curvature at the released point" and "Algorithm 5 with
fallback"): each step of the theorem's proof checked by brute force, and coverage where the first-order interval fell
short (small samples), where the proven one is given, and on data with no fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from core.data.synthetic import synthetic
from core.estimator.fit import certified_distance
from core.estimator.losses import LOGISTIC, ROBUST
from core.mechanisms.curvature import hessian_at, ridge_quantile, sc_factor
from core.mechanisms.full_vector import regularised_fit_theta
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.privacy.accounting import make_budget

SPLIT = (1, 1, 18)


@pytest.mark.parametrize("loss", [LOGISTIC, ROBUST], ids=["logistic", "robust"])
def test_both_losses_are_generalised_self_concordant(loss):
    """|h'''| <= h'' on a fine grid (h''' by central differences of h'', within about 1e-5 relative on |z| <= 15,
    where h'' itself is computed to 1e-9): the property step (i) of the proof needs."""
    z, step = np.linspace(-15.0, 15.0, 30_001), 1e-4
    for y in (-1.0, 1.0):
        yy = np.full_like(z, y)
        h2 = loss.d2(z, yy)
        h3 = (loss.d2(z + step, yy) - loss.d2(z - step, yy)) / (2 * step)
        assert np.all(np.abs(h3) <= h2 * (1 + 1e-4))
        assert np.max(np.abs(h3) / h2) > 0.99  # and the constant 1 is approached: no slack hidden in it


def test_the_mean_hessians_factor_is_k():
    """Step (iv): for symmetric G with eigenvalues in [phi(a) - 1, psi(a) - 1], ||G (I + G)^-1|| <= k(a), reached at
    an end; step (v): for F with eigenvalues in [-(1 - e^-a), e^a - 1], ||(I + F)^-1 F|| <= e^a - 1."""
    rng = np.random.default_rng(0)
    for a in (1e-3, 0.1, 0.7, 2.0, 5.0):
        phi, psi = -math.expm1(-a) / a, math.expm1(a) / a
        ends = np.array([phi - 1, psi - 1])
        assert max(abs(ends / (1 + ends))) == pytest.approx(sc_factor(a), rel=1e-12)
        for _ in range(50):
            q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
            g = q @ np.diag(rng.uniform(phi - 1, psi - 1, 4)) @ q.T
            assert np.linalg.norm(g @ np.linalg.inv(np.eye(4) + g), 2) <= sc_factor(a) * (1 + 1e-12)
            f = q @ np.diag(rng.uniform(math.expm1(-a), math.expm1(a), 4)) @ q.T
            assert np.linalg.norm(np.linalg.inv(np.eye(4) + f) @ f, 2) <= math.expm1(a) * (1 + 1e-12)
    assert sc_factor(1e-4) == pytest.approx(0.5e-4, rel=1e-3)  # about a/2


def test_the_fit_lies_where_the_curvature_at_the_released_point_says():
    """Step (iii) with exact quantities: for the perturbed minimiser theta_hat of L + b^T theta + (lam/2)||theta||^2,
    ||theta_hat - theta(P_n)|| <= -ln(1 - r||c||/mu(theta_hat))/r, c = b + lam theta_hat, whenever r||c|| < mu; 120
    perturbations of three sizes on a logistic sample (d = 2, cube, r = sqrt 2), the bound nearly reached."""
    data = synthetic(400, 2, "logistic", theta_norm=2.0, seed=4)
    p = prepare(data.X, data.y, "logistic")
    r, rng, worst, checked = p.geometry.r, np.random.default_rng(1), 0.0, 0
    for scale in (0.005, 0.02, 0.06):
        for _ in range(40):
            b, lam = scale * rng.standard_normal(2), 1e-3
            point = regularised_fit_theta(p, lam, linear=b)
            c = float(np.linalg.norm(b + lam * point))
            mu = float(np.linalg.eigvalsh(hessian_at(p, point, 0.0))[0])
            bound = certified_distance(c, r, mu)
            if math.isfinite(bound):
                gap = float(np.linalg.norm(point - p.fit.theta))
                assert gap <= bound * (1 + 1e-9) + 1e-12
                worst, checked = max(worst, gap / bound), checked + 1
    assert checked >= 60 and worst > 0.5


def _releases(n, d, norm, eps, draws, seed, level=0.95):
    """A fresh sample and a fresh release per draw: (release, u^T theta(P_n), u^T theta_lam(P_n))."""
    out = []
    for i in range(draws):
        data = synthetic(n, d, "logistic", theta_norm=norm, seed=seed + i)
        p = prepare(data.X, data.y, "logistic")
        r = run_private(p, 0, make_budget(eps, 1e-6, SPLIT), make_rng(seed + 10_000 + i), "analytic", level,
                        fallback=True).release
        ridge = None if r.status != "fallback" else float(regularised_fit_theta(p, r.fallback_lambda_reg)[0])
        out.append((r, float(p.fit.theta[0]), ridge))
    return out


def _covers(interval, target):
    return interval[0] <= target <= interval[1]


def test_small_samples_get_the_ridge_coefficients_proven_interval():
    """d = 1, n = 500, slope 3, eps = 2, where the first-order curvature interval covered 0.87-0.89 among certified
    draws: the proven one is given where it may be (P(given and missed) <= 0.05), and every other interval is the
    ridge coefficient's, which covers u^T theta_lam(P_n). 200 draws: either count's miss is Binomial(200, <= 0.05),
    above 20 with probability < 0.003."""
    runs = _releases(500, 1, 3.0, 2.0, 200, 3000)
    assert all(r.status == "fallback" for r, _, _ in runs)
    given = [(r, fit) for r, fit, _ in runs if r.fallback_interval is not None]
    ridge = [(r, lam) for r, _, lam in runs if r.fallback_interval is None]
    assert sum(not _covers(r.interval, fit) for r, fit in given) <= 20
    assert sum(not _covers(r.interval, lam) for r, lam in ridge) <= 20
    assert all(r.interval_target == "ridge" and "uᵀθ_λ(Pₙ)" in r.interval_note for r, _ in ridge)
    assert len(ridge) >= 190  # measured: none given in 1,000 draws (the noise's gradient passes the curvature)


def test_where_the_proven_interval_is_given_it_covers_the_fit():
    """d = 1, n = 5,000, slope 3, eps = 2: the proven interval is given on most draws and covers u^T theta(P_n);
    P(given and missed) <= 0.05 by the theorem, so more than 20 misses in 200 has probability < 0.003. Measured: none
    missed in 400 (docs/curvature_proof.md)."""
    runs = _releases(5_000, 1, 3.0, 2.0, 200, 7000)
    given = [(r, fit) for r, fit, _ in runs if r.fallback_interval is not None]
    assert len(given) >= 180
    assert sum(not _covers(r.interval, fit) for r, fit in given) <= 20
    assert all(r.interval_target == "fitted" and r.fallback_interval.remainder > 0 for r, _ in given)


@pytest.mark.parametrize("n", [200, 2_000])
def test_data_with_no_fit_get_no_interval_for_it_and_no_population_range(n):
    """Exactly separable rows have no maximum-likelihood fit: the proven interval, which would prove that a fit
    exists, is given with probability <= delta_1 + 0.1 a = 0.005, so in 40 draws at all with probability < 0.2; none
    is, and so no population range either (measured: 0 of 400)."""
    rng = np.random.default_rng(n)
    X = rng.uniform(-1.0, 1.0, (n, 2))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)
    p = prepare(X, y, "logistic")
    for i in range(40):
        r = run_private(p, 0, make_budget(4.0, 1e-6, SPLIT), make_rng(i), "analytic", 0.95, fallback=True).release
        assert r.status == "fallback" and r.fallback_interval is None and r.population is None
        assert r.interval_target == "ridge"


def test_the_ridge_quantile_is_the_level_quantile_of_its_statistic():
    """t_d against the exact law at d = 2, where (||Z|| + |Z_1|)/2 > t is one integral over |Z_1| of a chi^2_1
    tail, computed here independently (scipy's quad over the normal density)."""
    t = ridge_quantile(2, 0.9)
    miss = 2 * stats.norm.sf(t) + 2 * stats.norm.expect(
        lambda z: stats.chi2.sf(4 * t * (t - z), 1), lb=0, ub=t)
    assert miss == pytest.approx(0.1, abs=1e-8)
