"""Whom a guarantee protects: one row, or one person who may fill several rows (group privacy)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# exp(x) overflows a float for x above this.
_LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)


@dataclass(frozen=True)
class PrivacyUnit:
    """Whom the guarantee protects: one row, or one person who may fill several rows.

    The mechanisms are (eps, delta)-DP for data sets that differ in one row (replace-one
    neighbours). A census sample drawn with replacement can hold the same person in k rows, and
    for that person the guarantee is the group-privacy bound for k rows (`per_person`). Drawn
    without replacement, every person fills one row and k = 1.

    unit is "person" for census rows and "row" for uploads (CSV) and synthetic data, where one
    row is taken to be one individual. k = max_rows_per_person depends only on the sample seed,
    the population SIZE N and the sample size n (the draw of row indices), never on the data
    values; N and n are treated as public, so k is public too.
    """

    unit: str  # "person" for census rows, "row" for uploads (CSV) and synthetic data
    max_rows_per_person: int  # k: the largest number of rows one person fills (1 unless drawn with replacement)

    def __post_init__(self) -> None:
        k = self.max_rows_per_person
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"max_rows_per_person must be an integer >= 1, got {k!r}")
        object.__setattr__(self, "max_rows_per_person", int(k))

    def per_person(self, epsilon: float, delta: float) -> tuple[float, float]:
        """The (eps, delta) guarantee for one person filling k rows (group privacy):

            (k eps,  delta * sum_{j=0}^{k-1} e^{j eps}).

        An (eps, delta)-DP mechanism under replace-one neighbours is, by k steps of the triangle
        inequality over a chain of neighbouring data sets, (k eps, delta sum_j e^{j eps})-DP for
        data sets that differ in k rows (Dwork & Roth 2014, The Algorithmic Foundations of
        Differential Privacy, Theorem 2.2 for pure DP; the (eps, delta) form adds the geometric
        sum). For k = 1 it returns (eps, delta) unchanged.

        The sum is (e^{k eps} - 1)/(e^{eps} - 1), computed with expm1 (accurate for small eps),
        and in logarithms when e^{k eps} would overflow; a delta too large for a float is inf,
        never an exception. A delta at or above 1 is a vacuous guarantee.

        >>> PrivacyUnit("row", 1).per_person(1.0, 1e-6)
        (1.0, 1e-06)
        >>> eps, delta = PrivacyUnit("person", 3).per_person(1.0, 1e-6)
        >>> eps, round(delta / 1e-6, 6)  # delta (1 + e + e^2)
        (3.0, 11.107338)
        """
        k = self.max_rows_per_person
        epsilon, delta = float(epsilon), float(delta)
        if k == 1:
            return epsilon, delta
        eps_k = k * epsilon
        if math.isnan(eps_k) or math.isnan(delta):
            return math.nan, math.nan
        if delta == 0.0:
            return eps_k, 0.0
        if math.isinf(eps_k) or math.isinf(delta):
            return eps_k, math.inf
        if epsilon == 0.0:
            return eps_k, k * delta
        if eps_k <= _LOG_FLOAT_MAX:
            return eps_k, delta * (math.expm1(eps_k) / math.expm1(epsilon))
        # log of the sum: (k - 1) eps + log(1 - e^{-k eps}) - log(1 - e^{-eps})
        log_delta = (
            math.log(delta) + (k - 1) * epsilon + math.log(-math.expm1(-eps_k)) - math.log(-math.expm1(-epsilon))
        )
        return eps_k, math.exp(log_delta) if log_delta <= _LOG_FLOAT_MAX else math.inf
