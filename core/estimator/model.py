"""Which model: the loss, the declared covariate domain and the ridge of the estimator (1).

`ModelSpec` is what a user chooses; `resolve(d)` fixes every default once, for data of dimension
d, and validates the result, so the problem, the documents and the pages all read the same domain
and radius from the resolved spec (a `core.mechanisms.pipeline.Problem` carries it as `problem.model`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.errors import DataError, is_real
from core.estimator.geometry import Geometry, make_geometry
from core.estimator.losses import get_loss
from core.estimator.rounding import response_capacity

# The largest ridge the recursions handle on every domain: above about 1e3 Algorithm 4's count on a small ball runs
# for minutes, and past 1e14 its growth rounds to zero; a ridge above G1 (at most a few hundred here) already
# swamps the data.
MAX_LAM_REG = 100.0
# A declared response bound: above 0 (a bound of 0 would clip every response to 0) and at most 1e15, beyond which no
# admissible (n, d) certifies anyway (core.estimator.rounding.response_capacity); the largest certifiable one is the
# default.
MIN_RESPONSE_BOUND, MAX_RESPONSE_BOUND = 1e-6, 1e15

@dataclass(frozen=True)
class ModelSpec:
    """A loss ("robust" or "logistic"), a domain ("cube" or "ball"), the ball's radius, lambda_reg and a public bound
    on the responses |y| (robust loss; None: the largest the fit certifies for the data's n and d, `bound_for`).

    radius is None on the cube (whose half-width is 1). On the ball, None means the default, fixed
    by `resolve`: the data source's public bound on ||x||_2 when it has one (for census income 2.3503 in the
    centred encoding and 3 in the paper's, `core.data.encoding.RADII`), else sqrt(d), the smallest ball around the
    unit cube, so that data on [-1, 1]^d are never clipped. Hashable: it keys caches and names the model of a
    published release.

    >>> spec = ModelSpec("logistic", "ball").resolve(4)  # the ball's default radius: sqrt(d)
    >>> spec.radius, spec.describe()
    (2.0, 'logistic loss on the ball ‖x‖₂ ≤ 2, λ_reg = 0')
    >>> ModelSpec("robust", lam_reg=101).resolve(2)
    Traceback (most recent call last):
    ...
    core.errors.DataError: lambda_reg must be a finite number >= 0 and at most 100, got 101
    """

    loss: str
    domain: str = "cube"
    radius: float | None = None
    lam_reg: float = 0.0
    response_bound: float | None = None

    def resolve(self, d: int, public_radius: float | None = None) -> ModelSpec:
        """The spec with its defaults fixed for dimension d, validated (DataError says what is wrong).

        public_radius is a bound on ||x||_2 that the data source guarantees from public facts (its encoding);
        it is the ball's default radius when given.
        """
        radius = self.radius
        if self.domain == "ball" and radius is None:
            radius = math.sqrt(d) if public_radius is None else public_radius
        geometry = make_geometry(get_loss(self.loss), self.domain, d, radius)
        lam_reg = self.lam_reg
        if not (is_real(lam_reg) and 0 <= lam_reg <= MAX_LAM_REG):
            raise DataError(f"lambda_reg must be a finite number >= 0 and at most {MAX_LAM_REG:g}, "
                            f"got {lam_reg!r}")
        bound = self.response_bound
        if bound is not None and not (is_real(bound) and MIN_RESPONSE_BOUND <= bound <= MAX_RESPONSE_BOUND):
            raise DataError(f"the response bound must be a number from {MIN_RESPONSE_BOUND:g} to "
                            f"{MAX_RESPONSE_BOUND:g}, got {bound!r}: set {{response_bound}}", "response_bound")
        return ModelSpec(self.loss, self.domain, geometry.radius if self.domain == "ball" else None, float(lam_reg),
                         None if bound is None else float(bound))

    def bound_for(self, n: int, d: int) -> float:
        """The public bound B on |y| for n rows in dimension d: the declared one, or the largest the fit certifies
        (core.estimator.rounding.response_capacity); a declared bound above that is refused (public facts only: n, d,
        the loss).
        inf for the logistic loss, whose labels are +-1."""
        loss = get_loss(self.loss)
        capacity = response_capacity(n, d, loss)
        if not loss.centred:
            return math.inf
        if self.response_bound is None:
            return capacity
        if self.response_bound > capacity:
            raise DataError(
                f"the response bound {self.response_bound:.3g} is above {capacity:.3g}, the largest for which the fit "
                f"is certified at n = {n} and d = {d}: lower {{response_bound}} or rescale y", "response_bound")
        return self.response_bound

    def geometry(self, d: int) -> Geometry:
        """The constants of docs/method.md §2 for this model in dimension d (resolving defaults first)."""
        spec = self.resolve(d)
        return make_geometry(get_loss(spec.loss), spec.domain, d, spec.radius)

    def describe(self) -> str:
        """The model in words, e.g. "logistic loss on the ball ‖x‖₂ ≤ 2.23607, λ_reg = 0"."""
        if self.domain == "cube":
            where = "the cube [−1, 1]ᵈ"
        elif self.radius is None:
            where = "the ball ‖x‖₂ ≤ √d"
        else:
            where = f"the ball ‖x‖₂ ≤ {self.radius:g}"
        return f"{self.loss} loss on {where}, λ_reg = {self.lam_reg:g}"
