"""Every charged route in any order on the same people: what was released never exceeds what the ledger charged,
which never exceeds the cap.

A rule-based state machine (hypothesis) certifies, finishes (its own certification, a finished one, another plan's,
on other people, or a name no ledger knows), releases in one step, releases tables, closes certifications, and
swaps the ledger handle for a fresh one on the same file or a pickled copy. After every step, for each people:
the (epsilon, delta) the mechanisms really spent, by basic composition, is at most what the ledger charged, and
that is at most the cap.
"""

from __future__ import annotations

import pickle
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

from core.data.spec import SyntheticSpec
from core.errors import PspError
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import prepare_spec
from core.plan import (
    ReleasePlan,
    TablePlan,
    charge_and_certify,
    charge_and_execute,
    charge_and_finish,
    charge_and_release_table,
)
from core.privacy.access import CURATOR
from core.privacy.accounting import basic_shares, split_budget
from core.privacy.charge import open_charged
from core.privacy.ledger import TOLERANCE
from core.privacy.ledger_store import open_ledger

CAP = (10.0, 1e-5)
SPECS = {  # lambda_hat_min = 0 on the first (the fallback spends stage 2's share too); the test passes on the second
    "logistic": (SyntheticSpec("logistic", 500, 3, 1.0, 1.0, 11), ModelSpec("logistic")),
    "robust": (SyntheticSpec("robust", 20_000, 3, 1.0, 1.0, 5), ModelSpec("robust")),
}
SPLITS = ((1, 1, 18), (1, 18, 1))


@pytest.fixture(scope="module", autouse=True)
def problems():
    found = {name: prepare_spec(spec.load(), model, spec) for name, (spec, model) in SPECS.items()}
    Machine.problems = found
    yield found


def plan(problem, epsilon: float, split: tuple, target: int = 0) -> ReleasePlan:
    return ReleasePlan(data=problem.data_spec, model=problem.model, target=target, name=f"x{target}",
                       budget=split_budget(epsilon, 1e-6, split), fallback=True)


def stage_spends(budget) -> tuple[tuple[float, float], ...]:
    """(a, b, event): each stage's (epsilon, delta) share of the basic total (core.privacy.accounting.basic_shares)."""
    return basic_shares(budget.lambda_min, budget.lambda_max, budget.release)


class Machine(RuleBasedStateMachine):
    problems: dict = {}
    certifications = Bundle("certifications")

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp())
        self.path = self.folder / "ledger.sqlite3"
        self.ledger = open_charged(self.path, CAP)
        self.released = {name: [0.0, 0.0] for name in SPECS}  # what the mechanisms really spent, per people

    def teardown(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def _spent(self, name: str, *shares: tuple[float, float]) -> None:
        for e, d in shares:
            self.released[name][0] += e
            self.released[name][1] += d

    @rule(target=certifications, name=st.sampled_from(sorted(SPECS)), epsilon=st.sampled_from([1.0, 2.0, 4.0]),
          split=st.sampled_from(SPLITS))
    def certify(self, name, epsilon, split):
        p = plan(self.problems[name], epsilon, split)
        try:
            w = charge_and_certify(p, self.problems[name], self.ledger, spender=CURATOR)
        except PspError:  # past the cap: nothing charged, nothing drawn
            return ("nobody", "no such certification", p)
        a, b, _ = stage_spends(p.budget)
        self._spent(name, a, *([b] if w.certified.lambda_max is not None else []))
        return (name, w.certification.uid, p)

    @rule(held=certifications, on=st.sampled_from(sorted(SPECS)), change=st.sampled_from(["same", "target", "eps"]))
    def finish(self, held, on, change):
        name, uid, p = held
        problem = self.problems[on]
        other = {"same": p, "target": plan(problem, p.budget.epsilon_total, p.budget.split, 1),
                 "eps": plan(problem, p.budget.epsilon_total / 2, p.budget.split)}[change]
        if change == "same" and on != name and name != "nobody":
            other = plan(problem, p.budget.epsilon_total, p.budget.split)  # the same settings on other people
        try:
            run, _ = charge_and_finish(other, problem, self.ledger, uid, spender=CURATOR)
        except PspError as exc:
            event(str(exc)[:60])
            return
        event("finished")
        assert (on, change) == (name, "same"), "a finish for another plan or other people released"
        _, b, release_event = stage_spends(p.budget)
        took_b = run.release.status == "fallback" and run.lambda_max is None
        self._spent(name, release_event, *([b] if took_b else []))

    @rule(held=consumes(certifications))
    def close(self, held):
        try:
            self.ledger.close_certification(held[1])
        except PspError:
            pass

    @rule(name=st.sampled_from(sorted(SPECS)), epsilon=st.sampled_from([1.0, 2.0, 4.0]),
          split=st.sampled_from(SPLITS), table=st.booleans())
    def release_whole(self, name, epsilon, split, table):
        problem = self.problems[name]
        p = plan(problem, epsilon, split)
        try:
            if table:
                table_plan = TablePlan(data=p.data, model=p.model, indices=(0, 2), names=("x0", "x2"),
                                       budget=p.budget, fallback=True)
                charge_and_release_table(table_plan, problem, self.ledger, spender=CURATOR)
            else:
                charge_and_execute(p, problem, self.ledger, spender=CURATOR)
        except PspError:
            return
        self._spent(name, *stage_spends(p.budget))  # at most every stage's share

    @rule(how=st.sampled_from(["reopen", "copy"]))
    def another_handle(self, how):
        self.ledger = open_ledger(self.path) if how == "reopen" else pickle.loads(pickle.dumps(self.ledger))

    @invariant()
    def released_at_most_charged_at_most_cap(self):
        for name, (spec, _) in SPECS.items():
            charged = self.ledger.spent(spec.population())
            for i in (0, 1):
                assert self.released[name][i] <= charged[i] * (1 + 1e-9) + 1e-300, (name, self.released, charged)
                assert charged[i] <= CAP[i] * (1 + TOLERANCE)


Machine.TestCase.settings = settings(max_examples=100, stateful_step_count=15, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
TestLedgerMachine = pytest.mark.slow(Machine.TestCase)
