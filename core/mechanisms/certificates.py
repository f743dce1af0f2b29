"""Private certificates on the Hessian's extreme eigenvalues (stages 1 and 2).

- recursive_bound: Algorithm 6 (and its mirror image, Algorithm 4's steps ii-iii): a noisy count
  N_hat = N + Lap(1/eps), k = ln(1/(2 delta))/eps, m = max(0, floor(N_hat - k)), then the
  recursion inverted m times. Pure eps-DP (N has sensitivity 1, Proposition 6.1); the bound
  holds with probability >= 1 - delta.
- lambda_min_certificate: Algorithm 2, recursion (10) widened for rounding (core.mechanisms.recursion.down_recursion).
- lambda_max_certificate: Algorithm 4, recursion (12); m uses N_hat, not the printed "N - k".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from core.errors import BudgetError
from core.estimator.fit import FitResult
from core.estimator.geometry import Geometry
from core.estimator.rounding import eigen_error, hessian_error
from core.mechanisms.recursion import down_recursion, up_recursion
from core.privacy.gaussian import check_epsilon_delta
from core.privacy.marks import NOT_PRIVATE


class Recursion(Protocol):
    def count(self, lam: float) -> int: ...
    def inverse(self, m: int) -> float: ...


@dataclass(frozen=True)
class RecursiveBound:
    """One private eigenvalue certificate: every intermediate of Algorithm 6 / 2 / 4.

    Attributes
    ----------
    kind : "lower" (lambda_hat <= statistic w.p. >= 1 - delta) or "upper" (lambda_hat >= statistic).
    statistic : the true value (lambda_min or lambda_max). NOT private.
    N : the exact recursion count. NOT private.
    noise : the Laplace(1/epsilon) draw. NOT private (N_hat - noise = N).
    N_hat : N + noise, the released count. Private.
    k : ln(1/(2 delta))/epsilon, the safety offset.
    m : max(0, floor(N_hat - k)). Private.
    lambda_hat : the certified bound. Private.
    epsilon, delta : this stage's privacy parameters (pure epsilon-DP; delta is the failure rate).
    """

    kind: str
    statistic: float = field(metadata=NOT_PRIVATE)
    N: int = field(metadata=NOT_PRIVATE)
    noise: float = field(metadata=NOT_PRIVATE)
    N_hat: float
    k: float
    m: int
    lambda_hat: float
    epsilon: float
    delta: float

    @property
    def covers(self) -> bool:
        """Whether the certificate holds on this draw (compares with the NON-private statistic)."""
        if self.kind == "lower":
            return self.lambda_hat <= self.statistic
        return self.lambda_hat >= self.statistic


def check_stage_budget(epsilon: float, delta: float, what: str) -> None:
    """A Laplace-count stage needs eps > 0 and 0 < delta < 1/2 (P(Lap(1) >= ln(1/(2 delta))) = delta)."""
    check_epsilon_delta(epsilon, delta, what)
    if delta >= 0.5:
        raise BudgetError(f"delta for {what} must be below 1/2 (Proposition 6.1), got {delta:g}")


def steps_to_invert(N_hat: float, epsilon: float, delta: float) -> tuple[float, int]:
    """(k, m): k = ln(1/(2 delta))/eps and m = max(0, floor(N_hat - k)).

    floor, not round: m <= N - 1 whenever the noise is below k, the event of probability 1 - delta.
    """
    k = math.log(1.0 / (2.0 * delta)) / epsilon
    return k, max(0, math.floor(N_hat - k))


def recursive_bound(
    statistic: float,
    recursion: Recursion,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    kind: str,
    released: float | None = None,
) -> RecursiveBound:
    """Algorithm 6 (kind "lower") or Algorithm 4 steps ii-iii (kind "upper") for any recursion.

    released: the noisy count N_hat of an earlier draw, read back (a certificate kept by the ledger): no noise is
    drawn, and every other field follows from it and the data as on the day it was drawn."""
    check_stage_budget(epsilon, delta, f"the {kind} eigenvalue bound")
    N = recursion.count(statistic)
    if released is None:
        noise = float(rng.laplace(0.0, 1.0 / epsilon))
        N_hat = N + noise
    else:
        N_hat = float(released)
        noise = N_hat - N
    k, m = steps_to_invert(N_hat, epsilon, delta)
    return RecursiveBound(
        kind=kind,
        statistic=float(statistic),
        N=N,
        noise=noise,
        N_hat=N_hat,
        k=k,
        m=m,
        lambda_hat=recursion.inverse(m),
        epsilon=float(epsilon),
        delta=float(delta),
    )


def lambda_min_certificate(
    fit: FitResult, g: Geometry, epsilon: float, delta: float, rng: np.random.Generator, released: float | None = None
) -> RecursiveBound:
    """Algorithm 2: a private lower bound on lambda_min(P_n), eps-DP, valid w.p. >= 1 - delta.

    The statistic is the computed lambda_min less its public rounding bound e (core.estimator.rounding.eigen_error), 0
    for data without a certified minimiser: never above lambda_min(P_n), at most 2e below it, and counted by the
    widened recursion of core.mechanisms.recursion.down_recursion (docs/privacy.md, "Data with no minimiser").
    """
    rec = down_recursion(g, fit.n, fit.lam_reg)
    return recursive_bound(lambda_min_statistic(fit, g), rec, epsilon, delta, rng, "lower", released)


def lambda_min_statistic(fit: FitResult, g: Geometry) -> float:
    """Stage 1's statistic: max(0, computed lambda_min - e) for a certified fit, 0 otherwise. NOT private."""
    if not fit.has_minimiser:
        return 0.0
    return max(0.0, fit.lambda_min - eigen_error(fit.n, fit.d, g.G1, g.r, fit.grad_tol))


def lambda_max_statistic(fit: FitResult, g: Geometry) -> float:
    """Stage 2's statistic: min(G1, (computed lambda_max + e_H) e^(r l)), l the fit's certified distance, for a
    certified fit (never below lambda_max(P_n)); the cap G1 otherwise. NOT private."""
    if not fit.has_minimiser:
        return g.G1
    raised = (fit.lambda_max + hessian_error(fit.n, fit.d, g.G1, g.r, fit.grad_tol)) * math.exp(g.r * fit.distance)
    return min(g.G1, raised)


def lambda_max_certificate(
    fit: FitResult,
    g: Geometry,
    lambda_hat_min: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    released: float | None = None,
) -> RecursiveBound:
    """Algorithm 4: a private upper bound on lambda_max(P_n) given the certified lambda_hat_min > 0.

    Data without a minimiser (lambda_min := 0) reach this stage only on stage 1's failure event; their
    lambda_max is taken as the cap G1, so the count is 0 and nothing fails.
    """
    rec = up_recursion(lambda_hat_min, g, fit.n, fit.lam_reg)
    return recursive_bound(lambda_max_statistic(fit, g), rec, epsilon, delta, rng, "upper", released)
