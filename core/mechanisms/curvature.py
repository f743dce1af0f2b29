"""Private curvature at a released point: how far objective perturbation's u^T theta_hat can lie from u^T theta(P_n).

Objective perturbation (15) releases theta_hat = argmin L_n + b^T theta + (lam/2)||theta||^2, b ~ N(0, s^2 I), L_n the
loss without its ridge. With theta = theta(P_n), the minimiser of L_n + (lam_reg/2)||theta||^2, and H_bar the mean
Hessian of L_n between the two, subtracting the two first-order conditions gives exactly

    u^T (theta_hat - theta) = -v^T b - (lam - lam_reg) v^T theta_hat,    v = (H_bar + lam_reg I)^{-1} u,

so the error is, to first order, normal with standard deviation s ||v||, plus a ridge bias of at most
|lam - lam_reg| ||v|| ||theta_hat||, a bound that reads the released point only. ||v|| is a property of the data;
these two private steps bound it at the public point theta_hat (docs/privacy.md, "Curvature at the released point"),
where one row moves the Hessian H(theta_hat) = P_n h''(<x, theta_hat>, y) x x^T by a positive semidefinite rank-one
term of norm at most g = G1/n, and lam_reg is the problem's public ridge:

1. a lower bound lambda_hat on mu = lambda_min(H(theta_hat) + lam_reg I): the computed value less its rounding bound
   e, plus Laplace((g + 2e)/eps_1) noise, less (g + 2e) ln(1/(2 delta_1))/eps_1. Pure eps_1-DP; lambda_hat <= mu
   except with probability delta_1 (the Laplace tail).
2. when lambda_hat > g (a function of the private lambda_hat only), the log-norm
   l = ln ||(H(theta_hat) + lam_reg I)^{-1} u|| plus Laplace(Delta/eps_2) noise, Delta = -ln(1 - g/lambda_hat) + 2 e_l.
   A neighbour's matrix H' differs from H by at most g in norm, and H'^{-1} u - H^{-1} u = H'^{-1} (H - H') H^{-1} u,
   so ||H'^{-1} u|| <= (1 + g/lambda_min(H')) ||H^{-1} u||, and the same with H and H' swapped. Whenever
   lambda_hat <= mu, both lambda_mins are at least lambda_hat - g (Weyl), so l moves by at most
   ln(1 + g/(lambda_hat - g)) = -ln(1 - g/lambda_hat), and Delta bounds its change (propose-test-release: the pair is
   (eps_1 + eps_2, delta_1)-DP). U = exp(l~ + (Delta/eps_2) ln(1/(2 beta)) + e_l) >= ||v(theta_hat)|| w.p. 1 - beta.

The interval (`curvature_intervals`) is proven (docs/privacy.md, "Curvature at the released point"). Both losses
satisfy |h'''| <= h'', so for ||x|| <= r the Hessians at two points a distance D apart agree within a factor e^{rD}
(generalised self-concordance, Bach 2010). With c = b + (lam - lam_reg) theta_hat, ||c|| <= c_bar on the event
||b|| <= s chi_d(1 - B_SHARE a), a = 1 - level, and mu(theta_hat) >= e^{-r l} lambda_hat on step 1's event, the ball
of radius D_bar = -ln(1 - q)/r, q = r c_bar e^{r l}/lambda_hat, around theta_hat holds the fit theta(P_n) whenever
q < 1 (which proves that the fit exists): the interval is certified only then. Against the data-only
v* = (H(theta(P_n)) + lam_reg I)^-1 u the error is -v*^T b - (lam - lam_reg) v*^T theta_hat - R, v*^T b exactly
normal and independent of step 2's noise L, and the half-width is

    min(kappa exp(l~ + e_l), q_0 s/lambda_hat)           (kappa in the joint law of Z and L, no bias: `capped_halves`)
  + U beta_lam                                           (ridge bias, beta_lam = |lam - lam_reg| (||theta_hat|| + l))
  + sqrt(U/lambda_hat) c_bar ((e^A - 1) + k(a_D) e^A)    (the Hessians between theta_hat and theta(P_n), `sc_factor`;
                                                          a_D = -ln(1 - q), A = a_D + r l)
  + l(lam),

missing with probability at most delta_1 + B_SHARE a (||b||) + BOUND_SHARE a (U) + the first term's share, the rest of
a (`main_level`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray
from scipy import special
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import brentq

from core.estimator.fit import gram, weighted_hessian
from core.estimator.geometry import Geometry
from core.estimator.problem import Problem
from core.estimator.rounding import UNIT, gamma, hessian_error
from core.mechanisms.stability import solver_slack
from core.privacy.gaussian import normal_quantile, sigma
from core.privacy.marks import NOT_PRIVATE

# The share of the curvature's epsilon that step 2 gets: step 1 must clear g ln(1/(2 delta_1))/eps_1, most of what
# keeps the curvature uncertified (measured on census data, docs/experiments.md, "Certifying the curvature").
LOG_SHARE = 0.3
BOUND_SHARE = 0.2  # the share of the interval's miss rate a = 1 - level that U's tail takes where U is used
CAP_SHARE = 0.1  # what the curvature interval's cap alone may miss, of a, within the joint law's a
B_SHARE = 0.1  # the share of a that the tail of the privacy noise's norm ||b|| takes (`curvature_intervals`)
PROVEN_NOTE = ("proven at every n: the interval is given only where the private curvature localises the fit on these "
               "rows, which then exists")


@dataclass(frozen=True)
class Curvature:
    """The two private steps of the module docstring at one released point, with every intermediate.

    lambda_hat : the certified lower bound on lambda_min(H(theta_hat) + lam_reg I). Private.
    bound : U, the private upper bound on ||(H(theta_hat) + lam_reg I)^{-1} u|| (None when step 2 did not run). Private.
    reason : why step 2 did not run ("" when it did).
    mu, norm : the computed lambda_min and ||(H + lam_reg I)^{-1} u||. NOT private.
    scale_1, scale_2 : the noise scales of the two steps (scale_2 NaN without step 2: a Laplace scale, or the
        Gaussian's standard deviation when `family` says so); private (functions of the released point and
        lambda_hat).
    epsilon, delta : (eps_1 + eps_2, delta_1), the pair's guarantee (with several directions, `curvatures`, the
        whole set's).
    beta : the probability that U falls below ||(H + lam_reg I)^{-1} u||.
    family : step 2's noise, "laplace" or "gaussian" (`log_noise`, from public numbers).
    log_norm : step 2's noisy log-norm plus its rounding bound, l~ + e_l (NaN without step 2): the interval's centre
        for ln ||(H + lam_reg I)^{-1} u||, off by step 2's noise alone. Private.
    """

    lambda_hat: float
    bound: float | None
    reason: str
    scale_1: float
    scale_2: float
    epsilon: float
    delta: float
    beta: float
    mu: float = field(metadata=NOT_PRIVATE)
    norm: float = field(metadata=NOT_PRIVATE)
    family: str = "laplace"
    log_norm: float = math.nan


def point_error(problem: Problem, point: NDArray, ridge: float) -> float:
    """A public bound e on the rounding of any eigenvalue of the computed H(point) + ridge I (and so of its norm).

    The residuals are formed by Dot2 (core.estimator.fit.residuals) from the public response bound B (inf only for
    logistic labels, whose residual is x^T theta): each errs by at most gamma_(2d+1)^2 size + 2^-53 |z|; h'' moves by at
    most h3_sup times that, and |z h'''(z)| <= 1 for both losses; h'' itself rounds by a few units of 2^-53. The
    Gram and the eigensolver are core.estimator.rounding.hessian_error's, the eigensolver's 10 d^2 u ||H|| taken with
    ||H + ridge I|| <= G1 + ridge; adding the ridge to the diagonal rounds by 4 u ridge.
    """
    g, n, d = problem.geometry, problem.n, problem.d
    shift = 0.0 if problem.model.loss == "logistic" else problem.response_bound
    size = shift + g.r * float(np.linalg.norm(point)) * (1.0 + 4.0 * UNIT)
    weight = g.loss.h3_sup * gamma(2 * d + 1) ** 2 * size + 8.0 * UNIT
    return hessian_error(n, d, g.G1, g.r, 0.0) + g.r**2 * weight + (10.0 * d * d + 4.0) * UNIT * ridge


def hessian_at(problem: Problem, point: NDArray, ridge: float) -> NDArray:
    """H(point) + ridge I = P_n h''(<x, point>, y) x x^T + ridge I, residuals by Dot2. NOT private."""
    loss = problem.geometry.loss
    return weighted_hessian(problem.rows, loss, point) + ridge * np.eye(problem.d)


@dataclass(frozen=True)
class CurvatureProbe:
    """A private reading of the data's curvature before any point is released: mu_0 = lambda_min(C), C = h''_sup P_n
    x x^T, the ceiling of every Hessian of the loss (H(theta) <= C at each theta, as h'' <= h''_sup; for the logistic
    loss C = H(0)). One row moves C by (h''_sup/n)(x' x'^T - x x^T), whose eigenvalues lie in [-g, g], g = G1/n, so
    mu_0 moves by at most g (Weyl); the computed value errs by at most e (core.estimator.rounding.hessian_error). The
    reading mu_0 + Laplace((g + 2e)/epsilon) is pure epsilon-DP (`curvature_probe`).

    reading : the noisy mu_0. Private. scale : the Laplace scale. mu : the computed mu_0. NOT private.
    """

    reading: float
    scale: float
    epsilon: float
    mu: float = field(metadata=NOT_PRIVATE)


def probe_scale(problem: Problem, epsilon: float) -> float:
    """(g + 2e)/epsilon, the probe's Laplace scale: public (n, d and the domain's constants)."""
    g = problem.geometry
    e = hessian_error(problem.n, problem.d, g.G1, g.r, 0.0)
    return (g.G1 / problem.n + 2.0 * e) / epsilon


def curvature_probe(problem: Problem, epsilon: float, rng: np.random.Generator,
                    released: float | None = None) -> CurvatureProbe:
    """The reading of `CurvatureProbe` at epsilon, or the `released` reading of an earlier draw, read back without new
    noise."""
    g = problem.geometry
    mu = float(np.linalg.eigvalsh(gram(problem.rows) * g.h2_sup)[0])
    scale = probe_scale(problem, epsilon)
    reading = mu + float(rng.laplace(0.0, scale)) if released is None else float(released)
    return CurvatureProbe(reading=reading, scale=scale, epsilon=float(epsilon), mu=mu)


def _norms(H: NDArray, directions: NDArray) -> tuple[float, ...]:
    """||H^{-1} u|| for each row u of directions, by one Cholesky factor of H; inf for every one when the computed H is
    not numerically positive definite, which step 2 meets only off step 1's event (lambda_hat <= mu with
    lambda_hat > g keeps H well inside the positive definite cone)."""
    try:
        solved = cho_solve(cho_factor(H), directions.T)
    except LinAlgError:
        return (math.inf,) * directions.shape[0]
    return tuple(float(v) for v in np.linalg.norm(solved, axis=0))


def log_error(eta: float, m: float) -> float:
    """A bound on |ln(computed ||A^{-1} u||) - ln ||A^{-1} u||| when A is computed within eta and lambda_min(A) >= m:
    a perturbation of norm eta moves ||A^{-1} u|| by a factor within 1 +- eta/(m - eta)."""
    return -math.log1p(-eta / (m - eta)) if 2.0 * eta < m else math.inf


def curvature(problem: Problem, point: NDArray, ridge: float, u: NDArray, epsilon: float, delta: float, beta: float,
              rng: np.random.Generator) -> Curvature:
    """Steps 1 and 2 of the module docstring at the public `point` with the public `ridge` and direction u: together
    (epsilon, delta)-DP, epsilon split LOG_SHARE to step 2."""
    return curvatures(problem, point, ridge, np.asarray(u, dtype=np.float64)[None, :], epsilon, delta, beta, rng)[0]


def log_noise(k: int, eps_2: float, delta: float, beta: float) -> tuple[str, float, float]:
    """Step 2's noise for k log-norms, per unit of their sensitivity Delta, and step 1's delta: Laplace(k/eps_2) on
    each (l1 sensitivity k Delta, pure eps_2-DP; step 1 keeps all of delta), or, when its one-sided (1 - beta)
    quantile is the smaller, N(0, (sigma(eps_2, delta/2) sqrt k)^2) on each (l2 sensitivity sqrt(k) Delta, the
    Gaussian mechanism at (eps_2, delta/2); step 1 gets the other delta/2). A function of public numbers only."""
    laplace = k / eps_2
    gauss = sigma(eps_2, delta / 2.0) * math.sqrt(k)
    if laplace * math.log(1.0 / (2.0 * beta)) <= gauss * normal_quantile(1.0 - beta):
        return "laplace", laplace, delta
    return "gaussian", gauss, delta / 2.0


def step_one_budget(k: int, epsilon: float, delta: float, beta: float,
                    log_share: float = LOG_SHARE) -> tuple[float, str, float, float]:
    """(step 1's epsilon, step 2's noise family and its scale per unit of sensitivity, step 1's delta) for k bounds at
    the curvature's (epsilon, delta): step 2 gets log_share of epsilon (`log_noise`). Public numbers only."""
    eps_2 = log_share * epsilon
    family, unit, delta_1 = log_noise(k, eps_2, delta, beta)
    return epsilon - eps_2, family, unit, delta_1


def cap_quantile(level: float) -> float:
    """The quantile of the curvature interval's cap (q s + bias)/lambda_hat: the normal quantile at CAP_SHARE a, split
    over the two tails, so that the cap alone misses CAP_SHARE a (`curvature_intervals`)."""
    return normal_quantile(1.0 - CAP_SHARE * (1.0 - level) / 2.0)


def bound_quantile(level: float) -> float:
    """The normal quantile of an interval that uses U itself (core.mechanisms.inference): a less BOUND_SHARE a for U,
    split over the two tails."""
    return normal_quantile(1.0 - (1.0 - BOUND_SHARE) * (1.0 - level) / 2.0)


SPREAD_X = {"laplace": 40.0, "gaussian": 9.0}  # L is integrated over +-X of its scale: beyond, mass < 1e-17
SPREAD_MARGIN = 1e-6  # relative: kappa is solved at miss (1 - SPREAD_MARGIN), far beyond quadrature's error
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(64)
_LOG_CEILING = 700.0  # curvature_intervals seeks no kappa past e^700: every row takes its cap
_STEPS = (0.0, 0.01, 0.05, 0.2, 0.5, 1.0, 2.0, 3.0, 4.5, 6.0, 9.0)  # cuts where s|Z| crosses these multiples of s


def spread_miss(kappa: float, scale: float, family: str, s: float, bias: float, top: float = math.inf) -> float:
    """P(s |Z| + bias > min(kappa e^L, top)) for Z standard normal and L independent of it, Laplace(scale) or
    N(0, scale^2) as `family` says: the normal tail integrated over L, in units of its scale, on [-X, X] with all of L's
    mass beyond counted as a miss (an upper bound, by at most 1e-17). Gauss-Legendre on pieces cut where the integrand
    has a kink (0 for the Laplace density; where kappa e^L meets bias or top) and where s |Z| crosses each of _STEPS s,
    so that every piece is smooth and the normal tail's fall is resolved at any scale. e^L underflowing to 0 counts as
    a miss, as it is (t -> -bias)."""
    x_max = SPREAD_X[family]
    cuts = {-x_max, x_max, 0.0}
    if scale > 0:
        cuts |= {math.log((bias + k * s) / kappa) / scale for k in _STEPS if bias + k * s > 0}
        if math.isfinite(top):
            cuts.add(math.log(top / kappa) / scale)
    edges = np.array(sorted(c for c in cuts if -x_max <= c <= x_max))
    half, mid = np.diff(edges)[:, None] / 2.0, (edges[1:] + edges[:-1])[:, None] / 2.0
    x = mid + half * _NODES
    with np.errstate(over="ignore"):  # kappa e^L past a float is past top too
        t = np.minimum(kappa * np.exp(np.minimum(scale * x, 700.0)), top) - bias
    miss = np.where(t <= 0, 1.0, 2.0 * special.ndtr(-np.maximum(t, 0.0) / s))
    if family == "laplace":
        density, tails = 0.5 * np.exp(-np.abs(x)), math.exp(-x_max)
    else:
        density, tails = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi), 2.0 * float(special.ndtr(-x_max))
    return tails + float(np.sum(half * _WEIGHTS * density * miss))


def spread_quantile(scale: float, family: str, s: float, bias: float, miss: float, top: float = math.inf,
                    ceiling: float = math.inf, rtol: float = 1e-12) -> float:
    """kappa with P(s |Z| + bias > min(kappa e^L, top)) = miss (`spread_miss`; miss in (0, 1) and above the miss at
    top alone, s > 0): the curvature interval's half-width per unit of ||v||'s noisy estimate exp(l~ + e_l), under its
    cap top per unit of 1/lambda_hat (module docstring); s z_{1 - miss/2} + bias at scale 0 without a cap. `ceiling`
    when kappa would pass it (past it every row takes its cap, so no larger kappa is needed)."""
    target = miss * (1.0 - SPREAD_MARGIN)
    if math.isfinite(top) and 2.0 * float(special.ndtr(-(top - bias) / s)) >= target:
        raise ValueError("the cap alone misses more often than the interval may")
    still = s * normal_quantile(1.0 - target / 2.0) + bias
    if scale == 0:  # below top, which misses less often
        return still

    def excess(kappa: float) -> float:
        return spread_miss(kappa, scale, family, s, bias, top) - target

    low = high = still
    while excess(low) <= 0:  # the miss tends to 1 as kappa falls to 0, so this ends
        low /= 2.0
    while excess(high) > 0:
        if high >= ceiling:
            return ceiling
        high = min(2.0 * high, ceiling)
    return brentq(excess, low, high, xtol=1e-2 * rtol * high, rtol=rtol)


@dataclass(frozen=True)
class StepOne:
    """Step 1 at a public point for k directions, and what step 2 needs from it (`step_one`).

    lambda_hat, scale_1 : step 1's bound and noise scale (private). m : lambda_hat - g, on step 1's event the least
    lambda_min of P_n's matrix and of any neighbour's. e_log : the log-norm's rounding bound for a matrix with
    lambda_min >= m (inf when m <= 0). family, unit : step 2's noise (`log_noise`). step : g = G1/n.
    mu, norms : the computed lambda_min and each direction's ||(H + lam_reg I)^{-1} u||. NOT private.
    """

    lambda_hat: float
    scale_1: float
    m: float
    e_log: float
    family: str
    unit: float
    step: float
    epsilon: float
    delta: float
    beta: float
    mu: float = field(metadata=NOT_PRIVATE)
    norms: tuple[float, ...] = field(metadata=NOT_PRIVATE)

    def curvature(self, bound: float | None, scale_2: float, reason: str, norm: float,
                  log_norm: float = math.nan) -> Curvature:
        return Curvature(lambda_hat=self.lambda_hat, bound=bound, reason=reason, scale_1=self.scale_1, scale_2=scale_2,
                         epsilon=self.epsilon, delta=self.delta, beta=self.beta, mu=self.mu, norm=norm,
                         family=self.family, log_norm=log_norm)

    def uncertified(self, reason: str) -> tuple[Curvature, ...]:
        """Every direction without a bound: step 2 does not run."""
        return tuple(self.curvature(None, math.nan, reason, norm) for norm in self.norms)


def step_one(problem: Problem, point: NDArray, ridge: float, directions: NDArray, epsilon: float, delta: float,
             beta: float, rng: np.random.Generator, log_share: float = LOG_SHARE) -> StepOne:
    """Step 1 of the module docstring once for the k rows of `directions` (its budget by `step_one_budget`)."""
    g, n, d = problem.geometry, problem.n, problem.d
    eps_1, family, unit, delta_1 = step_one_budget(directions.shape[0], epsilon, delta, beta, log_share)
    step = g.G1 / n
    e = point_error(problem, point, ridge)
    H = hessian_at(problem, point, ridge)
    mu = float(np.linalg.eigvalsh(H)[0])
    norms = _norms(H, directions) if mu > 0 else (math.inf,) * directions.shape[0]
    scale_1 = (step + 2.0 * e) / eps_1
    lambda_hat = max(0.0, mu - e) + float(rng.laplace(0.0, scale_1)) - scale_1 * math.log(1.0 / (2.0 * delta_1))
    m = lambda_hat - step
    eta = e + 10.0 * d * d * UNIT * (g.G1 + ridge)
    e_log = log_error(eta, m) if m > 0 else math.inf
    return StepOne(lambda_hat, scale_1, m, e_log, family, unit, step, float(epsilon), float(delta), float(beta), mu,
                   norms)


def step_two(first: StepOne, sensitivity: float, rng: np.random.Generator) -> tuple[Curvature, ...]:
    """Step 2 after `first` (which must have m > 0 and a finite e_log): each log-norm, its noise scaled to
    `sensitivity` + 2 e_log, and its upper bound U at the tail beta."""
    scale_2 = first.unit * (sensitivity + 2.0 * first.e_log)
    tail = math.log(1.0 / (2.0 * first.beta)) if first.family == "laplace" else normal_quantile(1.0 - first.beta)
    found = []
    for norm in first.norms:
        # mu >= lambda_hat > 0 on the certificate's event; off it the computed norm may be undefined, and the noisy
        # log-norm is then taken at the largest value step 2 could certify, 1/m.
        draw = rng.laplace(0.0, scale_2) if first.family == "laplace" else scale_2 * rng.standard_normal()
        noisy = (math.log(norm) if math.isfinite(norm) else -math.log(first.m)) + float(draw)
        # ||A^{-1} u|| <= 1/mu <= 1/lambda_hat on step 1's event as well: the smaller bound holds wherever both do.
        # In logarithms: a large draw would overflow exp before the cap applied.
        log_norm = noisy + first.e_log  # the estimate of ln ||A^{-1} u||; U adds the tail at beta
        bound = math.exp(min(log_norm + scale_2 * tail, -math.log(first.lambda_hat)))
        found.append(first.curvature(bound, scale_2, "", norm, log_norm))
    return tuple(found)


def curvatures(problem: Problem, point: NDArray, ridge: float, directions: NDArray, epsilon: float, delta: float,
               beta: float, rng: np.random.Generator, log_share: float = LOG_SHARE) -> tuple[Curvature, ...]:
    """Step 1 once and step 2 for each of the k rows of `directions`, together (epsilon, delta)-DP, epsilon split
    log_share to step 2.

    Step 2's statistic is then the vector of the k log-norms. On step 1's event each moves by at most Delta =
    -ln(1 - g/lambda_hat), so the vector moves by at most k Delta in l1 and sqrt(k) Delta in l2; `log_noise` picks the
    Laplace or the Gaussian mechanism (for k = 1 the Laplace one, the module docstring's step 2). Each Curvature
    records the whole set's (epsilon, delta).
    """
    first = step_one(problem, point, ridge, directions, epsilon, delta, beta, rng, log_share)
    if not (first.m > 0 and math.isfinite(first.e_log)):
        return first.uncertified("too little curvature could be certified at the released point for this n and ε")
    return step_two(first, -math.log1p(-first.step / first.lambda_hat), rng)


@dataclass(frozen=True)
class CurvatureInterval:
    """T +- half, half = noise + bias + remainder + slack (module docstring): noise the first term,
    min(kappa exp(l~ + e_l), q s/lambda_hat) at `main_level(level, delta)`; bias U beta_lam; remainder the Hessians'
    term; slack the solver's l(lam). quantile is the cap's q (`cap_quantile` at that level); point_norm ||theta_hat||;
    reach A = a_D + r l, the self-concordance length between theta_hat and theta(P_n) at most; c_bar the bound on
    ||b + (lam - lam_reg) theta_hat||. All private (functions of private outputs and public constants)."""

    half: float
    noise: float
    bias: float
    slack: float
    level: float
    quantile: float
    point_norm: float
    remainder: float
    reach: float
    c_bar: float


def curvature_interval(problem: Problem, point: NDArray, c: Curvature, s: float, lam: float,
                       level: float) -> CurvatureInterval | None:
    """The interval of one direction (`curvature_intervals`)."""
    return curvature_intervals(problem, point, (c,), s, lam, level)[0]


def capped_halves(log_norms: Sequence[float], lambda_hat: float, scale: float, family: str, s: float,
                  level: float) -> tuple[float, ...]:
    """Each row's min(kappa exp(l~ + e_l), cap) for the noisy log-norms l~ + e_l of one set of bounds (module
    docstring): one kappa for all, in the joint law of the two noises at the miss rate a = 1 - level, the cap
    q s/lambda_hat, q = `cap_quantile(level)`, alone missing CAP_SHARE a."""
    cap = cap_quantile(level) * s / lambda_hat
    # Past kappa = cap / exp(least), every row's interval is its cap; a row so far down that this passes e^700 gives
    # every row its cap (wider than needed for the others, never narrower).
    least = min(log_norms)
    if math.log(cap) - least > _LOG_CEILING:
        kappa = math.inf
    else:
        kappa = spread_quantile(scale, family, s, 0.0, 1.0 - level, cap * lambda_hat,
                                math.exp(math.log(cap) - least))
    # min(kappa e^x, cap) in logarithms: kappa e^x may pass a float's range
    return tuple(math.exp(min(math.log(kappa) + x, math.log(cap))) for x in log_norms)


def main_level(level: float, delta: float) -> float:
    """The first term's level: 1 less the rest of a = 1 - level once step 1's delta, the tail of ||b|| (B_SHARE a) and
    U's (BOUND_SHARE a) are taken out (module docstring). NaN when nothing is left."""
    miss = (1.0 - level) * (1.0 - B_SHARE - BOUND_SHARE) - delta
    return 1.0 - miss if miss > 0 else math.nan


def sc_factor(a: float) -> float:
    """k(a) = max((1 - phi)/phi, (psi - 1)/psi), phi = (1 - e^-a)/a, psi = (e^a - 1)/a: the norm of G (I + G)^-1 for
    every symmetric G with eigenvalues in [phi - 1, psi - 1], the mean Hessian over a segment of self-concordance
    length a against its end's (about a/2)."""
    if a <= 0:
        return 0.0
    phi, psi = -math.expm1(-a) / a, math.expm1(a) / a
    return max((1.0 - phi) / phi, (psi - 1.0) / psi)


def localising_floor(g: Geometry, s: float, lam: float, level: float) -> float:
    """r s chi_d(1 - B_SHARE a) e^{r l(lam)}: the least lambda_hat with q < 1 when theta_hat = 0 brings no ridge bias,
    so a bound below it never gives the interval. Public numbers only (core.mechanisms.split reads it)."""
    return g.r * noise_norm_bound(s, g.d, B_SHARE * (1.0 - level)) * math.exp(g.r * solver_slack(lam, g))


def growth(q: float, r_slack: float) -> tuple[float, float]:
    """(A, (e^A - 1) + k(a_D) e^A) for the localisation ratio q < 1, a_D = -ln(1 - q), A = a_D + r l: the reach
    between theta_hat and theta(P_n) and the remainder's factor (module docstring)."""
    a_d = -math.log1p(-q)
    reach = a_d + r_slack
    return reach, math.expm1(reach) + sc_factor(a_d) * math.exp(reach)


def noise_norm_bound(s: float, d: int, miss: float) -> float:
    """s chi_d(1 - miss): ||b|| for b ~ N(0, s^2 I_d) exceeds it with probability miss."""
    return s * math.sqrt(float(special.chdtri(d, miss)))


def ridge_quantile(d: int, level: float) -> float:
    """t with P((||Z|| + |Z_1|)/2 > t) = 1 - level for Z ~ N(0, I_d): given Z_1 = z, the event is
    ||Z_{2..d}||^2 > 4t^2 - 4t|z| (certain for |z| >= t), so the miss is 2 (P(Z_1 > t) + int_0^t phi(z)
    P(chi^2_{d-1} > 4t(t - z)) dz); z_{1 - a/2} when d = 1."""
    return _ridge_quantile(int(d), float(level))


@lru_cache(maxsize=256)
def _ridge_quantile(d: int, level: float) -> float:
    z = normal_quantile(0.5 + level / 2.0)
    if d == 1:
        return z

    from scipy import integrate, stats  # a second of imports, for this quantile alone: not at every command's start

    def miss(t: float) -> float:
        inner = integrate.quad(lambda x: stats.norm.pdf(x) * stats.chi2.sf(4.0 * t * (t - x), d - 1), 0.0, t,
                               epsabs=1e-13, epsrel=1e-11)[0]
        return 2.0 * (float(stats.norm.sf(t)) + inner) - (1.0 - level)

    return brentq(miss, z, noise_norm_bound(1.0, d, 1.0 - level), xtol=1e-12)


def curvature_intervals(problem: Problem, point: NDArray, cs: tuple[Curvature, ...], s: float, lam: float,
                        level: float) -> tuple[CurvatureInterval | None, ...]:
    """The proven interval of the module docstring at `level` for each of the bounds cs, one set drawn at `point`
    with the problem's ridge lam_reg (they share lambda_hat, ||b|| and step 2's noise, so one kappa serves all): None
    without step 2, or where the curvature does not localise the fit (q >= 1), or when step 1's delta leaves no miss
    rate to the first term. Each covers u^T theta(P_n) except with probability 1 - level, whatever the data."""
    first = cs[0]
    target = main_level(level, first.delta)
    if first.bound is None or math.isnan(target):
        return tuple(None for _ in cs)
    r, slack = problem.geometry.r, solver_slack(lam, problem.geometry)
    point_norm = float(np.linalg.norm(point))
    beta_lam = abs(lam - problem.fit.lam_reg) * (point_norm + slack)
    c_bar = noise_norm_bound(s, problem.d, B_SHARE * (1.0 - level)) + beta_lam
    q = r * c_bar * math.exp(r * slack) / first.lambda_hat
    if not q < 1:
        return tuple(None for _ in cs)
    reach, grow = growth(q, r * slack)
    mains = capped_halves([c.log_norm for c in cs], first.lambda_hat, first.scale_2, first.family, s, target)
    return tuple(_interval(main, c.bound, first.lambda_hat, beta_lam, c_bar * grow, slack, level,
                           cap_quantile(target), point_norm, reach, c_bar) for main, c in zip(mains, cs, strict=True))


def _interval(main: float, bound: float, lambda_hat: float, beta_lam: float, spread: float, slack: float,
              level: float, quantile: float, point_norm: float, reach: float, c_bar: float) -> CurvatureInterval:
    bias, remainder = bound * beta_lam, math.sqrt(bound / lambda_hat) * spread
    return CurvatureInterval(half=main + bias + remainder + slack, noise=main, bias=bias, slack=slack, level=level,
                             quantile=quantile, point_norm=point_norm, remainder=remainder, reach=reach, c_bar=c_bar)
