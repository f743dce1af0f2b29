"""Inference for the population: an interval for u^T theta_pop that accounts for sampling as well as privacy noise.

The private interval covers u^T theta(P_n), the coefficient fitted on these n rows. When the rows are a simple random
sample of a population (an assumption, stated wherever this interval is shown), u^T theta(P_n) itself varies around
the population's u^T theta_pop with variance about u^T H^-1 Sigma H^-1 u / n (Sigma the covariance of the per-row
gradient). For the logistic loss, when the model holds, Sigma = H (the information equality), so that variance is
u^T H^-1 u / n <= ||H^-1 u|| / n (Cauchy-Schwarz, ||u|| = 1), H here the Hessian of the objective (1), its ridge
lam_reg included (with lam_reg > 0 the equality holds only approximately), and each branch already holds a private
bound:

- Algorithm 5: u^T (H + lam_reg I)^-1 u <= 1/lam0, lam0 = lambda_hat_min + lam_reg (certified at theta(P_n));
- the fallback with a proven curvature interval: ||(H(theta_hat) + lam_reg I)^-1 u|| <= U (core.mechanisms.curvature),
  at the released point, which stands in for the fit to first order (only for the sampling term).

The population interval adds the two normal errors in quadrature, q sqrt(sd_privacy^2 + sd_sampling^2), and keeps the
private interval's other terms (ridge bias, solver slack). It costs no budget: a function of private outputs and n.
It is an approximation twice over (large-sample normality, and the information equality, which a misspecified model
breaks), so it says so, and its coverage is measured (docs/experiments.md). No population (an infinite one) is
assumed, so no finite-population correction is made: with all of a population's records it is conservative. The
robust loss has no information equality, and gets no population interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.mechanisms.curvature import Curvature, CurvatureInterval, bound_quantile
from core.privacy.gaussian import normal_quantile

OFF_MODEL = ("off the model — sampling variances about twice what the model assumes — it covered as little as 89.2 % "
             "(87.8–90.5 %) at a stated 95 %, the lowest over the misspecified populations we measured "
             "(docs/experiments.md)")
POPULATION_NOTE = ("approximate: it assumes the rows are a simple random sample of the population and that the "
                   "logistic model holds (so that the sampling variance is uᵀH⁻¹u/n), and holds only then: "
                   f"{OFF_MODEL}; large-sample normal; coverage measured, not proven")


@dataclass(frozen=True)
class PopulationInterval:
    """An interval for the population's coefficient: interval, its level, the privacy and sampling standard
    deviations it combines (private upper bounds), and what it assumes. Private."""

    interval: tuple[float, float]
    level: float
    privacy_sd: float
    sampling_sd: float
    note: str = POPULATION_NOTE


def algorithm5_population(value: float, level: float, noise_sd: float, slack: float, lam0: float, n: int,
                          loss: str) -> PopulationInterval | None:
    """Algorithm 5's release: privacy sd sigma w_bar, sampling sd sqrt(1/(lam0 n))."""
    if loss != "logistic" or not lam0 > 0:
        return None
    return _combine(value, level, normal_quantile(0.5 + level / 2.0), noise_sd, math.sqrt(1.0 / (lam0 * n)),
                    slack)


def fallback_population(value: float, ci: CurvatureInterval | None, s: float, c: Curvature, n: int,
                        loss: str) -> PopulationInterval | None:
    """The fallback with a proven curvature interval: privacy sd s U, sampling sd sqrt(U/n); the interval's noise
    term and the sampling term at the quantile of an interval that uses U (core.mechanisms.curvature.bound_quantile)
    add in quadrature, and its other terms (ridge bias, the Hessians' remainder, slack) are kept whole, so that with
    no sampling it is the private interval itself."""
    if loss != "logistic" or ci is None or c.bound is None:
        return None
    sampling = math.sqrt(c.bound / n)
    half = math.hypot(ci.noise, bound_quantile(ci.level) * sampling) + ci.half - ci.noise
    return PopulationInterval((value - half, value + half), ci.level, s * c.bound, sampling)


def _combine(value: float, level: float, q: float, privacy_sd: float, sampling_sd: float,
             extra: float) -> PopulationInterval:
    half = q * math.hypot(privacy_sd, sampling_sd) + extra
    return PopulationInterval((value - half, value + half), level, privacy_sd, sampling_sd)
