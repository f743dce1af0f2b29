"""Algorithm 5 with fallback: objective perturbation (15) instead of bottom, on the budget the run has not spent.

When the test (14) fails (which includes lambda_hat_min = 0), Algorithm 5 releases bottom. The paper's
experiments fall back to objective perturbation instead; here the fallback spends exactly what the later stages
would have: the release event (2 eps_c, (1 + e^eps_c) delta_c), and stage 2's (eps_b, delta_b) too when stage 1
certified nothing (stage 2 then never ran), so the total guarantee is unchanged (docs/privacy.md, "Algorithm 5 with
fallback"). The branch is a function of the private certificates only. CURVATURE_SHARE of it pays for a private
bound on the curvature at the released point (core.mechanisms.curvature), which gives the interval its width.

The interval is core.mechanisms.curvature's, for u^T theta(P_n) (first order), when the curvature was certified.
Without it, the worst-case one: objective perturbation's theta_hat estimates u^T theta_lam(P_n), the coefficient of the
lam-regularised fit; to first order u^T (theta_hat - theta_lam) = -u^T H_lam^{-1} b, of standard deviation at most
s / lambda_min(H_lam), with lambda_hat_min + lam (lam alone when lambda_hat_min = 0) for lambda_min(H_lam)
(docs/privacy.md). The fallback's guarantee is proven under basic composition only, so it refuses a budget solved by
privacy-loss distributions.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from core.errors import InputError, NoMinimizerError
from core.estimator.geometry import Geometry
from core.estimator.problem import Problem
from core.mechanisms.baselines import fallback_budget
from core.mechanisms.curvature import (
    APPROXIMATE_NOTE,
    BOUND_SHARE,
    LOG_SHARE,
    Curvature,
    CurvatureInterval,
    curvature_intervals,
    curvatures,
)
from core.mechanisms.full_vector import objective_perturbation_vector
from core.mechanisms.inference import fallback_population
from core.mechanisms.release import FALLBACK, Release
from core.mechanisms.stability import solver_slack
from core.privacy.accounting import Budget, release_event_delta
from core.privacy.gaussian import normal_quantile

# The curvature's shares of the fallback's (epsilon, delta), and step 2's share of the curvature's epsilon, for one
# direction and for a table's k >= 2 (whose bounds cost up to k times one's, core.mechanisms.curvature.curvatures).
# Public constants, chosen by measurement on SYNTHETIC census data: what keeps the curvature uncertified is step 1's
# offset g ln(1/(2 delta_1))/eps_1, so the curvature gets much of the budget at some cost in objective
# perturbation's noise (docs/experiments.md, "Certifying the curvature: where the budget goes"); on the centred census
# encoding's smaller ball, 0.3 for one coefficient still certifies by each goal epsilon (90 % at epsilon 3 on MI's whole
# file, where 0.4 reaches it at 2) and is narrower ("The centred encoding, measured").
CURVATURE_SHARE = (0.3, 0.5, LOG_SHARE)
TABLE_SHARES = (0.5, 0.5, 0.5)


FALLBACK_CHOICES = ("auto", "on", "off")  # the default, "auto", on every surface


def falls_back(choice: str, loss: str) -> bool:
    """Whether a failed test (14) falls back to objective perturbation: "auto" for the logistic loss, whose realistic
    samples fail (14) (the paper falls back there too), "on" and "off" as chosen. One rule for every surface."""
    if choice not in FALLBACK_CHOICES:
        raise InputError(f"{{fallback}} is one of {', '.join(FALLBACK_CHOICES)}, got {choice!r}", "fallback")
    return choice == "on" or (choice == "auto" and loss == "logistic")


def curvature_shares(k: int) -> tuple[float, float, float]:
    """(the curvature's share of the fallback's epsilon, of its delta, step 2's share of the curvature's epsilon) for
    k bounds."""
    return CURVATURE_SHARE if k == 1 else TABLE_SHARES


def release_event_budget(budget: Budget) -> tuple[float, float]:
    """(eps', delta') = (2 eps_c, (1 + e^eps_c) delta_c): the release stage as one event of core.privacy.accounting."""
    c = budget.release
    return 2.0 * c.epsilon, release_event_delta(c)


def fallback_half_width(lambda_hat_min: float, lam: float, s: float, level: float, g: Geometry) -> float:
    """z_{1-a/2} s / (lambda_hat_min + lam), plus the solver's tolerance l(lam) (core.mechanisms.stability).

    A first-order interval for u^T theta_lam(P_n): the sd of u^T H_lam^{-1} b is at most
    s / lambda_min(H_lam), and lambda_hat_min + lam stands in for lambda_min(H_lam) (lam alone when
    lambda_hat_min = 0). Private: a function of lambda_hat_min and public constants.
    """
    q = normal_quantile(0.5 + level / 2.0)
    return q * s / (max(lambda_hat_min, 0.0) + lam) + solver_slack(lam, g)


@dataclass(frozen=True)
class FallbackBudget:
    """How the fallback spends the unspent budget: objective perturbation's (epsilon, delta), the curvature bounds'
    (curvature_shares of it), and step 2's share of the curvature's epsilon."""

    epsilon: float
    delta: float
    op: tuple[float, float]
    curvature: tuple[float, float]
    log_share: float


def fallback_budget_split(budget: Budget, lambda_hat_min: float, k: int) -> FallbackBudget:
    """The unspent budget (`unspent_budget`) split by `curvature_shares` for k curvature bounds: the one split the
    release draws with and the forecast (core.mechanisms.forecast) reads."""
    share, delta_share, log_share = curvature_shares(k)
    eps, dlt = unspent_budget(budget, lambda_hat_min)
    eps_c, dlt_c = share * eps, delta_share * dlt
    return FallbackBudget(eps, dlt, (eps - eps_c, dlt - dlt_c), (eps_c, dlt_c), log_share)


def unspent_budget(budget: Budget, lambda_hat_min: float) -> tuple[float, float]:
    """What the fallback may spend: the release event's (eps, delta), and stage 2's too when lambda_hat_min = 0 (a
    private output) left it unrun (core.mechanisms.baselines.fallback_budget)."""
    return fallback_budget(budget) if lambda_hat_min <= 0 else release_event_budget(budget)


def interval_note(level: float, lam: float, c: Curvature | None = None) -> str:
    """What the fallback's interval covers, in words."""
    if c is not None and c.bound is not None:
        return (f"Objective perturbation (fallback): the interval covers uᵀθ(Pₙ), the coefficient fitted on "
                f"these rows, with probability {level:g} when the curvature's lower bound holds (probability ≥ "
                f"1 − {c.delta:.2g}) ({APPROXIMATE_NOTE}); its width comes from a private estimate of the curvature at "
                "the released point, its noise accounted for, and it accounts for the fallback's ridge.")
    return (
        f"Objective perturbation (fallback): the interval covers uᵀθ_λ(Pₙ), the coefficient of the fit "
        f"regularised by λ = {lam:.3g} (not the unregularised uᵀθ(Pₙ)), to first order in the "
        f"noise, with probability {level:g} when the lower certificate holds (probability ≥ 1 − δₐ); "
        "the curvature it uses is the certified bound at the unregularised fit."
    )


@dataclass(frozen=True)
class FallbackDraw:
    """Objective perturbation on the unspent (epsilon, delta) and the curvature at its point along k directions.

    point : theta_hat, the perturbed fit (private). lambda_reg, noise_scale : its lam and s.
    curvatures : core.mechanisms.curvature's bounds, one per direction (private). intervals : each direction's curvature
        interval (None where no bound was certified), and half_widths the half-width each direction gets: that
        interval's, or `fallback_half_width` without it.
    """

    epsilon: float
    delta: float
    point: np.ndarray
    lambda_reg: float
    noise_scale: float
    curvatures: tuple[Curvature, ...]
    intervals: tuple[CurvatureInterval | None, ...]
    half_widths: tuple[float, ...]


def fallback_draw(problem: Problem, directions: np.ndarray, lambda_hat_min: float, budget: Budget, level: float,
                  rng: np.random.Generator, calibration: str) -> FallbackDraw | None:
    """The unspent budget shared by `curvature_shares`: the curvature's share to core.mechanisms.curvature at the
    released point along the k rows of `directions` (one set of bounds: core.mechanisms.curvature.curvatures), the rest
    to (15) with its noise by `calibration`; each interval at `level`. None when the perturbed fit was not certified
    (docs/privacy.md, limits)."""
    split = fallback_budget_split(budget, lambda_hat_min, directions.shape[0])
    try:
        op = objective_perturbation_vector(problem, *split.op, rng, calibration=calibration)
    except NoMinimizerError:
        return None
    lam, s = op.lambda_reg, op.noise_scale
    cs = curvatures(problem, op.value, lam, directions, *split.curvature, BOUND_SHARE * (1.0 - level), rng,
                    split.log_share)
    cis = curvature_intervals(problem, op.value, cs, s, lam, level)
    wide = fallback_half_width(lambda_hat_min, lam, s, level, problem.geometry)
    return FallbackDraw(split.epsilon, split.delta, op.value, lam, s, cs, cis,
                        tuple(wide if ci is None else ci.half for ci in cis))


def fallback_release(
    problem: Problem,
    u: np.ndarray,
    lambda_hat_min: float,
    declined: Release,
    budget: Budget,
    rng: np.random.Generator,
) -> Release:
    """Objective perturbation on the unspent (eps', delta') in place of Algorithm 5's bottom `declined`
    (`fallback_draw` along u, objective perturbation's noise by declined.calibration).

    The result keeps `declined`'s reason (why (14) failed) and its non-private fields, with status "fallback", the
    value u^T theta_hat, the curvature interval at declined.interval_level (or, without a curvature bound, the
    interval of `fallback_half_width`), and the fallback's epsilon, delta, lambda_reg, noise scale s and curvature.
    """
    if declined.status != "bottom":
        raise ValueError("the fallback replaces only a bottom of Algorithm 5")
    level = declined.interval_level
    fb = fallback_draw(problem, u[None, :], lambda_hat_min, budget, level, rng, declined.calibration)
    if fb is None:
        return dataclasses.replace(declined, reason=f"{declined.reason}; the fallback's fit was not certified")
    lam, s, value = fb.lambda_reg, fb.noise_scale, float(u @ fb.point)
    (c,), (ci,), (half,) = fb.curvatures, fb.intervals, fb.half_widths
    return dataclasses.replace(
        declined,
        status=FALLBACK,
        value=value,
        interval=(value - half, value + half),
        fallback_epsilon=fb.epsilon,
        fallback_delta=fb.delta,
        fallback_lambda_reg=lam,
        fallback_noise_scale=s,
        fallback_curvature=c,
        fallback_interval=ci,
        interval_note=interval_note(level, lam, c if ci is not None else None),
        population=fallback_population(value, ci, s, c, lam, problem.fit.lam_reg, problem.n,
                                       problem.geometry.loss.name),
    )
