"""Releasing the whole vector theta(P_n): Algorithm 3 (q.s.c. GLMs) and Algorithm 7 (smooth losses).

Both take a TOTAL (eps, delta):
- Algorithm 3 runs Algorithm 2 and the Gaussian step each at (eps/2, delta/2); Theorem 1 makes
  the pair (eps, delta)-DP. Noise N(0, sigma^2 t(lambda_hat + lam_reg)^2 I) (Corollary 3.1).
- Algorithm 7 runs Algorithm 6 with the recursion of Corollary 6.2 at (eps/2, delta/2) on the
  statistic lambda_min + lam_reg, then noise W sigma(eps/2, delta/2) (Proposition 7.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from core.certificates import RecursiveBound, lambda_min_certificate, recursive_bound
from core.fit import FitResult
from core.gaussian import check_epsilon_delta, sigma
from core.geometry import Geometry
from core.recursion import c1_holds, recursion_down, smooth_recursion, t_bound
from core.stability import solver_slack


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


def algorithm3(
    fit: FitResult, g: Geometry, epsilon: float, delta: float, rng: np.random.Generator, calibration: str = "paper"
) -> FullVectorRelease:
    """Algorithm 3: local output perturbation of theta(P_n); bottom if lambda_hat + lam_reg = 0.

    Corollary 3.1 needs (C1); lambda_hat > 0 implies it, and it is checked explicitly as well.
    """
    check_epsilon_delta(epsilon, delta, "Algorithm 3")
    eps, dlt = epsilon / 2.0, delta / 2.0
    cert = lambda_min_certificate(fit, g, eps, dlt, rng)
    s = sigma(eps, dlt, calibration)
    lam = cert.lambda_hat + fit.lam_reg
    t = t_bound(lam, g, fit.n)
    ok = lam > 0 and c1_holds(cert.lambda_hat, g, fit.n, fit.lam_reg) and math.isfinite(t)
    # The fits of P_n and of a neighbour (lambda_min' + lam_reg >= R(lambda_hat) + lam_reg) lie within
    # solver_slack of the exact minimisers: the sensitivity t grows by both slacks.
    slack = 2.0 * solver_slack(recursion_down(cert.lambda_hat, g, fit.n, fit.lam_reg) + fit.lam_reg, g) if ok else 0
    return _finish("algorithm3", fit, cert, s, t + slack if ok and math.isfinite(slack) else None,
                   "lambda_hat_min + lambda_reg = 0 or (C1) fails", epsilon, delta, rng)


def algorithm7(
    fit: FitResult, g: Geometry, epsilon: float, delta: float, rng: np.random.Generator, calibration: str = "paper"
) -> FullVectorRelease:
    """Algorithm 7: the generic smooth-loss release under condition (C2)."""
    check_epsilon_delta(epsilon, delta, "Algorithm 7")
    eps, dlt = epsilon / 2.0, delta / 2.0
    rec = smooth_recursion(g, fit.n, fit.lam_reg)
    cert = recursive_bound(fit.lambda_min + fit.lam_reg, rec, eps, dlt, rng, "lower")
    s = sigma(eps, dlt, calibration)
    lam, n = cert.lambda_hat, fit.n
    W = None
    if lam >= max(3.0 * g.G1 / n, math.sqrt(12.0 * g.G0 * g.G2 / n)):  # condition (C2)
        W = (lam - math.sqrt(lam * lam - 8.0 * g.G0 * g.G2 / n)) / (2.0 * g.G2)
        W += 2.0 * solver_slack(rec.step(lam), g)  # as in Algorithm 3: the fits' tolerance
        W = W if math.isfinite(W) else None
    return _finish("algorithm7", fit, cert, s, W, "condition (C2) fails at lambda_hat", epsilon, delta, rng)


def _finish(name, fit, cert, s, scale, why_bottom, epsilon, delta, rng) -> FullVectorRelease:
    common = dict(algorithm=name, sigma=s, certificate=cert, epsilon_total=float(epsilon), delta_total=float(delta))
    if scale is None:
        return FullVectorRelease(status="bottom", reason=why_bottom, value=None, noise_scale=None, **common)
    if not fit.has_minimiser:  # only on the certificate's failure event: lambda_min is 0 for such data
        return FullVectorRelease(status="bottom", reason="the data have no certified minimiser", value=None,
                                 noise_scale=None, **common)
    noise_scale = s * scale
    value = fit.theta + noise_scale * rng.standard_normal(fit.d)
    return FullVectorRelease(status="released", reason="certified", value=value, noise_scale=noise_scale, **common)
