"""core.plan: one validated release plan, and the one path from it to a charged release."""

from __future__ import annotations

import dataclasses

import pytest

from core.accounting import split_budget
from core.charge import open_charged
from core.data.dataset import PrivacyUnit
from core.errors import BudgetError, InputError
from core.model import ModelSpec
from core.pipeline import prepare_spec
from core.plan import ReleasePlan, charge_and_execute, execute
from core.spec import SyntheticSpec

SPEC = SyntheticSpec("robust", 20_000, 3, 1.0, 1.0, 5)


@pytest.fixture(scope="module")
def problem():
    return prepare_spec(SPEC.load(), ModelSpec("robust"), SPEC)


def plan(problem, **changes) -> ReleasePlan:
    base = dict(data=SPEC, model=problem.model, target=0, name="x0", budget=split_budget(4.0, 1e-6))
    return ReleasePlan(**(base | changes))


def test_a_plan_is_frozen_keyword_only_and_checked_when_made(problem):
    p = plan(problem)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.level = 0.3  # type: ignore[misc]
    with pytest.raises(TypeError):
        ReleasePlan(SPEC, problem.model, 0, "x0", split_budget(4.0, 1e-6))  # type: ignore[misc]
    for bad in (dict(level=0.3), dict(seed=-1), dict(seed=2**53), dict(calibration="magic")):
        with pytest.raises(InputError):
            plan(problem, **bad)
    assert p.private and not plan(problem, seed=3).private


def test_a_seeded_plan_replays_and_an_unseeded_one_draws_anew(problem):
    a, b = execute(plan(problem, seed=3), problem), execute(plan(problem, seed=3), problem)
    assert a.release.value == b.release.value and a.release.status == "released"
    assert execute(plan(problem), problem).release.value != execute(plan(problem), problem).release.value


def test_charge_and_execute_charges_first_per_person_and_records_the_outcome(problem, tmp_path):
    book = open_charged(tmp_path / "l.sqlite3", (10.0, 1e-5))
    with pytest.raises(InputError, match="not private"):
        charge_and_execute(plan(problem, seed=3), problem, book, None)
    assert book.spent(SPEC.population()) == (0.0, 0.0)
    run, entry = charge_and_execute(plan(problem), problem, book, None)
    assert (entry.epsilon, entry.delta) == (4.0, 1e-6) and book.spent(SPEC.population()) == (4.0, 1e-6)
    (logged,) = book.entries(SPEC.population())
    assert logged.details.outcome == run.release.status and logged.details.value == run.release.value
    two = PrivacyUnit("person", 2)  # a person in two rows costs (8, 1e-6 (1 + e^4)): past the cap, refused
    with pytest.raises(BudgetError):
        charge_and_execute(plan(problem), problem, book, two)
    assert book.spent(SPEC.population()) == (4.0, 1e-6)


def test_the_public_view_of_a_run_holds_private_outputs_only(problem):
    from core.marks import not_private, public

    run = execute(plan(problem, seed=3), problem)
    view = public(run)
    assert view.release.value == run.release.value and view.release.branch == "algorithm5"
    assert view.lambda_min.lambda_hat == run.lambda_min.lambda_hat and view.test.passed == run.test.passed
    for part in ("release", "lambda_min", "lambda_max"):
        for name in not_private(getattr(run, part)):  # u_theta, omega, Delta, the counts, the draws ...
            with pytest.raises(AttributeError, match="public view"):
                getattr(getattr(view, part), name)
    with pytest.raises(AttributeError, match="public view"):
        _ = view.release.noise_sd  # a property of non-private fields is not in the view
    with pytest.raises(AttributeError, match="read only"):
        view.release = None
    assert set(view.release.values()) == {f for f in run.release.__dataclass_fields__} - not_private(run.release) | {
        "branch"}
