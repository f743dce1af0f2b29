"""The app's one release flow, teaching and publish alike: the plan the settings name, and what is done with it.

Every release is a `core.plan.ReleasePlan` (a table, a `TablePlan`) made once from the settings by `plan()`; a record
keeps the plan it ran and the run, never a copy of its settings. Teaching mode draws the plan's noise (seeded, or
fresh from the OS), never charges it, and shows that same draw while the plan holds. Publish mode charges the
ledger per person before any noise (core.plan.charge_and_*), refused past the cap or the spender's share, and only
such a charged release is kept for the Report. The ledger is the server's, shared by every session and tab and by
the command line; its caps are the curator's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from core.errors import DataError, PspError
from core.estimator.problem import Problem, default_coordinate
from core.mechanisms.forecast import worst_case
from core.mechanisms.pipeline import PrivateRun
from core.mechanisms.table import TableRelease
from core.plan import (
    ReleasePlan,
    TablePlan,
    Waiting,
    charge_and_certify,
    charge_and_execute,
    charge_and_finish,
    charge_and_finish_table,
    charge_and_release_table,
    execute,
    execute_table,
    open_certification,
    table_report,
    waiting,
)
from core.privacy.access import CURATOR, Spender
from core.privacy.accounting import Budget
from core.privacy.charge import open_charged, phase_cost
from core.privacy.ledger import Certification, Ledger, LedgerEntry
from core.privacy.ledger_store import default_ledger_path
from ui import keys
from ui.format import num
from ui.loaded import data_spec, dataset, fallback, model_spec, people
from ui.params import deployment_caps, get, is_publish

# ------------------------------------------------------------------ the ledger


@st.cache_resource(show_spinner=False)
def _ledger(path: str) -> Ledger:
    """The durable ledger at path, shared by every session and tab of this server (and by the command line)."""
    return open_charged(path, deployment_caps())  # a new file: the deployment's default cap


def ledger() -> Ledger:
    """The durable ledger (core.privacy.ledger_store; PSP_LEDGER or the default path): caps are the curator's, read
    only here. An unusable file raises LedgerUnavailable, which refuses every release."""
    return _ledger(str(default_ledger_path()))


def caps() -> tuple[float, float]:
    """The cap on the people of the loaded data."""
    return ledger().cap(people())


def spent() -> tuple[float, float]:
    """(epsilon, delta) already spent on the people of the loaded data, by basic sequential composition."""
    return ledger().spent(people())


def remaining(spender: Spender = CURATOR) -> tuple[float, float]:
    """What a draw on the people of the loaded data by spender may still cost (core.privacy.ledger: state by state,
    and within an analyst's share), each at least 0."""
    return ledger().remaining(people(), spender)


def cost(budget: Budget, phase: str = "whole") -> tuple[float, float]:
    """What a release of this budget (or one phase of it) costs a person of the loaded data
    (core.privacy.charge.phase_cost; BudgetError when a sample drawn with replacement leaves no guarantee)."""
    return phase_cost(budget, dataset().privacy_unit, phase)


def refuse_reason(budget: Budget, phase: str, spender: Spender) -> str | None:
    """Why a release of this budget (or one phase of it) by spender would pass the cap on these people or the
    spender's share, or None if it fits."""
    return ledger().refusal(people(), *cost(budget, phase), spender)


def refusal_notice(budget: Budget, who: Spender, phase: str = "whole") -> str | None:
    """Why the ledger would refuse this draw (or phase) by who now, told with the sidebar's figures (not the ledger's
    description of the people, which may name a file), or None. PspError when there is no cap or the ledger is
    unusable."""
    if refuse_reason(budget, phase, who) is None:
        return None
    cost_e, cost_d = cost(budget, phase)
    left_e, left_d = remaining(who)
    whose = "your share of the cap" if who.kind == "analyst" else "the cap"
    then = ("Lower “Total ε” or “Total δ” above to draw within it." if left_e > 0 and left_d > 0 else
            f"Nothing more can be released on these people unless the data's curator raises {whose}.")
    return (f"Release is off: this draw costs each person ε = {num(cost_e)}, δ = {num(cost_d)}, and what remains of "
            f"{whose} on these people is ε = {num(left_e)}, δ = {num(left_d)}. {then}")


def worst_case_notice(problem: Problem, budget: Budget) -> str | None:
    """Before any certificate: a note when the fallback, left without a certified curvature, would publish an
    interval wider than the coefficient's plausible range (core.mechanisms.forecast.worst_case: public facts only),
    or None."""
    if not fallback():
        return None
    wide, plausible = worst_case(problem.geometry, problem.model, problem.n, budget, get("calibration"), get("level"))
    if plausible is None or wide < plausible:
        return None
    try:
        first = cost(budget, "certificates")[0] if budget.accounting == "basic" else None
    except PspError:  # a budget that cannot be phased: the page says why beside its buttons
        first = None
    then = f"“Certify first” (ε = {first:.3g}) forecasts" if first is not None else "Certifying first forecasts"
    return (f"Before paying: if no curvature can be certified on these data at this ε, the release falls back with an "
            f"interval of ±{wide:.3g}, wider than the coefficient's plausible range (±{plausible:.3g}), whatever n or "
            f"ε (the fallback's noise and its ridge both scale as 1/(nε)). {then} the interval before the rest is "
            "spent.")


def latest_paid_for() -> LedgerEntry | None:
    """The newest charged release on the people of the loaded data, read back from the ledger (another session's, or
    this browser's before a reload), or None."""
    return ledger().latest_report(people())


# ------------------------------------------------------------------ the plan the settings name


def target(problem: Problem) -> tuple[int | np.ndarray, str]:
    """(u, name) the Pipeline and Compare pages release: the custom direction when given (core normalises it), else
    the chosen coordinate; one not among these data's features means the first."""
    text = get("direction").strip()
    if text:
        try:
            return np.array([float(p) for p in text.split(",")]), "custom u"
        except ValueError:
            raise DataError(
                f"the direction u takes comma-separated numbers such as 1, 0, -1; {text!r} is not such a list"
            ) from None
    names = problem.feature_names
    name = get("coordinate") if get("coordinate") in names else names[default_coordinate(names)]
    return names.index(name), name


def plan(problem: Problem, budget: Budget, seed: int | None = None) -> ReleasePlan:
    """The release the settings name (core.plan): the loaded data and model, the target, the budget, the
    calibration, level and fallback, and the noise seed (None: OS entropy)."""
    u, name = target(problem)
    return ReleasePlan(data=data_spec(), model=model_spec(), target=u if isinstance(u, int) else tuple(map(float, u)),
                       name=name, budget=budget, calibration=get("calibration"), level=get("level"),
                       fallback=fallback(), seed=seed)


def table_plan(problem: Problem, names: tuple[str, ...], budget: Budget, seed: int | None = None) -> TablePlan:
    """The table the settings name: the loaded data and model, the coefficients, the budget, the calibration, level
    and fallback (as one coefficient's release), the intervals' coverage, and the noise seed (None: OS entropy)."""
    idx = tuple(problem.feature_names.index(name) for name in names)
    return TablePlan(data=data_spec(), model=model_spec(), indices=idx, names=tuple(names), budget=budget,
                     calibration=get("calibration"), level=get("level"), fallback=fallback(), seed=seed,
                     coverage=get("coverage"))


# ------------------------------------------------------------------ one coefficient


@dataclass(frozen=True)
class Drawn:
    """One release of a coefficient: the plan it ran and its run."""

    plan: ReleasePlan
    run: PrivateRun


@dataclass(frozen=True)
class PublishedRelease(Drawn):
    """A publish-mode release drawn from OS entropy and charged to the ledger: what the Report may show. Made by
    `publish()` only, in the ledger's charge; teaching draws never become one. uid names its ledger entry (its
    permanent address)."""

    uid: str


@dataclass(frozen=True)
class TeachingRun(Drawn):
    """The Pipeline's last teaching draw: never charged, possibly seeded (its plan's seed), never on the Report."""


def teaching(problem: Problem, budget: Budget) -> TeachingRun:
    """The teaching draw to show: the kept one while its plan is the one the settings name, else a new one, kept.
    So only "Draw fresh noise" or a private setting draws anew, never a display toggle."""
    p = plan(problem, budget, get("noise_seed"))
    kept = keys.TEACHING_RUN.get()
    if kept is not None and kept.plan == p:
        return kept
    return keys.TEACHING_RUN.set(TeachingRun(p, execute(p, problem)))  # never charged, never reported


def forget_teaching_run() -> None:
    """Drop the kept teaching draw: the next run of the page draws fresh noise ("Draw fresh noise")."""
    keys.TEACHING_RUN.pop()


def certify_first(problem: Problem, budget: Budget, spender: Spender) -> None:
    """The first phase of a release with OS noise: charged to spender per person before any noise (everything but
    the release event), refused past the cap; the ledger keeps the certification until its release."""
    charge_and_certify(plan(problem, budget), problem, ledger(), spender=spender)


def certification(problem: Problem, budget: Budget) -> Waiting | None:
    """The open certification of the plan the settings name now, read back from the ledger (none for another plan):
    the same after a reload, in a new tab or after a restart."""
    try:
        return waiting(plan(problem, budget), problem, ledger())
    except PspError:  # settings no release can be made with (the page says why): nothing of theirs is waiting
        return None


def other_certifications() -> tuple[Certification, ...]:
    """Every open certification on the people of the loaded data (those of other plans too)."""
    return ledger().open_certifications(people())


def close_certification(uid: str) -> None:
    """Close an open certification unspent: what its first phase spent stays spent."""
    ledger().close_certification(uid)


def publish(problem: Problem, budget: Budget, spender: Spender) -> PublishedRelease:
    """Release with OS noise — from this plan's open certification (core.plan.charge_and_finish, the release event
    charged, once) or whole (charge_and_execute) — charged to spender per person before any noise, refused past the
    cap or their share (nothing spent), and keep it for the Report."""
    p = plan(problem, budget)
    held = open_certification(p, problem, ledger())  # charge_and_finish reads its certificates back
    if held is None:
        run, entry = charge_and_execute(p, problem, ledger(), spender=spender)
    else:
        run, entry = charge_and_finish(p, problem, ledger(), held.uid, spender=spender)
    record = PublishedRelease(p, run, entry.uid)
    keys.PUBLISHED.setdefault({})[(p.data, p.model)] = record
    return record


def published() -> PublishedRelease | None:
    """The last charged release on the loaded data and model, or None."""
    return (keys.PUBLISHED.get() or {}).get((data_spec(), model_spec()))


# ------------------------------------------------------------------ regression tables


@dataclass(frozen=True)
class TableRecord:
    """The Pipeline's last regression table: its plan, the release, its private document, and whether it was charged
    (publish mode, OS noise) or drawn for teaching (never charged, possibly seeded, never on the Report)."""

    plan: TablePlan
    release: TableRelease
    document: dict
    charged: bool


def draw_table(problem: Problem, names: tuple[str, ...], budget: Budget) -> TableRecord:
    """A teaching table: the noise seed's (or fresh) noise, never charged."""
    p = table_plan(problem, names, budget, get("noise_seed"))
    release = execute_table(p, problem)
    return keys.TABLE.set(TableRecord(p, release, table_report(p, problem, release), charged=False))


def publish_table(problem: Problem, names: tuple[str, ...], budget: Budget, spender: Spender) -> TableRecord:
    """A published table — from this plan's open certification (core.plan.charge_and_finish_table, the release event
    charged, once) or whole (charge_and_release_table) — charged to spender per person before any noise, refused past
    the cap or their share (nothing spent), recorded in the ledger with its document, and kept for the Report."""
    p = table_plan(problem, names, budget)
    held = open_certification(p, problem, ledger())
    if held is None:
        release, document, _ = charge_and_release_table(p, problem, ledger(), spender=spender)
    else:
        release, document, _ = charge_and_finish_table(p, problem, ledger(), held.uid, spender=spender)
    return keys.TABLE.set(TableRecord(p, release, document, charged=True))


def certify_table_first(problem: Problem, names: tuple[str, ...], budget: Budget, spender: Spender) -> None:
    """A table's first phase (core.plan.charge_and_certify on its TablePlan): the certificates and the test, charged
    before any noise; the ledger keeps the certification until the table is released from it."""
    charge_and_certify(table_plan(problem, names, budget), problem, ledger(), spender=spender)


def table_certification(problem: Problem, names: tuple[str, ...], budget: Budget) -> Waiting | None:
    """The open certification of the table the settings name now, read back from the ledger (none for another
    plan): the same after a reload, in a new tab or after a restart."""
    try:
        return waiting(table_plan(problem, names, budget), problem, ledger())
    except PspError:  # settings no table can be made with (the page says why): nothing of theirs is waiting
        return None


def table_certification_uid(problem: Problem, names: tuple[str, ...], budget: Budget) -> str | None:
    """The name of that certification, its certificates not read back (no stage is recomputed)."""
    try:
        held = open_certification(table_plan(problem, names, budget), problem, ledger())
    except PspError:
        return None
    return None if held is None else held.uid


def table_record() -> TableRecord | None:
    """The kept table if it was drawn in this mode on the loaded data and model, else None."""
    record = keys.TABLE.get()
    if record is None or record.charged != is_publish() or (record.plan.data, record.plan.model) != (
            data_spec(), model_spec()):
        return None
    return record
