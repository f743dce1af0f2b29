"""Teaching what-ifs, NOT private: would the test (14) pass for these data at another epsilon or n?

The certificates are replaced by their noise-free values (N_hat = N, so m = max(0, floor(N - k))),
computed from the fit's true lambda_min and lambda_max; when n changes these eigenvalues are held
fixed, as population quantities would be. Nothing here may be shown in publish mode.
"""

from __future__ import annotations

import math

import numpy as np

from core.accounting import make_budget
from core.certificates import steps_to_invert
from core.errors import InputError
from core.pipeline import Problem
from core.recursion import down_recursion, up_recursion
from core.stability import StabilityTest, stability_test

N_MAX = 10**8  # the largest n a what-if explores: the recursion's cost grows linearly with n


def noise_free_test(problem: Problem, epsilon: float, delta: float, split: tuple[float, float, float],
                    n: int | None = None, accounting: str = "basic") -> StabilityTest:
    """The test (14) with noise-free certificates at total (epsilon, delta) and sample size n."""
    f, g = problem.fit, problem.geometry
    n = f.n if n is None else int(n)
    b = make_budget(epsilon, delta, split, accounting)
    a_stage, b_stage = b.lambda_min, b.lambda_max
    down = down_recursion(g, n, f.lam_reg)
    lam_hat_min = down.inverse(steps_to_invert(down.count(f.lambda_min), a_stage.epsilon, a_stage.delta)[1])
    lam_hat_max = None
    if lam_hat_min > 0:
        up = up_recursion(lam_hat_min, g, n, f.lam_reg)
        lam_hat_max = up.inverse(steps_to_invert(up.count(f.lambda_max), b_stage.epsilon, b_stage.delta)[1])
    return stability_test(lam_hat_min, lam_hat_max, g, n, f.lam_reg, b.release.epsilon, b.release.delta)


def smallest_epsilon(problem: Problem, delta: float, split: tuple[float, float, float], n: int | None = None,
                     eps_max: float = 100.0) -> float | None:
    """The smallest total epsilon (to 1%) at which the noise-free test passes; None if not by eps_max."""
    if not noise_free_test(problem, eps_max, delta, split, n).passed:
        return None
    lo, hi = 1e-3, eps_max
    if noise_free_test(problem, lo, delta, split, n).passed:
        return lo
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if noise_free_test(problem, mid, delta, split, n).passed else (mid, hi)
    return hi


def smallest_n(problem: Problem, epsilon: float, delta: float, split: tuple[float, float, float]) -> int | None:
    """The smallest n (to 2%) at which the noise-free test passes at this epsilon; None beyond N_MAX.

    Doubling from the sample's own n keeps the cost near that of the answer (each test is O(n)).
    """
    def passes(m: int) -> bool:
        return noise_free_test(problem, epsilon, delta, split, m).passed

    lo, hi = problem.d + 1, problem.n
    while not passes(hi):
        if hi >= N_MAX:
            return None
        lo, hi = hi, min(2 * hi, N_MAX)
    if passes(lo):
        return lo
    while hi / lo > 1.02:
        mid = int(math.sqrt(lo * hi))
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    return hi


def pass_region(problem: Problem, delta: float, split: tuple[float, float, float], n_grid: np.ndarray,
                eps_grid: np.ndarray) -> np.ndarray:
    """passes[i, j]: the noise-free test at n = n_grid[i] and total epsilon = eps_grid[j]."""
    if np.any(np.asarray(n_grid) > N_MAX):
        raise InputError(f"what-ifs explore n up to {N_MAX:.0e}")
    return np.array([[noise_free_test(problem, float(e), delta, split, int(m)).passed for e in eps_grid]
                     for m in n_grid])
