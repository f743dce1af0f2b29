"""The privacy budget: a total (eps, delta) split into the stages' parameters (docs/method.md §9).

Basic composition, re-derived from Lemma 2.5 with the certificates as M0 (pure eps_a + eps_b,
failure probability <= delta_a + delta_b) and the release as M1 ((2 eps_c, (1 + e^eps_c) delta_c),
Proposition 8.1's two Gaussian steps):

    eps_total   = eps_a + eps_b + 2 eps_c
    delta_total = e^(eps_a + eps_b) (delta_a + delta_b) + (1 + e^eps_c) delta_c.

A split (a, b, c) of positive weights gives eps_a = a eps, eps_b = b eps, 2 eps_c = c eps, and
the same fractions of delta to the three delta terms above, so the total is met exactly.

Privacy-loss distributions (dp_accounting): the two certificates are exact Laplace PLDs, the
release an (2 eps_c, (1 + e^eps_c) delta_c) event, and the certificates' failure probability
delta_a + delta_b is added to delta (a coupling argument, as in Lemma 2.2; docs/privacy.md). For the
same stages and delta this removes the factor e^(eps_a + eps_b) from the certificates' delta;
epsilon barely moves, because a Laplace count's privacy loss sits at +-eps with probability 1/2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from core.errors import BudgetError, is_real
from core.privacy.gaussian import check_epsilon_delta

if TYPE_CHECKING:
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

DEFAULT_SPLIT = (1.0, 1.0, 1.0)  # the paper's equal thirds, which its experiments (and core.teaching.experiments) use
# What the app, the command line and the planner start from: 5 % of eps to each certificate, 90 % to the release
# event. Measured on synthetic data, Algorithm 5 passes wherever it did with equal thirds and its interval is about
# half as wide; when (14) fails, the fallback inherits at least 90 % of eps (docs/experiments.md, "The publish
# default").
RELEASE_SPLIT = (1.0, 1.0, 18.0)
MIN_WEIGHT, MAX_WEIGHT = 1e-3, 1e3  # a split weight's range: a ratio of a million between stages is already extreme
ACCOUNTINGS = ("basic", "pld")
STAGES = ("lambda_min", "lambda_max", "release")  # the budget's stages, in the order they run
PLD_GRID = 1e-4  # privacy-loss discretisation; pessimistic rounding adds up to ~2 grid steps to eps


@dataclass(frozen=True)
class StageBudget:
    """One stage's (epsilon, delta)."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class Budget:
    """A total budget, its split, the per-stage values and the basic-composition total they give.

    accounting says how the stages were solved from the total: "basic" (docs/method.md §9) or "pld"
    (privacy-loss distributions). epsilon_pld is the epsilon the PLD route guarantees for these
    stages at delta_total: the accountant's figure, or the basic one where the accountant's
    pessimistic grid (up to ~3 steps of PLD_GRID) leaves it above that; both bounds are valid.
    """

    epsilon_total: float
    delta_total: float
    split: tuple[float, float, float]
    lambda_min: StageBudget
    lambda_max: StageBudget
    release: StageBudget
    epsilon_basic: float
    delta_basic: float
    accounting: str = "basic"
    weights: tuple[float, float, float] | None = None  # the split as given to make_budget, before normalising

    def stages(self) -> tuple[tuple[str, StageBudget], ...]:
        """The three stages in order, by name: ("lambda_min", a), ("lambda_max", b), ("release", c)."""
        return tuple((name, getattr(self, name)) for name in STAGES)

    @property
    def epsilon_pld(self) -> float:
        pld = pld_epsilon(self.lambda_min, self.lambda_max, self.release, self.delta_total)
        return min(pld, self.epsilon_basic) if self.delta_basic <= self.delta_total else pld


def basic_composition(a: StageBudget, b: StageBudget, c: StageBudget) -> tuple[float, float]:
    """(eps_total, delta_total) of docs/method.md §9 for the stage parameters a, b and c."""
    eps = a.epsilon + b.epsilon + 2.0 * c.epsilon
    delta = math.exp(a.epsilon + b.epsilon) * (a.delta + b.delta) + (1.0 + math.exp(c.epsilon)) * c.delta
    return eps, delta


def basic_shares(a: StageBudget, b: StageBudget, c: StageBudget) -> tuple[tuple[float, float], ...]:
    """What each stage adds to basic_composition's totals, so that the three rows add up to them exactly:
    (eps_a, e^(eps_a+eps_b) delta_a), (eps_b, e^(eps_a+eps_b) delta_b), (2 eps_c, (1 + e^eps_c) delta_c)."""
    grow = math.exp(a.epsilon + b.epsilon)
    return ((a.epsilon, grow * a.delta), (b.epsilon, grow * b.delta),
            (2.0 * c.epsilon, (1.0 + math.exp(c.epsilon)) * c.delta))


def parse_split(text: str | None) -> tuple[float, float, float]:
    """'a,b,c' as three positive weights (normalised later); None gives RELEASE_SPLIT.

    >>> parse_split("1,1,18")
    (1.0, 1.0, 18.0)
    >>> parse_split("1,1")
    Traceback (most recent call last):
    ...
    core.errors.BudgetError: --split takes exactly three weights a,b,c; got 2
    """
    if text is None:
        return RELEASE_SPLIT
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise BudgetError(f"{{split}} takes three numbers a,b,c such as 1,1,1; got {text!r}", "split") from None
    if len(values) != 3:
        raise BudgetError(f"{{split}} takes exactly three weights a,b,c; got {len(values)}", "split")
    return values  # type: ignore[return-value]


def split_budget(
    epsilon: float, delta: float, split: tuple[float, float, float] = DEFAULT_SPLIT
) -> Budget:
    """Per-stage parameters meeting the total (eps, delta) exactly under basic composition."""
    check_epsilon_delta(epsilon, delta, "the total budget")
    if len(split) != 3 or not all(is_real(w) and MIN_WEIGHT <= w <= MAX_WEIGHT for w in split):
        raise BudgetError(f"{{split}} needs three weights (lambda_min, lambda_max, release) from {MIN_WEIGHT:g} to "
                          f"{MAX_WEIGHT:g}, got {split}", "split")
    total = sum(split)
    a, b, c = (w / total for w in split)
    eps_a, eps_b = a * epsilon, b * epsilon
    if eps_a + eps_b > 700:  # e^(eps_a + eps_b) would overflow; no such budget protects anyone anyway
        raise BudgetError(f"epsilon = {epsilon:g} is far too large for this split; use a total epsilon below 100")
    gain = math.exp(eps_a + eps_b)
    shrink = 1.0
    while True:  # the last bit of rounding may never push the total past the target
        eps_c = shrink * (epsilon - eps_a - eps_b) / 2.0
        sa = StageBudget(eps_a, shrink * a * delta / gain)
        sb = StageBudget(eps_b, shrink * b * delta / gain)
        sc = StageBudget(eps_c, shrink * c * delta / (1.0 + math.exp(eps_c)))
        eps_basic, delta_basic = basic_composition(sa, sb, sc)
        if eps_basic <= epsilon and delta_basic <= delta:
            break
        shrink *= 1.0 - 1e-12
    return Budget(
        epsilon_total=float(epsilon),
        delta_total=float(delta),
        split=(a, b, c),
        lambda_min=sa,
        lambda_max=sb,
        release=sc,
        epsilon_basic=eps_basic,
        delta_basic=delta_basic,
    )


def release_event_delta(c: StageBudget) -> float:
    """delta of the release as one (2 eps_c, .) event: Proposition 8.1's two Gaussian steps."""
    return (1.0 + math.exp(c.epsilon)) * c.delta


def pld_epsilon(a: StageBudget, b: StageBudget, c: StageBudget, delta_total: float, k: int = 1) -> float:
    """epsilon at delta_total of k releases of the three stages, composed by dp_accounting's PLDs (pessimistic
    estimates).

    delta_total pays the certificates' failures k (delta_a + delta_b) first; the rest is the PLD's delta. +inf when
    that rest does not exceed the release events' own delta.
    """
    rest = delta_total - k * a.delta - k * b.delta
    if rest <= k * release_event_delta(c):
        return math.inf
    return _pld_epsilon(a.epsilon, b.epsilon, c.epsilon, release_event_delta(c), rest, k)


@lru_cache(maxsize=1024)
def _pld_epsilon(eps_a: float, eps_b: float, eps_c: float, delta_release: float, delta: float, k: int = 1) -> float:
    """eps at delta of k releases of the three stages, composed (the release events' deltas, k delta_release, come
    out of delta first; +inf when nothing is left)."""
    one = _composed_pld(eps_a, eps_b, eps_c, delta_release)
    return float((one if k == 1 else one.self_compose(k)).get_epsilon_for_delta(delta))


@lru_cache(maxsize=128)  # a function of public parameters only; it takes about a second
def split_budget_pld(
    epsilon: float, delta: float, split: tuple[float, float, float] = DEFAULT_SPLIT
) -> Budget:
    """Per-stage parameters whose PLD total meets (eps, delta).

    delta: delta_a = a delta, delta_b = b delta, the release event gets c delta / 2 and the PLD
    conversion the other c delta / 2. epsilon: the split's proportions, scaled by bisection to the
    largest scale whose PLD epsilon is <= eps.
    """
    weights, sa, sb, sc = _pld_stages(epsilon, delta, split, 1)
    eps_basic, delta_basic = basic_composition(sa, sb, sc)
    return Budget(epsilon, delta, weights, sa, sb, sc, eps_basic, delta_basic, accounting="pld")


def separate_budget(epsilon: float, delta: float, k: int, split: tuple[float, float, float] = DEFAULT_SPLIT) -> Budget:
    """What each of k separate releases (Algorithm 5, each its own certificates) may spend so that their k-fold
    composition by privacy-loss distributions meets the total (eps, delta): split_budget_pld's solution with every
    delta share divided by k. The returned budget is one release's, its totals (epsilon_total, delta_total) the
    per-release share of basic composition (a bound on that one release alone); k = 1 is split_budget_pld."""
    if not (isinstance(k, int) and k >= 1):
        raise BudgetError(f"the number of releases must be a positive integer, got {k!r}")
    if k == 1:
        return split_budget_pld(epsilon, delta, split)
    weights, sa, sb, sc = _pld_stages(epsilon, delta, split, k)
    eps_basic, delta_basic = basic_composition(sa, sb, sc)
    return Budget(eps_basic, delta_basic, weights, sa, sb, sc, eps_basic, delta_basic, accounting="pld")


def _pld_stages(epsilon: float, delta: float, split: tuple[float, float, float],
                k: int) -> tuple[tuple[float, float, float], StageBudget, StageBudget, StageBudget]:
    """(the split's weights, and the stages) of the largest scale of the split's proportions whose k releases
    compose by PLD to at most eps at delta: delta_a = a delta/k, delta_b = b delta/k, each release event c delta/(2k),
    the conversion the rest."""
    a, b, c = split_budget(epsilon, delta, split).split

    def stages(scale: float) -> tuple[StageBudget, StageBudget, StageBudget]:
        eps_c = scale * c * epsilon / 2.0
        return (
            StageBudget(scale * a * epsilon, a * delta / k),
            StageBudget(scale * b * epsilon, b * delta / k),
            StageBudget(eps_c, c * delta / (2.0 * k) / (1.0 + math.exp(eps_c))),
        )

    at_one = pld_epsilon(*stages(1.0), delta, k)
    if not math.isfinite(at_one):
        what = "this split" if k == 1 else f"{k} separate releases"
        raise BudgetError(f"delta = {delta:g} is too small for {what} under PLD accounting")
    # The PLD epsilon is nearly proportional to the scale: bracket its root tightly, then bisect.
    guess = epsilon / at_one
    lo, hi = guess * (1 - 2e-3), guess * (1 + 2e-3)
    while pld_epsilon(*stages(lo), delta, k) > epsilon:
        lo, hi = lo * (1 - 2e-2), lo
    while pld_epsilon(*stages(hi), delta, k) <= epsilon:  # k releases compose less than proportionally
        lo, hi = hi, hi * (1 + 2e-2)
    for _ in range(16):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if pld_epsilon(*stages(mid), delta, k) <= epsilon else (lo, mid)
    return (a, b, c), *stages(lo)


def make_budget(epsilon: float, delta: float, split: tuple[float, float, float] = DEFAULT_SPLIT,
                accounting: str = "basic") -> Budget:
    """split_budget or split_budget_pld by name, keeping the split's weights as given: the same call on them gives
    the same stages bit for bit (a normalised split, normalised again, may differ in the last bit).

    >>> b = make_budget(1.0, 1e-6, RELEASE_SPLIT)  # 5 % of epsilon to each certificate, 90 % to the release event
    >>> [(name, round(stage.epsilon, 12)) for name, stage in b.stages()]  # eps_a + eps_b + 2 eps_c = 1
    [('lambda_min', 0.05), ('lambda_max', 0.05), ('release', 0.45)]
    >>> b.epsilon_basic <= 1.0 and b.delta_basic <= 1e-6  # basic composition meets the total, never past it
    True
    >>> make_budget(1.0, 1e-6, accounting="rdp")
    Traceback (most recent call last):
    ...
    core.errors.BudgetError: unknown accounting 'rdp'; choose 'basic' or 'pld'
    """
    if accounting not in ACCOUNTINGS:
        raise BudgetError(f"unknown accounting {accounting!r}; choose 'basic' or 'pld'")
    budget = split_budget(epsilon, delta, split) if accounting == "basic" else split_budget_pld(epsilon, delta, split)
    return replace(budget, weights=tuple(float(w) for w in split))


# ---------------------------------------------------------------- the privacy profile delta(eps)

PROFILE_POINTS = 241  # default number of eps values in a profile's grid
PROFILE_PESSIMISM = 3 * PLD_GRID  # the accountant's delta at eps is a true bound at eps - this, at most


@dataclass(frozen=True)
class PrivacyProfile:
    """delta as a function of eps for one budget's three stages, on a grid of eps (docs/privacy.md).

    delta_basic: Lemma 2.5 with the Laplace stages as pure eps (`basic_profile`). delta_accountant:
    the PLD route, delta_a + delta_b + dp_accounting's pessimistic delta of the composed PLD
    (`pld_profile`, made non-increasing by a running minimum over the grid). delta_pld: the smaller of
    the two at each eps, what the PLD route guarantees (both bounds hold, as for Budget.epsilon_pld).
    The chosen (epsilon, delta) is the budget's total.
    """

    epsilon: tuple[float, ...]
    delta_basic: tuple[float, ...]
    delta_accountant: tuple[float, ...]
    delta_pld: tuple[float, ...]
    epsilon_chosen: float
    delta_chosen: float


def generic_profile(epsilon: NDArray[np.float64], eps0: float, delta0: float) -> NDArray[np.float64]:
    """delta(eps) >= 0 of the dominating pair of every (eps0, delta0)-DP mechanism (Kairouz, Oh & Viswanath 2015):

        delta(eps) = delta0 + (1 - delta0) (e^eps0 - e^eps) / (1 + e^eps0)   for 0 <= eps < eps0,
        delta(eps) = delta0                                               for eps >= eps0,

    written with expm1 so that it neither overflows nor cancels. It is the pair from_privacy_parameters
    builds, so basic composition and the PLD route price the release alike.
    """
    gap = np.minimum(np.asarray(epsilon, dtype=float) - eps0, 0.0)
    return delta0 + (1.0 - delta0) * -np.expm1(gap) / (1.0 + math.exp(-eps0))


def basic_profile(b: Budget, epsilon: NDArray[np.float64]) -> NDArray[np.float64]:
    """delta(eps) of the three stages by basic composition (Lemma 2.5, as in docs/method.md §9):

        delta(eps) = min(1, e^(eps_a + eps_b) (delta_a + delta_b) + delta_r(eps - eps_a - eps_b))
                     for eps >= eps_a + eps_b, and delta(eps) = 1 below,

    with the certificates pure (eps_a + eps_b)-DP off their failure event (the Laplace counts are not
    credited with their own, smaller, profile), and delta_r the release's profile: the generic pair of
    its (2 eps_c, (1 + e^eps_c) delta_c) guarantee (Proposition 8.1). The release's mean-shift step alone
    has an exact Gaussian profile under the analytic calibration, but its change-of-variance step does
    not, and the generic pair dominates every mechanism with that guarantee, so it is the larger profile
    and the one used. At eps = eps_basic it gives delta_basic exactly.
    """
    eps = np.asarray(epsilon, dtype=float)
    laplace = b.lambda_min.epsilon + b.lambda_max.epsilon
    certificates = math.exp(laplace) * (b.lambda_min.delta + b.lambda_max.delta)
    # From eps_basic on (summed as basic_composition sums it) the release's share is delta_r exactly: the
    # difference eps - laplace may round a hair below 2 eps_c.
    beyond = eps >= laplace + 2.0 * b.release.epsilon
    shifted = np.where(beyond, np.inf, np.maximum(eps - laplace, 0.0))
    release = generic_profile(shifted, 2.0 * b.release.epsilon, release_event_delta(b.release))
    return np.where(eps >= laplace, np.minimum(certificates + release, 1.0), 1.0)


@lru_cache(maxsize=64)  # public parameters only; a profile redraws on every rerun of its card
def _composed_pld(eps_a: float, eps_b: float, eps_c: float,
                  delta_release: float) -> PrivacyLossDistribution:
    """The PLD of the two Laplace counts and the release event, as the PLD total composes them."""
    from dp_accounting.pld import common  # imported when first needed: a second per process that needs no PLD
    from dp_accounting.pld import privacy_loss_distribution as pld

    composed = _laplace_pld(eps_a).compose(_laplace_pld(eps_b))
    release = pld.from_privacy_parameters(
        common.DifferentialPrivacyParameters(2.0 * eps_c, delta_release), value_discretization_interval=PLD_GRID
    )
    return composed.compose(release)


@lru_cache(maxsize=8)  # the two certificates' counts share one when their epsilons are equal, as in every default split
def _laplace_pld(epsilon: float) -> PrivacyLossDistribution:
    """The PLD of a Laplace count of sensitivity 1 at epsilon (scale 1 / epsilon); composing never changes it."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    return pld.from_laplace_mechanism(1.0 / epsilon, value_discretization_interval=PLD_GRID)


def pld_profile(b: Budget, epsilon: NDArray[np.float64]) -> NDArray[np.float64]:
    """delta(eps) = delta_a + delta_b + delta_PLD(eps) of the coupling argument (docs/privacy.md), capped at 1.

    delta_PLD is dp_accounting's pessimistic estimate for the same events as `pld_epsilon`: it bounds the
    exact delta of the composed PLD at eps - PROFILE_PESSIMISM from above (each of the three
    discretisations rounds the privacy loss up by less than one PLD_GRID step).
    """
    a, c = b.lambda_min, b.release
    composed = _composed_pld(a.epsilon, b.lambda_max.epsilon, c.epsilon, release_event_delta(c))
    deltas = np.asarray(composed.get_delta_for_epsilon(np.asarray(epsilon, dtype=float)), dtype=float)
    return np.minimum(a.delta + b.lambda_max.delta + deltas, 1.0)


def profile_grid(b: Budget, points: int = PROFILE_POINTS) -> NDArray[np.float64]:
    """points evenly spaced eps from 0 to 1.5 times the larger total, with the profile's corners added:
    eps_a + eps_b (where basic composition starts), the chosen eps and eps_basic."""
    top = 1.5 * max(b.epsilon_total, b.epsilon_basic)
    corners = [b.lambda_min.epsilon + b.lambda_max.epsilon, b.epsilon_total, b.epsilon_basic]
    return np.unique(np.concatenate([np.linspace(0.0, top, points), corners]))


def privacy_profile(b: Budget, epsilon: NDArray[np.float64] | None = None) -> PrivacyProfile:
    """The budget's delta(eps) under basic composition and by PLD, on epsilon (default `profile_grid`)."""
    eps = profile_grid(b) if epsilon is None else np.asarray(epsilon, dtype=float)
    if eps.ndim != 1 or not eps.size or not np.all(np.isfinite(eps)) or eps[0] < 0 or np.any(np.diff(eps) < 0):
        raise BudgetError("the privacy profile's eps grid must be non-negative finite numbers in increasing order")
    # The exact delta is non-increasing in eps, so a bound at a smaller eps bounds it here as well: the running
    # minimum removes the accountant's rounding wiggles (about 1e-10 of delta) and is still an upper bound.
    basic, accountant = basic_profile(b, eps), np.minimum.accumulate(pld_profile(b, eps))
    return PrivacyProfile(
        epsilon=tuple(eps.tolist()),
        delta_basic=tuple(basic.tolist()),
        delta_accountant=tuple(accountant.tolist()),
        delta_pld=tuple(np.minimum(basic, accountant).tolist()),
        epsilon_chosen=b.epsilon_total,
        delta_chosen=b.delta_total,
    )
