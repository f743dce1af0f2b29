"""Algorithm 5 with fallback: objective perturbation (15) instead of bottom, on the budget the run has not spent.

When the test (14) fails (which includes lambda_hat_min = 0), Algorithm 5 releases bottom. The paper's
experiments fall back to objective perturbation instead; here the fallback spends exactly what the later stages
would have: the release event (2 eps_c, (1 + e^eps_c) delta_c), and stage 2's (eps_b, delta_b) too when stage 1
certified nothing (stage 2 then never ran), so the total guarantee is unchanged (docs/privacy.md, "Algorithm 5 with
fallback"). The branch is a function of the private certificates only. Part of it, chosen by
core.mechanisms.split's rule, pays for a private bound on the curvature at the released point
(core.mechanisms.curvature), which gives the interval its width.

The interval is core.mechanisms.curvature's, for u^T theta(P_n), where the private curvature localises the fit
(proven at every n). Without it, objective perturbation's theta_hat is read as an estimate of u^T theta_lam(P_n), the
coefficient of the lam-regularised fit, whose interval `fallback_half_width` is proven for every data set, with no
certificate at all (docs/privacy.md). The fallback's guarantee is proven under basic composition only, so it refuses
a budget solved by privacy-loss distributions.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from core.errors import InputError, NoMinimizerError
from core.estimator.geometry import Geometry
from core.estimator.problem import Problem
from core.mechanisms.curvature import (
    BOUND_SHARE,
    PROVEN_NOTE,
    Curvature,
    CurvatureInterval,
    CurvatureProbe,
    curvature_intervals,
    curvatures,
    ridge_quantile,
)
from core.mechanisms.full_vector import objective_perturbation_vector
from core.mechanisms.inference import fallback_population
from core.mechanisms.release import FALLBACK, Release
from core.mechanisms.split import FallbackBudget, fallback_budget_split, stand_in
from core.mechanisms.stability import solver_slack
from core.privacy.accounting import Budget

FALLBACK_CHOICES = ("auto", "on", "off")  # the default, "auto", on every surface


def falls_back(choice: str, loss: str) -> bool:
    """Whether a failed test (14) falls back to objective perturbation: "auto" for the logistic loss, whose realistic
    samples fail (14) (the paper falls back there too), "on" and "off" as chosen. One rule for every surface."""
    if choice not in FALLBACK_CHOICES:
        raise InputError(f"{{fallback}} is one of {', '.join(FALLBACK_CHOICES)}, got {choice!r}", "fallback")
    return choice == "on" or (choice == "auto" and loss == "logistic")


def fallback_half_width(lam: float, s: float, level: float, g: Geometry) -> float:
    """ridge_quantile(d, level) s/lam + l(lam): an interval for u^T theta_lam(P_n), the coefficient of the
    lam-regularised fit, proven for every data set (docs/privacy.md, "Algorithm 5 with fallback").

    Subtracting the first-order conditions, u^T (theta_hat - theta_lam) = -u^T A^-1 b with A = H_bar + lam I, H_bar the
    mean Hessian between the two (positive semidefinite, whatever b did to it), so 0 <= A^-1 <= I/lam; over such
    matrices u^T M b is at most (||b|| + |u^T b|)/(2 lam) in size (the positive eigenvalue of (b u^T + u b^T)/2), and
    u^T b ~ N(0, s^2) is b's first coordinate in a basis starting with u. Plus the solver's tolerance l(lam)
    (core.mechanisms.stability). Private: a function of public constants.
    """
    return ridge_quantile(g.d, level) * s / lam + solver_slack(lam, g)


def interval_note(level: float, lam: float, c: Curvature | None = None) -> str:
    """What the fallback's interval covers, in words: c is the curvature when its interval was given."""
    if c is not None:
        return (f"Objective perturbation (fallback): the interval covers uᵀθ(Pₙ), the coefficient fitted on "
                f"these rows, with probability ≥ {level:g} ({PROVEN_NOTE}); its width comes from a private bound on "
                "the curvature at the released point, its noise accounted for, and it accounts for the fallback's "
                "ridge.")
    return (f"Objective perturbation (fallback): the interval covers uᵀθ_λ(Pₙ), the coefficient of the fit "
            f"regularised by λ = {lam:.3g} and pulled toward 0 by it (not the unregularised uᵀθ(Pₙ)), with "
            f"probability ≥ {level:g}, proven for every data set; no interval for the fitted coefficient could be "
            "proven at this n and ε.")


@dataclass(frozen=True)
class FallbackDraw:
    """Objective perturbation on the unspent (epsilon, delta) and the curvature at its point along k directions.

    split : how the unspent budget was shared (core.mechanisms.split; private where its stand-in is).
    point : theta_hat, the perturbed fit (private). lambda_reg, noise_scale : its lam and s.
    curvatures : core.mechanisms.curvature's bounds, one per direction (private). intervals : each direction's curvature
        interval (None where no bound was certified), and half_widths the half-width each direction gets: that
        interval's, or `fallback_half_width` without it.
    """

    split: FallbackBudget
    point: np.ndarray
    lambda_reg: float
    noise_scale: float
    curvatures: tuple[Curvature, ...]
    intervals: tuple[CurvatureInterval | None, ...]
    half_widths: tuple[float, ...]


def fallback_draw(problem: Problem, directions: np.ndarray, lambda_hat_min: float, budget: Budget, level: float,
                  rng: np.random.Generator, calibration: str, probe: CurvatureProbe | None = None
                  ) -> FallbackDraw | None:
    """The unspent budget shared by core.mechanisms.split's rule at the certificates' stand-in (lambda_hat_min, or the
    `probe` drawn with them): the curvature's share to core.mechanisms.curvature at the released point along the k rows
    of `directions` (one set of bounds: core.mechanisms.curvature.curvatures), the rest to (15) with its noise by
    `calibration`; each interval at `level`. None when the perturbed fit was not certified (docs/privacy.md,
    limits)."""
    split = fallback_split(problem, budget, lambda_hat_min, directions.shape[0], level, calibration, probe)
    try:
        op = objective_perturbation_vector(problem, *split.op, rng, calibration=calibration, ridge=split.ridge)
    except NoMinimizerError:
        return None
    lam, s = op.lambda_reg, op.noise_scale
    cs = curvatures(problem, op.value, problem.fit.lam_reg, directions, *split.curvature, BOUND_SHARE * (1.0 - level),
                    rng, split.log_share)
    cis = curvature_intervals(problem, op.value, cs, s, lam, level)
    wide = fallback_half_width(lam, s, level, problem.geometry)
    return FallbackDraw(split, op.value, lam, s, cs, cis,
                        tuple(wide if ci is None else ci.half for ci in cis))


def fallback_split(problem: Problem, budget: Budget, lambda_hat_min: float, k: int, level: float, calibration: str,
                   probe: CurvatureProbe | None) -> FallbackBudget:
    """core.mechanisms.split.fallback_budget_split for a release on `problem` from its certificates."""
    return fallback_budget_split(budget, lambda_hat_min, k, problem.geometry, problem.n, problem.fit.lam_reg, level,
                                 calibration, probe is not None, stand_in(lambda_hat_min, probe))


def fallback_release(
    problem: Problem,
    u: np.ndarray,
    lambda_hat_min: float,
    declined: Release,
    budget: Budget,
    rng: np.random.Generator,
    probe: CurvatureProbe | None = None,
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
    fb = fallback_draw(problem, u[None, :], lambda_hat_min, budget, level, rng, declined.calibration, probe)
    if fb is None:
        return dataclasses.replace(declined, reason=f"{declined.reason}; the fallback's fit was not certified")
    lam, s, value = fb.lambda_reg, fb.noise_scale, float(u @ fb.point)
    (c,), (ci,), (half,) = fb.curvatures, fb.intervals, fb.half_widths
    return dataclasses.replace(
        declined,
        status=FALLBACK,
        value=value,
        interval=(value - half, value + half),
        fallback_epsilon=fb.split.epsilon,
        fallback_delta=fb.split.delta,
        fallback_shares=fb.split.shares,
        fallback_probe=probe,
        fallback_lambda_reg=lam,
        fallback_noise_scale=s,
        fallback_curvature=c,
        fallback_interval=ci,
        interval_note=interval_note(level, lam, c if ci is not None else None),
        population=fallback_population(value, ci, s, c, problem.n,
                                       problem.geometry.loss.name),
    )
