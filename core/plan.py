"""A release plan: everything one release of u^T theta needs, checked once, and the one path from it to a release.

`ReleasePlan` is frozen and validated when made: which people and model, which target, the budget (split and
accounting included), the calibration, the level, the fallback and the noise source (a seed, or None for the
operating system's entropy). `execute` runs it on the problem prepared from its data and model; `charge_and_execute`
charges the ledger first — per person, in one transaction, never a seeded plan (core.charge) — then runs it and
records the outcome on that charge, with the release's private report, so that it can be shown again later. The
command line and the app's publish mode both release through it. `charge_and_certify` and `charge_and_finish` make
the same release in two phases, each charged before its noise: the certificates and the test first (a private
preview the analyst may stop at), the release event after.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from core.accounting import Budget
from core.charge import charge
from core.data.dataset import PrivacyUnit
from core.errors import InputError, check_seed
from core.gaussian import CALIBRATIONS
from core.ledger import Ledger, LedgerEntry, ReleaseDetails, release_details, stage_costs
from core.model import ModelSpec
from core.pipeline import Certified, PrivateRun, certify, check_fallback_accounting, finish, make_rng, run_private
from core.problem import Problem
from core.report import published_report, table_document
from core.settings import check
from core.spec import DataSpec
from core.table import TableRelease, release_table


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """What every plan resolves and checks before any charge: data (who), model, budget, calibration, level, fallback
    and seed (None: OS entropy, the only private source)."""

    data: DataSpec
    model: ModelSpec
    budget: Budget
    calibration: str = "paper"
    level: float = 0.95
    fallback: bool = False
    seed: int | None = None

    def __post_init__(self) -> None:
        check("level", self.level, "the interval level")
        check_fallback_accounting(self.fallback, self.budget.accounting)  # before any charge
        check_seed(self.seed, "the noise seed")
        if self.calibration not in CALIBRATIONS:
            raise InputError(f"the calibration is one of {', '.join(CALIBRATIONS)}, got {self.calibration!r}")

    @property
    def private(self) -> bool:
        """Whether its noise comes from the operating system: a seeded plan replays, and is not private."""
        return self.seed is None


@dataclass(frozen=True, kw_only=True)
class ReleasePlan(_Plan):
    """One release: a plan's settings and its target (a coordinate index or a unit direction, with its name)."""

    target: int | tuple[float, ...]
    name: str


def execute(plan: ReleasePlan, problem: Problem, rng: np.random.Generator | None = None) -> PrivateRun:
    """The private stages of the plan on its problem (prepared from plan.data and plan.model), with fresh noise from
    rng (default: a generator of the plan's seed; pass one generator to draw several runs in turn)."""
    _check_problem(plan, problem)
    return run_private(problem, _target(plan), plan.budget, make_rng(plan.seed) if rng is None else rng,
                       plan.calibration, plan.level, fallback=plan.fallback)


def _check_problem(plan: ReleasePlan, problem: Problem) -> None:
    if problem.data_spec is not None and problem.data_spec != plan.data:
        raise InputError("the problem was prepared from other data than the plan names; prepare it again")


def _target(plan: ReleasePlan) -> int | np.ndarray:
    return plan.target if isinstance(plan.target, int) else np.asarray(plan.target, dtype=np.float64)


def charge_and_execute(plan: ReleasePlan, problem: Problem, ledger: Ledger,
                       unit: PrivacyUnit | None) -> tuple[PrivateRun, LedgerEntry]:
    """Charge the plan to its people (per person, before any noise; refused past the cap or for a seeded plan,
    charging nothing), run it, and record its outcome on the charge."""
    entry = charge(ledger, plan.data.population(), plan.budget, unit, plan.seed)
    return _record(plan, problem, ledger, unit, entry, execute(plan, problem))


def charge_and_certify(plan: ReleasePlan, problem: Problem, ledger: Ledger,
                       unit: PrivacyUnit | None) -> tuple[Certified, LedgerEntry]:
    """The first of two phases: charge everything but the release event (core.charge.phase_cost), then draw stages
    1-3. Its outputs are private; stopping here spends that much only."""
    _check_problem(plan, problem)
    entry = charge(ledger, plan.data.population(), plan.budget, unit, plan.seed, "certificates")
    return certify(problem, _target(plan), plan.budget, make_rng(plan.seed), plan.fallback), entry


def charge_and_finish(plan: ReleasePlan, problem: Problem, certified: Certified, ledger: Ledger,
                      unit: PrivacyUnit | None) -> tuple[PrivateRun, LedgerEntry]:
    """The second phase: charge the release event, release from `certified` (drawn for this plan), and record the
    outcome, with the release's private report, on this charge."""
    _check_problem(plan, problem)
    if certified.budget != plan.budget:
        raise InputError("these certificates were drawn for another budget; certify again")
    entry = charge(ledger, plan.data.population(), plan.budget, unit, plan.seed, "release")
    run = finish(problem, certified, make_rng(plan.seed), plan.calibration, plan.level, plan.fallback)
    return _record(plan, problem, ledger, unit, entry, run)


def _record(plan: ReleasePlan, problem: Problem, ledger: Ledger, unit: PrivacyUnit | None, entry: LedgerEntry,
            run: PrivateRun) -> tuple[PrivateRun, LedgerEntry]:
    document = published_report(run, plan.name, plan.budget, plan.data, plan.model, problem.n, problem.d,
                                problem.feature_names, unit)
    ledger.record_outcome(entry, release_details(run, plan.name, json.dumps(document, ensure_ascii=False)))
    return run, entry


@dataclass(frozen=True, kw_only=True)
class TablePlan(_Plan):
    """One regression table (core.table): a plan's settings, spent once, and the coefficients (0-based indices and
    their names); its level is the table's simultaneous level."""

    indices: tuple[int, ...]
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.indices or len(self.indices) != len(self.names):
            raise InputError("a table plan names each of its coefficients")


def execute_table(plan: TablePlan, problem: Problem, rng: np.random.Generator | None = None) -> TableRelease:
    """The table on its problem, with fresh noise from rng (default: a generator of the plan's seed)."""
    _check_problem(plan, problem)
    return release_table(problem, plan.indices, plan.budget, make_rng(plan.seed) if rng is None else rng,
                         plan.calibration, plan.level, plan.fallback)


def table_report(plan: TablePlan, problem: Problem, t: TableRelease, unit: PrivacyUnit | None) -> dict:
    """The table's private document (core.report.table_document) on the plan's data and model."""
    return table_document(t, plan.data.describe(), problem.n, problem.d, plan.model, unit, plan.seed)


def charge_and_release_table(plan: TablePlan, problem: Problem, ledger: Ledger,
                             unit: PrivacyUnit | None) -> tuple[TableRelease, dict, LedgerEntry]:
    """One charge of the plan's budget to its people (per person, before any noise; refused past the cap or for a
    seeded plan), exactly as one coefficient's release is charged, then the table and its private document,
    recorded on that charge."""
    entry = charge(ledger, plan.data.population(), plan.budget, unit, plan.seed)
    t = execute_table(plan, problem)
    document = table_report(plan, problem, t, unit)
    ledger.record_outcome(entry, ReleaseDetails(",".join(plan.names), stage_costs(plan.budget), t.status,
                                                document=json.dumps(document, ensure_ascii=False)))
    return t, document, entry
