"""Teaching what-ifs, NOT private: would the test (14) pass for these data at another epsilon or n?

The certificates are replaced by their noise-free values (N_hat = N, so m = max(0, floor(N - k))),
computed from the fit's true lambda_min and lambda_max; when n changes these eigenvalues are held
fixed, as population quantities would be. Nothing here may be shown in publish mode.

Large n. The count N of the decreasing recursion (10) grows linearly with n (each step lowers lambda by
s(lam) = lam (e^(r t(lam + lam_reg)) - 1) + G1/n, about (2 r G0 + G1)/n), so iterating it is O(n). Above
EXACT_STEPS steps the count and the inverse are taken from the continuous count

    N~(lam) = N(lam_b) + int_{lam_b}^{lam} dx / s(x),    lam_b = c1 + B (2 r G0 + G1)/n,  B = ANCHOR_STEPS,

with N(lam_b) (about B steps, whatever n) iterated exactly and the integral computed by 16-point
Gauss-Legendre quadrature on panels equal in log(x) (accurate to ~1e-12 relative). Error: step k covers
int_{x_(k+1)}^{x_k} dx/s = s(x_k) mean(1/s) over the step, within a factor e^(+-osc ln s) of 1, and the
first iterate at or below lam_b has count N(lam_b) - 1 or N(lam_b), so |N - N~| <= 2 + TV(ln s on
[lam_b, lam]) (DownCount.error_bound computes it): about 2 steps with lam_reg = 0, where s is monotone and
nearly constant above lam_b, up to about 4 with lam_reg > 0 at n = 10^9, against counts of EXACT_STEPS or
more. Measured (tests/test_diagnosis.py, n from 10^5 to 10^9, lam_reg 0 and 1e-3): within 1.3 steps, always
inside the bound; and the pass region, on 12 n up to 10^8 by 10 epsilon, is cell for cell the exact one, with
the counts within 1 step (tests/test_whatif.py). The inverse of the certificates is N~^{-1}(m), solved by
Newton's method on the same integral, so N~(lam) - m = k + frac as in the exact computation. The increasing
recursion (12) has a closed form and needs nothing of this.

Passing with probability. N_hat = N is the median of the noisy count, so the noise-free test is (about)
the 50/50 point of the noisy one. pass_probability sums
over the integer m_a of stage 1 (P(m_a >= i) = P(Lap(1/eps_a) >= i + k_a - N_a), the Laplace tail in closed
form), and for each m_a over the m_b of stage 2 that pass (the test is monotone in m_b, so they form a tail
{m_b >= j}, found by bisection): no simulation. With counts in the thousands the noise (a few steps) moves
lambda_hat by a fraction of a percent, so the 95% point often lies within the searches' 2% of the 50/50 one.

What the computations read. The counts, the noise-free test and pass_probability read of a problem only its
Curvature: the geometry, n, lambda_min, lambda_max and lambda_reg. They accept a Problem (its fit's values, NOT
private) or a Curvature built from assumptions (core.teaching.planner, which reads no data).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from scipy.optimize import brentq

from core.data.synthetic import MAX_ROWS
from core.errors import InputError
from core.estimator.geometry import Geometry
from core.estimator.problem import Problem
from core.estimator.rounding import count_slack
from core.mechanisms.certificates import steps_to_invert
from core.mechanisms.recursion import (
    AffineIncreasingRecursion,
    DecreasingRecursion,
    c1_threshold,
    down_recursion,
    up_recursion,
)
from core.mechanisms.stability import StabilityTest, stability_test
from core.privacy.accounting import Budget, StageBudget, make_budget

N_MAX = 10**12  # the largest n a what-if explores
EXACT_STEPS = 20_000  # counts and inverses up to this many steps are iterated exactly
ANCHOR_STEPS = 1_000  # B: the exact boundary point below which the continuous count is never used
MAX_TERMS = 10_000  # pass_probability's terms at most: beyond, blocks of m_a (a lower bound within about 1.5e-3)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
_PANELS_PER_E = 4  # quadrature panels per factor e of lam / lam_B


@dataclass(frozen=True)
class Curvature:
    """What the what-ifs read of a problem: the geometry, n, the unregularised lambda_min and lambda_max, lambda_reg.

    From a fit (curvature(problem)) NOT private; from assumptions (core.teaching.planner) it holds no data.
    """

    geometry: Geometry
    n: int
    lambda_min: float
    lambda_max: float
    lam_reg: float


def curvature(source: Problem | Curvature, n: int | None = None) -> Curvature:
    """The Curvature of a problem's fit (or a Curvature itself), at sample size n when given."""
    if isinstance(source, Curvature):
        c = source
    else:
        f = source.fit
        c = Curvature(source.geometry, f.n, f.lambda_min, f.lambda_max, f.lam_reg)
    return c if n is None else replace(c, n=int(n))


@dataclass(frozen=True)
class DownCount:
    """The count N and the inverse of the recursion (10) at sample size n: exact, or continuous above B steps.

    Not private: it is evaluated at the fit's true lambda_min.
    """

    rec: DecreasingRecursion
    g: Geometry
    n: int
    lam_reg: float
    exact_steps: int = EXACT_STEPS

    def step_size(self, x: np.ndarray) -> np.ndarray:
        """s(x) = x - R(x) = x (e^(r t(x + lam_reg)) - 1) + G1/n + shift, where (C1) holds and R(x) > 0 (shift: the
        rounding slack of the widened recursion, core.mechanisms.recursion.down_recursion)."""
        g, n = self.g, self.n
        ar = g.alpha * g.r
        arg = 1.0 - 8.0 * ar * g.G0 / ((x + self.lam_reg) * n)
        t = (1.0 - arg) / (1.0 + np.sqrt(arg)) / (2.0 * ar)
        return x * np.expm1(g.r * t) + g.G1 / n + self.shift

    @cached_property
    def shift(self) -> float:
        return count_slack(self.n, self.g.d, self.g.G1, self.g.r, self.g.G0)[0] if widened(self.n) else 0.0

    @cached_property
    def anchor(self) -> tuple[float, int]:
        """(lam_b, N(lam_b)): lam_b = c1 + B (2 r G0 + G1)/n, whose exact count is about B whatever n."""
        g = self.g
        lam_b = c1_threshold(g, self.n) + ANCHOR_STEPS * (2.0 * g.r * g.G0 + g.G1) / self.n
        return lam_b, self.rec.count(lam_b)

    def integral(self, lo: float, hi: float) -> float:
        """int_lo^hi dx / s(x), lo > 0, by 16-point Gauss-Legendre on panels equal in log(x)."""
        if hi <= lo:
            return 0.0
        span = math.log(hi / lo)
        panels = max(1, math.ceil(span * _PANELS_PER_E))
        edges = np.linspace(math.log(lo), math.log(hi), panels + 1)
        half = 0.5 * (edges[1:] - edges[:-1])
        mid = 0.5 * (edges[1:] + edges[:-1])
        u = (mid[:, None] + half[:, None] * _GL_NODES[None, :]).ravel()
        x = np.exp(u)
        w = (half[:, None] * _GL_WEIGHTS[None, :]).ravel()
        return float(np.sum(w * x / self.step_size(x)))

    def error_bound(self, lam: float) -> float:
        """2 + TV(ln s on [lam_b, lam]) (on a fine log grid): the bound on |N(lam) - N~(lam)| of the module."""
        lam_b = self.anchor[0]
        if lam <= lam_b:
            return 0.0
        x = np.geomspace(lam_b, lam, 4096)
        return 2.0 + float(np.abs(np.diff(np.log(self.step_size(x)))).sum())

    def approx_count(self, lam: float) -> float:
        """N~(lam) = N(lam_b) + int_{lam_b}^{lam} dx/s(x) (for lam >= lam_b)."""
        lam_b, count_b = self.anchor
        return count_b + self.integral(lam_b, lam)

    def count(self, lam: float) -> float:
        """N(lam): exact when at most exact_steps, else N~(lam) (within 2 + TV(ln s) steps; see the module)."""
        lam_b, count_b = self.anchor
        if lam <= lam_b:
            return self.rec.count(lam)
        approx = count_b + self.integral(lam_b, lam)
        return self.rec.count(lam) if approx <= self.exact_steps else approx

    def inverse(self, m: int) -> float:
        """(R^m)^{-1}(0): exact when m <= exact_steps, else the root of N~(lam) = m."""
        lam_b, count_b = self.anchor
        if m <= self.exact_steps or m <= count_b:
            return self.rec.inverse(m)
        target = m - count_b
        # A millionth of a step, or the quadrature's own relative error on long counts (still far below a step).
        tolerance = 1e-6 + 1e-11 * target
        # Newton on I(x) = int_{lam_b}^x dx/s = target (I' = 1/s, nearly constant), each step adding the integral
        # between the last two iterates to I: two or three short integrals.
        x = lam_b + target * float(self.step_size(np.array([lam_b]))[0])
        total = self.integral(lam_b, x)
        for _ in range(30):
            miss = total - target
            if abs(miss) <= tolerance:
                return x
            new = x - miss * float(self.step_size(np.array([x]))[0])
            if not new > lam_b:
                break
            total += self.integral(x, new) if new > x else -self.integral(new, x)
            x = new
        hi = 2.0 * lam_b
        while self.integral(lam_b, hi) < target:
            hi *= 2.0
        return brentq(lambda x: self.integral(lam_b, x) - target, lam_b, hi, xtol=lam_b * 1e-15, rtol=1e-14)


def down_count(problem: Problem | Curvature, n: int, exact_steps: int = EXACT_STEPS) -> DownCount:
    c = curvature(problem)
    return DownCount(down_recursion(c.geometry, n, c.lam_reg, widened(n)), c.geometry, n, c.lam_reg, exact_steps)


def widened(n: int) -> bool:
    """Whether the counts at n allow for rounding as a run's do (core.estimator.rounding): up to the largest sample a
    run takes (MAX_ROWS); beyond, the hypothetical sample is counted in exact arithmetic, as the paper's (10)."""
    return n <= MAX_ROWS


def noise_free_test(problem: Problem | Curvature, epsilon: float, delta: float, split: tuple[float, float, float],
                    n: int | None = None, accounting: str = "basic",
                    exact_steps: int = EXACT_STEPS) -> StabilityTest:
    """The test (14) with noise-free certificates at total (epsilon, delta) and sample size n."""
    c = curvature(problem, n)
    down = down_count(c, c.n, exact_steps)
    return certified_test(c, down, down.count(c.lambda_min), make_budget(epsilon, delta, split, accounting))


def noise_free_bound(rec: DownCount | AffineIncreasingRecursion, count: float, stage: StageBudget) -> float:
    """A certificate (Algorithm 6) with N_hat = N at its stage's (epsilon, delta): the recursion's inverse of
    m = max(0, floor(N - k))."""
    return rec.inverse(steps_to_invert(count, stage.epsilon, stage.delta)[1])


def certified_test(problem: Problem | Curvature, down: DownCount, count_min: float, b: Budget) -> StabilityTest:
    """The test (14) at budget b from noise-free certificates, given N(lambda_min) of the recursion (10) at down.n.

    The count does not depend on the budget, so a sweep over epsilon at one n computes it once.
    """
    c, n = curvature(problem), down.n
    g = c.geometry
    lam_hat_min = noise_free_bound(down, count_min, b.lambda_min)
    lam_hat_max = None
    if lam_hat_min > 0:
        up = up_recursion(lam_hat_min, g, n, c.lam_reg, widened(n))
        lam_hat_max = noise_free_bound(up, up.count(c.lambda_max), b.lambda_max)
    return stability_test(lam_hat_min, lam_hat_max, g, n, c.lam_reg, b.release.epsilon, b.release.delta)


def _laplace_sf(x: float, epsilon: float) -> float:
    """P(Lap(1/epsilon) >= x)."""
    return 0.5 * math.exp(-epsilon * x) if x >= 0 else 1.0 - 0.5 * math.exp(epsilon * x)


def _at_least(i: int, N: float, k: float, epsilon: float) -> float:
    """P(m >= i) for m = max(0, floor(N + Lap(1/epsilon) - k))."""
    return 1.0 if i <= 0 else _laplace_sf(i + k - N, epsilon)


def pass_probability(problem: Problem | Curvature, epsilon: float, delta: float, split: tuple[float, float, float],
                     n: int | None = None, accounting: str = "basic", tail: float = 1e-7,
                     exact_steps: int = EXACT_STEPS) -> float:
    """P(the test (14) passes) under the certificates' Laplace noise, at total (epsilon, delta) and n.

    Exact up to the neglected Laplace tails (at most `tail` on each side) and the count's approximation above
    exact_steps: sum over m_a of P(m_a) P(m_b >= j*(m_a)), j* the least passing m_b (the test is monotone in
    lam_hat_max, so in m_b, and in m_a). When the Laplace noise spreads m_a over more than MAX_TERMS values (a tiny
    eps_a), the m_a are taken in MAX_TERMS blocks, each at its lowest m_a: the sum is then a lower bound, below the
    exact one by at most the largest block's probability (the summand rises with m_a from 0 to at most 1), about
    ln(0.5/tail)/MAX_TERMS; a lower bound is the safe side for a plan.
    """
    c = curvature(problem, n)
    g, n = c.geometry, c.n
    b = make_budget(epsilon, delta, split, accounting)
    ea, eb = b.lambda_min, b.lambda_max
    ka = steps_to_invert(0.0, ea.epsilon, ea.delta)[0]
    kb = steps_to_invert(0.0, eb.epsilon, eb.delta)[0]
    spread = math.ceil(math.log(0.5 / tail) / ea.epsilon) + 1
    # An exact inverse costs O(m) (its check iterates R^m), once per m_a: keep the total near 10^6 steps.
    down = down_count(c, n, min(exact_steps, max(ANCHOR_STEPS, 1_000_000 // (2 * spread + 1))))
    Na = down.count(c.lambda_min)
    centre = math.floor(Na - ka)
    top, bottom = max(0, centre + spread), max(0, centre - spread)

    def passes(lam_min: float, lam_max: float) -> bool:
        return stability_test(lam_min, lam_max, g, n, c.lam_reg, b.release.epsilon, b.release.delta).passed

    total, least = 0.0, -1
    block = max(1, math.ceil((top - bottom + 1) / MAX_TERMS))
    for high in range(top, bottom - 1, -block):  # from the best m_a down: once nothing passes, nothing below does
        ma = max(bottom, high - block + 1)  # the block's lowest m_a, its least likely to pass
        p_ma = (1.0 if ma == bottom else _at_least(ma, Na, ka, ea.epsilon)) - (
            0.0 if high == top else _at_least(high + 1, Na, ka, ea.epsilon))
        lam_min = down.inverse(ma)
        if not lam_min > 0:
            break
        up = up_recursion(lam_min, g, n, c.lam_reg, widened(n))
        Nb = up.count(c.lambda_max)
        mb_hi = max(0, math.floor(Nb - kb) + math.ceil(math.log(0.5 / tail) / eb.epsilon) + 1)
        if not passes(lam_min, up.inverse(mb_hi)):
            break
        def ok(mb: int, lam_min: float = lam_min, up: AffineIncreasingRecursion = up) -> bool:
            return mb >= 0 and passes(lam_min, up.inverse(mb))

        # The least passing m_b: usually the previous m_a's (two tests), else by bisection (monotone in m_b).
        if not (0 <= least <= mb_hi and ok(least) and not ok(least - 1)):
            lo, least = -1, mb_hi  # fails at lo, passes at least
            while least - lo > 1:
                mid = (lo + least) // 2
                lo, least = (lo, mid) if ok(mid) else (mid, least)
        total += p_ma * _at_least(least, Nb, kb, eb.epsilon)
    return min(1.0, total)


def _refine(passes, lo: float, hi: float, ratio: float, integer: bool) -> float:
    """Bisect in log between a failing lo and a passing hi until hi/lo <= ratio; returns hi."""
    while hi / lo > ratio:
        mid = math.sqrt(lo * hi)
        mid = int(mid) if integer else mid
        if not lo < mid < hi:  # adjacent integers: hi is the answer
            break
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    return hi


def smallest_epsilon(problem: Problem, delta: float, split: tuple[float, float, float], n: int | None = None,
                     eps_max: float = 100.0, level: float | None = None) -> float | None:
    """The smallest total epsilon (to 1%) at which the test passes; None if not by eps_max.

    level None: the noise-free test (the 50/50 point); a level such as 0.95: pass_probability >= level,
    searched upwards from the noise-free point (each probability costs a few hundred tests).
    """
    def free(e: float) -> bool:
        return noise_free_test(problem, e, delta, split, n).passed

    if not free(eps_max):
        return None
    lo, hi = 1e-3, eps_max
    e50 = lo if free(lo) else _refine(free, lo, hi, 1.01, False)
    if level is None:
        return e50

    def likely(e: float) -> bool:
        return pass_probability(problem, e, delta, split, n) >= level

    lo, hi = e50 / 1.01, e50
    while not likely(hi):
        if hi >= eps_max:
            return None
        lo, hi = hi, min(1.25 * hi, eps_max)
    return _refine(likely, lo, hi, 1.01, False)


def smallest_n(problem: Problem, epsilon: float, delta: float, split: tuple[float, float, float],
               level: float | None = None, n_max: int = N_MAX, exact_steps: int = EXACT_STEPS) -> int | None:
    """The smallest n (to 2%) at which the test passes at this epsilon; None beyond n_max (at most N_MAX).

    level None: the noise-free test (the 50/50 point); a level such as 0.95: pass_probability >= level,
    searched upwards from the noise-free point. Steps by 8 from the sample's own n, then bisection; above
    exact_steps recursion steps the count is the continuous one of the module docstring, so each test costs
    O(exact_steps) at most.
    """
    n_max = min(int(n_max), N_MAX)

    def free(m: int) -> bool:
        return noise_free_test(problem, epsilon, delta, split, m, exact_steps=exact_steps).passed

    lo, hi = problem.d + 1, min(problem.n, n_max)
    while not free(hi):
        if hi >= n_max:
            return None
        lo, hi = hi, min(8 * hi, n_max)
    n50 = lo if free(lo) else int(_refine(free, lo, hi, 1.02, True))
    if level is None:
        return n50

    def likely(m: int) -> bool:
        return pass_probability(problem, epsilon, delta, split, m, exact_steps=exact_steps) >= level

    lo, hi = max(problem.d + 1, int(n50 / 1.02)), n50
    while not likely(hi):
        if hi >= n_max:
            return None
        lo, hi = hi, min(int(1.25 * hi) + 1, n_max)
    return int(_refine(likely, lo, hi, 1.02, True))


def pass_region(problem: Problem, delta: float, split: tuple[float, float, float], n_grid: np.ndarray,
                eps_grid: np.ndarray, exact_steps: int = EXACT_STEPS) -> np.ndarray:
    """passes[i, j]: the noise-free test at n = n_grid[i] and total epsilon = eps_grid[j] (n up to N_MAX).

    One count N(lambda_min) per n, shared by every epsilon; above exact_steps steps the counts and inverses are
    the continuous ones of the module docstring (tests/test_whatif.py checks the region against the exact one).
    """
    if np.any(np.asarray(n_grid) > N_MAX):
        raise InputError(f"what-ifs explore n up to {N_MAX:.0e}")
    budgets = [make_budget(float(e), delta, split) for e in eps_grid]
    rows = []
    for m in n_grid:
        down = down_count(problem, int(m), exact_steps)
        count = down.count(problem.fit.lambda_min)
        rows.append([certified_test(problem, down, count, b).passed for b in budgets])
    return np.array(rows, dtype=bool)
