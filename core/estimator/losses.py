"""GLM losses l_theta(x, y) = h(<theta, x>, y) of Examples 1-4 (docs/method.md §1).

Each loss gives h, h' and h'' in the linear predictor t = <theta, x>, vectorised over
samples, together with the sup-norm bounds that set the constants G0, G1, G2 (section 2.1.1).
Both losses are quasi-self-concordant with phi(s) = e^s - 1 (Examples 3 and 4).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from core.errors import DataError

Array = NDArray[np.float64]
NOT_FINITE_RESPONSE = "the response y contains NaN or infinite values; remove or impute those rows"


def _robust_value(t: Array, y: Array) -> Array:
    # phi(s) = log(1+e^s) + log(1+e^-s) = |s| + 2 log(1 + e^-|s|), stable for large |s|.
    a = np.abs(y - t)
    return a + 2.0 * np.log1p(np.exp(-a))


def _robust_d1(t: Array, y: Array) -> Array:
    # d/dt phi(y - t) = -phi'(y - t) = -tanh((y - t)/2)
    return -np.tanh(0.5 * (y - t))


def _robust_d1_of_z(z: Array, y: Array) -> Array:
    # z = t - y: -tanh((y - t)/2) = tanh(z/2)
    return np.tanh(0.5 * z)


def _robust_d2(t: Array, y: Array) -> Array:
    # phi''(s) = (1/2) sech^2(s/2) = 2 e^s / (1 + e^s)^2, written with |s| to avoid overflow.
    e = np.exp(-np.abs(y - t))
    return 2.0 * e / (1.0 + e) ** 2


def _robust_d2_of_d1(h1: Array) -> Array:
    # (1/2) sech^2(s/2) = (1/2)(1 - tanh^2(s/2)) = (1/2)(1 - |h'|)(1 + |h'|); 1 - |h'| is exact for |h'| >= 1/2.
    a = np.abs(h1)
    return 0.5 * (1.0 - a) * (1.0 + a)


def _logistic_value(t: Array, y: Array) -> Array:
    return np.logaddexp(0.0, -y * t)


def _logistic_d1(t: Array, y: Array) -> Array:
    return -y * expit(-y * t)


def _logistic_d1_of_z(z: Array, y: Array) -> Array:
    return _logistic_d1(z, y)


def _logistic_d2(t: Array, y: Array) -> Array:
    p = expit(t)
    return p * (1.0 - p)


def _logistic_d2_of_d1(h1: Array) -> Array:
    # |h'| = expit(-y t) for y in {-1, +1}, and h'' = expit(t) expit(-t) = |h'| (1 - |h'|).
    q = np.abs(h1)
    return q * (1.0 - q)


@dataclass(frozen=True)
class Loss:
    """A GLM loss h(t, y) with the derivative bounds the privacy constants need.

    Attributes
    ----------
    name : "robust" (Example 1/3) or "logistic" (Example 2/4).
    h1_sup : sup |h'|, so that G0 = h1_sup * r.
    h2_sup : ||h''||_inf, so that G1 = h2_sup * r^2 (also the ||h''|| of constants (13)).
    h3_sup : ||h'''||_inf, so that G2 = h3_sup * r^3 (Algorithm 7 only).
    centred : whether h depends on (t, y) through t - y only (the robust loss); the fit then forms z = t - y
        in compensated arithmetic, where a large response would otherwise cancel (core.estimator.fit).
    d1_of_z : h' as a function of z = t - y (centred) or z = t, and y.
    d2_of_d1 : h'' as a function of h' at the same point (an identity of each loss, for labels validated by
        `labels`): the fit gets the Hessian's weights from the gradient's without another transcendental pass.
        Accurate to about 2^-53 absolutely, not relatively: in the tails, where h'' < 1e-16, it may read 0.
    """

    name: str
    h1_sup: float
    h2_sup: float
    h3_sup: float
    value: Callable[[Array, Array], Array]
    d1: Callable[[Array, Array], Array]
    d2: Callable[[Array, Array], Array]
    d2_of_d1: Callable[[Array], Array]
    centred: bool
    d1_of_z: Callable[[Array, Array], Array]

    def labels(self, y: Array) -> Array:
        """Validate responses; logistic labels {0,1}, booleans or {-1,+1} become {-1,+1}."""
        y = np.asarray(y)
        if y.dtype == bool:
            y = y.astype(np.float64)
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise DataError(NOT_FINITE_RESPONSE)
        if self.name != "logistic":
            return y
        values = set(np.unique(y).tolist())
        if values <= {0.0, 1.0}:
            return 2.0 * y - 1.0
        if values <= {-1.0, 1.0}:
            return y
        # The values themselves are never quoted: an error message must not publish the data.
        raise DataError(
            f"logistic regression needs binary labels y in {{0,1}} or {{-1,+1}}, but y takes {len(values)} distinct "
            "values; recode y or use the robust loss"
        )


ROBUST = Loss(
    name="robust",
    h1_sup=1.0,  # |tanh| < 1
    h2_sup=0.5,  # (1/2) sech^2 <= 1/2
    h3_sup=1.0 / (3.0 * math.sqrt(3.0)),  # 0.19245, attained at tanh^2(s/2) = 1/3
    value=_robust_value,
    d1=_robust_d1,
    d2=_robust_d2,
    d2_of_d1=_robust_d2_of_d1,
    centred=True,
    d1_of_z=_robust_d1_of_z,
)

LOGISTIC = Loss(
    name="logistic",
    h1_sup=1.0,
    h2_sup=0.25,
    h3_sup=1.0 / (6.0 * math.sqrt(3.0)),  # 0.0962, max of p(1-p)(1-2p)
    value=_logistic_value,
    d1=_logistic_d1,
    d2=_logistic_d2,
    d2_of_d1=_logistic_d2_of_d1,
    centred=False,
    d1_of_z=_logistic_d1_of_z,
)

LOSSES: dict[str, Loss] = {"robust": ROBUST, "logistic": LOGISTIC}


def get_loss(name: str) -> Loss:
    """Look a loss up by name, with a clear error for anything else."""
    try:
        return LOSSES[name]
    except KeyError:
        raise DataError(f"unknown loss {name!r}; choose one of {', '.join(LOSSES)}") from None
