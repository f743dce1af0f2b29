"""Covariate domains and the constants they imply (docs/method.md §2).

For a GLM loss, G0 = sup|h'| r, G1 = ||h''|| r^2 and G2 = ||h'''|| r^3 with r = rad_2(X)
(section 2.1.1). The gradient set is an l_inf ball of radius G0/sqrt(d) on the cube and an
l_2 ball of radius G0 on the ball; d_p = d^(1-2/p) is d for the cube (p = inf) and 1 for the
ball (p = 2), as in Corollary 3.5. Quasi-self-concordance: phi(s) = e^s - 1 with the linear
bound (8), phi(s) <= alpha s for s <= (1-rho)/alpha, alpha = 1.2332 and rho = 1/2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from core.errors import DataError, is_real
from core.estimator.losses import Loss

ALPHA = 1.2332
RHO = 0.5
DOMAINS = ("cube", "ball")
# The ball radii the recursions are known to handle: past them (with lambda_reg up to core.estimator.model.MAX_LAM_REG)
# the constants G0 r, G1 r^2, G2 r^3 leave the range where Algorithm 4's count ends in seconds or at all.
MIN_RADIUS, MAX_RADIUS = 1e-2, 1e3


def phi_qsc(s: float) -> float:
    """The quasi-self-concordance function phi(s) = e^s - 1 of Examples 3 and 4."""
    return math.expm1(s)


@dataclass(frozen=True)
class Geometry:
    """A loss on a declared covariate domain, with every constant the recursions use.

    Attributes
    ----------
    domain : "cube" ([-1,1]^d) or "ball" ({||x||_2 <= radius}).
    d : dimension.
    radius : the ball's radius (1 for the cube, whose half-width is fixed at 1).
    r : rad_2(X): sqrt(d) on the cube, radius on the ball.
    G0, G1, G2 : Lipschitz constants of l, its gradient and its Hessian (section 2.1.1).
    d_p : d on the cube, 1 on the ball (Corollary 3.5).
    h2_sup : ||h''||_inf, used by constants (13).
    alpha, rho : constants of the linear bound (8).
    """

    loss: Loss
    domain: str
    d: int
    radius: float
    r: float
    G0: float
    G1: float
    G2: float
    d_p: float
    h2_sup: float
    alpha: float = ALPHA
    rho: float = RHO


def make_geometry(loss: Loss, domain: str, d: int, radius: float | None = None) -> Geometry:
    """Constants of docs/method.md §2 for `loss` on `domain` in dimension `d`."""
    if domain not in DOMAINS:
        raise DataError(f"unknown domain {domain!r}; choose 'cube' or 'ball'")
    if d < 1:
        raise DataError("the design needs at least one feature column")
    if domain == "cube":
        if radius is not None:
            raise DataError("{radius} applies to {domain} ball only; the cube is [-1,1]^d", setting="radius")
        radius, r, d_p = 1.0, math.sqrt(d), float(d)
    else:
        radius = 1.0 if radius is None else radius
        if not (is_real(radius) and MIN_RADIUS <= radius <= MAX_RADIUS):
            raise DataError(f"the ball radius must be a positive number from {MIN_RADIUS:g} to {MAX_RADIUS:g}, "
                            f"got {radius!r}")
        radius = float(radius)
        r, d_p = radius, 1.0
    return Geometry(
        loss=loss,
        domain=domain,
        d=d,
        radius=radius,
        r=r,
        G0=loss.h1_sup * r,
        G1=loss.h2_sup * r**2,
        G2=loss.h3_sup * r**3,
        d_p=d_p,
        h2_sup=loss.h2_sup,
    )


def project(X: NDArray[np.float64], geometry: Geometry) -> tuple[NDArray[np.float64], int]:
    """Project rows onto the declared domain; returns (projected copy, rows changed).

    Data outside the domain would void every sensitivity bound, so this runs before anything
    else: coordinates are clipped to [-1,1] on the cube, rows rescaled to norm `radius` on the ball.
    """
    if geometry.domain == "cube":
        if X.size == 0 or (X.max() <= 1.0 and X.min() >= -1.0):  # cheap common case, no temporaries
            return X, 0
        outside = np.any(np.abs(X) > 1.0, axis=1)
        return np.clip(X, -1.0, 1.0), int(outside.sum())
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    outside = norms > geometry.radius
    if not outside.any():
        return X, 0
    scale = np.ones_like(norms)
    scale[outside] = geometry.radius / norms[outside]
    return X * scale[:, None], int(outside.sum())
