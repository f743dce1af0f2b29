"""A private regression table: k coefficients of theta(P_n) (or all d) in one release, at one total (eps, delta).

The release is Algorithm 3 (SPEC section 5): stage 1's certified lambda_hat_min at (eps/2, delta/2), then
theta(P_n) + N(0, sigma(eps/2, delta/2)^2 t(lambda_hat_min + lam_reg)^2 I), (eps, delta)-DP by Theorem 1, of which
only the chosen coordinates are published. Publishing fewer is post-processing, so a table of any k costs one
vector's budget: the coefficients share the certificate and one Gaussian step, and each gets the per-coordinate
noise the whole vector has. Each interval is value +- (z_{1-a/2} s t' + l(lambda_0)), t' the noise's scale over
sigma (t widened for the fits' tolerance, core.full_vector) and l the fit's distance to the exact minimiser when
lambda_min + lam_reg >= lambda_0 (as Algorithm 5's): it covers theta_j(P_n) with probability >= (1 - a)(1 - delta/2).

The alternative, k separate Algorithm 5 releases whose k-fold composition (privacy-loss distributions) meets the
same total, pays the total k times over; `separate_budget` gives what each of them may spend, and the table study
(benchmarks/table_study.py, docs/experiments.md) measures both. The table is the default because its intervals
are the narrower ones there, for k = 1 already.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.errors import DataError
from core.full_vector import FullVectorRelease, algorithm3, algorithm3_scale, step_budget
from core.gaussian import normal_quantile, sigma
from core.geometry import Geometry
from core.marks import NOT_PRIVATE
from core.problem import Problem
from core.release import BOTTOM, RELEASED
from core.stability import solver_slack

ALL = "all"


def coordinates(problem: Problem, names: str | tuple[str | int, ...]) -> tuple[int, ...]:
    """The 0-based coordinates a table names: "all", or feature names / indices, each once, in the order given."""
    if isinstance(names, str):
        if names.strip().lower() == ALL:
            return tuple(range(problem.d))
        names = tuple(part.strip() for part in names.split(",") if part.strip())
    chosen = tuple(problem.coordinate(int(x) if isinstance(x, str) and x.isdigit() else x) for x in names)
    if not chosen:
        raise DataError("a table needs at least one coordinate (names such as x0,x1, or all)")
    if len(set(chosen)) < len(chosen):
        raise DataError("a table names each coordinate once")
    return chosen


@dataclass(frozen=True)
class TableRelease:
    """k coefficients released together (Algorithm 3, published in part), or bottom.

    names, indices : the coefficients, in the order asked for.
    values, intervals : private; None for bottom.
    half_width : every coefficient's (one noise scale for all); private, None for bottom.
    vector : Algorithm 3's release (its certificate and noise scale); its value holds every coordinate and is not
        published, only `values`.
    fitted : theta_j(P_n) of the fit, for teaching views only. NOT private.
    """

    names: tuple[str, ...]
    indices: tuple[int, ...]
    status: str
    reason: str
    values: tuple[float, ...] | None
    intervals: tuple[tuple[float, float], ...] | None
    half_width: float | None
    level: float
    epsilon: float
    delta: float
    calibration: str
    vector: FullVectorRelease = field(repr=False)
    fitted: tuple[float, ...] = field(metadata=NOT_PRIVATE)

    @property
    def k(self) -> int:
        return len(self.indices)


def stages(epsilon: float, delta: float) -> dict[str, tuple[float, float]]:
    """Each step's (epsilon, delta) of a table at the total (eps, delta): Algorithm 3's certificate and Gaussian step
    (core.full_vector.step_budget), as documents and the ledger name them."""
    step = step_budget(epsilon, delta)
    return {"lambda_min": (step.epsilon, step.delta), "release": (step.epsilon, step.delta)}


def _half_width(noise_scale: float, lam0: float, g: Geometry, level: float) -> float:
    """z_{1-a/2} (noise's sd) + l(lambda_0): the interval's half-width around a table's value."""
    return normal_quantile(0.5 + level / 2.0) * noise_scale + solver_slack(lam0, g)


def planned_half_width(lambda_hat: float, g: Geometry, n: int, lam_reg: float, epsilon: float, delta: float,
                       calibration: str = "paper", level: float = 0.95) -> float | None:
    """The half-width a table released at the total (eps, delta) has when its certificate is lambda_hat (every row's
    alike, whatever k); None when Algorithm 3 gives bottom there. For plans (core.planner), from assumptions."""
    scale = algorithm3_scale(lambda_hat, g, n, lam_reg)
    if scale is None:
        return None
    step = step_budget(epsilon, delta)
    return _half_width(sigma(step.epsilon, step.delta, calibration) * scale, lambda_hat + lam_reg, g, level)


def release_table(problem: Problem, names: str | tuple[str | int, ...], epsilon: float, delta: float,
                  rng: np.random.Generator, calibration: str = "paper", level: float = 0.95) -> TableRelease:
    """The chosen coefficients of one Algorithm 3 release at the total (eps, delta), with their intervals."""
    idx = coordinates(problem, names)
    f, g = problem.fit, problem.geometry
    vec = algorithm3(f, g, epsilon, delta, rng, calibration)
    fitted = tuple(float(f.theta[j]) for j in idx) if f.has_minimiser else tuple(float("nan") for _ in idx)
    common = dict(names=tuple(problem.feature_names[j] for j in idx), indices=idx, level=float(level),
                  epsilon=float(epsilon), delta=float(delta), calibration=calibration, vector=vec, fitted=fitted)
    if vec.status != RELEASED:
        return TableRelease(status=BOTTOM, reason=vec.reason, values=None, intervals=None, half_width=None, **common)
    half = _half_width(vec.noise_scale, vec.certificate.lambda_hat + f.lam_reg, g, level)
    values = tuple(float(vec.value[j]) for j in idx)
    return TableRelease(status=RELEASED, reason=vec.reason, values=values,
                        intervals=tuple((v - half, v + half) for v in values), half_width=float(half), **common)
