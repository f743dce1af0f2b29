"""The privacy budget: a total (eps, delta) split into the stages' parameters (SPEC section 6).

Basic composition, re-derived from Lemma 2.5 with the certificates as M0 (pure eps_a + eps_b,
failure probability <= delta_a + delta_b) and the release as M1 ((2 eps_c, (1 + e^eps_c) delta_c),
Proposition 8.1's two Gaussian steps):

    eps_total   = eps_a + eps_b + 2 eps_c
    delta_total = e^(eps_a + eps_b) (delta_a + delta_b) + (1 + e^eps_c) delta_c.

A split (a, b, c) of positive weights gives eps_a = a eps, eps_b = b eps, 2 eps_c = c eps, and
the same fractions of delta to the three delta terms above, so the total is met exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.errors import BudgetError
from core.gaussian import check_epsilon_delta

DEFAULT_SPLIT = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class StageBudget:
    """One stage's (epsilon, delta)."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class Budget:
    """A total budget, its split, the per-stage values and the basic-composition total they give."""

    epsilon_total: float
    delta_total: float
    split: tuple[float, float, float]
    lambda_min: StageBudget
    lambda_max: StageBudget
    release: StageBudget
    epsilon_basic: float
    delta_basic: float


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
