"""Teaching what-ifs: noise-free certificates, the smallest epsilon and n, the pass region."""

import math

import numpy as np

from core.mechanisms.recursion import down_recursion, up_recursion
from core.teaching.aids import WHATIF_EPS
from core.teaching.whatif import down_count, noise_free_test, pass_region, smallest_epsilon, smallest_n

SPLIT = (1.0, 1.0, 1.0)


def test_smallest_epsilon_is_the_boundary(robust_problem):
    e = smallest_epsilon(robust_problem, 1e-6, SPLIT)
    assert e is not None
    assert noise_free_test(robust_problem, e, 1e-6, SPLIT).passed
    assert not noise_free_test(robust_problem, e / 1.02, 1e-6, SPLIT).passed


def test_smallest_n_is_the_boundary(robust_problem):
    n = smallest_n(robust_problem, 1.0, 1e-6, SPLIT)
    assert n is not None and n > robust_problem.n  # eps = 1 does not pass at n = 20000
    assert noise_free_test(robust_problem, 1.0, 1e-6, SPLIT, n).passed
    assert not noise_free_test(robust_problem, 1.0, 1e-6, SPLIT, int(n / 1.03)).passed


def test_pass_region_grows_with_n_and_epsilon(robust_problem):
    ns = np.geomspace(2_000, 2_000_000, 8).astype(int)
    eps = np.geomspace(0.2, 20, 8)
    region = pass_region(robust_problem, 1e-6, SPLIT, ns, eps)
    assert region.any() and not region.all()
    assert (np.diff(region.astype(int), axis=0) >= 0).all()  # passing at n stays passing at larger n
    assert (np.diff(region.astype(int), axis=1) >= 0).all()  # and at larger epsilon


def test_pass_region_with_the_continuous_count_is_the_exact_one(robust_problem):
    """The page's region (the continuous count above EXACT_STEPS steps) against exact iteration, on 12 n from
    250 to 10^8 (counts up to 10^6) by the page's 10 ε: not one cell differs, and N(λmin) is within its stated
    error 2 + TV(ln s) of the exact count at every n, within 1 step as measured (0.61 at worst)."""
    ns = np.unique(np.geomspace(250, 10**8, 12).round().astype(np.int64))
    approx = pass_region(robust_problem, 1e-6, SPLIT, ns, WHATIF_EPS, exact_steps=0)
    exact = pass_region(robust_problem, 1e-6, SPLIT, ns, WHATIF_EPS, exact_steps=10**9)
    np.testing.assert_array_equal(approx, exact)
    assert approx.any() and not approx.all()
    lam = robust_problem.fit.lambda_min
    compared = 0
    for n in ns:
        dc = down_count(robust_problem, int(n), exact_steps=0)
        if lam > dc.anchor[0]:  # below the anchor the count is exact
            err = abs(dc.approx_count(lam) - dc.rec.count(lam))
            assert err <= min(1.0, dc.error_bound(lam)), (n, err)
            compared += 1
    assert compared >= 6


def test_trajectories_are_the_iterates(robust_problem):
    f, g = robust_problem.fit, robust_problem.geometry
    down = down_recursion(g, f.n, 0.0)
    path = down.trajectory(f.lambda_min)
    assert len(path) == down.count(f.lambda_min) + 1 and path[-1] == 0.0 and path[0] == f.lambda_min
    assert all(a > b for a, b in zip(path, path[1:], strict=False))
    up = up_recursion(0.9 * f.lambda_min, g, f.n, 0.0)
    rise = up.trajectory(f.lambda_max)
    assert len(rise) == up.count(f.lambda_max) + 1 and rise[-1] == g.G1


def test_a_tiny_epsilon_sums_blocks_of_m_a_to_a_lower_bound(monkeypatch):
    """eps_a = 0.02/20 spreads m_a over some 31,000 values: in MAX_TERMS blocks the sum is a lower bound within
    ln(0.5/tail)/MAX_TERMS of the sum over every m_a, and the blocks were used (the two differ)."""
    from core.teaching import whatif
    from core.teaching.planner import Assumptions

    a = Assumptions(n=300_000, d=2, lambda_min=0.3, lambda_max=0.36, epsilon=0.02, delta=1e-6)
    c = a.curvature()
    blocked = whatif.pass_probability(c, a.epsilon, a.delta, a.weights)
    monkeypatch.setattr(whatif, "MAX_TERMS", 10**9)
    exact = whatif.pass_probability(c, a.epsilon, a.delta, a.weights)
    assert 0 < blocked < exact <= blocked + math.log(0.5 / 1e-7) / 10_000
