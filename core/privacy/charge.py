"""Who is charged and how much: the one rule every surface (the command line, the app) charges a release by.

- `cost`: a release's (epsilon, delta) in the unit of the guarantee, a person. One row per person costs the
  total budget; a sample drawn with replacement, where one person fills up to k rows, costs that person
  (k eps, delta sum_{j<k} e^{j eps}) by group privacy (core.privacy.unit.PrivacyUnit.per_person), and a cost
  whose delta reaches 1 protects nothing and is refused.
- `charge`: the charge itself, before any noise is drawn, in one transaction of the ledger; a seeded run is
  never charged (anyone who knows the seed can subtract its noise) and is refused in one sentence.
- `phase_cost`: a release made in two steps (certify first, then release) pays the release event's cost last and
  everything else first, so that the two add up to `cost` exactly and stopping after the first step pays at least
  what the certificates cost (pure k(eps_a + eps_b)).
- `default_cap`: the cap a new ledger file starts with, whichever surface creates it.
Refusals are Refused (past the cap or a share), BudgetError (a person's delta reaching 1) or InputError (a seed),
raised before anything is spent.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

from core.errors import BudgetError, InputError
from core.privacy.access import CURATOR, Spender
from core.privacy.accounting import Budget
from core.privacy.ledger import Ledger, LedgerEntry
from core.privacy.ledger_store import open_ledger
from core.privacy.population import Population
from core.privacy.unit import PrivacyUnit

DEFAULT_CAP = (10.0, 1e-5)  # a new ledger file's default cap unless the deployment says otherwise
SEEDED = ("A run with a fixed noise seed is not private (anyone who knows the seed can subtract its noise), so it "
          "is never charged to the ledger: drop the seed to release, or the ledger to replay")


PHASES = ("whole", "certificates", "release")


def cost(budget: Budget, unit: PrivacyUnit | None) -> tuple[float, float]:
    """What a release of this budget costs one person: the total (epsilon, delta), or its group-privacy bound for
    a person filling k rows. BudgetError when that delta is not below 1 (no guarantee left to charge)."""
    return _per_person(budget.epsilon_total, budget.delta_total, unit)


def phase_cost(budget: Budget, unit: PrivacyUnit | None, phase: str) -> tuple[float, float]:
    """What one phase of a release costs one person: "whole" is `cost`; "release" the release event
    (2 eps_c, (1 + e^eps_c) delta_c) per person; "certificates" the rest, cost minus that, so that the phases add up
    to the whole (to rounding; the fallback's spend on stage 2's share is then already paid). Two phases need a
    budget split by basic composition, whose certificates' share is then at least their pure k(eps_a + eps_b)."""
    whole = cost(budget, unit)
    if phase == "whole":
        return whole
    if budget.accounting != "basic":
        raise BudgetError("certifying first needs a budget split by basic composition: choose basic in {accounting}",
                          "accounting")
    c = budget.release
    event = _per_person(2.0 * c.epsilon, (1.0 + math.exp(c.epsilon)) * c.delta, unit)
    if phase == "release":
        return event
    if phase != "certificates":
        raise ValueError(f"a phase is one of {PHASES}, got {phase!r}")
    # Never below what stages 1 and 2 spend alone: the subtraction may round under it by an ulp, and an analyst who
    # stops after the certificates must have paid for them in full (the phases may then add up to an ulp more).
    pure = _per_person(budget.lambda_min.epsilon + budget.lambda_max.epsilon,
                       budget.lambda_min.delta + budget.lambda_max.delta, unit)
    return max(whole[0] - event[0], pure[0]), max(whole[1] - event[1], pure[1])


def _per_person(epsilon: float, delta: float, unit: PrivacyUnit | None) -> tuple[float, float]:
    if unit is None or unit.max_rows_per_person == 1:
        return epsilon, delta
    k = unit.max_rows_per_person
    eps_k, delta_k = unit.per_person(epsilon, delta)
    if not (math.isfinite(eps_k) and delta_k < 1.0):
        raise BudgetError(
            f"one person fills up to {k} rows of this sample drawn with replacement, so the release would cost that "
            f"person δ = {delta_k:.3g} ≥ 1, no guarantee at all: draw without replacement (turn off "
            "{with_replacement}) or lower the total ε", "with_replacement")
    return eps_k, delta_k


def charge(ledger: Ledger, people: Population, budget: Budget, unit: PrivacyUnit | None,
           seed: int | None, phase: str = "whole", *, spender: Spender = CURATOR) -> LedgerEntry:
    """Charge a release (or one phase of it, `phase_cost`) to the people it is drawn on, per person, before any of
    its noise is drawn, for spender (core.privacy.access).

    The ledger checks the cap (and an analyst's share) and appends the entry in one transaction (Refused past
    either, naming what the release costs and what remains); a seeded plan is refused outright. Nothing is spent
    on a refusal.
    """
    if seed is not None:
        raise InputError(SEEDED + ".")
    return ledger.spend(people, *phase_cost(budget, unit, phase), spender=spender)


def default_cap(read: Callable[[str], object | None] = lambda name: os.environ.get(f"PSP_{name.upper()}")
                ) -> tuple[float, float]:
    """The default cap of a new ledger file: the deployment's cap_epsilon and cap_delta (read(name); by default the
    environment variables PSP_CAP_EPSILON and PSP_CAP_DELTA), DEFAULT_CAP where unset. A value that is not a
    positive number gives 0, which refuses every release rather than allowing any."""
    caps = []
    for name, default in zip(("cap_epsilon", "cap_delta"), DEFAULT_CAP, strict=True):
        raw = read(name)
        try:
            value = default if raw is None else float(raw)
        except (TypeError, ValueError):
            value = 0.0
        caps.append(value if math.isfinite(value) and value > 0 else 0.0)
    return caps[0], caps[1]


def open_charged(path: str | os.PathLike | None, cap: tuple[float, float]) -> Ledger:
    """The durable ledger at path (None: the default file) with `cap` as its default when the file has none yet,
    so a ledger created by any surface starts with the same default cap."""
    book = open_ledger(path)
    if book.default_cap is None:
        book.set_default_cap(cap)
    return book
