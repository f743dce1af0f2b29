"""The paper's simulation (section 4.1; SPEC section 7), and its logistic counterpart.

theta* = norm * v/||v|| with v ~ N(0, I_d); x_i ~ Uni[-1,1]^d;
robust:   y_i = <theta*, x_i> + noise * Laplace(1);
logistic: y_i = +1 with probability 1/(1 + exp(-<theta*, x_i>)), else -1.
"""

from __future__ import annotations

import numpy as np

from core.data.dataset import Dataset
from core.errors import DataError


def synthetic(
    n: int,
    d: int,
    loss: str = "robust",
    theta_norm: float = 1.0,
    noise: float = 1.0,
    seed: int | None = None,
) -> Dataset:
    """Draw a synthetic sample; `noise` is the Laplace scale (robust only). Seeded for replay."""
    if not (isinstance(n, (int, np.integer)) and isinstance(d, (int, np.integer)) and d >= 1 and n > d):
        raise DataError(f"synthetic data needs integers n > d >= 1, got n = {n}, d = {d}")
    if not (np.isfinite(theta_norm) and theta_norm >= 0 and np.isfinite(noise) and noise >= 0):
        raise DataError("the norm of theta* and the noise scale must be finite and >= 0")
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(d)
    theta_star = theta_norm * v / np.linalg.norm(v)
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    eta = X @ theta_star
    if loss == "robust":
        y = eta + noise * rng.laplace(size=n)
    elif loss == "logistic":
        y = np.where(rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-eta)), 1.0, -1.0)
    else:
        raise DataError(f"unknown loss {loss!r}; choose 'robust' or 'logistic'")
    names = tuple(f"x{j}" for j in range(d))
    return Dataset(X=X, y=y, feature_names=names, source=f"synthetic {loss} (seed {seed})", theta_star=theta_star)
