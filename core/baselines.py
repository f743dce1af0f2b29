"""The paper's comparison methods for u^T theta (section 4; SPEC section 5), each at a total (eps, delta).

- oracle: u^T theta(P_n) + Delta(P_n, u) sigma(eps, delta) Z. NOT private: Delta is local.
- output_perturbation: u^T theta_lam + (2 G0/(n lam)) sigma(eps, delta) Z, lam = 1e-2 by default
  (||theta_lam(P_n) - theta_lam(P'_n)||_2 <= 2 G0/(n lam), so this is (eps, delta)-DP).
- objective_perturbation (15): argmin L_n + b^T theta + (lam/2)||theta||^2, lam = 4 G1/(n eps),
  b ~ N(0, s^2 I), s = (2 r/(n eps)) [sqrt(2 ln(4/delta)) + sqrt(2 ln(4/delta) + 2 eps)]; the printed
  variance lost its brackets, and this is SPEC's conservative reconstruction (eps/2 pays for the
  regulariser's Jacobian, eps/2 for Gaussian noise on a gradient of sensitivity 2 G0/n).
- local_with_fallback: Algorithm 5, but objective perturbation with the budget the later stages would
  have used when lambda_hat_min = 0 (the paper's section 4.2 variant; off unless asked for).
DP-SGD lives in core.dp_sgd.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from core.accounting import Budget
from core.fit import fit
from core.gaussian import check_epsilon_delta, sigma
from core.marks import NOT_PRIVATE
from core.pipeline import PrivateRun, Problem, run_private
from core.release import directional_sensitivity, unit_direction
from core.stability import solver_slack

OUTPUT_PERTURBATION_LAMBDA = 1e-2


@dataclass(frozen=True)
class BaselineRelease:
    """One released value of u^T theta by a comparison method.

    value is None when the method declines to release (bottom). noise_scale is the method's own
    noise parameter: Delta(P_n, u) sigma(eps, delta) for the oracle, 2 G0/(n lam) sigma(eps, delta)
    for output perturbation, the standard deviation s of b for objective perturbation, the noise
    multiplier z for DP-SGD. private tells whether the release is (epsilon, delta)-DP.
    """

    method: str
    value: float | None
    noise_scale: float
    private: bool
    epsilon: float
    delta: float
    lambda_reg: float | None
    seconds: float
    u_theta: float = field(metadata=NOT_PRIVATE)  # u^T theta(P_n) of the unregularised fit


def oracle(problem: Problem, u: NDArray | int, epsilon: float, delta: float, rng: np.random.Generator,
           calibration: str = "paper") -> BaselineRelease:
    """The paper's item 2: noise scaled to the local sensitivity Delta(P_n, u). NOT private."""
    start = time.perf_counter()
    check_epsilon_delta(epsilon, delta)
    uv = unit_direction(u, problem.d)
    scale = directional_sensitivity(problem.fit, problem.geometry, uv) * sigma(epsilon, delta, calibration)
    u_theta = float(uv @ problem.fit.theta)
    value = u_theta + scale * float(rng.standard_normal())
    return BaselineRelease("oracle", value, scale, False, epsilon, delta, problem.fit.lam_reg,
                           time.perf_counter() - start, u_theta)


def regularised_fit_theta(problem: Problem, lam_reg: float, linear: NDArray | None = None) -> NDArray:
    """theta of (1) with another lambda_reg (and an optional linear term) on the problem's data."""
    g = problem.geometry
    return fit(problem.X, problem.y, g.loss, lam_reg, linear=linear, radius=g.r).require_minimiser().theta


def output_perturbation(problem: Problem, u: NDArray | int, epsilon: float, delta: float,
                        rng: np.random.Generator, lam_reg: float = OUTPUT_PERTURBATION_LAMBDA,
                        calibration: str = "paper", theta_lam: NDArray | None = None) -> BaselineRelease:
    """Naive output perturbation of theta_lam; pass theta_lam to reuse a fit across draws."""
    start = time.perf_counter()
    check_epsilon_delta(epsilon, delta)
    if not lam_reg > 0:
        raise ValueError("output perturbation needs lambda_reg > 0")
    uv = unit_direction(u, problem.d)
    theta = regularised_fit_theta(problem, lam_reg) if theta_lam is None else theta_lam
    # Sensitivity 2 G0/(n lam), plus the tolerance of the two fits (each within solver_slack(lam)).
    g = problem.geometry
    scale = (2.0 * g.G0 / (problem.n * lam_reg) + 2.0 * solver_slack(lam_reg, g)) * sigma(epsilon, delta, calibration)
    value = float(uv @ theta) + scale * float(rng.standard_normal())
    return BaselineRelease("output_perturbation", value, scale, True, epsilon, delta, lam_reg,
                           time.perf_counter() - start, float(uv @ problem.fit.theta))


def objective_perturbation_parameters(problem: Problem, epsilon: float, delta: float) -> tuple[float, float]:
    """(lambda_reg, s) of (15): 4 G1/(n eps) and the conservative noise scale of SPEC section 5."""
    g, n = problem.geometry, problem.n
    a = 2.0 * math.log(4.0 / delta)
    s = 2.0 * g.r / (n * epsilon) * (math.sqrt(a) + math.sqrt(a + 2.0 * epsilon))
    return 4.0 * g.G1 / (n * epsilon), s


def objective_perturbation(problem: Problem, u: NDArray | int, epsilon: float, delta: float,
                           rng: np.random.Generator) -> BaselineRelease:
    """(15): minimise L_n(theta) + b^T theta + (lam/2)||theta||^2 with b ~ N(0, s^2 I)."""
    start = time.perf_counter()
    check_epsilon_delta(epsilon, delta)
    uv = unit_direction(u, problem.d)
    lam, s = objective_perturbation_parameters(problem, epsilon, delta)
    b = s * rng.standard_normal(problem.d)
    theta = regularised_fit_theta(problem, lam, linear=b)
    return BaselineRelease("objective_perturbation", float(uv @ theta), s, True, epsilon, delta, lam,
                           time.perf_counter() - start, float(uv @ problem.fit.theta))


def fallback_budget(budget: Budget) -> tuple[float, float]:
    """What objective perturbation may spend when stage 1 certifies nothing.

    Stage 1 is pure eps_a-DP; the other branch would spend eps_b + 2 eps_c and, by Lemma 2.2,
    delta_b + (1 + e^eps_c) delta_c beyond stage 1's failure probability delta_a. Giving the fallback
    the same keeps the total within the basic composition of SPEC section 6.
    """
    b, c = budget.lambda_max, budget.release
    return b.epsilon + 2.0 * c.epsilon, b.delta + (1.0 + math.exp(c.epsilon)) * c.delta


def local_with_fallback(problem: Problem, u: NDArray | int, budget: Budget, rng: np.random.Generator,
                        calibration: str = "paper") -> tuple[PrivateRun, BaselineRelease | None]:
    """Algorithm 5; when lambda_hat_min = 0, objective perturbation with the remaining budget instead."""
    run = run_private(problem, u, budget, rng, calibration)
    if run.lambda_min.lambda_hat > 0:
        return run, None
    eps, dlt = fallback_budget(budget)
    return run, objective_perturbation(problem, u, eps, dlt, rng)
