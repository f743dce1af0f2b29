"""A release plan: everything one release of u^T theta needs, checked once, and the one path from it to a release.

`ReleasePlan` is frozen and validated when made: which people and model, which target, the budget (split and
accounting included), the calibration, the level, the fallback and the noise source (a seed, or None for the
operating system's entropy). `execute` runs it on the problem prepared from its data and model; `charge_and_execute`
charges the ledger first — per person, in one transaction, never a seeded plan (core.privacy.charge) — then runs it and
records the outcome on that charge, with the release's private report, so that it can be shown again later (or, on
an error after the charge, the outcome "failed" with its reason). The command line and the app's publish mode both
release through it. The people and the unit charged come from the problem's data spec, never from an argument.

`charge_and_certify` and `charge_and_finish` make the same release in two phases, each charged before its noise:
the certificates and the test first (a private preview the analyst may stop at), the release event after. The
ledger owns the release between the two (core.privacy.ledger.Certification): the first phase opens a certification bound
to the plan and the prepared rows (`plan_digests`) and keeps the certificates' released counts; the second names it,
is refused for any other plan, rows or people, and releases once, from the certificates as the ledger kept them
(`waiting` reads them back after a reload or a restart). A regression table (`TablePlan`) is certified first the same
way (`charge_and_certify`, then `charge_and_finish_table`): stages 1-3 do not depend on the coefficients, and its
preview forecasts each row at its row level.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, is_dataclass, replace

import numpy as np

from core.data.spec import DataSpec, FolderSpec
from core.errors import InputError, ReleaseFailed, check_seed, is_integer, is_real
from core.estimator.model import ModelSpec
from core.estimator.problem import Problem
from core.mechanisms.forecast import from_certificates
from core.mechanisms.pipeline import (
    Certified,
    PrivateRun,
    certify,
    check_fallback_accounting,
    counts,
    finish,
    make_rng,
    planned_half_width,
    run_private,
)
from core.mechanisms.table import TOGETHER, TableRelease, check_coverage, finish_table, release_table, row_level
from core.privacy.access import Spender
from core.privacy.accounting import Budget
from core.privacy.charge import SEEDED, charge, phase_cost
from core.privacy.gaussian import CALIBRATIONS, DEFAULT_CALIBRATION
from core.privacy.ledger import Certification, Ledger, LedgerEntry, ReleaseDetails, release_details, stage_costs
from core.report import document_text, published_report, table_document
from core.settings import check


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """What every plan resolves and checks before any charge: data (who), model, budget, calibration, level, fallback
    and seed (None: OS entropy, the only private source)."""

    data: DataSpec
    model: ModelSpec
    budget: Budget
    calibration: str = DEFAULT_CALIBRATION
    level: float = 0.95
    fallback: bool = False
    seed: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.data, DataSpec):
            raise InputError("the plan names no data source (a synthetic, census or file spec); load the data first")
        check("epsilon", self.budget.epsilon_total)
        check("delta", self.budget.delta_total)
        check("level", self.level, "the interval level")
        if not isinstance(self.fallback, bool):
            raise InputError(f"the fallback setting is on (True) or off (False), got {self.fallback!r}; choose one")
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

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (isinstance(self.name, str) and self.name):
            raise InputError("the coefficient's name is empty; choose a coordinate by its feature's name")
        if is_integer(self.target):
            if self.target < 0:
                raise InputError(f"the coordinate index must be at least 0, got {self.target!r}")
            object.__setattr__(self, "target", int(self.target))
        elif isinstance(self.target, tuple) and self.target and all(is_real(x) for x in self.target):
            object.__setattr__(self, "target", tuple(float(x) for x in self.target))
        else:
            raise InputError("name the coefficient by a coordinate index, or give the direction u as finite numbers")


def execute(plan: ReleasePlan, problem: Problem, rng: np.random.Generator | None = None) -> PrivateRun:
    """The private stages of the plan on its problem (prepared from plan.data and plan.model), with fresh noise from
    rng (default: a generator of the plan's seed; pass one generator to draw several runs in turn)."""
    _check_problem(plan, problem)
    return run_private(problem, _target(plan), plan.budget, make_rng(plan.seed) if rng is None else rng,
                       plan.calibration, plan.level, fallback=plan.fallback)


def _check_problem(plan: _Plan, problem: Problem) -> None:
    if problem.data_spec is not None and problem.data_spec != plan.data:
        raise InputError("the problem was prepared from other data than the plan names; prepare it again")


def _charged(plan: _Plan, problem: Problem) -> None:
    """A charged route's plan and problem: never seeded (core.privacy.charge.SEEDED), and the problem prepared from the
    plan's data spec (`core.mechanisms.pipeline.prepare_spec`), which names its people and gives the unit charged
    (never an argument)."""
    if plan.seed is not None:
        raise InputError(SEEDED + ".")
    if problem.data_spec is None:
        raise InputError("a charged release needs data loaded from a data spec (core.data.spec), which names whose "
                         "budget it spends; prepare the problem with core.mechanisms.pipeline.prepare_spec")
    _check_problem(plan, problem)
    _keyed(plan, problem)


def _keyed(plan: _Plan, problem: Problem) -> None:
    """A folder's people are keyed from the very files the problem read, unchanged since (FolderSpec.check_keyed):
    before the charge, and again before what the stages drew is recorded or shown."""
    if isinstance(plan.data, FolderSpec):
        plan.data.check_keyed(problem.rows.folder)


def _target(plan: ReleasePlan | TablePlan) -> int | np.ndarray:
    """The direction certificates are drawn for: stages 1-3 do not depend on it, so a table's first row serves."""
    if isinstance(plan, TablePlan):
        return plan.indices[0]
    return plan.target if isinstance(plan.target, int) else np.asarray(plan.target, dtype=np.float64)


def _what(plan: ReleasePlan | TablePlan) -> str:
    """What a plan releases, as the ledger records it: one coefficient's name, or a table's names joined by commas."""
    return ",".join(plan.names) if isinstance(plan, TablePlan) else plan.name


@contextmanager
def _failure_recorded(ledger: Ledger, entry: LedgerEntry, what: str, plan: _Plan,
                      certification: Certification | None = None) -> Iterator[None]:
    """Run a charged step; on any error, record the entry's outcome as failed (one line of reason), end its
    certification, and raise ReleaseFailed in one sentence."""
    try:
        yield
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        ledger.record_outcome(entry, ReleaseDetails(what, stage_costs(plan.budget), "failed", reason=reason))
        if certification is not None:
            ledger.close_certification(certification.uid, "failed")
        raise ReleaseFailed(f"the release failed after its charge of ε = {entry.epsilon:g}, δ = {entry.delta:g}, "
                            f"which stays spent and is recorded as failed in the ledger ({reason})") from exc


def charge_and_execute(plan: ReleasePlan, problem: Problem, ledger: Ledger, *,
                       spender: Spender) -> tuple[PrivateRun, LedgerEntry]:
    """Charge the plan to its people for spender (per person, before any noise; refused past the cap, past an
    analyst's share or for a seeded plan, charging nothing), run it, and record its outcome on the charge (failed,
    with its reason, on an error)."""
    _charged(plan, problem)
    entry = charge(ledger, plan.data.population(), plan.budget, problem.privacy_unit, plan.seed, spender=spender)
    with _failure_recorded(ledger, entry, plan.name, plan):
        return _record(plan, problem, ledger, entry, execute(plan, problem))


def plan_digests(plan: ReleasePlan | TablePlan, problem: Problem) -> dict[str, str]:
    """The SHA-256 of each part of a release plan that certificates are bound to (core.privacy.ledger.PLAN_PARTS): the
    data spec, the prepared rows (`Problem.rows_digest`), the model, the target (a table's: its coefficients and
    coverage), the budget, the calibration, the level and the fallback. Not the seed: a charged plan has none."""
    target = ((plan.indices, plan.names, plan.coverage) if isinstance(plan, TablePlan) else (plan.target, plan.name))
    parts = dict(data=plan.data, model=plan.model, target=target, budget=plan.budget,
                 calibration=plan.calibration, level=plan.level, fallback=plan.fallback)
    digests = {name: _digest(value) for name, value in parts.items()}
    return digests | {"rows": problem.rows_digest}


def _digest(value: object) -> str:
    text = json.dumps(value, default=_plain, sort_keys=True)  # floats as repr: exact
    return hashlib.sha256(text.encode()).hexdigest()


def _plain(value: object) -> object:
    if is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__} | {f.name: getattr(value, f.name) for f in fields(value)}
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"no digest for a {type(value).__name__}")


def plan_summary(plan: ReleasePlan | TablePlan, problem: Problem) -> dict:
    """A release plan in public words, kept on its certification (a reader of the ledger sees what it was for)."""
    b = plan.budget
    return dict(coefficient=_what(plan), data=plan.data.describe(), epsilon=b.epsilon_total, delta=b.delta_total,
                split=list(b.split), calibration=plan.calibration, level=plan.level, fallback=plan.fallback,
                release_cost=list(phase_cost(b, problem.privacy_unit, "release")))


@dataclass(frozen=True)
class Waiting:
    """An open certification, the plan it was drawn for and its certificates (read back from the ledger on the plan's
    problem)."""

    plan: ReleasePlan | TablePlan
    certification: Certification
    certified: Certified


def charge_and_certify(plan: ReleasePlan | TablePlan, problem: Problem, ledger: Ledger, *,
                       spender: Spender) -> Waiting:
    """The first of two phases: charge everything but the release event (core.privacy.charge.phase_cost) and open its
    certification in the ledger in one transaction, then draw stages 1-3 and keep their private outputs there. The
    outputs are private; stopping here spends that much only. The certification may release once
    (`charge_and_finish`, or `charge_and_finish_table` for a table's plan), for this plan on these rows."""
    _charged(plan, problem)
    cost = phase_cost(plan.budget, problem.privacy_unit, "certificates")
    entry, opened = ledger.open_certification(plan.data.population(), *cost, plan_digests(plan, problem),
                                              plan_summary(plan, problem), spender)
    with _failure_recorded(ledger, entry, _what(plan), plan, opened):
        c = certify(problem, _target(plan), plan.budget, make_rng(None), plan.fallback)
        _keyed(plan, problem)
        kept = dict(counts=counts(c), lambda_min=c.lambda_min.lambda_hat, passed=c.test.passed)
        return Waiting(plan, ledger.keep_certificates(opened.uid, json.dumps(kept)), c)


def preview(plan: ReleasePlan | TablePlan, problem: Problem, c: Certified) -> dict:
    """What certificates say their release will give, private values only: lambda_hat_min and lambda_hat_max, the
    test (14), the branch ("released", "fallback" or "bottom", chosen by the certificates), when Algorithm 5 (or a
    table's Gaussian step) will release its interval's half-width, known now, and the forecast of the interval on
    every branch (core.mechanisms.forecast: the fallback's too, and whether it will be too wide). A table's preview
    names its rows and their level: every row has the same forecast (nothing private tells the rows apart before
    the release), so its `high` is the widest row's likely top."""
    ahead = from_certificates(problem, c, plan.calibration, plan.level, plan.fallback, *_rows(plan))
    if isinstance(plan, TablePlan):
        half = ahead.low if c.test.passed else None
        table = dict(rows=list(plan.names), coverage=plan.coverage,
                     row_level=row_level(plan.level, len(plan.indices), plan.coverage))
    else:
        half, table = planned_half_width(problem, c, plan.calibration, plan.level), {}
    lmax = None if c.lambda_max is None else c.lambda_max.lambda_hat
    return dict(lambda_min=c.lambda_min.lambda_hat, lambda_max=lmax,
                test=dict(passed=c.test.passed, reason=c.test.reason), half_width=half,
                branch="released" if c.test.passed else ("fallback" if plan.fallback else "bottom"),
                forecast=asdict(ahead)) | table


def _rows(plan: ReleasePlan | TablePlan) -> tuple[int, str]:
    """(the number of rows, their coverage) that a plan's forecast is for."""
    return (len(plan.indices), plan.coverage) if isinstance(plan, TablePlan) else (1, TOGETHER)


def open_certification(plan: ReleasePlan | TablePlan, problem: Problem, ledger: Ledger) -> Certification | None:
    """The ledger's open certification of this plan on these rows (None without one), its certificates not read."""
    digests = plan_digests(plan, problem)
    return next((c for c in ledger.open_certifications(plan.data.population()) if c.plan == digests), None)


def waiting(plan: ReleasePlan | TablePlan, problem: Problem, ledger: Ledger) -> Waiting | None:
    """The open certification of this plan on these rows, read back from the ledger (None without one): after a
    reload, in another process or after a restart, as when it was drawn."""
    c = open_certification(plan, problem, ledger)
    return None if c is None else Waiting(plan, c, _read_back(plan, problem, c))


def _read_back(plan: ReleasePlan | TablePlan, problem: Problem, c: Certification) -> Certified:
    """The certificates kept on c, rebuilt on the plan's problem from their released counts (no new noise); refused
    when they do not come out as they were drawn."""
    kept = json.loads(c.certificates or "{}")
    certified = certify(problem, _target(plan), plan.budget, make_rng(None), plan.fallback, tuple(kept["counts"]))
    if (certified.lambda_min.lambda_hat, certified.test.passed) != (kept["lambda_min"], kept["passed"]):
        raise InputError("these certificates cannot be read back on these rows; certify again")
    return certified


def charge_and_finish(plan: ReleasePlan, problem: Problem, ledger: Ledger, certification: str, *,
                      spender: Spender) -> tuple[PrivateRun, LedgerEntry]:
    """The second phase: charge the release event and finish the named certification in one transaction — refused,
    charging nothing, when it has released already, was closed, or was drawn on other people or rows or for another
    plan — then release from its certificates as the ledger kept them, and record the outcome, with the release's
    private report, on this charge."""
    _charged(plan, problem)
    cost = phase_cost(plan.budget, problem.privacy_unit, "release")
    entry, done = ledger.finish_certification(certification, plan.data.population(), *cost,
                                              plan_digests(plan, problem), spender)
    with _failure_recorded(ledger, entry, plan.name, plan):
        certified = _read_back(plan, problem, done)
        run = finish(problem, certified, make_rng(None), plan.calibration, plan.level, plan.fallback)
        return _record(plan, problem, ledger, entry, run)


def _record(plan: ReleasePlan, problem: Problem, ledger: Ledger, entry: LedgerEntry,
            run: PrivateRun) -> tuple[PrivateRun, LedgerEntry]:
    _keyed(plan, problem)
    document = published_report(run, plan.name, plan.budget, plan.data, plan.model, problem.n, problem.d,
                                problem.feature_names, problem.privacy_unit)
    details = release_details(run, plan.name, document_text(document))
    ledger.record_outcome(entry, details)
    return run, replace(entry, details=details)


@dataclass(frozen=True, kw_only=True)
class TablePlan(_Plan):
    """One regression table (core.mechanisms.table): a plan's settings, spent once, and the coefficients (0-based
    indices and their names); its level holds for all rows at once or for each, as `coverage` says
    (core.mechanisms.table.COVERAGES)."""

    indices: tuple[int, ...]
    names: tuple[str, ...]
    coverage: str = TOGETHER

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.indices or len(self.indices) != len(self.names):
            raise InputError("a table plan names each of its coefficients")
        check_coverage(self.coverage)


def execute_table(plan: TablePlan, problem: Problem, rng: np.random.Generator | None = None) -> TableRelease:
    """The table on its problem, with fresh noise from rng (default: a generator of the plan's seed)."""
    _check_problem(plan, problem)
    return release_table(problem, plan.indices, plan.budget, make_rng(plan.seed) if rng is None else rng,
                         plan.calibration, plan.level, plan.fallback, plan.coverage)


def table_report(plan: TablePlan, problem: Problem, t: TableRelease) -> dict:
    """The table's private document (core.report.table_document) on the plan's data and model, with the data's public
    outcome and indicator groups for the odds ratios' words."""
    doc = table_document(t, plan.data.describe(), problem.n, problem.d, plan.model, problem.privacy_unit, plan.seed)
    doc["data"] |= dict(outcome=getattr(plan.data, "outcome", None), groups=getattr(plan.data, "groups", {}))
    return doc


def charge_and_release_table(plan: TablePlan, problem: Problem, ledger: Ledger, *,
                             spender: Spender) -> tuple[TableRelease, dict, LedgerEntry]:
    """One charge of the plan's budget to its people (per person, before any noise; refused past the cap or for a
    seeded plan), exactly as one coefficient's release is charged, then the table and its private document,
    recorded on that charge (failed, with its reason, on an error)."""
    _charged(plan, problem)
    entry = charge(ledger, plan.data.population(), plan.budget, problem.privacy_unit, plan.seed, spender=spender)
    with _failure_recorded(ledger, entry, _what(plan), plan):
        return _record_table(plan, problem, ledger, entry, execute_table(plan, problem))


def charge_and_finish_table(plan: TablePlan, problem: Problem, ledger: Ledger, certification: str, *,
                            spender: Spender) -> tuple[TableRelease, dict, LedgerEntry]:
    """A table's second phase, as `charge_and_finish` is one coefficient's: the release event charged and the named
    certification finished in one transaction (refused, charging nothing, for any other plan, rows or people, or once
    released or closed), then the table from its certificates as the ledger kept them, recorded on this charge."""
    _charged(plan, problem)
    cost = phase_cost(plan.budget, problem.privacy_unit, "release")
    entry, done = ledger.finish_certification(certification, plan.data.population(), *cost,
                                              plan_digests(plan, problem), spender)
    with _failure_recorded(ledger, entry, _what(plan), plan):
        certified = _read_back(plan, problem, done)
        t = finish_table(problem, certified, plan.indices, make_rng(None), plan.calibration, plan.level,
                         plan.fallback, plan.coverage)
        return _record_table(plan, problem, ledger, entry, t)


def _record_table(plan: TablePlan, problem: Problem, ledger: Ledger, entry: LedgerEntry,
                  t: TableRelease) -> tuple[TableRelease, dict, LedgerEntry]:
    _keyed(plan, problem)
    document = table_report(plan, problem, t)
    details = ReleaseDetails(_what(plan), stage_costs(plan.budget), t.status, document=document_text(document))
    ledger.record_outcome(entry, details)
    return t, document, replace(entry, details=details)
