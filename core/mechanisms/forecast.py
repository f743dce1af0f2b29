"""What a release's interval will likely be, before its noise is drawn: the preview after the certificates, and the
Planner before anything is spent, by one rule.

Inputs are private outputs already paid for (lambda_hat_min, lambda_hat_max and the test (14)'s outcome, or the
Planner's assumed eigenvalues in their place) and public facts (n, d, the budget, the level, the declared domain's
constants G1, r). Nothing else is read, so a forecast costs no budget.

- The test passed: Algorithm 5's half-width is known exactly now (core.mechanisms.release).
- The fallback (core.mechanisms.fallback): objective perturbation's (lam, s) are public, so the half-width it gets
  WITHOUT the proven curvature interval, the ridge coefficient's `fallback_half_width`, is exact now. With it, about
  q s ||v|| + l(lam) at its least (||v|| >= 1/(lambda_max + lam_reg)) up to the cap q_0 s/mu_low plus the Hessians'
  remainder at step 1's likely low draw mu_low (`_narrow`), plus a ridge bias that depends on the released point and
  is not forecast. Whether the interval is given depends on step 1's Laplace draw clearing G1/n and the localising
  floor r s chi_d e^{r l} (core.mechanisms.split.certification_chance). Its chance is computed at a stand-in for
  mu = lambda_min(H(theta_hat) + lam_reg I): the larger of lambda_hat_min and stage 1's released count read at its
  99.99 % lower quantile (`count_hint`; the chance then discounted by that miss rate), both lower bounds on the
  curvature at the fit, so the chance is, if anything, too low and the warning errs towards warning. Where the probe
  was drawn, the chance at the curvature's ceiling (`probe_ceiling`, the probe's reading at its 99.99 % upper
  quantile: every Hessian lies below C) bounds it from above and replaces a larger one, or a missing one: so a chance
  is stated even where nothing was certified. For a table of k rows the same at each row's level, with the split for
  k bounds.
- The chance of an informative interval (`Forecast.informative`): the chance of the curvature interval times whether
  its likely top is informative, plus the rest times whether the exact ridge interval is.
- "Uninformative": a likely half-width wider than the coefficient's plausible half-range, a public number: for the
  logistic loss ln 100 (odds ratios from 1/100 to 100 per unit of the feature: wider tells a reader nothing they did
  not know), for a response bound B on the cube or ball, B (the coefficient's effect across the domain would exceed
  the response's whole range). A forecast warns whenever an interval that wide has a chance of at least WARN_AT,
  and says that chance where it is known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.estimator.geometry import Geometry
from core.estimator.model import ModelSpec
from core.estimator.problem import Problem
from core.mechanisms.certificates import RecursiveBound, steps_to_invert
from core.mechanisms.curvature import B_SHARE, CurvatureProbe, cap_quantile, growth, noise_norm_bound
from core.mechanisms.fallback import fallback_half_width
from core.mechanisms.full_vector import op_parameters
from core.mechanisms.recursion import down_recursion
from core.mechanisms.release import interval_half_width
from core.mechanisms.split import (
    DELTA_SHARE,
    SHARE_GRID,
    certification_chance,
    fallback_budget_split,
    fallback_ridge,
    stand_in,
    unspent_budget,
)
from core.mechanisms.stability import StabilityTest, solver_slack
from core.mechanisms.table import TOGETHER, row_level
from core.mechanisms.table import planned_half_width as table_half_width
from core.privacy.accounting import Budget
from core.privacy.gaussian import normal_quantile, sigma

if TYPE_CHECKING:
    from core.mechanisms.pipeline import Certified

LOGISTIC_PLAUSIBLE = math.log(100.0)  # a logistic coefficient's plausible half-range: odds ratios 1/100 to 100
WARN_AT = 0.05  # warn when an uninformative interval has at least this chance
LIKELY = 0.9  # step 1's draw at its (1 - LIKELY) lower quantile gives the certified half-width's likely top
# The chance that stage 1's count, read at this lower quantile, overstates lambda_min. Where the curvature is small,
# a reading high enough to be positive comes mostly from the noise, so a stated "likely narrow" is then often wrong:
# at 1e-3 such readings fired in 8-9 of 3,200 census releases, wrong in 3-5, each an unwarned wide interval; at 1e-4
# in none, with the same false alarms and the same readings at 600,000 rows (docs/experiments.md).
HINT_MISS = 1e-4


@dataclass(frozen=True)
class Forecast:
    """The release's likely interval, before its noise: the branch, the half-width's likely range [low, high], the
    fallback's exact half-width without a curvature interval (wide) and the chance one is given (certified), the
    coefficient's plausible half-range (None when no public one is known), the chance that the interval is narrower
    than it (informative; None when unknown), whether an uninformative interval has a chance of at least WARN_AT, how
    it was obtained and what would help. Private: a function of private outputs and public facts."""

    branch: str
    low: float | None
    high: float | None
    wide: float | None
    certified: float | None
    plausible: float | None
    uninformative: bool
    how: str
    advice: str
    informative: float | None = None


def plausible_half_range(model: ModelSpec) -> float | None:
    """The coefficient's plausible half-range from public facts only (module docstring), or None."""
    if model.loss == "logistic":
        return LOGISTIC_PLAUSIBLE
    return model.response_bound


def count_hint(bound: RecursiveBound, g: Geometry, n: int, lam_reg: float) -> float:
    """Stage 1's count read at its HINT_MISS lower quantile instead of its delta_a one: the recursion (10)'s inverse of
    floor(N_hat - ln(1/(2 HINT_MISS))/eps_a). Below lambda_min except with probability HINT_MISS; positive where
    lambda_hat_min is 0 but the count came close. Post-processing of the released count (private, no budget)."""
    return down_recursion(g, n, lam_reg).inverse(steps_to_invert(bound.N_hat, bound.epsilon, HINT_MISS)[1])


def forecast(g: Geometry, model: ModelSpec, n: int, budget: Budget, test: StabilityTest, lambda_min: float,
             lambda_max: float | None, calibration: str, level: float, fallback: bool,
             hint: float = 0.0, probed: bool = False, curvature: float | None = None,
             ceiling: float | None = None, rows: int = 1, coverage: str = TOGETHER) -> Forecast:
    """The release's likely interval from the certificates (or assumed eigenvalues) and public facts (module
    docstring): lambda_min is lambda_hat_min (0 when nothing was certified), lambda_max lambda_hat_max (None when stage
    2 did not run: G1 bounds it); hint, `count_hint`, stands in for the curvature when lambda_hat_min is 0. probed and
    curvature are what core.mechanisms.split's rule reads: whether the probe was drawn, and the curvature the split is
    chosen for. ceiling, `probe_ceiling`, bounds the curvature at any point from above: the chance computed there
    bounds the true one from above, and replaces a larger (or missing) one. For a table of `rows` coefficients
    (core.mechanisms.table), each row's forecast at its row level for `coverage`: the Gaussian step's half-width,
    the same for every row, or the fallback's with its split for that many bounds."""
    plausible = plausible_half_range(model)
    if test.passed:
        if rows > 1:
            half = table_half_width(lambda_min, g, n, model.lam_reg, budget, rows, calibration, level, coverage)
            if half is None:
                return Forecast("bottom", None, None, None, None, plausible, False,
                                "the test (14) passed but the table's Gaussian step will give ⊥ (C1 fails)", "")
            return _verdict("released", half, half, None, None, plausible,
                            "exact: the table's Gaussian step gives every row this half-width, from these "
                            "certificates and public constants only")
        s = sigma(budget.release.epsilon, budget.release.delta, calibration)
        half = interval_half_width(test, g, n, s, level)[1]
        return _verdict("released", half, half, None, None, plausible,
                        "exact: Algorithm 5's half-width depends on these certificates and public constants only")
    level = row_level(level, rows, coverage)
    if not fallback:
        return Forecast("bottom", None, None, None, None, plausible, False,
                        "the test (14) failed and the fallback is off: nothing will be released", "")
    split = fallback_budget_split(budget, lambda_min, rows, g, n, model.lam_reg, level, calibration, probed,
                                  curvature)
    lam, s = split.op_parameters(g, n, calibration)
    wide = fallback_half_width(lam, s, level, g)
    # The hint reads the same count less cautiously than lambda_hat_min: the larger, and nearer the curvature
    stand_in = max(lambda_min, hint)
    chance, need, centre, scale_1 = certification_chance(g, n, stand_in + model.lam_reg, split.curvature,
                                                         split.log_share, level, s, lam, rows)
    likely_low = max(centre - scale_1 * math.log(1.0 / (2.0 * (1.0 - LIKELY))), need)
    which = "λ̂min" if stand_in == lambda_min else "stage 1's count at its 99.99 % lower quantile"
    if not stand_in > 0:  # no private word on the curvature at the fit, so no chance is given
        chance, likely_low = None, need
    elif stand_in > lambda_min:
        chance *= 1.0 - HINT_MISS  # the hint holds except with probability HINT_MISS
    if ceiling is not None:  # the chance at the curvature's ceiling bounds it from above
        top_chance = certification_chance(g, n, max(ceiling, 0.0) + model.lam_reg, split.curvature, split.log_share,
                                          level, s, lam, rows)[0]
        if chance is None or top_chance < chance:
            chance, which = top_chance, "the private reading of the curvature's ceiling, at its 99.99 % upper quantile"
    narrow = _narrow(g, s, lam, level, likely_low, g.G1 if lambda_max is None else lambda_max, model.lam_reg)
    odds = ("unknown: no curvature was certified at the fit" if chance is None else
            f"about {chance:.0%} (step 1's Laplace draw, with {which} for the curvature)")
    how = (f"the fallback: without a proven curvature interval its half-width is exactly {wide:.3g} (objective "
           f"perturbation's noise over λ, for the ridge's coefficient); the chance that the interval for the fitted "
           f"coefficient is given — when the certified curvature at the released point is at least about "
           f"{need:.3g} — is {odds}; with it the half-width lies near {narrow[0]:.3g} to {narrow[1]:.3g}, plus a "
           "ridge bias not forecast")
    if chance is not None and chance >= 1.0 - WARN_AT:
        low, high = narrow
    elif chance is not None and chance <= WARN_AT:
        low = high = wide
    else:  # either outcome: the range covers both
        low, high = min(narrow[0], wide), max(narrow[1], wide)
    informative = None if chance is None or plausible is None else (
        chance * (narrow[1] < plausible) + (1.0 - chance) * (wide < plausible))
    return _verdict("fallback", low, high, wide, chance, plausible, how, informative)


def _narrow(g: Geometry, s: float, lam: float, level: float, low: float, top: float,
            lam_reg: float) -> tuple[float, float]:
    """The proven curvature interval's likely half-widths: q s ||v|| + l(lam) at ||v|| = 1/(lambda_max + lam_reg)
    (its least), and at step 1's likely low draw `low` its cap q_0 s/low with the Hessians' remainder c_bar
    ((e^A - 1) + k(a_D) e^A)/low at theta_hat = 0 (core.mechanisms.curvature), U and lambda_hat both at `low`."""
    slack = solver_slack(lam, g)
    q = normal_quantile(0.5 + level / 2.0)
    c_bar = noise_norm_bound(s, g.d, B_SHARE * (1.0 - level))
    ratio = g.r * c_bar * math.exp(g.r * slack) / low
    remainder = c_bar * growth(ratio, g.r * slack)[1] / low if ratio < 1 else 0.0
    return q * s / (top + lam_reg) + slack, cap_quantile(level) * s / low + remainder + slack


def from_certificates(problem: Problem, c: Certified, calibration: str, level: float, fallback: bool,
                      rows: int = 1, coverage: str = TOGETHER) -> Forecast:
    """The preview's forecast: `forecast` from certificates drawn on problem (their private outputs and its public
    constants only), for one coefficient or each row of a table of `rows`."""
    lmax = None if c.lambda_max is None else c.lambda_max.lambda_hat
    hint = count_hint(c.lambda_min, problem.geometry, problem.n, problem.model.lam_reg)
    return forecast(problem.geometry, problem.model, problem.n, c.budget, c.test, c.lambda_min.lambda_hat, lmax,
                    calibration, level, fallback, hint, c.probe is not None, stand_in(c.lambda_min.lambda_hat, c.probe),
                    None if c.probe is None else probe_ceiling(c.probe), rows, coverage)


def probe_ceiling(probe: CurvatureProbe) -> float:
    """The probe's reading at its 1 - HINT_MISS upper quantile: above mu_0 = lambda_min(C) except with probability
    HINT_MISS, and mu_0 bounds the curvature at every point (C lies above every Hessian). Post-processing of the
    reading (private, no budget)."""
    return probe.reading + probe.scale * math.log(1.0 / (2.0 * HINT_MISS))


def _verdict(branch: str, low: float, high: float, wide: float | None, chance: float | None,
             plausible: float | None, how: str, informative: float | None = None) -> Forecast:
    """Whether an interval wider than the plausible half-range has a chance of at least WARN_AT (1 - informative where
    that chance is known; else the likely range reaching past it, or the wide interval unless the curvature interval is
    likely), and what helps."""
    if plausible is not None and informative is None and wide is None:
        informative = float(high < plausible)  # Algorithm 5's half-width is exact
    if informative is not None:
        too_wide = 1.0 - informative >= WARN_AT
    else:
        likely_certified = chance is not None and chance >= 1.0 - WARN_AT
        too_wide = plausible is not None and (
            high >= plausible or (wide is not None and wide >= plausible and not likely_certified))
    advice = ("More ε, more rows, or (for a table) fewer coefficients narrow it; the Planner shows where the "
              "curvature starts to be certified." if too_wide else "")
    return Forecast(branch, low, high, wide, chance, plausible, too_wide, how, advice, informative)


def worst_case(g: Geometry, model: ModelSpec, n: int, budget: Budget, calibration: str,
               level: float) -> tuple[float, float | None]:
    """Before any certificate, from public facts only: (the fallback's half-width when nothing is certified —
    lambda_hat_min = 0 and no curvature bound —, the coefficient's plausible half-range). The split is then chosen
    from the probe, not yet drawn, so the half-width is the largest over the shares the rule may choose."""
    eps, dlt = unspent_budget(budget, 0.0, probed=True)
    op = ((eps * (1.0 - share), dlt * (1.0 - DELTA_SHARE)) for share in SHARE_GRID)
    ridge = fallback_ridge(calibration)
    wide = max(fallback_half_width(*op_parameters(g, n, *o, calibration, ridge), level, g) for o in op)
    return wide, plausible_half_range(model)
