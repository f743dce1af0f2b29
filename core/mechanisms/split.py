"""How the fallback (core.mechanisms.fallback) divides the budget it may spend: the rule, and what it reads.

The fallback spends what Algorithm 5 left: the release event's (eps', delta'), and stage 2's too when stage 1 certified
nothing (`unspent_budget`). Objective perturbation (15) gets part of it, and the curvature bound at its released
point (core.mechanisms.curvature) the rest, itself split between its step 1 (a lower bound lambda_hat that must clear
g ln(1/(2 delta_1))/eps_1) and step 2 (the log-norm, whose noise scales with g/lambda_hat). What suits one data set
starves another: the curvature needs a share that grows with g/mu, mu the curvature at the released point, so the
split is chosen from a stand-in for mu (`choose_shares`), by this one rule for the release, the preview and the
Planner:

- lambda_hat_min, when stage 1 certified it (a private lower bound on the curvature at the fit);
- otherwise PROBE_RATIO times `CurvatureProbe`'s reading of the curvature ceiling
  C = h''_sup P_n x x^T (every Hessian lies below C; for the logistic loss C = H(0)), drawn with the certificates on
  PROBE_SHARE of stage 2's epsilon, which stage 2 did not spend (so the fallback has that much less);
- in the Planner, its assumed lambda_min.

For each candidate (the curvature's share of epsilon, step 2's share of that) on a public grid, the rule computes at
the stand-in the chance that step 1's bound clears both step 2's threshold and the proven interval's localising floor
(core.mechanisms.curvature.localising_floor, which rises with objective perturbation's s), and the half-width
averaged over three quantiles of step 1's draw: the proven interval's where the bound clears them (without the ridge
bias: ||theta_hat|| is not known before the release), the ridge coefficient's where it does not. It keeps the
narrowest whose chance is at least CERTIFY_AT, or, when none is, the narrowest on average. Without a stand-in (a
certification drawn before the probe existed) or with one at 0, the fixed shares CURVATURE_SHARE and TABLE_SHARES
apply.

Privacy (docs/privacy.md, "The fallback's split"): the probe is pure eps_p-DP; the split is a function of private
outputs and public numbers, so each branch of what follows is a fixed mechanism of fixed total (eps', delta'), and
basic composition holds for the whole as before. A wrong stand-in costs width, never the guarantee, and never the
interval's coverage (which does not depend on the split).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from core.estimator.geometry import Geometry
from core.mechanisms.baselines import fallback_budget
from core.mechanisms.curvature import (
    B_SHARE,
    BOUND_SHARE,
    LOG_SHARE,
    CurvatureProbe,
    cap_quantile,
    growth,
    localising_floor,
    main_level,
    noise_norm_bound,
    ridge_quantile,
    spread_quantile,
    step_one_budget,
)
from core.mechanisms.full_vector import PAPER_RIDGE, op_parameters
from core.mechanisms.stability import solver_slack
from core.privacy.accounting import Budget, release_event_delta

# The fixed shares (the curvature's of the fallback's epsilon, of its delta, step 2's of the curvature's epsilon), for
# one direction and for a table's k >= 2: what applies without a stand-in. Chosen by measurement on SYNTHETIC census
# data (docs/experiments.md, "The centred encoding, measured").
CURVATURE_SHARE = (0.3, 0.5, LOG_SHARE)
TABLE_SHARES = (0.5, 0.5, 0.5)
SHARE_GRID = tuple(round(0.05 * i, 2) for i in range(2, 15))  # the curvature's share of epsilon: 0.10 to 0.70
LOG_GRID = (0.3, 0.5, 0.7)  # step 2's share of the curvature's epsilon
DELTA_SHARE = 0.5  # the curvature's share of delta (delta enters only through logarithms)
CERTIFY_AT = 0.95  # the chance, at the stand-in, that a chosen split certifies the curvature
# Step 1's Laplace draw at its 15, 50 and 85 % quantiles, in units of its scale: the width is averaged over them, so a
# split whose bound sits near the threshold, where the width grows fast, pays for it.
LAPLACE_POINTS = (math.log(0.3), 0.0, -math.log(0.3))
RULE_RTOL = 1e-3  # the width's relative precision the rule needs to rank splits (a release's interval keeps 1e-12)
STAND_IN_STEP = 0.02  # the stand-in is read to 2 %, far finer than the probe's noise
PROBE_SHARE = 0.5  # of stage 2's epsilon, when stage 2 does not run
# The fallback's ridge lam = FALLBACK_RIDGE G1/(n eps'') under the analytic calibration (the paper's proves 4 only): the
# ridge bias |lam - lam_reg| ||v|| ||theta_hat|| is a good part of the curvature interval's width, and a smaller lam
# costs the Gaussian ln(1 + eps''/c) instead of ln(1 + eps''/4) (docs/experiments.md, "The fallback's split, chosen
# from the data").
FALLBACK_RIDGE = 3.0
# The stand-in is this fraction of the probe's reading: the ceiling C bounds the curvature at any point from above, and
# on SYNTHETIC census data (logistic) the curvature at the fit is 0.68 (MI) and 0.81 (TX) of it. A stand-in too high
# would starve the curvature, too low the objective perturbation; at 0.7 the rule picks the shares measured best on both
# files, at 0.5 a share 0.05-0.1 larger (docs/experiments.md, "The fallback's split, chosen from the data").
PROBE_RATIO = 0.7


@dataclass(frozen=True)
class FallbackBudget:
    """How the fallback spends the unspent (epsilon, delta): shares, the rule's choice (`choose_shares`: the
    curvature's share of epsilon, of delta, and step 2's of the curvature's epsilon), and the ridge's constant of its
    objective perturbation. Private where the shares were chosen from a private stand-in."""

    epsilon: float
    delta: float
    shares: tuple[float, float, float]
    ridge: float

    @property
    def curvature(self) -> tuple[float, float]:
        """The curvature bounds' (epsilon, delta)."""
        return self.shares[0] * self.epsilon, self.shares[1] * self.delta

    @property
    def op(self) -> tuple[float, float]:
        """Objective perturbation's (epsilon, delta): the rest."""
        eps_c, dlt_c = self.curvature
        return self.epsilon - eps_c, self.delta - dlt_c

    @property
    def log_share(self) -> float:
        """Step 2's share of the curvature's epsilon."""
        return self.shares[2]

    def op_parameters(self, g: Geometry, n: int, calibration: str) -> tuple[float, float]:
        """Objective perturbation's (lam, s) on this split (core.mechanisms.full_vector.op_parameters)."""
        return op_parameters(g, n, *self.op, calibration, self.ridge)


def fallback_ridge(calibration: str) -> float:
    """The ridge's constant of the fallback's objective perturbation: FALLBACK_RIDGE where the calibration proves it."""
    return FALLBACK_RIDGE if calibration == "analytic" else PAPER_RIDGE


def release_event_budget(budget: Budget) -> tuple[float, float]:
    """(eps', delta') = (2 eps_c, (1 + e^eps_c) delta_c): the release stage as one event of core.privacy.accounting."""
    c = budget.release
    return 2.0 * c.epsilon, release_event_delta(c)


def probe_epsilon(budget: Budget) -> float:
    """The probe's epsilon: PROBE_SHARE of stage 2's, which stage 2 does not spend when lambda_hat_min = 0."""
    return PROBE_SHARE * budget.lambda_max.epsilon


def unspent_budget(budget: Budget, lambda_hat_min: float, probed: bool = False) -> tuple[float, float]:
    """What the fallback may spend: the release event's (eps, delta), and stage 2's too when lambda_hat_min = 0 (a
    private output) left it unrun (core.mechanisms.baselines.fallback_budget), less the probe's epsilon when it was
    drawn."""
    if lambda_hat_min > 0:
        return release_event_budget(budget)
    eps, dlt = fallback_budget(budget)
    return eps - (probe_epsilon(budget) if probed else 0.0), dlt


def stand_in(lambda_hat_min: float, probe: CurvatureProbe | None) -> float | None:
    """The curvature the split is chosen for: lambda_hat_min when positive, else PROBE_RATIO times the probe's reading
    (at least 0), else None."""
    if lambda_hat_min > 0:
        return lambda_hat_min
    return None if probe is None else PROBE_RATIO * max(probe.reading, 0.0)


def curvature_shares(k: int) -> tuple[float, float, float]:
    """The fixed shares for k bounds (module docstring)."""
    return CURVATURE_SHARE if k == 1 else TABLE_SHARES


def certification_chance(g: Geometry, n: int, mu: float, curvature: tuple[float, float], log_share: float,
                         level: float, s: float, lam: float, k: int = 1) -> tuple[float, float, float, float]:
    """(the chance that step 1 of core.mechanisms.curvature certifies enough for the curvature interval, its threshold,
    step 1's median bound and its Laplace scale) at the curvature's (epsilon, delta) for curvature mu at the released
    point, objective perturbation's noise s and ridge lam: step 2 runs when lambda_hat > G1/n, and the interval is
    given when lambda_hat also passes core.mechanisms.curvature.localising_floor (a released point of norm 0; its
    ridge bias raises the bar, so the chance is, if anything, too high). The rounding bound e is left out: tiny beside
    G1/n at census sizes."""
    eps_1, _, _, delta_1 = step_one_budget(k, *curvature, BOUND_SHARE * (1.0 - level), log_share)
    step = g.G1 / n
    need, scale_1 = max(step, localising_floor(g, s, lam, level)), step / eps_1
    centre = mu - scale_1 * math.log(1.0 / (2.0 * delta_1))
    t = need - centre  # the Laplace draw must be at least t
    chance = 1.0 - 0.5 * math.exp(t / scale_1) if t <= 0 else 0.5 * math.exp(-t / scale_1)
    return chance, need, centre, scale_1


def choose_shares(g: Geometry, n: int, k: int, epsilon: float, delta: float, level: float, lam_reg: float,
                  calibration: str, mu: float | None) -> tuple[float, float, float]:
    """The rule of the module docstring: (the curvature's share of epsilon, of delta, step 2's share) for k bounds at
    the fallback's (epsilon, delta), each interval at `level`, for curvature mu (None: the fixed shares). A function
    of its arguments only."""
    if mu is None:
        return curvature_shares(k)
    # On a grid of STAND_IN_STEP in logarithms: readings a hair apart choose alike, and the choice is computed once.
    point = math.exp(STAND_IN_STEP * round(math.log(mu) / STAND_IN_STEP)) if mu > 0 else 0.0
    return _choose(g, n, k, epsilon, delta, level, lam_reg, calibration, point)


@lru_cache(maxsize=1024)  # the preview, the release and the Planner's searches ask the same question again
def _choose(g: Geometry, n: int, k: int, epsilon: float, delta: float, level: float, lam_reg: float,
            calibration: str, mu: float) -> tuple[float, float, float]:
    if not mu + lam_reg > 0:  # a reading at or below 0 says nothing the fixed shares do not
        return curvature_shares(k)
    best, best_key = curvature_shares(k), (True, math.inf)
    for share in SHARE_GRID:
        curvature = (share * epsilon, DELTA_SHARE * delta)
        lam, s = op_parameters(g, n, epsilon - curvature[0], delta - curvature[1], calibration,
                               fallback_ridge(calibration))
        for log_share in LOG_GRID:
            chance, need, centre, scale_1 = certification_chance(g, n, mu + lam_reg, curvature, log_share, level, s,
                                                                 lam, k)
            # the likely ones first, each set by its width (which, below `need`, is the ridge's interval)
            key = (chance < CERTIFY_AT, _width(g, n, k, curvature, log_share, level, s, lam, mu + lam_reg, need,
                                               [centre + scale_1 * x for x in LAPLACE_POINTS]))
            if key < best_key:
                best, best_key = (share, DELTA_SHARE, log_share), key
    return best


def _width(g: Geometry, n: int, k: int, curvature: tuple[float, float], log_share: float, level: float, s: float,
           lam: float, mu: float, need: float, bounds: list[float]) -> float:
    """The interval's half-width per unit of ||v|| = 1/mu, averaged over step 1's bounds `bounds`: where a bound clears
    `need`, the curvature interval's (core.mechanisms.curvature.curvature_intervals at a released point of norm 0, U
    taken at ||v||; the ridge bias is left out, ||theta_hat|| not being known before the release); where it does not,
    the fallback's interval for the ridge's coefficient (core.mechanisms.fallback.fallback_half_width)."""
    _, family, unit, _ = step_one_budget(k, *curvature, BOUND_SHARE * (1.0 - level), log_share)
    target = main_level(level, curvature[1])
    q, c_bar = cap_quantile(target), noise_norm_bound(s, g.d, B_SHARE * (1.0 - level))
    slack = solver_slack(lam, g)
    total = 0.0
    for bound in bounds:
        if bound <= need:
            total += ridge_quantile(g.d, level) * s * mu / lam
            continue
        scale_2 = unit * -math.log1p(-g.G1 / (n * bound))
        kappa = spread_quantile(scale_2, family, s, 0.0, 1.0 - target, q * s, rtol=RULE_RTOL)
        _, grow = growth(g.r * c_bar * math.exp(g.r * slack) / bound, g.r * slack)
        total += min(kappa, q * s * mu / bound) + math.sqrt(mu / bound) * c_bar * grow
    return total / len(bounds)


def fallback_budget_split(budget: Budget, lambda_hat_min: float, k: int, g: Geometry, n: int, lam_reg: float,
                          level: float, calibration: str, probed: bool = False,
                          mu: float | None = None) -> FallbackBudget:
    """The unspent budget (`unspent_budget`; `probed` when the probe was drawn) split by `choose_shares` for k
    curvature bounds at curvature mu (`stand_in`): the one split the release draws with and the forecast reads."""
    eps, dlt = unspent_budget(budget, lambda_hat_min, probed)
    return FallbackBudget(eps, dlt, choose_shares(g, n, k, eps, dlt, level, lam_reg, calibration, mu),
                          fallback_ridge(calibration))
