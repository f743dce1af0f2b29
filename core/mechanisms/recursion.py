"""Recursive stability bounds and their inversion (sections 3.1, 3.2.1 and 6).

- t_bound: the parameter change bound (9).
- c1_holds: condition (C1).
- recursion_down: the decreasing recursion (10) on lambda_min.
- recursion_up: the increasing recursion (12) on lambda_max, affine below its cap G1.
- recursion_smooth: the recursion of Corollary 6.2 / Algorithm 7 for generic smooth losses.
- DecreasingRecursion / AffineIncreasingRecursion: the counts N and inverses that Algorithms 2,
  4 and 6 need, computed exactly (to floating point) and always rounded to the safe side.

Why the count is private: R is nondecreasing and lambda(P'_n) >= R(lambda(P_n)) for every pair of
neighbours, in both directions (Corollary 5.2), so N(lambda') >= N(R(lambda)) = N(lambda) - 1 and
vice versa: N has sensitivity 1. The acceleration condition (22) of Lemma 6.1 holds for (10) with
lam_reg = 0 and for the smooth recursion (Lemma 6.2), but fails slightly for (10) with lam_reg > 0
(the step lam (e^(r t(lam + lam_reg)) - 1) then grows with lam). Nothing private rests on (22);
the inverse uses it only to save evaluations, and only where it holds.

The loops over steps (counts, powers, trajectories, the boundary chain) run compiled by core.estimator.kernels
when numba is importable and PSP_NO_JIT=1 is not set, to bit-identical results; the Python loops
below are the reference and the fallback.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from core.estimator.compiled import kernels
from core.estimator.geometry import Geometry, phi_qsc
from core.estimator.rounding import count_slack, up_slack

MAX_STEPS = 50_000_000  # a recursion needing more steps than this means n is beyond reach here
_TOL_ULPS = 8.0  # bracket width at which an inverse step stops: R is evaluated to a few ulp
_TOO_MANY = "the recursion needs more than 5e7 steps; the sample is too large"
_NO_CONVERGENCE = "inverting the recursion did not converge"
Kernel = tuple[int, tuple[float, float, float, float, float, float]]  # (kind, params) of core.estimator.kernels
_DOWN, _SMOOTH = 0, 1  # core.estimator.kernels.DOWN and SMOOTH




def t_bound(lam: float, g: Geometry, n: int) -> float:
    """Parameter change bound (9): t(lam) = (1 - sqrt(1 - 8 alpha r G0/(lam n))) / (2 alpha r).

    +inf when lam <= 0 or the square root's argument is negative. The constant is 8, as in (9);
    section 6.2.2 prints 4, the unsafe reading (docs/method.md §12).
    """
    if lam <= 0:
        return math.inf
    ar = g.alpha * g.r
    arg = 1.0 - 8.0 * ar * g.G0 / (lam * n)
    if arg < 0:
        return math.inf
    # 1 - sqrt(arg) = (1 - arg)/(1 + sqrt(arg)) avoids cancellation when lam n is large.
    return (1.0 - arg) / (1.0 + math.sqrt(arg)) / (2.0 * ar)


def c1_threshold(g: Geometry, n: int) -> float:
    """Right side of (C1): 4 G0 alpha r / (rho (1-rho) n) + G1 / (rho n)."""
    return 4.0 * g.G0 * g.alpha * g.r / (g.rho * (1.0 - g.rho) * n) + g.G1 / (g.rho * n)


def c1_holds(lam: float, g: Geometry, n: int, lam_reg: float) -> bool:
    """Condition (C1): lam + lam_reg/rho >= 4 G0 alpha r/(rho(1-rho) n) + G1/(rho n)."""
    return lam + lam_reg / g.rho >= c1_threshold(g, n)


def recursion_down(lam: float, g: Geometry, n: int, lam_reg: float) -> float:
    """Decreasing recursion (10) on the unregularised lambda_min.

    R(lam) = max(0, lam [1 - phi(r t(lam + lam_reg))]_+ - G1/n) when lam > 0 and (C1) holds at lam,
    else 0 (Corollary 5.2: lambda_min(P'_n) >= R(lambda_min(P_n)) for neighbours).
    """
    return down_recursion(g, n, lam_reg, widened=False).step(lam)


def recursion_up(lam: float, lam_hat_min: float, g: Geometry, n: int, lam_reg: float) -> float:
    """Increasing recursion (12): min(lam (1 + phi(r t(lam_hat_min + lam_reg))) + G1/n, G1)."""
    return up_recursion(lam_hat_min, g, n, lam_reg, widened=False).step(lam)


def recursion_smooth(lam: float, g: Geometry, n: int, lam_reg: float) -> float:
    """Corollary 6.2 / Algorithm 7: max(lam/2 (1 + sqrt(1 - 8 G0 G2/(n lam^2))) - G1/n, lam_reg).

    The statistic is lambda_min + lam_reg; a negative square-root argument reads as sqrt = -inf.
    """
    if n * lam * lam <= 0:
        return lam_reg
    arg = 1.0 - 8.0 * g.G0 * g.G2 / (n * lam * lam)
    if arg < 0:
        return lam_reg
    return max(0.5 * lam * (1.0 + math.sqrt(arg)) - g.G1 / n, lam_reg)


@dataclass(frozen=True)
class DecreasingRecursion:
    """A nondecreasing recursion R <= identity on C = [floor, inf) (section 6.1).

    `accelerating` declares condition (22), which lets the inverse bound the sup from one side.
    `kernel` names the same step in core.estimator.kernels; with it the loops run compiled, to identical results.

    `count` and `inverse` are the two computations of Algorithm 6. The boundary points
    mu_j = sup{lam : R^(j+1)(lam) <= floor} depend only on public constants (n, d, domain,
    lam_reg), never on data or noise, so they are memoised on the instance. Instances are shared
    between the app's concurrent sessions (`down_recursion` is memoised per process), so a lock
    serialises the memo: every caller gets exactly the value a sequential run would give.
    """

    step: Callable[[float], float]
    floor: float
    scale: float  # a positive length of the order of one step, to start bracketing
    accelerating: bool
    origin: float | None = None  # inf C, what no inversion gives (inverse(0)); the floor when None
    kernel: Kernel | None = field(default=None, compare=False, repr=False)
    _chain: array = field(default_factory=lambda: array("d"), compare=False, repr=False)  # doubles, unboxed
    _verified: dict[int, float] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    @property
    def _jit(self) -> Kernel | None:
        """The compiled step, when there is one and the kernels are loaded (the same bits either way)."""
        return self.kernel if kernels() is not None else None

    def power(self, lam: float, k: int) -> float:
        """R^k(lam), stopping early once the floor is reached (R(floor) = floor)."""
        if self._jit:
            return kernels().power(*self._jit, float(self.floor), float(lam), k)
        for _ in range(k):
            if lam <= self.floor:
                return lam
            lam = self.step(lam)
        return lam

    def trajectory(self, lam: float) -> list[float]:
        """lam, R(lam), ..., down to the first iterate at or below the floor (N + 1 values)."""
        if self._jit:
            return kernels().trajectory(*self._jit, float(self.floor), float(lam)).tolist()
        out = [lam]
        while len(out) == 1 or out[-1] > self.floor:
            out.append(self.step(out[-1]))
        return out

    def count(self, lam: float) -> int:
        """N = min{N >= 1 : R^N(lam) <= floor} (Algorithm 6 step i; Algorithm 2 step ii)."""
        if self._jit:
            k = kernels().count(*self._jit, float(self.floor), float(lam), MAX_STEPS)
            if k < 0:
                raise OverflowError(_TOO_MANY)
            return k
        step, floor = self.step, self.floor
        x, k = step(lam), 1
        while x > floor:
            x, k = step(x), k + 1
            if k > MAX_STEPS:
                raise OverflowError(_TOO_MANY)
        return k

    def inverse(self, m: int) -> float:
        """sup{lam >= floor : R^m(lam) <= floor}, the boundary point (R^m)^{-1}(inf C); origin if m = 0."""
        if m <= 0:
            return self.floor if self.origin is None else self.origin
        with self._lock:  # the chain and its verified entries are extended by one caller at a time
            done = self._verified.get(m)
            if done is not None:
                return done
            lam = self._extend_chain(m)[m - 1]
            # Rounding may leave R^m(lam) a hair above the floor; step down, the safe direction.
            while self.power(lam, m) > self.floor:
                lam = math.nextafter(lam, -math.inf)
            self._verified[m] = lam
            return lam

    def _extend_chain(self, m: int) -> array:
        """Boundary points mu_0 < mu_1 < ... with R(mu_j) <= mu_(j-1), up to index m - 1 (hold _lock)."""
        chain = self._chain
        if self._jit and len(chain) < m:
            return self._extend_chain_compiled(m)
        if not chain:
            chain.append(self._preimage(self.floor, self.floor + self.scale))
        while len(chain) < m:
            y = chain[-1]
            if len(chain) >= 3:
                # Steps vary smoothly (Lemma 6.2): extrapolating the last two predicts the next.
                gap = y - chain[-2]
                guess = 2.0 * gap - (chain[-2] - chain[-3])
            else:
                guess = y - (chain[-2] if len(chain) == 2 else self.floor)
            chain.append(self._preimage(y, y + max(guess, self.scale * 1e-9)))
            if len(chain) > MAX_STEPS:
                raise OverflowError(_TOO_MANY)
        return chain

    def _extend_chain_compiled(self, m: int) -> array:
        """_extend_chain by core.estimator.kernels.extend_chain, the same points (hold _lock)."""
        if m > MAX_STEPS:
            raise OverflowError(_TOO_MANY)
        chain = self._chain
        tail = np.array(chain[-3:], dtype=np.float64)
        floor, scale, accelerating = float(self.floor), float(self.scale), self.accelerating
        new, converged = kernels().extend_chain(*self._jit, floor, scale, accelerating, tail, len(chain), m, _TOL_ULPS)
        chain.frombytes(new.tobytes())  # the doubles as computed, without boxing them
        if not converged:
            raise ArithmeticError(_NO_CONVERGENCE)
        return chain

    def _preimage(self, y: float, x: float) -> float:
        """sup{lam : R(lam) <= y}, returned from below (R(result) <= y), starting the search at x > y.

        Invariants: R(lo) <= y and sup <= hi. R(lam) <= lam gives lo = y. For an accelerating R,
        where R(lo) is above the floor, (22) gives R' >= 1, so the sup is at most lo - (R(lo) - y).
        Secant steps close the bracket in two or three evaluations on the smooth branch; near the
        jump at the (C1) boundary the search doubles outwards and bisects. It stops at _TOL_ULPS ulp, the
        precision to which R itself is evaluated.
        """
        step, floor, ulp, accelerating = self.step, self.floor, math.ulp, self.accelerating
        lo, hi = y, math.inf
        xp = fp = math.nan
        for i in range(300):
            fx = step(x) - y
            if fx <= 0:
                lo = max(lo, x)
                if accelerating and fx + y > floor:
                    hi = min(hi, x - fx)
            else:
                hi = min(hi, x)
            if hi < math.inf and hi - lo <= _TOL_ULPS * ulp(hi):
                return lo
            slope = (fx - fp) / (x - xp) if i and x != xp else 1.0
            x_next = x - fx / slope if slope > 0 else math.nan
            xp, fp = x, fx
            if i >= 8 or not lo < x_next <= hi or x_next == x:
                x_next = lo + 0.5 * (hi - lo) if hi < math.inf else y + 2.0 * (x - y)
            x = x_next
        raise ArithmeticError(_NO_CONVERGENCE)


@dataclass(frozen=True)
class AffineIncreasingRecursion:
    """R(lam) = min(a lam + b, cap) with a = 1 + growth > 1, b >= 0: the recursion (12).

    Below the cap R^k(lam) = a^k (lam + c) - c with c = b/growth, so the count and the inverse
    of Algorithm 4 have closed forms; results are checked and rounded towards the safe side.
    """

    growth: float  # a - 1 = phi(r t(lam_hat_min + lam_reg))
    b: float  # G1/n
    cap: float  # G1

    def __post_init__(self) -> None:
        if not (self.growth > 0 and self.b > 0 and self.cap > 0):
            raise ValueError("the increasing recursion needs growth, G1/n and G1 all positive")

    def step(self, lam: float) -> float:
        return min(lam * (1.0 + self.growth) + self.b, self.cap)

    def power(self, lam: float, k: int) -> float:
        """R^k(lam)."""
        if k <= 0 or lam >= self.cap:
            return min(lam, self.cap) if k > 0 else lam
        c = self.b / self.growth
        log_gain = k * math.log1p(self.growth)
        if log_gain > 700.0:
            return self.cap
        return min(math.exp(log_gain) * (lam + c) - c, self.cap)

    def trajectory(self, lam: float) -> list[float]:
        """lam, R(lam), ..., up to the first iterate at the cap (N + 1 values)."""
        compiled = kernels()
        if compiled is not None:
            consts = float(self.growth), float(self.b), float(self.cap)
            return compiled.affine_trajectory(*consts, float(lam), self.count(lam)).tolist()
        return [self.power(lam, k) for k in range(self.count(lam) + 1)]

    def count(self, lam: float) -> int:
        """N = min{N >= 0 : R^N(lam) >= cap} (Algorithm 4 step ii)."""
        if lam >= self.cap:
            return 0
        c = self.b / self.growth
        k = max(1, math.ceil(math.log((self.cap + c) / (lam + c)) / math.log1p(self.growth)))
        while k > 1 and self.power(lam, k - 1) >= self.cap:
            k -= 1
        while self.power(lam, k) < self.cap:
            k += 1
        return k

    def inverse(self, m: int) -> float:
        """min(inf{lam >= 0 : R^m(lam) >= cap}, cap) (Algorithm 4 step iii); cap when m = 0."""
        if m <= 0:
            return self.cap
        c = self.b / self.growth
        log_gain = m * math.log1p(self.growth)
        lam = max(0.0, (self.cap + c) * math.exp(-log_gain) - c) if log_gain < 700.0 else 0.0
        # An upper bound may only err upwards.
        while lam < self.cap and self.power(lam, m) < self.cap:
            lam = math.nextafter(lam, math.inf)
        return min(lam, self.cap)


@lru_cache(maxsize=32)
def down_recursion(g: Geometry, n: int, lam_reg: float, widened: bool = True) -> DecreasingRecursion:
    """The recursion (10) as Algorithm 2 counts it, memoised per public constants: R_s(lam) = R(lam) - 2 e, and 0
    once that is at most zeta, with e = core.estimator.rounding.eigen_error and zeta =
    core.estimator.rounding.count_floor (the floor).

    Stage 1's statistic is the computed lambda_min less e (core.mechanisms.certificates), within [lambda_min - 2e,
    lambda_min] of the exact one; R_s is nondecreasing and every neighbour's statistic is at least R_s of this one's
    (docs/privacy.md, "Data with no minimiser"), so the count keeps sensitivity 1 whatever the rounding. zeta is
    below one step G1/n of (10): it moves a count by at most 1. inverse(0) is 0, inf C of (10).
    widened=False is (10) itself, in exact arithmetic: the what-if's hypothetical samples beyond any run's size.
    """
    shift, floor = count_slack(n, g.d, g.G1, g.r, g.G0) if widened else (0.0, 0.0)
    G1_n = g.G1 / n + shift
    c1 = c1_threshold(g, n)
    ar = g.alpha * g.r
    k8 = 8.0 * ar * g.G0 / n
    r_over_2ar = g.r / (2.0 * ar)
    reg_over_rho = lam_reg / g.rho
    expm1, sqrt = math.expm1, math.sqrt
    params = (float(c1), float(reg_over_rho), float(lam_reg), float(k8), float(r_over_2ar), float(G1_n))

    def step(lam: float) -> float:
        # (C1), then t (9) and (10) with constants hoisted: this runs up to N times per certificate.
        if lam <= 0 or lam + reg_over_rho < c1:
            return 0.0
        arg = 1.0 - k8 / (lam + lam_reg)
        if arg < 0:
            return 0.0
        factor = 1.0 - expm1((1.0 - arg) / (1.0 + sqrt(arg)) * r_over_2ar)
        out = lam * factor - G1_n
        return out if out > 0 else 0.0

    return DecreasingRecursion(
        step=step,
        floor=floor,
        scale=max(g.G1 / n, c1 * 1e-6),
        accelerating=lam_reg == 0,
        origin=0.0,
        kernel=(_DOWN, params),
    )


def smooth_recursion(g: Geometry, n: int, lam_reg: float) -> DecreasingRecursion:
    """The recursion of Algorithm 7 packaged for Algorithm 6 (floor lam_reg)."""
    # The constants as recursion_smooth computes them: 8 G0 G2, then n lam^2 and G1/n.
    params = (float(8.0 * g.G0 * g.G2), float(n), float(g.G1 / n), float(lam_reg), 0.0, 0.0)
    return DecreasingRecursion(
        step=lambda lam: recursion_smooth(lam, g, n, lam_reg),
        floor=lam_reg,
        scale=g.G1 / n,
        accelerating=True,
        kernel=(_SMOOTH, params),
    )


def up_recursion(lam_hat_min: float, g: Geometry, n: int, lam_reg: float,
                 widened: bool = True) -> AffineIncreasingRecursion:
    """The recursion (12) with lam_hat = lam_hat_min + lam_reg, as Algorithm 4 step i sets it, widened for the
    rounding of lambda_max: R_s(lam) = (1 + xi) R(lam) + 4 e_H below the cap, xi = core.estimator.rounding.ratio_error
    and e_H = core.estimator.rounding.hessian_error (Algorithm 4's statistic is within a factor 1 + xi and 4 e_H above
    lambda_max(P_n), never below: core.mechanisms.certificates). widened=False is (12) itself, as down_recursion's."""
    rt = g.r * t_bound(lam_hat_min + lam_reg, g, n)
    if not math.isfinite(rt):
        raise ValueError("the increasing recursion (12) needs t(lam_hat_min + lam_reg) finite")
    xi, extra = up_slack(n, g.d, g.G1, g.r, g.G0) if widened else (0.0, 0.0)
    growth = (1.0 + phi_qsc(rt)) * (1.0 + xi) - 1.0
    return AffineIncreasingRecursion(growth=growth, b=(1.0 + xi) * g.G1 / n + extra, cap=g.G1)
