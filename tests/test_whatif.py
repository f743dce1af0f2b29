"""Teaching what-ifs: noise-free certificates, the smallest epsilon and n, the pass region."""

import numpy as np

from core.recursion import down_recursion, up_recursion
from core.whatif import noise_free_test, pass_region, smallest_epsilon, smallest_n

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


def test_trajectories_are_the_iterates(robust_problem):
    f, g = robust_problem.fit, robust_problem.geometry
    down = down_recursion(g, f.n, 0.0)
    path = down.trajectory(f.lambda_min)
    assert len(path) == down.count(f.lambda_min) + 1 and path[-1] == 0.0 and path[0] == f.lambda_min
    assert all(a > b for a, b in zip(path, path[1:], strict=False))
    up = up_recursion(0.9 * f.lambda_min, g, f.n, 0.0)
    rise = up.trajectory(f.lambda_max)
    assert len(rise) == up.count(f.lambda_max) + 1 and rise[-1] == g.G1
