"""Brute force on small samples where (C1) holds: replace one record by every extreme record.

Checks, for each neighbour P'_n, Corollary 5.2 (lambda_min(P'_n) >= R(lambda_min(P_n))),
Corollary 3.1 (||theta(P'_n) - theta(P_n)|| <= t(lambda_min + lam_reg)) and Corollary 3.3
(|u^T (theta(P'_n) - theta(P_n))| <= omega(u | P_n)) for every coordinate and a random direction.
"""

import itertools

import numpy as np
import pytest

from core.estimator.fit import fit
from core.estimator.geometry import make_geometry
from core.estimator.losses import LOSSES
from core.mechanisms.recursion import c1_holds, recursion_down, t_bound
from core.mechanisms.release import omega, unit_direction


def sample(loss, domain, n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    if domain == "ball":
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    theta = np.linspace(0.5, -0.5, d)
    if loss == "robust":
        y = X @ theta + 0.3 * rng.laplace(size=n)
    else:
        y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-X @ theta)), 1.0, -1.0)
    return X, y


def extreme_records(loss, domain, d):
    """Cube corners (or the ball's axis and diagonal directions) with extreme responses."""
    corners = [np.array(c, dtype=float) for c in itertools.product([-1.0, 1.0], repeat=d)]
    if domain == "ball":
        axes = [s * e for e in np.eye(d) for s in (-1.0, 1.0)]
        corners = axes + [c / np.linalg.norm(c) for c in corners]
    responses = [-40.0, -3.0, 0.0, 3.0, 40.0] if loss == "robust" else [-1.0, 1.0]
    return [(x, yv) for x in corners for yv in responses]


CASES = [
    ("robust", "cube", 600, 2, 0.0),
    ("robust", "cube", 1500, 3, 0.0),
    ("robust", "ball", 600, 2, 0.0),
    ("robust", "cube", 600, 2, 0.01),
    ("logistic", "cube", 2500, 2, 0.0),
    ("logistic", "ball", 2500, 2, 0.0),
]


@pytest.mark.parametrize("loss,domain,n,d,lam_reg", CASES)
def test_neighbours_obey_the_stability_bounds(loss, domain, n, d, lam_reg):
    h, g = LOSSES[loss], make_geometry(LOSSES[loss], domain, d)
    X, y = sample(loss, domain, n, d, seed=n + d)
    base = fit(X, y, h, lam_reg)
    lam = base.lambda_min
    assert c1_holds(lam, g, n, lam_reg), "the case must satisfy (C1) to test anything"
    R = recursion_down(lam, g, n, lam_reg)
    t = t_bound(lam + lam_reg, g, n)
    rng = np.random.default_rng(0)
    directions = [unit_direction(j, d) for j in range(d)] + [unit_direction(rng.standard_normal(d), d)]
    omegas = [omega(base, g, u) for u in directions]
    # Replace the record with the largest |residual| and a random one: the most and least influential.
    worst = int(np.argmax(np.abs(h.d1(X @ base.theta, y))))
    used = 0.0  # the largest share of omega a neighbour uses: the bound must be tight, not vacuous
    for i in {worst, int(rng.integers(n))}:
        for x_new, y_new in extreme_records(loss, domain, d):
            Xp, yp = X.copy(), y.copy()
            Xp[i], yp[i] = x_new, y_new
            other = fit(Xp, yp, h, lam_reg)
            diff = other.theta - base.theta
            assert other.lambda_min >= R
            assert np.linalg.norm(diff) <= t
            for u, om in zip(directions, omegas, strict=True):
                assert abs(u @ diff) <= om
                used = max(used, abs(u @ diff) / om)
    assert used > 0.4
