"""Planning a release from public assumptions only: no data are read, no budget is spent.

A data curator or analyst deciding whether a private release is worth its budget states what is public or
assumed — n, d, the loss, the covariate domain, lambda_reg, an assumed lambda_min (and lambda_max, or the
condition number kappa = lambda_max/lambda_min) of the Hessian, the total (epsilon, delta), the split, the
accounting, the calibration and the interval level — and gets, by the project's own functions:

- whether the stability test (14) passes with noise-free certificates (core.teaching.whatif: N_hat = N, so
  m = max(0, floor(N - k)) steps of the recursions (10) and (12) inverted, with t(lam) of (9) and the constants
  (13)), and the probability that it passes under the certificates' Laplace noise
  (core.teaching.whatif.pass_probability);
- the half-width of Algorithm 5's private interval (docs/method.md §7), z_{1-a/2} sigma(eps_c, delta_c) w_bar with
  w_bar = 2 G0/(n lam0 (1 - gamma)), lam0 = lambda_hat_min + lambda_reg at its noise-free value, sigma of (7)
  (or the analytic calibration), widened by the fit's certified tolerance exactly as core.mechanisms.release widens it;
- inverted, by bisection over the same functions: the smallest total epsilon that meets a target half-width,
  and, at a given epsilon, the smallest n.

Every number here is a plan from assumptions, not a measurement: the assumed eigenvalues stand for the data's,
and when n changes they are held fixed, as population quantities would be. The plan reads no data, so it needs
no privacy and is not a private release. Whether the data meet the assumptions is known only after a release.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

from core.errors import InputError, is_integer, is_real
from core.estimator.geometry import DOMAINS, Geometry
from core.estimator.losses import LOSSES
from core.estimator.model import ModelSpec
from core.mechanisms.fallback import falls_back
from core.mechanisms.forecast import Forecast, forecast, plausible_half_range
from core.mechanisms.release import interval_half_width
from core.mechanisms.stability import StabilityTest
from core.mechanisms.table import planned_half_width
from core.privacy.accounting import ACCOUNTINGS, RELEASE_SPLIT, Budget, make_budget
from core.privacy.gaussian import CALIBRATIONS, DEFAULT_CALIBRATION, MAX_EPSILON, MIN_EPSILON, normal_quantile, sigma
from core.settings import check
from core.teaching.whatif import N_MAX, Curvature, noise_free_test, pass_probability

MAX_D = 10_000  # the largest dimension a plan accepts; the recursions' constants grow with r = sqrt(d) on the cube
EPSILON_RATIO = 1.001  # the epsilon search stops when its bracket's ratio is at most this
BRACKET = 1.25  # the PLD epsilon search's bracketing factor around the basic-accounting answer
PLAN_NOTE = ("A plan from assumptions, not a measurement: it reads no data, so it is not a private release and "
             "spends no budget; the data's own eigenvalues are known only to the private certificates.")


def _check_real(x: object, label: str, lo: float, hi: float, *, open_lo: bool = False, why: str = "") -> float:
    """x as a float within [lo, hi] ((lo, hi] when open_lo), else InputError naming the control `label`."""
    low = "above" if open_lo else "at least"
    if not is_real(x) or not (lo < float(x) <= hi if open_lo else lo <= float(x) <= hi):
        top = "" if math.isinf(hi) else f" and at most {hi:g}"
        raise InputError(f"{label} must be a finite number {low} {lo:g}{top}{why}, got {x!r}.")
    return float(x)


@dataclass(frozen=True)
class Assumptions:
    """What a plan assumes: public facts and assumed eigenvalues, each checked (InputError names the control).

    lambda_min and lambda_max are the extreme eigenvalues of the unregularised Hessian of the empirical risk
    (1) at its minimiser; lambda_max is at most G1 = ||h''|| r^2 (section 2.1.1), which bounds every Hessian on
    the domain. n must exceed d, as for any data the pipeline accepts.
    """

    n: int
    d: int
    lambda_min: float
    lambda_max: float
    epsilon: float
    delta: float
    loss: str = "robust"
    domain: str = "cube"
    radius: float | None = None
    lam_reg: float = 0.0
    split: tuple[float, float, float] = RELEASE_SPLIT
    accounting: str = "basic"
    calibration: str = DEFAULT_CALIBRATION
    level: float = 0.95

    def __post_init__(self) -> None:
        self._check_choices()
        if not (is_integer(self.d) and 1 <= self.d <= MAX_D):  # a planned d, not the loaded data's: above theirs
            raise InputError(f"Dimension d must be an integer from 1 to {MAX_D:,}, got {self.d!r}.")
        if not (is_integer(self.n) and self.d < self.n <= N_MAX):
            raise InputError(f"Sample size n must be an integer above d = {self.d} and at most {N_MAX:,}, "
                             f"got {self.n!r}.")
        g1 = self.geometry.G1  # validates the radius and lambda_reg through core.estimator.model
        _check_real(self.lambda_max, "Assumed λmax", 0.0, g1, open_lo=True,
                    why=" (G₁ = r² sup h″, which bounds every Hessian of this loss on this domain)")
        _check_real(self.lambda_min, "Assumed λmin", 0.0, float(self.lambda_max), open_lo=True,
                    why=" (the assumed λmax)")
        check("epsilon", self.epsilon, "Total ε")
        check("delta", self.delta, "Total δ")
        check("level", self.level, "Interval level")
        if not (isinstance(self.split, tuple) and len(self.split) == 3):
            raise InputError(f"Split must be three weights (λ̂min, λ̂max, release), got {self.split!r}.")
        for w in self.split:
            check("split", w, "Split weight")

    def _check_choices(self) -> None:
        for label, value, choices in (("Loss", self.loss, tuple(LOSSES)), ("Covariate domain", self.domain, DOMAINS),
                                      ("Accounting", self.accounting, ACCOUNTINGS),
                                      ("σ calibration", self.calibration, CALIBRATIONS)):
            if value not in choices:
                raise InputError(f"{label} must be one of {', '.join(choices)}, got {value!r}.")
        if self.domain == "cube" and self.radius is not None:
            raise InputError("Ball radius R applies to the ball domain only; leave it empty for the cube.")

    @cached_property
    def model(self) -> ModelSpec:
        """The model spec, resolved for d by core.estimator.model (the ball's default radius sqrt(d)); its errors name
        the radius and lambda_reg."""
        return ModelSpec(self.loss, self.domain, self.radius, self.lam_reg).resolve(self.d)

    @cached_property
    def geometry(self) -> Geometry:
        """The constants G0, G1, r, d_p of docs/method.md §2 for this loss and domain."""
        return self.model.geometry(self.d)

    @property
    def kappa(self) -> float:
        """lambda_max / lambda_min, the assumed condition number (unregularised)."""
        return self.lambda_max / self.lambda_min

    def curvature(self) -> Curvature:
        """What core.teaching.whatif reads: the geometry, n and the assumed eigenvalues, with no data behind them."""
        return Curvature(self.geometry, self.n, float(self.lambda_min), float(self.lambda_max), self.model.lam_reg)

    @property
    def weights(self) -> tuple[float, float, float]:
        """The split as three floats (core.privacy.accounting normalises them; its PLD solutions are cached on them)."""
        a, b, c = map(float, self.split)
        return a, b, c

    def budget(self) -> Budget:
        """The total (epsilon, delta) solved into the three stages by the chosen accounting (docs/method.md §9)."""
        return make_budget(float(self.epsilon), float(self.delta), self.weights, self.accounting)


def lambda_min_from_kappa(kappa: float, lambda_max: float) -> float:
    """lambda_min = lambda_max / kappa, for assumptions stated as a condition number and lambda_max."""
    k = _check_real(kappa, "Assumed κ", 1.0, math.inf)
    return _check_real(lambda_max, "Assumed λmax", 0.0, math.inf, open_lo=True) / k


@dataclass(frozen=True)
class Plan:
    """A plan from assumptions for Algorithm 5: every number is computed from the Assumptions, not measured.

    It reads no data, so it is not private and spends no budget. test is the stability test (14) at the
    noise-free certificates (constants (13), t of (9)); pass_probability is P((14) passes) under the
    certificates' Laplace noise (None when not asked for); sigma is sigma(eps_c, delta_c) of (7) (or the
    analytic calibration); w_bar and half_width are the private interval's bound on omega and its half-width
    at the noise-free lambda_hat_min (None when the test fails: nothing would be released, so no interval).
    table_half_width is each row's in a table of all d coefficients (core.mechanisms.table: the same budget, its
    Gaussian step, simultaneous intervals) at the noise-free certificate (None when the test fails); table_forecast
    the preview's forecast of each of its rows on either branch (core.mechanisms.forecast with rows = d).
    """

    assumptions: Assumptions
    budget: Budget
    test: StabilityTest
    sigma: float
    z: float
    w_bar: float | None
    half_width: float | None
    pass_probability: float | None
    table_half_width: float | None = None
    forecast: Forecast | None = None
    table_forecast: Forecast | None = None
    note: str = PLAN_NOTE

    @property
    def passed(self) -> bool:
        return self.test.passed

    @property
    def lambda_hat_min(self) -> float:
        """The noise-free certified lower bound lambda_hat_min (Algorithm 2 with N_hat = N)."""
        return self.test.lam0 - self.assumptions.model.lam_reg

    @property
    def lambda_hat_max(self) -> float:
        """The noise-free certified upper bound lambda_hat_max (Algorithm 4 with N_hat = N); NaN if not reached."""
        return self.test.lam1 - self.assumptions.model.lam_reg


def plan(a: Assumptions, probability: bool = True) -> Plan:
    """The plan for assumptions a: the noise-free test (14), its pass probability, sigma of (7) and the interval.

    probability=False skips pass_probability (a sum over the certificates' Laplace noise, the costly part).
    """
    b, c, total = a.budget(), a.curvature(), (float(a.epsilon), float(a.delta), a.weights)
    test = noise_free_test(c, *total, accounting=a.accounting)
    s = sigma(b.release.epsilon, b.release.delta, a.calibration)
    w_bar = half = None
    if test.passed:
        w_bar, half = interval_half_width(test, a.geometry, a.n, s, a.level)
    p = pass_probability(c, *total, accounting=a.accounting) if probability else None
    return Plan(a, b, test, s, normal_quantile(0.5 + a.level / 2.0), w_bar, half, p, table_plan(a, b, test),
                ahead(a, b, test), ahead(a, b, test, a.d))


def ahead(a: Assumptions, b: Budget, test: StabilityTest, rows: int = 1) -> Forecast:
    """The preview's rule (core.mechanisms.forecast) at the noise-free certificates of the assumed eigenvalues, the
    fallback as "auto" sets it, for one coefficient or each row of a table of `rows` (intervals together)."""
    lam = a.model.lam_reg
    low = test.lam0 - lam if math.isfinite(test.lam0) else 0.0
    high = test.lam1 - lam if math.isfinite(test.lam1) and low > 0 else None
    fallback = falls_back("auto", a.loss)
    # core.mechanisms.split's stand-in: lambda_hat_min where certified, else the assumed lambda_min for the probe
    return forecast(a.geometry, a.model, a.n, b, test, max(low, 0.0), high, a.calibration, a.level, fallback,
                    probed=fallback and low <= 0, curvature=low if low > 0 else a.lambda_min, rows=rows)


def smallest_table_epsilon(a: Assumptions) -> float | None:
    """The smallest total epsilon (to a ratio EPSILON_RATIO, basic accounting) at which a table of all d coefficients
    is forecast informative (core.mechanisms.forecast: an uninformative row's chance below WARN_AT), by bisection in
    log(epsilon) over the noise-free plan; None when MAX_EPSILON is not enough or no public plausible range exists.
    The forecast's chance only grows with epsilon where the split rule keeps its choice, so this is a suggestion
    from the forecast, not a guarantee."""

    def ok(e: float) -> bool:
        b_a = replace(a, epsilon=e)
        b = b_a.budget()
        return _informative(ahead(b_a, b, noise_free_test(b_a.curvature(), e, float(a.delta), a.weights,
                                                          accounting=a.accounting), a.d))

    lo, hi = MIN_EPSILON, MAX_EPSILON
    if not ok(hi):
        return None
    if ok(lo):
        return lo
    while hi / lo > EPSILON_RATIO:  # ok(hi) and not ok(lo)
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def largest_table(a: Assumptions) -> int | None:
    """The most coefficients, at most d, that a table at the assumed epsilon may hold and still be forecast
    informative (intervals together: every row's uninformative chance below WARN_AT, and a row released); 0 when not
    even one; None when the assumptions give no public plausible range to judge a row by. The assumptions tell no
    coefficient from another, so the count is the suggestion: which k is the analyst's choice. A row's level
    1 - a/k tightens with k, so the forecast only worsens with k; a bisection."""
    if plausible_half_range(a.model) is None:
        return None
    b = a.budget()
    test = noise_free_test(a.curvature(), float(a.epsilon), float(a.delta), a.weights, accounting=a.accounting)
    first_wide = _least_integer(lambda k: not _informative(ahead(a, b, test, k)), 1, a.d)
    return a.d if first_wide is None else first_wide - 1


def _informative(f: Forecast) -> bool:
    """A forecast that judges every row informative: a public plausible range, a row released, no warning."""
    return f.plausible is not None and f.branch != "bottom" and not f.uninformative


def table_plan(a: Assumptions, b: Budget, test: StabilityTest) -> float | None:
    """Each row's half-width in a table of all d coefficients when the noise-free test passes (core.mechanisms.table's
    Gaussian step at the noise-free lambda_hat_min); None when it fails, where the table falls back as one coefficient
    does."""
    if not test.passed:
        return None
    g = a.geometry
    return planned_half_width(test.lam0 - a.model.lam_reg, g, a.n, a.model.lam_reg, b, a.d, a.calibration, a.level)


def sweep_n(a: Assumptions, points: int = 41, span: float = 100.0) -> tuple[Plan, ...]:
    """Noise-free plans at `points` sample sizes spaced evenly in log(n), from a.n/span to a.n*span (within d + 1
    and N_MAX), the eigenvalues held fixed: the half-width against n, and where the test (14) starts to pass.

    The budget is the same at every n, so core.privacy.accounting solves it once (PLD accounting included).
    """
    lo, hi = max(a.d + 1, a.n / span), min(N_MAX, a.n * span)
    ns = sorted({int(round(lo * (hi / lo) ** (i / (points - 1)))) for i in range(points)} | {a.n})
    return tuple(plan(replace(a, n=m), probability=False) for m in ns)


def check_target(target: float) -> float:
    """A target half-width: a positive finite number (InputError names the control otherwise)."""
    return _check_real(target, "Target half-width", 0.0, math.inf, open_lo=True)


def meets(a: Assumptions, target: float) -> bool:
    """Whether the noise-free plan releases (the test (14) passes) with a half-width of at most target."""
    half = plan(a, probability=False).half_width
    return half is not None and half <= target


def smallest_epsilon(a: Assumptions, target: float) -> float | None:
    """The smallest total epsilon (to a ratio EPSILON_RATIO) whose plan meets the target half-width at a.n.

    Bisection in log(epsilon) over the same functions as plan: the test (14) passes from some epsilon on and the
    half-width falls with epsilon (sigma of (7) falls, lambda_hat_min rises). Basic accounting searches
    [MIN_EPSILON, MAX_EPSILON]. PLD accounting solves every epsilon tried with dp_accounting (seconds each, more at
    large epsilon), so it starts from the basic answer, which leaves the stages about as much epsilon, and
    brackets by factors of BRACKET from there. None when even MAX_EPSILON does not meet it; a.epsilon is ignored.
    """
    target = check_target(target)

    def ok(e: float) -> bool:
        return meets(replace(a, epsilon=e), target)

    guess = None if a.accounting == "basic" else smallest_epsilon(replace(a, accounting="basic"), target)
    if guess is None:
        lo, hi = MIN_EPSILON, MAX_EPSILON
        if not ok(hi):
            return None
    else:
        lo, hi = guess / BRACKET, guess
        while not ok(hi):
            if hi >= MAX_EPSILON:
                return None
            lo, hi = hi, min(BRACKET * hi, MAX_EPSILON)
    while ok(lo):  # at most once unless the PLD answer lies well below the basic one
        if lo <= MIN_EPSILON:
            return MIN_EPSILON
        lo, hi = max(lo / BRACKET, MIN_EPSILON), lo
    while hi / lo > EPSILON_RATIO:  # ok(hi) and not ok(lo)
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def smallest_n(a: Assumptions, target: float) -> int | None:
    """The smallest n (exactly, as an integer) whose plan meets the target half-width at a.epsilon.

    Bisection in log(n) between d + 1 and core.teaching.whatif.N_MAX, the eigenvalues held fixed (population values):
    the test (14) passes from some n on and the half-width falls like 1/n. None when N_MAX does not meet it;
    a.n is ignored.
    """
    target = check_target(target)
    return _least_integer(lambda m: meets(replace(a, n=m), target), a.d + 1, N_MAX)


def _least_integer(ok: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The least integer in [lo, hi] where the monotone predicate ok holds, or None."""
    if not ok(hi):
        return None
    if ok(lo):
        return lo
    while hi - lo > 1:  # ok(hi) and not ok(lo)
        mid = max(lo + 1, min(hi - 1, math.isqrt(lo * hi)))
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
