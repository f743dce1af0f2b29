"""Gaussian noise calibration: the (eps, delta)-variance (7) and the analytic Gaussian mechanism.

sigma(eps, delta) is the smallest noise multiplier s for which N(mu, s^2) and N(mu', s^2) with
|mu - mu'| <= 1 are (eps, delta)-indistinguishable (Lemma 2.3). The paper's (7) bounds the
privacy-loss tails separately; the analytic calibration of Balle & Wang (2018) is exact and
never larger. Both are valid wherever (7) calibrates a mean shift (Lemma 2.3, Lemma A.1.i).
"""

from __future__ import annotations

import math
from functools import lru_cache

from dp_accounting import gaussian_mechanism
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtri

from core.errors import BudgetError

CALIBRATIONS = ("paper", "analytic")
SAFETY = 1e-12  # relative margin added to every calibrated sigma: rounding can only add noise


def check_epsilon_delta(epsilon: float, delta: float, what: str = "") -> None:
    """Raise BudgetError unless eps > 0 and 0 < delta < 1 (both finite)."""
    label = f" for {what}" if what else ""
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise BudgetError(f"epsilon{label} must be a positive finite number, got {epsilon}")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise BudgetError(f"delta{label} must lie strictly between 0 and 1, got {delta}")


def sigma_naive(epsilon: float, delta: float) -> float:
    """The closed-form upper bound on (7) stated after it: sigma(eps, delta) <= sigma_naive."""
    a = 2.0 * math.log(2.0 / delta)
    return (math.sqrt(a) + math.sqrt(a + 2.0 * epsilon)) / (2.0 * epsilon)


def log_tail_mass(s: float, epsilon: float) -> float:
    """log[ Phi(-s eps - 1/(2s)) + Phi(-s eps + 1/(2s)) ], the left side of (7), in log space."""
    a = float(log_ndtr(-s * epsilon - 0.5 / s))
    b = float(log_ndtr(-s * epsilon + 0.5 / s))
    hi, lo = max(a, b), min(a, b)
    return hi + math.log1p(math.exp(lo - hi))


@lru_cache(maxsize=4096)
def sigma_paper(epsilon: float, delta: float) -> float:
    """sigma(eps, delta) of eq. (7): inf{ s > 0 : Phi(-s eps - 1/2s) + Phi(-s eps + 1/2s) <= delta }.

    The left side decreases in s, so a bracketed root in log space gives ~1e-15 relative
    accuracy; the result is then nudged up until (7) holds in floating point, plus a relative
    margin of 1e-12 that absorbs rounding in any other evaluation of (7) (never below the inf).
    """
    check_epsilon_delta(epsilon, delta)
    target = math.log(delta)
    hi = sigma_naive(epsilon, delta) * 1.01
    lo = hi
    while log_tail_mass(lo, epsilon) <= target:
        lo *= 0.5
    s = brentq(lambda v: log_tail_mass(v, epsilon) - target, lo, hi, xtol=1e-300, rtol=1e-15, maxiter=200)
    while log_tail_mass(s, epsilon) > target:
        s = math.nextafter(s, math.inf)
    return s * (1.0 + SAFETY)


@lru_cache(maxsize=4096)
def sigma_analytic(epsilon: float, delta: float) -> float:
    """The analytic Gaussian mechanism's multiplier (Balle & Wang 2018), computed by dp_accounting.

    dp_accounting solves to an absolute tolerance `tol` on sigma; adding 2 tol and the relative
    margin keeps the result on the safe side of the exact root.
    """
    check_epsilon_delta(epsilon, delta)
    tol = 1e-13
    return (float(gaussian_mechanism.get_sigma_gaussian(epsilon, delta, tol=tol)) + 2 * tol) * (1.0 + SAFETY)


def sigma(epsilon: float, delta: float, calibration: str = "paper") -> float:
    """sigma(eps, delta) by the chosen calibration: "paper" (eq. 7) or "analytic"."""
    if calibration == "paper":
        return sigma_paper(float(epsilon), float(delta))
    if calibration == "analytic":
        return sigma_analytic(float(epsilon), float(delta))
    raise BudgetError(f"unknown calibration {calibration!r}; choose 'paper' or 'analytic'")


def normal_quantile(p: float) -> float:
    """Phi^{-1}(p)."""
    return float(ndtri(p))
