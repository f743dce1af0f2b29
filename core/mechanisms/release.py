"""Stage 4: the release of u^T theta(P_n), Algorithm 5 step iii, and its intervals.

- directional_sensitivity: Delta(P_n, u) of (3b) for the cube and the ball gradient sets.
- omega: the local modulus bound (11).
- release: T = u^T theta + sigma(eps_c, delta_c) omega Z when the test (14) passed, else bottom
  (core.mechanisms.fallback replaces that bottom by objective perturbation when asked for).
- BaselineRelease: one release of u^T theta by a comparison method (core.mechanisms.baselines, core.mechanisms.dp_sgd,
core.methods.compare). The private interval uses only lambda_hat_min (post-processing): Delta <= 2 G0/(n lam0) and
g <= gamma give omega <= w_bar = 2 G0 / (n lam0 (1 - gamma)) (docs/method.md §7).
The fit is exact to its certified tolerance only, so the noise multiplier is (omega + E)/(1 - eta) with
the test's fit_slack E and fit_ratio eta (core.mechanisms.stability), and the interval widens to match.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from core.errors import DataError, is_real
from core.estimator.fit import FitResult
from core.estimator.geometry import Geometry
from core.mechanisms.curvature import Curvature, CurvatureInterval, CurvatureProbe
from core.mechanisms.inference import PopulationInterval, algorithm5_population
from core.mechanisms.recursion import t_bound
from core.mechanisms.stability import StabilityTest, solver_slack
from core.privacy.gaussian import normal_quantile, sigma
from core.privacy.marks import NOT_PRIVATE

RELEASED, FALLBACK, BOTTOM = "released", "fallback", "bottom"
MIN_LEVEL, MAX_LEVEL = 0.5, 0.99  # an interval level's range on every surface (core.settings)
BRANCHES = {RELEASED: "algorithm5", FALLBACK: "objective_perturbation", BOTTOM: None}
ALGORITHM5_NOTE = (
    "Algorithm 5: the interval covers uᵀθ(Pₙ), the coefficient fitted on these rows, with probability at least "
    "(1 − a)(1 − δₐ), 1 − a its stated level."
)
BOTTOM_NOTE = "No value was released, so there is no interval."
# What a released interval covers, the one wording of every surface: the coefficient fitted on the rows (Algorithm 5's
# interval, and the fallback's where the curvature at the released point was certified), or that of the fallback's
# ridge-regularised fit (without a certified curvature), which the ridge pulls toward 0.
FITTED, RIDGE = "fitted", "ridge"
TARGETS = {FITTED: "uᵀθ(Pₙ), the coefficient fitted on these n rows",
           RIDGE: "uᵀθ_λ(Pₙ), the coefficient of the ridge-regularised fit on these n rows, pulled toward 0 by the "
                  "ridge (no range for the coefficient fitted on these rows could be certified)"}


def interval_target(status: str, curvature_certified: bool) -> str | None:
    """FITTED or RIDGE: what the interval of a release of this status covers (None: no interval)."""
    if status == BOTTOM:
        return None
    return FITTED if status == RELEASED or curvature_certified else RIDGE


@dataclass(frozen=True)
class Release:
    """Algorithm 5's output with its intervals, or the fallback's (core.mechanisms.fallback) when asked for.

    Attributes
    ----------
    status : "released" (Algorithm 5's value), "bottom" (no value), or "fallback": the test (14) failed
        and objective perturbation (15) released instead, at the release stage's budget
        (core.mechanisms.pipeline.run_private(fallback=True); never produced otherwise).
    reason : why (the failed condition for bottom and for fallback).
    value : T, the released value (None for bottom). Private.
    interval : released: T +- (z_{1-a/2} sigma w_bar + l(lam0)), covering u^T theta(P_n) w.p. >=
        (1-a)(1-delta_a). fallback: core.mechanisms.curvature's proven interval for u^T theta(P_n) where the curvature
        localises the fit, else T +- (t_d s / lam + l(lam)) (core.mechanisms.fallback.fallback_half_width), covering
        u^T theta_lam(P_n), the coefficient of the fit regularised by the fallback's lam
        (core.mechanisms.fallback). Private.
    interval_note : what the interval covers, in words.
    interval_level : 1 - a.
    w_bar : the private upper bound on the multiplier. Private.
    sigma : sigma(eps_c, delta_c) of the release stage (public: a function of the budget).
    u_theta : u^T theta(P_n). NOT private.
    Delta : Delta(P_n, u) of (3b). NOT private.
    omega : omega(u | P_n) of (11). NOT private.
    multiplier : (omega + E)/(1 - eta), omega allowing for the fit's tolerance; the noise has standard
        deviation sigma * multiplier. NOT private.
    oracle_interval : T +- z sigma multiplier, for teaching only. NOT private.
    z : the standard normal draw (None for bottom and fallback). NOT private.
    fallback_epsilon, fallback_delta : the fallback's (eps', delta'), all the run left unspent: the release event's
        (2 eps_c, (1 + e^eps_c) delta_c), plus stage 2's when lambda_hat_min = 0, less the probe's (None unless status
        is "fallback").
    fallback_shares : the curvature's share of that epsilon, of that delta, and step 2's of the curvature's epsilon,
        chosen by core.mechanisms.split's rule. Private where its stand-in is.
    fallback_probe : the certificates' reading of the curvature ceiling that chose the shares when lambda_hat_min = 0
        (core.mechanisms.curvature.CurvatureProbe; None otherwise). Private.
    fallback_lambda_reg : the fallback's lam = c G1/(n eps''), eps'' its objective perturbation's share and c
        core.mechanisms.split.fallback_ridge's; public.
    fallback_noise_scale : the fallback's noise scale s (b ~ N(0, s^2 I)); public (None unless fallback).
    fallback_curvature : the private curvature at the released point (core.mechanisms.curvature) that the
        interval's width rests on (None unless fallback).
    fallback_interval : that curvature's interval, its half-width in parts (noise, ridge bias, slack); None unless the
        fallback's interval is the curvature interval. Private.
    population : an interval for the population's coefficient, sampling included (core.mechanisms.inference;
        logistic loss only, None without a curvature bound). Private, approximate.
    """

    status: str
    reason: str
    value: float | None
    interval: tuple[float, float] | None
    interval_level: float
    w_bar: float | None
    sigma: float
    epsilon: float
    delta: float
    calibration: str
    u_theta: float = field(metadata=NOT_PRIVATE)
    Delta: float = field(metadata=NOT_PRIVATE)
    omega: float = field(metadata=NOT_PRIVATE)
    multiplier: float = field(metadata=NOT_PRIVATE)
    oracle_interval: tuple[float, float] | None = field(metadata=NOT_PRIVATE)
    z: float | None = field(metadata=NOT_PRIVATE)
    interval_note: str = BOTTOM_NOTE
    fallback_epsilon: float | None = None
    fallback_delta: float | None = None
    fallback_shares: tuple[float, float, float] | None = None
    fallback_probe: CurvatureProbe | None = None
    fallback_lambda_reg: float | None = None
    fallback_noise_scale: float | None = None
    fallback_curvature: Curvature | None = None
    fallback_interval: CurvatureInterval | None = None
    population: PopulationInterval | None = None

    # functions of private outputs (core.privacy.marks.PublicView)
    PUBLIC_PROPERTIES = ("branch", "interval_target", "interval_proven")

    @property
    def branch(self) -> str | None:
        """Which mechanism produced the value: "algorithm5", "objective_perturbation", or None (bottom)."""
        return BRANCHES[self.status]

    @property
    def interval_target(self) -> str | None:
        """What the interval covers: FITTED (u^T theta(P_n)) or RIDGE (u^T theta_lam(P_n), the fallback's interval
        without a certified curvature); None for bottom. A function of the status and whether the curvature was
        certified."""
        return interval_target(self.status, self.fallback_interval is not None)

    @property
    def interval_proven(self) -> bool:
        """Whether the interval's coverage is proven: every interval released is (Algorithm 5's, the fallback's
        curvature interval and the ridge coefficient's; docs/privacy.md); a document keeps it so that one published
        before (without it) keeps its words."""
        return self.interval is not None

    @property
    def noise_sd(self) -> float:
        """sigma * multiplier, the standard deviation of the released noise. NOT private."""
        return self.sigma * self.multiplier


def unit_direction(u: np.ndarray | int, d: int) -> np.ndarray:
    """A coordinate index j becomes e_j; a vector is checked and normalised to unit l2 norm."""
    if isinstance(u, (int, np.integer)):
        if not 0 <= int(u) < d:
            raise DataError(f"coordinate {int(u)} is out of range: there are {d} features (0 to {d - 1})")
        e = np.zeros(d)
        e[int(u)] = 1.0
        return e
    v = np.asarray(u, dtype=np.float64).ravel()
    if v.size != d:
        raise DataError(f"the direction u has {v.size} entries but there are {d} features")
    norm = float(np.linalg.norm(v))
    if not (np.all(np.isfinite(v)) and norm > 0):
        raise DataError("the direction u must be a finite, non-zero vector")
    return v / norm


def directional_sensitivity(fit: FitResult, g: Geometry, u: np.ndarray) -> float:
    """Delta(P_n, u) of (3b): sup over g0, g1 in the gradient set of u^T H_reg^{-1} (g0 - g1) / n.

    Cube (l_inf ball of radius G0/sqrt(d)): (2/n)(G0/sqrt(d)) ||H_reg^{-1} u||_1.
    Ball (l_2 ball of radius G0):           (2 G0/n) ||H_reg^{-1} u||_2.
    """
    H_reg = fit.hessian + fit.lam_reg * np.eye(fit.d)
    v = cho_solve(cho_factor(H_reg), u)
    if g.domain == "cube":
        return 2.0 / fit.n * g.G0 / math.sqrt(g.d) * float(np.abs(v).sum())
    return 2.0 * g.G0 / fit.n * float(np.linalg.norm(v))


def omega(fit: FitResult, g: Geometry, u: np.ndarray) -> float:
    """omega(u | P_n) of (11) = Delta + 2 G0/(n (lambda_min + lam_reg)) g/(1 - g), g = alpha r t(.).

    +inf when g >= 1 (no stability bound is available).
    """
    return _omega(directional_sensitivity(fit, g, u), fit, g, u)


def _omega(delta_u: float, fit: FitResult, g: Geometry, u: np.ndarray) -> float:
    """(11) from an already computed Delta(P_n, u)."""
    lam = fit.lambda_min + fit.lam_reg
    gam = g.alpha * g.r * t_bound(lam, g, fit.n)
    if not gam < 1:
        return math.inf
    return delta_u + 2.0 * g.G0 / (fit.n * lam) * gam / (1.0 - gam) * float(np.linalg.norm(u))


def interval_half_width(test: StabilityTest, g: Geometry, n: int, s: float, level: float) -> tuple[float, float]:
    """(w_bar, half-width) of Algorithm 5's private interval from a passed test (14), as release() forms them.

    w_bar = 2 G0/(n lam0 (1 - gamma)) bounds omega of (11) (docs/method.md §7); the fit's certified tolerance
    (fit_slack E, fit_ratio eta of core.mechanisms.stability) widens it to (w_bar (1 + eta) + E)/(1 - eta), and the
    half-width is z_{1-a/2} s w_bar + l(lam0), l the solver slack of the exact u^T theta(P_n).
    """
    eta = test.fit_ratio
    w_bar = (2.0 * g.G0 / (n * test.lam0 * (1.0 - test.gamma)) * (1.0 + eta) + test.fit_slack) / (1.0 - eta)
    return w_bar, normal_quantile(0.5 + level / 2.0) * s * w_bar + solver_slack(test.lam0, g)


def release(
    fit: FitResult,
    g: Geometry,
    u: np.ndarray,
    test: StabilityTest,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    calibration: str = "paper",
    level: float = 0.95,
) -> Release:
    """Algorithm 5 steps ii-iii: bottom unless (14) passed, else T = u^T theta + sigma multiplier Z."""
    if not (is_real(level) and MIN_LEVEL <= level <= MAX_LEVEL):
        raise DataError(f"the interval level must be from {MIN_LEVEL:g} to {MAX_LEVEL:g}, got {level!r}")
    s = sigma(epsilon, delta, calibration)
    if fit.has_minimiser:
        (u_theta, u_rest), delta_u = fit.along(u), directional_sensitivity(fit, g, u)
        om = _omega(delta_u, fit, g, u)
    else:
        u_theta = u_rest = delta_u = om = math.nan
    common = dict(interval_level=level, sigma=s, epsilon=float(epsilon), delta=float(delta), calibration=calibration,
                  u_theta=u_theta, Delta=delta_u, omega=om)
    if not test.passed:
        return _bottom(test.reason, common)
    # Both cases below are possible only when lambda_hat_min > lambda_min, the certificate's failure event
    # (probability <= delta_a): data without a minimiser have lambda_min = 0.
    if not fit.has_minimiser:
        return _bottom("the data have no certified minimiser", common)
    if not math.isfinite(om):
        return _bottom("the local modulus ω(u | Pₙ) is unbounded at the true λmin", common)
    mult = noise_multiplier(om, test)
    z = float(rng.standard_normal())
    # The noise joins u^T theta~ before its one rounding, so the release's mean is the certified point's, exactly.
    value = u_theta + (u_rest + s * mult * z)
    q = normal_quantile(0.5 + level / 2.0)
    w_bar, half = interval_half_width(test, g, fit.n, s, level)
    return Release(
        status=RELEASED,
        reason=test.reason,
        value=value,
        interval=(value - half, value + half),
        w_bar=w_bar,
        multiplier=mult,
        oracle_interval=(value - q * s * mult, value + q * s * mult),
        z=z,
        interval_note=ALGORITHM5_NOTE,
        population=algorithm5_population(value, level, s * w_bar, solver_slack(test.lam0, g), test.lam0, fit.n,
                                         g.loss.name),
        **common,
    )


def noise_multiplier(om: float, test: StabilityTest) -> float:
    """(omega + E)/(1 - eta): the release's noise in units of sigma, from the local modulus (11) and the test's fit
    tolerance (module docstring)."""
    return (om + test.fit_slack) / (1.0 - test.fit_ratio)


def _bottom(reason: str, common: dict) -> Release:
    return Release(status=BOTTOM, reason=reason, value=None, interval=None, w_bar=None, multiplier=math.nan,
                   oracle_interval=None, z=None, **common)


@dataclass(frozen=True)
class BaselineRelease:
    """One released value of u^T theta by a comparison method.

    value is None when the method declines to release (bottom). noise_scale is the method's own
    noise parameter: Delta(P_n, u) sigma(eps, delta) for the oracle, 2 G0/(n lam) sigma(eps, delta)
    for output perturbation, the standard deviation s of b for objective perturbation, the noise
    multiplier z for DP-SGD. private tells whether the release is (epsilon, delta)-DP.
    """

    method: str
    value: float | None
    noise_scale: float
    private: bool
    epsilon: float
    delta: float
    lambda_reg: float | None
    seconds: float
    u_theta: float = field(metadata=NOT_PRIVATE)  # u^T theta(P_n) of the unregularised fit
