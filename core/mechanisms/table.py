"""A private regression table: k coefficients of theta(P_n) (or all d) in one release, at one budget.

The table spends what one coefficient's release spends (core.mechanisms.pipeline, docs/method.md §7 and §9: the same
Budget, split and fallback) and runs the same stages. Stages 1-3 (lambda_hat_min, lambda_hat_max and the test (14))
involve no direction, so they run once. The release event's (eps', delta') = (2 eps_c, (1 + e^eps_c) delta_c) then goes
to one mechanism on the whole vector, chosen by the test's private outcome as a single release chooses:
- the test passed: Algorithm 3's Gaussian step at (eps', delta'), theta(P_n) + N(0, sigma(eps', delta')^2 t'^2 I),
  t' = t(lambda_hat_min + lam_reg) widened for the fits' tolerance (core.mechanisms.full_vector.algorithm3_scale),
  which bounds ||theta(P_n) - theta(P'_n)|| whenever lambda_hat_min <= lambda_min (Corollary 3.1);
- the test failed, fallback on: objective perturbation (15) on the unspent budget, with one set of private curvature
  bounds at its released point along the k coordinates (core.mechanisms.fallback.fallback_draw);
- otherwise bottom.
Publishing some coordinates of one vector is post-processing: a table of any k costs one release. The total is the
single release's by the same argument (docs/privacy.md, "A regression table").

The table's coverage (`COVERAGES`, a public choice): "together", the default, makes the intervals simultaneous: each
row's is at level 1 - a/k, so all k cover their theta_j(P_n) at once with probability >= 1 - a (Bonferroni); "each"
gives every row its own interval at level 1 - a, as a regression table usually does, so each covers its coefficient
with probability >= 1 - a and all k at once with probability >= 1 - k a only. Either holds on the certificate's event
for the Gaussian step, and by the fallback's proven intervals (core.mechanisms.curvature, .fallback). The choice is
public and made before any noise, so its privacy and its cost are the same: the Gaussian step's release is the same
draw for draw, only its quantile moves; the fallback's split rule and its curvature bound read the row's level, so its
split may differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.errors import DataError, InputError
from core.estimator.geometry import Geometry
from core.estimator.problem import Problem
from core.mechanisms.certificates import RecursiveBound
from core.mechanisms.curvature import CurvatureProbe
from core.mechanisms.fallback import FallbackDraw, fallback_draw
from core.mechanisms.full_vector import FullVectorRelease, algorithm3_scale, gaussian_step
from core.mechanisms.pipeline import Certified, certify, check_certified, check_fallback_accounting
from core.mechanisms.release import BOTTOM, FALLBACK, RELEASED, interval_target
from core.mechanisms.split import release_event_budget
from core.mechanisms.stability import StabilityTest, solver_slack
from core.privacy.accounting import Budget
from core.privacy.gaussian import normal_quantile, sigma
from core.privacy.marks import NOT_PRIVATE

ALL = "all"
TOGETHER, EACH = "together", "each"
COVERAGES = (TOGETHER, EACH)  # all rows at once at the level (the default), or each row on its own


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


def check_coverage(coverage: str) -> str:
    """coverage if it is one of COVERAGES, else an InputError naming the setting."""
    if coverage not in COVERAGES:
        raise InputError(f"{{coverage}} is one of {', '.join(COVERAGES)}, got {coverage!r}", "coverage")
    return coverage


def row_level(level: float, k: int, coverage: str = TOGETHER) -> float:
    """Each row's level: 1 - (1 - level)/k when all k rows are to cover at once with probability >= level
    ("together"), level itself when each row is to cover on its own ("each")."""
    return 1.0 - (1.0 - level) / k if check_coverage(coverage) == TOGETHER else level


@dataclass(frozen=True)
class TableRelease:
    """k coefficients released together, by the Gaussian step (status "released"), the fallback ("fallback") or
    not at all (bottom).

    names, indices : the coefficients, in the order asked for.
    values, intervals, half_widths : private; None for bottom. Every row of the Gaussian step has the same
        half-width; the fallback's rows each have their own curvature bound.
    level, coverage : the table's level, for all rows at once ("together") or for each row ("each"); each row's
        interval is at `row_level(level, k, coverage)`.
    lambda_min, lambda_max, test : stages 1-3 (private). probe : the curvature reading that chose the fallback's split
        when lambda_hat_min = 0 (core.mechanisms.split; None otherwise). Private.
    vector : the Gaussian step's release (None unless it ran); fallback : the fallback's draw (None unless it ran).
        Their values hold every coordinate and are not published, only `values`.
    fitted : theta_j(P_n) of the fit, for teaching views only. NOT private.
    """

    names: tuple[str, ...]
    indices: tuple[int, ...]
    status: str
    reason: str
    values: tuple[float, ...] | None
    intervals: tuple[tuple[float, float], ...] | None
    half_widths: tuple[float, ...] | None
    level: float
    budget: Budget
    calibration: str
    lambda_min: RecursiveBound
    lambda_max: RecursiveBound | None
    test: StabilityTest
    probe: CurvatureProbe | None
    vector: FullVectorRelease | None = field(repr=False)
    fallback: FallbackDraw | None = field(repr=False)
    fitted: tuple[float, ...] = field(metadata=NOT_PRIVATE)
    coverage: str = TOGETHER

    @property
    def k(self) -> int:
        return len(self.indices)

    @property
    def row_level(self) -> float:
        return row_level(self.level, self.k, self.coverage)

    @property
    def targets(self) -> tuple[str, ...]:
        """What each row's interval covers (core.mechanisms.release.FITTED or RIDGE; () for bottom): a fallback's row
        without a certified curvature covers the ridge-regularised fit's coefficient."""
        if self.values is None:
            return ()
        certified = (True,) * self.k if self.fallback is None else tuple(i is not None for i in self.fallback.intervals)
        return tuple(interval_target(self.status, c) for c in certified)


def _half_width(noise_scale: float, lam0: float, g: Geometry, level: float) -> float:
    """z_{1-a/2} (noise's sd) + l(lambda_0): a Gaussian step's half-width at one row's level."""
    return normal_quantile(0.5 + level / 2.0) * noise_scale + solver_slack(lam0, g)


def planned_half_width(lambda_hat: float, g: Geometry, n: int, lam_reg: float, budget: Budget, k: int,
                       calibration: str = "paper", level: float = 0.95, coverage: str = TOGETHER) -> float | None:
    """Each row's half-width in a table of k whose test passed with certificate lambda_hat; None when the Gaussian
    step would give bottom there. For plans (core.teaching.planner), from assumptions."""
    scale = algorithm3_scale(lambda_hat, g, n, lam_reg)
    if scale is None:
        return None
    s = sigma(*release_event_budget(budget), calibration)
    return _half_width(s * scale, lambda_hat + lam_reg, g, row_level(level, k, coverage))


def release_table(problem: Problem, names: str | tuple[str | int, ...], budget: Budget, rng: np.random.Generator,
                  calibration: str = "paper", level: float = 0.95, fallback: bool = False,
                  coverage: str = TOGETHER) -> TableRelease:
    """The chosen coefficients in one release of `budget` (the module docstring), their intervals at `level` for all
    rows at once or for each (`coverage`): `certify`, then `finish_table` from those certificates, draw for draw."""
    check_fallback_accounting(fallback, budget.accounting)
    idx = coordinates(problem, names)
    row_level(level, len(idx), coverage)  # checks the coverage before any noise
    c = certify(problem, idx[0], budget, rng, fallback)
    return finish_table(problem, c, idx, rng, calibration, level, fallback, coverage)


def finish_table(problem: Problem, c: Certified, names: str | tuple[str | int, ...], rng: np.random.Generator,
                 calibration: str = "paper", level: float = 0.95, fallback: bool = False,
                 coverage: str = TOGETHER) -> TableRelease:
    """The table's release from certificates drawn earlier (core.mechanisms.pipeline.certify: stages 1-3 and the probe
    do not depend on the coefficients, so one set serves a table as it serves one coefficient); the branch depends on
    the private certificates only."""
    check_fallback_accounting(fallback, c.budget.accounting)
    check_certified(problem, c)
    idx = coordinates(problem, names)
    each = row_level(level, len(idx), coverage)
    f, g, budget = problem.fit, problem.geometry, c.budget
    lmin, lmax, test, probe = c.lambda_min, c.lambda_max, c.test, c.probe
    fitted = tuple(float(f.theta[j]) for j in idx) if f.has_minimiser else tuple(float("nan") for _ in idx)
    common = dict(names=tuple(problem.feature_names[j] for j in idx), indices=idx, level=float(level),
                  budget=budget, calibration=calibration, lambda_min=lmin, lambda_max=lmax, test=test, probe=probe,
                  fitted=fitted, coverage=coverage)
    if test.passed:
        eps, dlt = release_event_budget(budget)
        vec = gaussian_step("algorithm3", f, lmin, sigma(eps, dlt, calibration),
                            algorithm3_scale(lmin.lambda_hat, g, f.n, f.lam_reg),
                            "lambda_hat_min + lambda_reg = 0 or (C1) fails", eps, dlt, rng)
        if vec.status != RELEASED:
            return _bottom(vec.reason, common, vec)
        half = _half_width(vec.noise_scale, lmin.lambda_hat + f.lam_reg, g, each)
        return _released(RELEASED, test.reason, [vec.value[j] for j in idx], [half] * len(idx), common, vec=vec)
    if not fallback:
        return _bottom(test.reason, common)
    fb = fallback_draw(problem, np.eye(problem.d)[list(idx)], lmin.lambda_hat, budget, each, rng, calibration, probe)
    if fb is None:
        return _bottom(f"{test.reason}; the fallback's fit was not certified", common)
    return _released(FALLBACK, test.reason, [fb.point[j] for j in idx], fb.half_widths, common, fb=fb)


def _bottom(reason: str, common: dict, vec: FullVectorRelease | None = None) -> TableRelease:
    return TableRelease(status=BOTTOM, reason=reason, values=None, intervals=None, half_widths=None, vector=vec,
                        fallback=None, **common)


def _released(status: str, reason: str, values: list, halves, common: dict, vec: FullVectorRelease | None = None,
              fb: FallbackDraw | None = None) -> TableRelease:
    values_ = tuple(float(v) for v in values)
    halves_ = tuple(float(h) for h in halves)
    return TableRelease(status=status, reason=reason, values=values_, half_widths=halves_,
                        intervals=tuple((v - h, v + h) for v, h in zip(values_, halves_, strict=True)),
                        vector=vec, fallback=fb, **common)
