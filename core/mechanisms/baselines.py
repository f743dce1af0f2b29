"""The paper's comparison methods for u^T theta (section 4; docs/method.md §8), each at a total (eps, delta).

- oracle: u^T theta(P_n) + Delta(P_n, u) sigma(eps, delta) Z. NOT private: Delta is local.
- output_perturbation: u^T theta_lam + (2 G0/(n lam)) sigma(eps, delta) Z, lam = 1e-2 by default
  (||theta_lam(P_n) - theta_lam(P'_n)||_2 <= 2 G0/(n lam), so this is (eps, delta)-DP).
- objective_perturbation (15): argmin L_n + b^T theta + (lam/2)||theta||^2, lam = 4 G1/(n eps),
  b ~ N(0, s^2 I), s by the calibration (core.mechanisms.full_vector.op_parameters): docs/method.md §12's conservative
  reconstruction of the printed variance ("paper"), or the exact, smaller one ("analytic").
- fallback_budget: what objective perturbation gets when lambda_hat_min = 0 in the paper's section 4.2 variant
  (core.methods.compare's local_with_fallback): the budget Algorithm 5's later stages would have used.
DP-SGD lives in core.mechanisms.dp_sgd. Output and objective perturbation are u^T times the full-vector
releases of core.mechanisms.full_vector (post-processing), where their formulas live.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from core.estimator.problem import Problem
from core.mechanisms.full_vector import (
    OUTPUT_PERTURBATION_LAMBDA,
    objective_perturbation_vector,
    objective_warm_start,
    output_perturbation_vector,
    regularised_fit_theta,
    ridge_start,
)
from core.mechanisms.release import BaselineRelease, directional_sensitivity, unit_direction
from core.mechanisms.trial import Draw, Trial, of_release
from core.privacy.accounting import Budget
from core.privacy.gaussian import check_epsilon_delta, sigma


def oracle_runner(t: Trial) -> Callable[[np.random.Generator], Draw]:
    """core.methods.registry's runner of the oracle: T = u^T theta + scale Z, whose T +- z scale covers at the level."""
    def draw(rng: np.random.Generator) -> Draw:
        r = oracle(t.problem, t.u, t.epsilon, t.delta, rng, t.calibration)
        half = t.quantile * r.noise_scale
        return of_release(r)._replace(interval=(r.value - half, r.value + half))

    return draw


def output_runner(t: Trial) -> Callable[[np.random.Generator], Draw]:
    """The registry's runner of output perturbation; the regularised fit is shared by the comparison's draws."""
    def draw(rng: np.random.Generator) -> Draw:
        theta_lam = t.shared("output", lambda: regularised_fit_theta(
            t.problem, OUTPUT_PERTURBATION_LAMBDA, start=ridge_start(t.problem.fit, OUTPUT_PERTURBATION_LAMBDA)))
        return of_release(output_perturbation(t.problem, t.u, t.epsilon, t.delta, rng, calibration=t.calibration,
                                              theta_lam=theta_lam))

    return draw


def objective_runner(t: Trial) -> Callable[[np.random.Generator], Draw]:
    """core.methods.registry's runner of objective perturbation (15): u^T of the vector release, warm-started from a fit
    shared by the comparison's draws (each draw's fit is certified as a cold one is)."""
    def draw(rng: np.random.Generator) -> Draw:
        start = time.perf_counter()
        warm = t.shared("objective", lambda: objective_warm_start(t.problem, t.epsilon, t.delta))
        vec = objective_perturbation_vector(t.problem, t.epsilon, t.delta, rng, warm, t.calibration)
        return Draw(float(t.u @ vec.value), vec.noise_scale, True, vec.lambda_reg, time.perf_counter() - start)

    return draw


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


def output_perturbation(problem: Problem, u: NDArray | int, epsilon: float, delta: float,
                        rng: np.random.Generator, lam_reg: float = OUTPUT_PERTURBATION_LAMBDA,
                        calibration: str = "paper", theta_lam: NDArray | None = None) -> BaselineRelease:
    """u^T of core.mechanisms.full_vector.output_perturbation_vector; pass theta_lam to reuse a fit across draws."""
    start = time.perf_counter()
    check_epsilon_delta(epsilon, delta)
    uv = unit_direction(u, problem.d)
    vec = output_perturbation_vector(problem, epsilon, delta, rng, lam_reg, calibration, theta_lam)
    return BaselineRelease("output_perturbation", float(uv @ vec.value), vec.noise_scale, True, epsilon, delta,
                           lam_reg, time.perf_counter() - start, float(uv @ problem.fit.theta))


def objective_perturbation(problem: Problem, u: NDArray | int, epsilon: float, delta: float,
                           rng: np.random.Generator, calibration: str = "paper") -> BaselineRelease:
    """u^T of the minimiser of (15) (core.mechanisms.full_vector.objective_perturbation_vector)."""
    start = time.perf_counter()
    check_epsilon_delta(epsilon, delta)
    uv = unit_direction(u, problem.d)
    vec = objective_perturbation_vector(problem, epsilon, delta, rng, calibration=calibration)
    return BaselineRelease("objective_perturbation", float(uv @ vec.value), vec.noise_scale, True, epsilon, delta,
                           vec.lambda_reg, time.perf_counter() - start, float(uv @ problem.fit.theta))


def fallback_budget(budget: Budget) -> tuple[float, float]:
    """What objective perturbation may spend when stage 1 certifies nothing.

    Stage 1 is pure eps_a-DP; the other branch would spend eps_b + 2 eps_c and, by Lemma 2.2,
    delta_b + (1 + e^eps_c) delta_c beyond stage 1's failure probability delta_a. Giving the fallback
    the same keeps the total within the basic composition of docs/method.md §9.
    """
    b, c = budget.lambda_max, budget.release
    return b.epsilon + 2.0 * c.epsilon, b.delta + (1.0 + math.exp(c.epsilon)) * c.delta
