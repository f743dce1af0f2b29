"""The privacy budget: a total (eps, delta) split into the stages' parameters (SPEC section 6).

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
from dataclasses import dataclass
from functools import lru_cache

from dp_accounting.pld import common, privacy_loss_distribution

from core.errors import BudgetError
from core.gaussian import check_epsilon_delta

DEFAULT_SPLIT = (1.0, 1.0, 1.0)
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

    accounting says how the stages were solved from the total: "basic" (SPEC section 6) or "pld"
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

    def stages(self) -> tuple[tuple[str, StageBudget], ...]:
        """The three stages in order, by name: ("lambda_min", a), ("lambda_max", b), ("release", c)."""
        return tuple((name, getattr(self, name)) for name in STAGES)

    @property
    def epsilon_pld(self) -> float:
        pld = pld_epsilon(self.lambda_min, self.lambda_max, self.release, self.delta_total)
        return min(pld, self.epsilon_basic) if self.delta_basic <= self.delta_total else pld


def basic_composition(a: StageBudget, b: StageBudget, c: StageBudget) -> tuple[float, float]:
    """(eps_total, delta_total) of SPEC section 6 for the stage parameters a, b and c."""
    eps = a.epsilon + b.epsilon + 2.0 * c.epsilon
    delta = math.exp(a.epsilon + b.epsilon) * (a.delta + b.delta) + (1.0 + math.exp(c.epsilon)) * c.delta
    return eps, delta


def parse_split(text: str | None) -> tuple[float, float, float]:
    """'a,b,c' as three positive weights (normalised later); None gives equal thirds."""
    if text is None:
        return DEFAULT_SPLIT
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise BudgetError(f"--split takes three numbers a,b,c such as 1,1,1; got {text!r}") from None
    if len(values) != 3:
        raise BudgetError(f"--split takes exactly three weights a,b,c; got {len(values)}")
    return values  # type: ignore[return-value]


def split_budget(
    epsilon: float, delta: float, split: tuple[float, float, float] = DEFAULT_SPLIT
) -> Budget:
    """Per-stage parameters meeting the total (eps, delta) exactly under basic composition."""
    check_epsilon_delta(epsilon, delta, "the total budget")
    if len(split) != 3 or not all(math.isfinite(w) and w > 0 for w in split):
        raise BudgetError(f"the split needs three positive weights (lambda_min, lambda_max, release), got {split}")
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


def pld_epsilon(a: StageBudget, b: StageBudget, c: StageBudget, delta_total: float) -> float:
    """epsilon of the three stages at delta_total by dp_accounting's PLDs (pessimistic estimates).

    delta_total pays the certificates' failures delta_a + delta_b first; the rest is the PLD's
    delta. +inf when that rest does not exceed the release event's own delta.
    """
    rest = delta_total - a.delta - b.delta
    if rest <= release_event_delta(c):
        return math.inf
    return _pld_epsilon(a.epsilon, b.epsilon, c.epsilon, release_event_delta(c), rest)


@lru_cache(maxsize=1024)
def _pld_epsilon(eps_a: float, eps_b: float, eps_c: float, delta_release: float, delta: float) -> float:
    pld = privacy_loss_distribution
    composed = pld.from_laplace_mechanism(1.0 / eps_a, value_discretization_interval=PLD_GRID)
    composed = composed.compose(pld.from_laplace_mechanism(1.0 / eps_b, value_discretization_interval=PLD_GRID))
    release = pld.from_privacy_parameters(
        common.DifferentialPrivacyParameters(2.0 * eps_c, delta_release), value_discretization_interval=PLD_GRID
    )
    return float(composed.compose(release).get_epsilon_for_delta(delta))


@lru_cache(maxsize=128)  # a function of public parameters only; it takes about a second
def split_budget_pld(
    epsilon: float, delta: float, split: tuple[float, float, float] = DEFAULT_SPLIT
) -> Budget:
    """Per-stage parameters whose PLD total meets (eps, delta).

    delta: delta_a = a delta, delta_b = b delta, the release event gets c delta / 2 and the PLD
    conversion the other c delta / 2. epsilon: the split's proportions, scaled by bisection to the
    largest scale whose PLD epsilon is <= eps.
    """
    basic = split_budget(epsilon, delta, split)
    a, b, c = basic.split

    def stages(scale: float) -> tuple[StageBudget, StageBudget, StageBudget]:
        eps_c = scale * c * epsilon / 2.0
        return (
            StageBudget(scale * a * epsilon, a * delta),
            StageBudget(scale * b * epsilon, b * delta),
            StageBudget(eps_c, c * delta / 2.0 / (1.0 + math.exp(eps_c))),
        )

    at_one = pld_epsilon(*stages(1.0), delta)
    if not math.isfinite(at_one):
        raise BudgetError(f"delta = {delta:g} is too small for this split under PLD accounting")
    # The PLD epsilon is nearly proportional to the scale: bracket its root tightly, then bisect.
    guess = epsilon / at_one
    lo, hi = guess * (1 - 2e-3), guess * (1 + 2e-3)
    while pld_epsilon(*stages(lo), delta) > epsilon:
        lo, hi = lo * (1 - 2e-2), lo
    for _ in range(16):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if pld_epsilon(*stages(mid), delta) <= epsilon else (lo, mid)
    sa, sb, sc = stages(lo)
    eps_basic, delta_basic = basic_composition(sa, sb, sc)
    return Budget(epsilon, delta, (a, b, c), sa, sb, sc, eps_basic, delta_basic, accounting="pld")


def make_budget(epsilon: float, delta: float, split: tuple[float, float, float] = DEFAULT_SPLIT,
                accounting: str = "basic") -> Budget:
    """split_budget or split_budget_pld by name."""
    if accounting == "basic":
        return split_budget(epsilon, delta, split)
    if accounting == "pld":
        return split_budget_pld(epsilon, delta, split)
    raise BudgetError(f"unknown accounting {accounting!r}; choose 'basic' or 'pld'")
