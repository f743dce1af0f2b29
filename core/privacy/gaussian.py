"""Gaussian noise calibration: the (eps, delta)-variance (7), the analytic Gaussian mechanism, and the planar one.

sigma(eps, delta) is the smallest noise multiplier s for which N(mu, s^2) and N(mu', s^2) with
|mu - mu'| <= 1 are (eps, delta)-indistinguishable (Lemma 2.3). The paper's (7) bounds the
privacy-loss tails separately; the analytic calibration of Balle & Wang (2018) is exact and
never larger. Both are valid wherever (7) calibrates a mean shift (Lemma 2.3, Lemma A.1.i).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

from scipy.optimize import brentq
from scipy.special import erfcx, log_ndtr, ndtri

from core.errors import BudgetError, is_real

CALIBRATIONS = ("paper", "analytic")
# What the app, the command line and a plan use unless told otherwise: the exact calibrations, the narrowest proven
# intervals. "paper" (the printed closed forms, read conservatively) is there to reproduce the paper's numbers.
DEFAULT_CALIBRATION = "analytic"
SAFETY = 1e-12  # relative margin added to every calibrated sigma: rounding can only add noise
_ULP = 2.0**-52
_SQRT_HALF = math.sqrt(0.5)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_ROUNDING = 32.0 * _ULP  # per-operation relative error allowed; erfcx measures within 5 ulp of exact
_TAYLOR_REMAINDER = 2e-10  # largest relative Taylor remainder for which the midpoint rule is used
# The total budget every surface accepts (command line, library, app links). A delta above 0.1 guarantees
# little (delta is the chance the guarantee fails outright); an epsilon below 1e-6 drowns any coefficient in
# noise and pushes the recursions' counts past what floats represent.
MAX_DELTA = 0.1
MIN_EPSILON, MAX_EPSILON = 1e-3, 100.0  # a total epsilon's range on every surface (core.settings)
MIN_DELTA = 1e-15  # a total delta's floor on every surface: below it no stage's sigma is finite in float64 terms


def check_epsilon_delta(epsilon: float, delta: float, what: str = "") -> None:
    """Raise BudgetError unless eps > 0 and 0 < delta < 1 (both finite)."""
    label = f" for {what}" if what else ""
    if not (is_real(epsilon) and epsilon > 0):
        raise BudgetError(f"epsilon{label} must be a positive finite number, got {epsilon}")
    if not (is_real(delta) and 0 < delta < 1):
        raise BudgetError(f"delta{label} must lie strictly between 0 and 1, got {delta}")


def check_total_budget(epsilon: float, delta: float, max_delta: float = MAX_DELTA) -> None:
    """Raise BudgetError unless MIN_EPSILON <= eps <= MAX_EPSILON and 0 < delta <= max_delta: the total budget.

    >>> check_total_budget(1.0, 1e-6)  # in range: nothing to say
    >>> check_total_budget(1.0, 0.5)
    Traceback (most recent call last):
    ...
    core.errors.BudgetError: the total delta must be at most 0.1 (it is the chance the guarantee fails), got 0.5
    """
    check_epsilon_delta(epsilon, delta, "the total budget")
    if not MIN_EPSILON <= epsilon <= MAX_EPSILON:
        raise BudgetError(f"the total epsilon must be from {MIN_EPSILON:g} to {MAX_EPSILON:g}, got {epsilon:g}")
    if delta < MIN_DELTA:
        raise BudgetError(f"the total delta must be at least {MIN_DELTA:g}, got {delta:g}")
    if delta > max_delta:
        raise BudgetError(f"the total delta must be at most {max_delta:g} (it is the chance the guarantee fails), "
                          f"got {delta:g}")


def delta_warning(delta: float, n: int) -> str | None:
    """A sentence when delta >= 1/n: a mechanism may then reveal a whole row with probability delta."""
    if delta * n < 1:
        return None
    return (f"delta = {delta:g} is not below 1/n = {1 / n:g}: a mechanism this loose may reveal a whole row; "
            "choose a delta well below 1/n")


EPSILON_WARNING = 5.0  # above it, the guarantee says little: an attacker's odds may grow e^5 ~ 148-fold


def posterior_bound(epsilon: float) -> float:
    """The most certain an attacker who starts at 50 % can become that a given person is in the data (pure part of
    the guarantee): e^eps / (1 + e^eps), since (eps, delta)-DP bounds the odds ratio by e^eps (and any test's
    true-positive rate by e^eps times its false-positive rate, plus delta)."""
    return 1.0 / (1.0 + math.exp(-epsilon))


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def magnitude(x: float) -> str:
    """A positive number to 3 significant digits for a reader: 54.6, 22,000, or 5.18 × 10²¹ past a million."""
    exponent = math.floor(math.log10(x))
    mantissa = round(x / 10.0**exponent, 2)
    if mantissa >= 10:  # 999.9 rounds to 1,000
        mantissa, exponent = mantissa / 10, exponent + 1
    if exponent >= 6:
        return f"{mantissa:.3g} × 10{str(exponent).translate(SUPERSCRIPT)}"
    value = mantissa * 10.0**exponent
    return f"{value:,.0f}" if exponent >= 2 else f"{value:.3g}"


def exp_magnitude(epsilon: float) -> str:
    """magnitude(e^eps), never an overflow: past a float's range, from its logarithm (e^800 ≈ 2.73 × 10³⁴⁷)."""
    if epsilon < 700:
        return magnitude(math.exp(epsilon))
    log10 = epsilon / math.log(10.0)
    exponent = math.floor(log10)
    return f"{10.0 ** (log10 - exponent):.3g} × 10{str(exponent).translate(SUPERSCRIPT)}"


def certainty(epsilon: float) -> str:
    """posterior_bound in words, never rounded up to a certainty it is not: "99.97 %", or "all but 1 in 4.85 × 10⁸"."""
    p = posterior_bound(epsilon)
    if 100 * p < 99.995:
        return f"{100 * p:.4g} %"
    return f"all but 1 in {magnitude(1 + math.exp(epsilon))}"  # 1 - p = 1/(1 + e^eps)


def epsilon_warning(epsilon: float) -> str | None:
    """A sentence when epsilon is above EPSILON_WARNING, saying what it allows in words."""
    if epsilon <= EPSILON_WARNING:
        return None
    return (f"ε = {epsilon:g} is a weak guarantee: an attacker who starts 50 % sure may end {certainty(epsilon)} "
            f"sure (any test's true-positive rate may be e^ε ≈ {exp_magnitude(epsilon)} times its "
            "false-positive rate, plus δ); values of 1 or less are strong")


def sigma_naive(epsilon: float, delta: float) -> float:
    """The closed-form upper bound on (7) stated after it: sigma(eps, delta) <= sigma_naive."""
    a = 2.0 * math.log(2.0 / delta)
    return (math.sqrt(a) + math.sqrt(a + 2.0 * epsilon)) / (2.0 * epsilon)


def log_tail_mass(s: float, epsilon: float) -> float:
    """log[ Phi(-s eps - 1/(2s)) + Phi(-s eps + 1/(2s)) ], the left side of (7), in log space."""
    a = float(log_ndtr(-s * epsilon - 0.5 / s))
    b = float(log_ndtr(-s * epsilon + 0.5 / s))
    hi, lo = max(a, b), min(a, b)
    return hi + math.log1p(math.exp(lo - hi))


@lru_cache(maxsize=4096)
def sigma_paper(epsilon: float, delta: float) -> float:
    """sigma(eps, delta) of eq. (7): inf{ s > 0 : Phi(-s eps - 1/2s) + Phi(-s eps + 1/2s) <= delta }.

    The left side decreases in s, so a bracketed root in log space gives ~1e-15 relative
    accuracy; the result is then nudged up until (7) holds in floating point, plus a relative
    margin of 1e-12 that absorbs rounding in any other evaluation of (7) (never below the inf).
    """
    check_epsilon_delta(epsilon, delta)
    target = math.log(delta)
    hi = sigma_naive(epsilon, delta) * 1.01
    lo = hi
    while log_tail_mass(lo, epsilon) <= target:
        lo *= 0.5
    s = brentq(lambda v: log_tail_mass(v, epsilon) - target, lo, hi, xtol=1e-300, rtol=1e-15, maxiter=200)
    while log_tail_mass(s, epsilon) > target:
        s = math.nextafter(s, math.inf)
    return s * (1.0 + SAFETY)


def _mills(x: float) -> float:
    """The Mills ratio M(x) = Phi(-x)/phi(x) = int_0^inf exp(-x v - v^2/2) dv, through erfcx."""
    return _SQRT_HALF_PI * float(erfcx(x * _SQRT_HALF))


def log_delta_analytic_bound(s: float, epsilon: float) -> float:
    """An upper bound on log delta(s), the exact delta of noise s at sensitivity 1 (Balle & Wang, Thm 8).

    delta(s) = Phi(a) - e^eps Phi(b) with a = h - u, b = -h - u, h = 1/(2s), u = eps s. Since
    b^2 - a^2 = 2 eps, e^eps phi(b) = phi(a), so delta(s) = phi(a) D with D = M(u - h) - M(u + h)
    (M the Mills ratio): no tail probability is formed and log phi(a) = -a^2/2 - log sqrt(2 pi)
    cannot underflow. D = int_{u-h}^{u+h} g with g = -M' = 1 - t M(t) > 0 and
    g'' = int_0^inf v^3 exp(-t v - v^2/2) dv > 0, decreasing in t, at most min(2, 6/t^4) for t >= 0
    and 17 for t >= -1. When the interval is short, the midpoint rule bounds D from both sides,
    2h g(u) <= D <= 2h g(u) + (h^3/3) max g'', and avoids the cancellation of the direct
    difference, which is used otherwise. Rounding is covered by a running error estimate (32 ulp
    per operation, times the cancellation factor): the result lies above the exact log delta and
    within about 2e-9 of it (measured against 80-digit arithmetic).
    """
    u, h = epsilon * s, 0.5 / s
    x1, x2 = u - h, u + h
    if x1 < -20.0:
        return 0.0  # delta <= 1 always; here delta is within 1e-88 of 1 and no target is that close
    a = h - u
    g_mid_max = 17.0 if x1 < 0 else (2.0 if x1 == 0 else min(2.0, 6.0 / x1**4))
    m_u = _mills(u)
    g = 1.0 - u * m_u
    if g <= 0:  # only for u beyond ~1e7, where 1 - u M(u) rounds away; g < 1/(u^2 + 1) holds for u > 0
        g = 1.0 / (u * u + 1.0)
    remainder = h**3 / 3.0 * g_mid_max
    if x1 >= -1.0 and remainder <= _TAYLOR_REMAINDER * 2.0 * h * g:
        d = 2.0 * h * g + remainder
        cancellation = (1.0 + u * m_u) / g + u + 2.0
    else:
        m1, m2 = _mills(x1), _mills(x2)
        d = m1 - m2
        if not d > 0:
            return math.inf  # cannot certify anything at this s
        g1, g2 = 1.0 - x1 * m1, max(1.0 - x2 * m2, 0.0)
        cancellation = (m1 + m2 + 2.0 * (abs(g1) + g2) * (u + h)) / d
    log_d = math.log(d)
    value = -0.5 * a * a - _LOG_SQRT_2PI + log_d
    error = _ROUNDING * (cancellation + abs(a) * (u + h) + a * a + abs(log_d) + 1.0)
    return value + error


@lru_cache(maxsize=4096)
def sigma_analytic(epsilon: float, delta: float) -> float:
    """The analytic Gaussian mechanism's multiplier (Balle & Wang 2018), solved by dp_accounting, verified.

    dp_accounting solves to an absolute tolerance `tol` on sigma, with 2 tol added to be on the
    safe side of its root. Its root is that of a float evaluation of delta(sigma) that loses
    digits to cancellation for small eps: at eps = 1e-5 the delta of its sigma exceeds the target
    by up to 3.5e-7 (relative; delta = 1e-50). So the candidate is then checked against the exact
    delta(sigma) <= delta through `log_delta_analytic_bound`, a float64 upper bound on the exact
    log delta, and nudged up by growing relative steps 2^-52, 2^-51, ... until the check holds,
    then bisected back towards the last failing point, as `sigma_paper` nudges for (7); the
    relative margin of 1e-12 follows. The result is never below the unverified candidate.
    """
    from dp_accounting import gaussian_mechanism  # imported when first needed: a second per process otherwise

    check_epsilon_delta(epsilon, delta)
    tol = 1e-13
    s = float(gaussian_mechanism.get_sigma_gaussian(epsilon, delta, tol=tol)) + 2 * tol
    target = _log_target(delta)
    step, below = _ULP, None
    while not log_delta_analytic_bound(s, epsilon) <= target:
        below, s = s, s * (1.0 + step)
        step *= 2.0
        if step > 1.0:
            raise ArithmeticError(f"the analytic calibration could not be verified at eps={epsilon}, delta={delta}")
    if below is not None:  # the last step may overshoot: bisect back towards the last failing point
        s = _bisect_down(lambda x: log_delta_analytic_bound(x, epsilon), below, s, target)
    return s * (1.0 + SAFETY)


def _log_target(delta: float) -> float:
    """ln(delta), lowered by its own rounding: what a calibrated ln delta bound must not exceed."""
    target = math.log(delta)
    return target - 4.0 * _ULP * abs(target)


def _bisect_down(bound: Callable[[float], float], below: float, above: float, target: float) -> float:
    """The least x in (below, above], to 4 ulp, with bound(x) <= target, for a bound falling in x that meets the
    target at `above` and not at `below`."""
    while above - below > 4.0 * math.ulp(above):
        mid = below + 0.5 * (above - below)
        if bound(mid) <= target:
            above = mid
        else:
            below = mid
    return above


def log_delta_planar_bound(kappa: float, epsilon: float) -> float:
    """A float64 upper bound on ln delta_R(eps; kappa) = ln(sqrt(2 pi)/kappa e^eps Phi_bar(kappa eps + 1/(2 kappa))).

    delta_R is the privacy profile E[(1 - e^(eps - l))_+] of a privacy loss l <= R/kappa + 1/(2 kappa^2), R Rayleigh
    (the norm of a standard normal's projection on a fixed plane), for kappa >= 1/sqrt(2 eps) (where the loss can pass
    eps only for R above r0 = kappa eps - 1/(2 kappa) >= 0): the integral of (1 - e^(eps - l)) r e^(-r^2/2) over r > r0
    is e^(-r0^2/2) - e^eps (e^(-(r0+c)^2/2) - c sqrt(2 pi) Phi_bar(r0 + c)), c = 1/kappa, and the first two terms
    cancel exactly. log_ndtr is accurate to a few ulp; each of the four terms is allowed _ROUNDING of its size."""
    x = kappa * epsilon + 0.5 / kappa
    terms = (_LOG_SQRT_2PI, -math.log(kappa), epsilon, float(log_ndtr(-x)))
    return sum(terms) + _ROUNDING * (sum(abs(t) for t in terms) + x * x + 1.0)


@lru_cache(maxsize=4096)
def sigma_planar(epsilon: float, delta: float) -> float:
    """The smallest kappa (plus SAFETY) with delta_R(eps; kappa) <= delta (`log_delta_planar_bound`), by bisection:
    delta_R falls as kappa grows from 1/sqrt(2 eps) (both -ln kappa and Phi_bar's argument's term kappa eps -
    1/(2 kappa) move one way there). It calibrates Gaussian noise whose neighbours' shift has norm <= 1, lies in a
    fixed plane and may depend on the noise itself: objective perturbation's gradient shift
    (core.mechanisms.full_vector.op_parameters, docs/privacy.md, "Objective perturbation, calibrated"). Where delta
    is met already at 1/sqrt(2 eps) (only near delta = 0.1 with a tiny eps), kappa stays there: more noise, not less.
    """
    check_epsilon_delta(epsilon, delta)
    target = _log_target(delta)
    lo = hi = 1.0 / math.sqrt(2.0 * epsilon)
    while not log_delta_planar_bound(hi, epsilon) <= target:
        lo, hi = hi, 2.0 * hi
    return _bisect_down(lambda k: log_delta_planar_bound(k, epsilon), lo, hi, target) * (1.0 + SAFETY)


def sigma(epsilon: float, delta: float, calibration: str = "paper") -> float:
    """sigma(eps, delta) by the chosen calibration: "paper" (eq. 7) or "analytic".

    >>> round(sigma(1.0, 1e-6), 4), round(sigma(1.0, 1e-6, "analytic"), 4)  # the exact calibration is never larger
    (4.916, 4.2247)
    >>> sigma(1.0, 1e-6, "laplace")
    Traceback (most recent call last):
    ...
    core.errors.BudgetError: unknown calibration 'laplace'; choose 'paper' or 'analytic'
    """
    check_calibration(calibration)
    if calibration == "paper":
        return sigma_paper(float(epsilon), float(delta))
    return sigma_analytic(float(epsilon), float(delta))


def check_calibration(calibration: str) -> None:
    """Raise BudgetError unless calibration is one of CALIBRATIONS."""
    if calibration not in CALIBRATIONS:
        raise BudgetError(f"unknown calibration {calibration!r}; choose 'paper' or 'analytic'")


def normal_quantile(p: float) -> float:
    """Phi^{-1}(p)."""
    return float(ndtri(p))
