"""Every method on the same coordinate and the same total (eps, delta), K noise draws each.

Methods for u^T theta (the paper's section 4): "local" (Algorithm 5), "oracle" (NOT private),
"output_perturbation", "objective_perturbation", "dp_sgd", and "local_fallback" (Algorithm 5 with
objective perturbation when lambda_hat_min = 0). For the full vector: Algorithms 3 and 7.

What a method needs that does not depend on the noise is computed once per call, on first use, and
shared by its draws: theta_lam of output perturbation; objective perturbation's b = 0 fit, from
which each draw's fit of (15) starts (core.mechanisms.full_vector.ObjectiveWarmStart); DP-SGD's packed rows and
their norms (core.mechanisms.dp_sgd.sgd_rows). Both regularised fits start one Newton step from theta(P_n)
(core.mechanisms.full_vector.ridge_start), and every fit is certified as a cold one is. The noise-multiplier
calibration is cached by core.mechanisms.dp_sgd. The noise is drawn afresh in every trial, and a draw's
`seconds` leave the shared work out.

Fields computed from the data without privacy are marked with core.privacy.marks' NOT_PRIVATE; the
document's list of such entries (`core.report.compare_not_private`) is derived from these marks,
and a method whose values are not private says so in its own `private` flag.

Each draw also keeps its interval at the comparison's level 1 - a, for the methods that state one:
Algorithm 5's private interval T +- (z_{1-a/2} sigma w_bar + l(lam0)) (docs/method.md §7), the
fallback's (core.mechanisms.fallback), and the oracle's T +- z_{1-a/2} Delta(P_n, u) sigma, exact since its noise
is Gaussian with that scale (NOT private). `summarise` turns a method's K draws into its release
rate, its coverage of u^T theta(P_n) and of u^T theta*, and its median half-width, each rate with a
Clopper-Pearson interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from core.errors import InputError
from core.mechanisms.dp_sgd import DPSGDConfig
from core.mechanisms.pipeline import Problem
from core.mechanisms.release import unit_direction
from core.mechanisms.trial import Interval, Trial
from core.methods.registry import REGISTRY, SINGLE, VECTOR, names
from core.privacy.accounting import Budget
from core.privacy.marks import NOT_PRIVATE
from core.settings import check

# From the one table of methods (core.methods.registry): Compare's default u^T theta methods, the other one, the
# whole-vector methods.
METHODS = names(kind=SINGLE, compared=True)
EXTRA_METHODS = names(kind=SINGLE, compared=False)
FULL_VECTOR_METHODS = names(kind=VECTOR)
RATE_CONFIDENCE = 0.95  # the confidence of every rate's Clopper-Pearson interval


@dataclass(frozen=True)
class MethodTrials:
    """K draws of one method: released values (None for bottom) and what the method promises.

    values are private exactly when `private` is (the oracle's are not). noise_scale is marked not
    private: the local methods' sigma * omega and the oracle's Delta sigma are computed from the fit
    (the other methods' scales are public). seconds, measured running times, can depend on the data.
    intervals are each draw's interval (None for bottom), private exactly when `private` is; None
    when the method states no interval. fallbacks tell which draws the fallback released.
    """

    method: str
    values: tuple[float | None, ...]
    noise_scale: float = field(metadata=NOT_PRIVATE)
    private: bool
    epsilon: float
    delta: float
    lambda_reg: float | None
    seconds: tuple[float, ...] = field(metadata=NOT_PRIVATE)
    intervals: tuple[Interval | None, ...] | None
    fallbacks: tuple[bool, ...]

    def errors(self, target: float) -> list[float | None]:
        return [None if v is None else v - target for v in self.values]


@dataclass(frozen=True)
class Comparison:
    """All methods' trials for coordinate u, with the targets u^T theta(P_n) and u^T theta*.

    u_theta is the fit's, not private (so is every error measured against it); u_theta_star comes
    from the synthetic generator's theta*, a public setting. full_vector's values are the l2 errors
    ||theta_hat - theta(P_n)||, measured against the fit, so not private. level is the intervals' 1 - a.
    """

    u: NDArray[np.float64]
    u_theta: float = field(metadata=NOT_PRIVATE)
    u_theta_star: float | None
    budget: Budget
    methods: dict[str, MethodTrials]
    full_vector: dict[str, MethodTrials] = field(metadata=NOT_PRIVATE)
    level: float


@dataclass(frozen=True)
class Rate:
    """k of n draws, with the Clopper-Pearson interval [low, high] for the probability at RATE_CONFIDENCE."""

    k: int
    n: int
    low: float
    high: float

    @property
    def share(self) -> float:
        return self.k / self.n


@dataclass(frozen=True)
class MethodSummary:
    """One method's K draws in a few numbers.

    released: the share of draws that released a value rather than bottom, a fallback's value included;
    fallback: the share released by the fallback (None for a method without one). Both are functions of
    the releases alone, private exactly when `private` is, as is median_half_width (the median over the
    released draws of each interval's half-width; None without an interval or a release).
    coverage_fit: the share of released draws whose interval holds u^T theta(P_n), the sample's
    coefficient Algorithm 5's interval is for (w.p. >= (1 - a)(1 - delta_a), docs/method.md §7); the
    fallback's interval is for u^T theta_lam(P_n) instead, and is counted against the same target.
    coverage_star: the same for u^T theta* (None unless theta* is known, i.e. synthetic data). Both are
    None for a method without an interval or without a release, and are NOT private: the first is
    measured against the fit, the second is marked too because the oracle's intervals are not private.
    """

    method: str
    private: bool
    level: float
    released: Rate
    fallback: Rate | None
    has_interval: bool
    coverage_fit: Rate | None = field(metadata=NOT_PRIVATE)
    coverage_star: Rate | None = field(metadata=NOT_PRIVATE)
    median_half_width: float | None


def rate(k: int, n: int) -> Rate | None:
    """k of n with its exact (Clopper-Pearson) interval, from the binomial tails; None when n = 0."""
    if n == 0:
        return None
    from scipy.stats import binomtest  # a second of imports, for the rates' interval alone

    ci = binomtest(k, n).proportion_ci(RATE_CONFIDENCE, method="exact")
    return Rate(k, n, float(ci.low), float(ci.high))


def _coverage(intervals: list[Interval], target: float | None) -> Rate | None:
    if target is None:
        return None
    return rate(sum(lo <= target <= hi for lo, hi in intervals), len(intervals))


def summarise(m: MethodTrials, u_theta: float, u_theta_star: float | None, level: float) -> MethodSummary:
    """Release rate, coverage of u^T theta(P_n) and of u^T theta*, and median half-width of m's draws."""
    draws = len(m.values)
    released = rate(sum(v is not None for v in m.values), draws)
    fallback = rate(sum(m.fallbacks), draws) if m.method == "local_fallback" else None
    if m.intervals is None:
        return MethodSummary(m.method, m.private, level, released, fallback, False, None, None, None)
    shown = [iv for iv in m.intervals if iv is not None]
    half = float(np.median([(hi - lo) / 2.0 for lo, hi in shown])) if shown else None
    return MethodSummary(m.method, m.private, level, released, fallback, True, _coverage(shown, u_theta),
                         _coverage(shown, u_theta_star), half)


def summaries(c: Comparison) -> dict[str, MethodSummary]:
    """Every method's summary, the whole-vector methods' included (they state no interval of u^T theta)."""
    trials = {**c.methods, **c.full_vector}
    return {name: summarise(m, c.u_theta, c.u_theta_star, c.level) for name, m in trials.items()}


def check_methods(names: Sequence[str]) -> tuple[str, ...]:
    known = tuple(name for name, m in REGISTRY.items() if m.runner is not None)  # read now: one entry adds one
    if not names:
        raise InputError(f"name at least one method, from {', '.join(known)}")
    unknown = [m for m in names if m not in known]
    if unknown:
        raise InputError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    return tuple(dict.fromkeys(names))


def compare(
    problem: Problem,
    u: NDArray | int,
    budget: Budget,
    trials: int,
    rng: np.random.Generator,
    methods: Sequence[str] = METHODS + FULL_VECTOR_METHODS,
    theta_star: NDArray | None = None,
    calibration: str = "paper",
    dp_sgd_config: DPSGDConfig | None = None,
    progress: Callable[[float], None] | None = None,
    level: float = 0.95,
) -> Comparison:
    """Run each requested method `trials` times at the budget's total (eps, delta), intervals at `level`.

    A comparison measures errors against the fit, a non-private quantity: data without a certified
    minimiser raise NoMinimizerError with the fit's diagnosis (a private release would be bottom).
    """
    check("trials", trials, "the number of trials")
    check("level", level, "the interval level")
    names = check_methods(methods)
    problem.fit.require_minimiser()
    uv = unit_direction(u, problem.d)
    eps, dlt = budget.epsilon_total, budget.delta_total
    trial = Trial(problem, uv, budget, calibration, dp_sgd_config or DPSGDConfig(), level)
    runners = {name: REGISTRY[name].runner(trial) for name in names}
    singles, vectors = {}, {}
    steps, done = len(names) * trials, 0
    for name in names:
        draws = []
        for _ in range(trials):
            draws.append(runners[name](rng))
            done += 1
            if progress:
                progress(done / steps)
        value_list, scales, private, lam, secs, intervals, fallbacks = zip(*draws, strict=True)
        finite = [s for s in scales if np.isfinite(s)]
        scale = float(np.median(finite)) if finite else float("nan")  # the full vector's varies with lambda_hat
        stated = intervals if REGISTRY[name].interval else None
        trials_ = MethodTrials(name, value_list, scale, private[0], eps, dlt, lam[0], secs, stated, fallbacks)
        (vectors if REGISTRY[name].kind == VECTOR else singles)[name] = trials_
    star = None if theta_star is None else float(uv @ np.asarray(theta_star))
    return Comparison(uv, float(uv @ problem.fit.theta), star, budget, singles, vectors, float(level))
