"""Releasing the whole vector theta(P_n): Algorithm 3, Algorithm 7 and the paper's comparison methods.

Both certified algorithms take a TOTAL (eps, delta):
- Algorithm 3 runs Algorithm 2 and the Gaussian step each at (eps/2, delta/2); Theorem 1 makes
  the pair (eps, delta)-DP. Noise N(0, sigma^2 t(lambda_hat + lam_reg)^2 I) (Corollary 3.1).
- Algorithm 7 runs Algorithm 6 with the recursion of Corollary 6.2 at (eps/2, delta/2) on the
  statistic lambda_min + lam_reg, then noise W sigma(eps/2, delta/2) (Proposition 7.1).

The methods of the paper's Figure 5 (section 4, docs/method.md §8), each returning a VectorRelease:
- oracle_vector: theta(P_n) + N(0, Delta(P_n)^2 sigma(eps, delta)^2 I), Delta(P_n) the local
  parameter sensitivity (3a) (parameter_sensitivity). NOT private: Delta(P_n) is local.
- output_perturbation_vector: theta_lam + N(0, (2 G0/(n lam))^2 sigma(eps, delta)^2 I), lam = 1e-2.
- objective_perturbation_vector: the minimiser of (15), its noise scale by the calibration (op_parameters).
- dp_sgd_vector: the DP-SGD iterate of core.mechanisms.dp_sgd.
release_vector dispatches on a name in VECTOR_METHODS. The u^T releases of core.mechanisms.baselines are
projections of output_perturbation_vector and objective_perturbation_vector, so each formula
lives here only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit

from core.errors import InputError
from core.estimator.fit import FitResult, fit_rows
from core.estimator.geometry import Geometry
from core.estimator.losses import Loss
from core.estimator.problem import Problem
from core.mechanisms.certificates import RecursiveBound, lambda_min_certificate, recursive_bound
from core.mechanisms.dp_sgd import DPSGDConfig, dp_sgd_theta
from core.mechanisms.recursion import c1_holds, recursion_down, smooth_recursion, t_bound
from core.mechanisms.stability import solver_slack
from core.mechanisms.trial import Draw, Trial
from core.privacy.accounting import StageBudget
from core.privacy.gaussian import check_calibration, check_epsilon_delta, sigma, sigma_planar
from core.privacy.marks import NOT_PRIVATE

VECTOR_METHODS = ("algorithm3", "algorithm7", "oracle", "objective_perturbation", "output_perturbation", "dp_sgd")
OUTPUT_PERTURBATION_LAMBDA = 1e-2
# Above this dimension the sup of ||M x|| over the cube's 2^(d-1) sign pairs is bounded, not enumerated.
EXACT_CUBE_MAX_D = 20
_SIGN_CHUNK = 1 << 15  # sign vectors per block: 2^15 x 20 doubles = 5 MB


@dataclass(frozen=True)
class FullVectorRelease:
    """A private release of theta(P_n) (or bottom), with its certificate and noise scale.

    noise_scale is the per-coordinate standard deviation of the added noise (private: a function
    of lambda_hat). value is None for bottom.
    """

    algorithm: str
    status: str
    reason: str
    value: NDArray[np.float64] | None
    noise_scale: float | None
    sigma: float
    certificate: RecursiveBound
    epsilon_total: float
    delta_total: float


def step_budget(epsilon: float, delta: float) -> StageBudget:
    """What each of the two steps of Algorithms 3 and 7 (the certificate, the Gaussian step) spends of a total
    (eps, delta): half of each, which Theorem 1 and Proposition 7.1 compose to the total."""
    return StageBudget(epsilon / 2.0, delta / 2.0)


def algorithm3(
    fit: FitResult, g: Geometry, epsilon: float, delta: float, rng: np.random.Generator, calibration: str = "paper"
) -> FullVectorRelease:
    """Algorithm 3: local output perturbation of theta(P_n); bottom if lambda_hat + lam_reg = 0.

    Corollary 3.1 needs (C1); lambda_hat > 0 implies it, and it is checked explicitly as well.
    """
    check_epsilon_delta(epsilon, delta, "Algorithm 3")
    step = step_budget(epsilon, delta)
    cert = lambda_min_certificate(fit, g, step.epsilon, step.delta, rng)
    return gaussian_step("algorithm3", fit, cert, sigma(step.epsilon, step.delta, calibration),
                   algorithm3_scale(cert.lambda_hat, g, fit.n, fit.lam_reg),
                   "lambda_hat_min + lambda_reg = 0 or (C1) fails", epsilon, delta, rng)


def algorithm3_scale(lambda_hat: float, g: Geometry, n: int, lam_reg: float) -> float | None:
    """Algorithm 3's noise over sigma at a certified lambda_hat: t(lambda_hat + lam_reg) of (9), widened for the fits'
    tolerance; None (bottom) when lambda_hat + lam_reg = 0, (C1) fails or t is unbounded."""
    lam = lambda_hat + lam_reg
    t = t_bound(lam, g, n)
    if not (lam > 0 and c1_holds(lambda_hat, g, n, lam_reg) and math.isfinite(t)):
        return None
    # The fits of P_n and of a neighbour (lambda_min' + lam_reg >= R(lambda_hat) + lam_reg) lie within
    # solver_slack of the exact minimisers: the sensitivity t grows by both slacks.
    slack = 2.0 * solver_slack(recursion_down(lambda_hat, g, n, lam_reg) + lam_reg, g)
    return t + slack if math.isfinite(slack) else None


def algorithm7(
    fit: FitResult, g: Geometry, epsilon: float, delta: float, rng: np.random.Generator, calibration: str = "paper"
) -> FullVectorRelease:
    """Algorithm 7: the generic smooth-loss release under condition (C2)."""
    check_epsilon_delta(epsilon, delta, "Algorithm 7")
    step = step_budget(epsilon, delta)
    rec = smooth_recursion(g, fit.n, fit.lam_reg)
    cert = recursive_bound(fit.lambda_min + fit.lam_reg, rec, step.epsilon, step.delta, rng, "lower")
    s = sigma(step.epsilon, step.delta, calibration)
    lam, n = cert.lambda_hat, fit.n
    W = None
    if lam >= max(3.0 * g.G1 / n, math.sqrt(12.0 * g.G0 * g.G2 / n)):  # condition (C2)
        W = (lam - math.sqrt(lam * lam - 8.0 * g.G0 * g.G2 / n)) / (2.0 * g.G2)
        W += 2.0 * solver_slack(rec.step(lam), g)  # as in Algorithm 3: the fits' tolerance
        W = W if math.isfinite(W) else None
    return gaussian_step("algorithm7", fit, cert, s, W, "condition (C2) fails at lambda_hat", epsilon, delta, rng)


def gaussian_step(name: str, fit: FitResult, cert: RecursiveBound, s: float, scale: float | None, why_bottom: str,
                  epsilon: float, delta: float, rng: np.random.Generator) -> FullVectorRelease:
    """theta(P_n) + N(0, (s scale)^2 I) from a certificate, or bottom when scale is None (or no minimiser)."""
    common = dict(algorithm=name, sigma=s, certificate=cert, epsilon_total=float(epsilon), delta_total=float(delta))
    if scale is None:
        return FullVectorRelease(status="bottom", reason=why_bottom, value=None, noise_scale=None, **common)
    if not fit.has_minimiser:  # only on the certificate's failure event: lambda_min is 0 for such data
        return FullVectorRelease(status="bottom", reason="the data have no certified minimiser", value=None,
                                 noise_scale=None, **common)
    noise_scale = s * scale
    value = fit.theta + (fit.theta_lo + noise_scale * rng.standard_normal(fit.d))  # one rounding, after the noise
    return FullVectorRelease(status="released", reason="certified", value=value, noise_scale=noise_scale, **common)


@dataclass(frozen=True)
class VectorRelease:
    """One release of the whole vector theta by any method of VECTOR_METHODS.

    value is None when the method declines to release (bottom; Algorithms 3 and 7 only). noise_scale
    is the method's own noise parameter: the per-coordinate standard deviation of the added Gaussian
    for Algorithms 3 and 7, the oracle and output perturbation (None for bottom), the standard
    deviation s of b for objective perturbation (15), the noise multiplier z for DP-SGD. It is marked
    not private: the oracle's is computed from the fit, Algorithms 3 and 7's from lambda_hat.
    private tells whether value is (epsilon, delta)-DP (the oracle's is not). certified is the
    FullVectorRelease of Algorithms 3 and 7 (None for the other methods).
    """

    method: str
    value: NDArray[np.float64] | None
    noise_scale: float | None = field(metadata=NOT_PRIVATE)
    private: bool
    epsilon: float
    delta: float
    lambda_reg: float | None
    seconds: float = field(metadata=NOT_PRIVATE)
    reason: str = "released"
    certified: FullVectorRelease | None = None


def cube_norm_sup(M: NDArray, exact_max_d: int = EXACT_CUBE_MAX_D) -> float:
    """sup_{x in [-1,1]^d} ||M x||_2: exact for d <= exact_max_d, an upper bound above.

    ||M x|| is convex, so the sup sits at a vertex; s and -s give the same norm, so the 2^(d-1) sign
    vectors with s_1 = +1 suffice, enumerated in blocks. For larger d the enumeration is too long and
    min(sqrt(d) ||M||_2, sum_j ||M e_j||_2) (||x||_2 <= sqrt(d); the triangle inequality) bounds it from
    above: a sensitivity computed from it can only overstate the true one.
    """
    M = np.asarray(M, dtype=np.float64)
    d = M.shape[1]
    if d > exact_max_d:
        return min(math.sqrt(d) * float(np.linalg.norm(M, 2)), float(np.linalg.norm(M, axis=0).sum()))
    count, shifts, best = 1 << (d - 1), np.arange(d - 1), 0.0
    for start in range(0, count, _SIGN_CHUNK):
        k = np.arange(start, min(start + _SIGN_CHUNK, count))
        signs = np.ones((k.size, d))
        signs[:, 1:] -= 2.0 * ((k[:, None] >> shifts) & 1)  # bit j of k flips coordinate j + 1
        v = signs @ M.T
        best = max(best, float(np.einsum("ij,ij->i", v, v).max()))
    return math.sqrt(best)


def parameter_sensitivity(fit: FitResult, geometry: Geometry) -> float:
    """Delta(P_n) of (3a) = (1/n) sup_{g0, g1 in G} ||(H + lam_reg I)^{-1} (g0 - g1)||_2.

    G as core.mechanisms.release.directional_sensitivity takes it for (3b): G is symmetric, so the sup is
    (2/n) sup_{g in G} ||M g||_2 with M = (H + lam_reg I)^{-1}.
    Ball (G the l_2 ball of radius G0): (2 G0/n) ||M||_2 = 2 G0 / (n (lambda_min + lam_reg)), exact.
    Cube (G the l_inf ball of radius G0/sqrt(d) = sup|h'|, i.e. {a x : |a| <= sup|h'|, x in [-1,1]^d}):
    (2/n)(G0/sqrt(d)) sup_{x in [-1,1]^d} ||M x||_2, exact
    for d <= 20 and an upper bound above (cube_norm_sup): the oracle then adds at least the noise it
    should, the conservative side. Not private; data without a certified minimiser raise NoMinimizerError.
    """
    f = fit.require_minimiser()
    if geometry.domain == "ball":
        return 2.0 * geometry.G0 / (f.n * (f.lambda_min + f.lam_reg))
    M = cho_solve(cho_factor(f.hessian + f.lam_reg * np.eye(f.d)), np.eye(f.d))
    return 2.0 / f.n * geometry.G0 / math.sqrt(geometry.d) * cube_norm_sup(M)


def oracle_vector(problem: Problem, epsilon: float, delta: float, rng: np.random.Generator,
                  calibration: str = "paper") -> VectorRelease:
    """The paper's item 2 for the whole vector: theta(P_n) + N(0, Delta(P_n)^2 sigma(eps, delta)^2 I).

    NOT private: Delta(P_n) of (3a) is the local sensitivity, computed from the data.
    """
    start = time.perf_counter()
    check_epsilon_delta(epsilon, delta)
    f = problem.fit
    scale = parameter_sensitivity(f, problem.geometry) * sigma(epsilon, delta, calibration)
    value = f.theta + scale * rng.standard_normal(f.d)
    return VectorRelease("oracle", value, scale, False, epsilon, delta, f.lam_reg, time.perf_counter() - start)


def regularised_fit_theta(problem: Problem, lam_reg: float, linear: NDArray | None = None,
                          start: NDArray | None = None) -> NDArray:
    """theta of (1) with another lambda_reg (and an optional linear term) on the problem's data.

    `start` is Newton's first iterate; the result is certified to the same tolerance from any start.
    """
    g = problem.geometry
    return fit_rows(problem.rows, g.loss, lam_reg, linear=linear, radius=g.r, start=start).require_minimiser().theta


def ridge_start(fit: FitResult, lam_reg: float) -> NDArray[np.float64] | None:
    """One Newton step from theta(P_n) towards the minimiser of (1) with ridge lam_reg (None without a minimiser).

    The gradient of the new objective at theta(P_n) is (lam_reg - fit.lam_reg) theta(P_n) and its Hessian
    there H + lam_reg I, both known from stage 0, so the step costs no pass over the data.
    """
    if not fit.has_minimiser:
        return None
    return fit.theta - cho_solve(cho_factor(fit.hessian + lam_reg * np.eye(fit.d)), (lam_reg - fit.lam_reg) * fit.theta)


def output_perturbation_vector(problem: Problem, epsilon: float, delta: float, rng: np.random.Generator,
                               lam_reg: float = OUTPUT_PERTURBATION_LAMBDA, calibration: str = "paper",
                               theta_lam: NDArray | None = None) -> VectorRelease:
    """Naive output perturbation (section 4, item 4): theta_lam + N(0, (2 G0/(n lam))^2 sigma(eps, delta)^2 I).

    ||theta_lam(P_n) - theta_lam(P'_n)||_2 <= 2 G0/(n lam) (lam-strong convexity, ||g||_2 <= G0), so the
    release is (eps, delta)-DP. Pass theta_lam to reuse the non-private fit across draws.
    """
    start = time.perf_counter()
    check_epsilon_delta(epsilon, delta)
    if not lam_reg > 0:
        raise InputError("output perturbation needs lambda_reg > 0")
    theta = regularised_fit_theta(problem, lam_reg) if theta_lam is None else theta_lam
    # Sensitivity 2 G0/(n lam), plus the tolerance of the two fits (each within solver_slack(lam)).
    g = problem.geometry
    scale = (2.0 * g.G0 / (problem.n * lam_reg) + 2.0 * solver_slack(lam_reg, g)) * sigma(epsilon, delta, calibration)
    value = theta + scale * rng.standard_normal(problem.d)
    return VectorRelease("output_perturbation", value, scale, True, epsilon, delta, lam_reg,
                         time.perf_counter() - start)


def objective_perturbation_parameters(problem: Problem, epsilon: float, delta: float,
                                      calibration: str = "paper", ridge: float | None = None) -> tuple[float, float]:
    """(lambda_reg, s) of (15) for problem's domain and size (`op_parameters`)."""
    return op_parameters(problem.geometry, problem.n, epsilon, delta, calibration, ridge)


PAPER_RIDGE = 4.0  # lambda_reg = PAPER_RIDGE G1/(n eps): the paper's (15), and the only one its calibration proves


def op_parameters(g: Geometry, n: int, epsilon: float, delta: float, calibration: str = "paper",
                  ridge: float | None = None) -> tuple[float, float]:
    """(lambda_reg, s) of (15) from public facts only: the domain's constants, n, (epsilon, delta) and the ridge's
    constant c (PAPER_RIDGE unless given).

    lambda_reg = c G1/(n eps). "paper": docs/method.md §12's conservative reading of the printed variance, s = (2 r/(n
    eps)) [sqrt(2 ln(4/delta)) + sqrt(2 ln(4/delta) + 2 eps)] (eps/2 for the regulariser's Jacobian, eps/2 for the
    Gaussian), proven for c = 4 only. "analytic": the Jacobian's ratio is at most 1 + G1/(n lambda_reg) = 1 + eps/c
    (one row's rank-one term, not two), and the Gaussian's loss at most R/kappa + 1/(2 kappa^2) with R Rayleigh, so
    s = (2 G0/n) sigma_planar(eps - ln(1 + eps/c), delta) (docs/privacy.md, "Objective perturbation, calibrated");
    for c = 4 never larger than the paper's. Any c >= 1 leaves the Gaussian a positive share.
    """
    c = PAPER_RIDGE if ridge is None else float(ridge)
    lam = c * g.G1 / (n * epsilon)
    if calibration == "analytic":
        if not c >= 1.0:
            raise ValueError("the ridge's constant must be at least 1")
        return lam, 2.0 * g.G0 / n * sigma_planar(epsilon - math.log1p(g.G1 / (n * lam)), delta)
    check_calibration(calibration)
    if c != PAPER_RIDGE:
        raise ValueError("the paper's calibration is proven for its own ridge, 4 G1/(n eps), only")
    a = 2.0 * math.log(4.0 / delta)
    return lam, 2.0 * g.r / (n * epsilon) * (math.sqrt(a) + math.sqrt(a + 2.0 * epsilon))


@dataclass(frozen=True)
class ObjectiveWarmStart:
    """What Newton's start for (15) needs that is the same for every draw of b. NOT private.

    theta is the b = 0 minimiser theta_lam, factor the Cholesky factor of A = H(theta_lam) + lam I,
    h3 the third derivatives h'''(<theta_lam, x_i>, y_i): functions of the data and the public
    (eps, delta) only. They only choose where Newton starts: each draw's fit is certified as a cold
    one is.
    """

    epsilon: float
    delta: float
    X: NDArray[np.float64] = field(metadata=NOT_PRIVATE, repr=False)
    theta: NDArray[np.float64] = field(metadata=NOT_PRIVATE)
    factor: tuple[NDArray[np.float64], bool] = field(metadata=NOT_PRIVATE, repr=False)
    h3: NDArray[np.float64] = field(metadata=NOT_PRIVATE, repr=False)

    def start(self, b: NDArray) -> NDArray[np.float64]:
        """The minimiser of (15) to second order in b: theta_lam + d1 + d2, an O(||b||^3) error.

        grad F(theta_lam + d) = A d + (1/2) T[d, d] + O(||d||^3), T = P_n h''' x x x, so solving
        grad F + b = 0 order by order gives d1 = -A^{-1} b and d2 = -(1/2) A^{-1} T[d1, d1].
        """
        d1 = -cho_solve(self.factor, b)
        r = self.X @ d1
        d2 = -0.5 * cho_solve(self.factor, self.X.T @ (self.h3 * r * r) / r.size)
        return self.theta + d1 + d2


def third_derivative(loss: Loss, t: NDArray, y: NDArray) -> NDArray:
    """h'''(t, y): -h' h'' for the robust loss (phi'''(s) = -phi''(s) tanh(s/2)), h'' (1 - 2 expit(t)) for the
    logistic loss (h'' = p (1 - p), p = expit(t))."""
    if loss.name == "robust":
        return -loss.d1(t, y) * loss.d2(t, y)
    return loss.d2(t, y) * (1.0 - 2.0 * expit(t))


def objective_warm_start(problem: Problem, epsilon: float, delta: float) -> ObjectiveWarmStart | None:
    """The warm start of (15) at (eps, delta); None when the b = 0 fit is not certified (draws start cold)."""
    lam, _ = objective_perturbation_parameters(problem, epsilon, delta)
    g = problem.geometry
    f = fit_rows(problem.rows, g.loss, lam, radius=g.r, start=ridge_start(problem.fit, lam))
    if not f.has_minimiser:
        return None
    h3 = third_derivative(g.loss, problem.X @ f.theta, problem.y)
    return ObjectiveWarmStart(epsilon, delta, problem.X, f.theta, cho_factor(f.hessian + lam * np.eye(f.d)), h3)


def objective_perturbation_vector(problem: Problem, epsilon: float, delta: float, rng: np.random.Generator,
                                  warm: ObjectiveWarmStart | None = None, calibration: str = "paper",
                                  ridge: float | None = None) -> VectorRelease:
    """(15): argmin L_n(theta) + b^T theta + (lam/2)||theta||^2, b ~ N(0, s^2 I), (lam, s) by `op_parameters` (the
    ridge's constant `ridge`; a warm start is for the paper's).

    `warm` (from objective_warm_start at the same (eps, delta)) starts Newton near the noisy minimiser,
    so a draw takes fewer passes over the data; b is drawn and the fit certified exactly as without it.
    """
    start = time.perf_counter()
    check_epsilon_delta(epsilon, delta)
    if warm is not None and ((warm.epsilon, warm.delta) != (epsilon, delta) or ridge not in (None, PAPER_RIDGE)):
        raise InputError("the warm start was computed for another (epsilon, delta) or ridge")
    lam, s = objective_perturbation_parameters(problem, epsilon, delta, calibration, ridge)
    b = s * rng.standard_normal(problem.d)
    theta = regularised_fit_theta(problem, lam, linear=b, start=None if warm is None else warm.start(b))
    return VectorRelease("objective_perturbation", theta, s, True, epsilon, delta, lam, time.perf_counter() - start)


def dp_sgd_vector(problem: Problem, epsilon: float, delta: float, rng: np.random.Generator,
                  config: DPSGDConfig | None = None) -> VectorRelease:
    """DP-SGD's theta_hat (core.mechanisms.dp_sgd.dp_sgd_theta, defaults DPSGDConfig()); noise_scale is z."""
    start = time.perf_counter()
    theta, z = dp_sgd_theta(problem, epsilon, delta, rng, config or DPSGDConfig())
    return VectorRelease("dp_sgd", theta, z, True, epsilon, delta, problem.fit.lam_reg, time.perf_counter() - start)


def _certified(algorithm: Callable[..., FullVectorRelease], problem: Problem, epsilon: float, delta: float,
               rng: np.random.Generator, calibration: str) -> VectorRelease:
    """Algorithm 3 or 7 as a VectorRelease (value None for bottom), keeping the certificate."""
    start = time.perf_counter()
    out = algorithm(problem.fit, problem.geometry, epsilon, delta, rng, calibration)
    return VectorRelease(out.algorithm, out.value, out.noise_scale, True, epsilon, delta, problem.fit.lam_reg,
                         time.perf_counter() - start, out.reason, out)


def release_vector(method: str, problem: Problem, epsilon: float, delta: float, rng: np.random.Generator, *,
                   calibration: str = "paper", dp_sgd_config: DPSGDConfig | None = None,
                   theta_lam: NDArray | None = None) -> VectorRelease:
    """One release of theta by `method` (a name in VECTOR_METHODS) at the total (eps, delta).

    theta_lam (output perturbation only) reuses the non-private fit at OUTPUT_PERTURBATION_LAMBDA.
    """
    if method == "algorithm3":
        return _certified(algorithm3, problem, epsilon, delta, rng, calibration)
    if method == "algorithm7":
        return _certified(algorithm7, problem, epsilon, delta, rng, calibration)
    if method == "oracle":
        return oracle_vector(problem, epsilon, delta, rng, calibration)
    if method == "objective_perturbation":
        return objective_perturbation_vector(problem, epsilon, delta, rng, calibration=calibration)
    if method == "output_perturbation":
        return output_perturbation_vector(problem, epsilon, delta, rng, calibration=calibration, theta_lam=theta_lam)
    if method == "dp_sgd":
        return dp_sgd_vector(problem, epsilon, delta, rng, dp_sgd_config)
    raise InputError(f"unknown method {method!r}; choose from {', '.join(VECTOR_METHODS)}")


def certified_runner(algorithm: Callable[..., FullVectorRelease]) -> Callable[[Trial], Callable[..., Draw]]:
    """core.methods.registry's runner of Algorithm 3 or 7: each draw's value is the l2 error of the whole vector."""
    def runner(t: Trial) -> Callable[[np.random.Generator], Draw]:
        def draw(rng: np.random.Generator) -> Draw:
            start = time.perf_counter()
            out = algorithm(t.problem.fit, t.problem.geometry, t.epsilon, t.delta, rng, t.calibration)
            err = None if out.value is None else float(np.linalg.norm(out.value - t.problem.fit.theta))
            return Draw(err, out.noise_scale or float("nan"), True, t.problem.fit.lam_reg,
                        time.perf_counter() - start)

        return draw

    return runner
