"""core.plan: one validated release plan, and the one path from it to a charged release."""

from __future__ import annotations

import dataclasses
import math

import pytest

from core.data.spec import SyntheticSpec
from core.errors import BudgetError, InputError, Refused
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import certify, finish, make_rng, prepare_spec, run_private
from core.plan import ReleasePlan, charge_and_certify, charge_and_execute, charge_and_finish, execute
from core.privacy.access import CURATOR
from core.privacy.accounting import make_budget, split_budget
from core.privacy.charge import cost, open_charged, phase_cost
from core.privacy.marks import public
from core.privacy.unit import PrivacyUnit

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
        charge_and_execute(plan(problem, seed=3), problem, book, spender=CURATOR)
    assert book.spent(SPEC.population()) == (0.0, 0.0)
    run, entry = charge_and_execute(plan(problem), problem, book, spender=CURATOR)
    assert (entry.epsilon, entry.delta) == (4.0, 1e-6) and book.spent(SPEC.population()) == (4.0, 1e-6)
    (logged,) = book.entries(SPEC.population())
    assert logged.details.outcome == run.release.status and logged.details.value == run.release.value
    two = PrivacyUnit("person", 2)  # a person in two rows costs (8, 1e-6 (1 + e^4)): past the cap, refused
    with pytest.raises(Refused):
        charge_and_execute(plan(problem), dataclasses.replace(problem, privacy_unit=two), book, spender=CURATOR)
    assert book.spent(SPEC.population()) == (4.0, 1e-6)


def test_the_public_view_of_a_run_holds_private_outputs_only(problem):
    from core.privacy.marks import not_private, public

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
        "branch", "interval_target", "interval_proven"}
    assert view.release.interval_target == "fitted"  # Algorithm 5's interval covers u^T theta(P_n)
    assert view.release.interval_proven


def test_certify_then_finish_is_run_private_draw_for_draw(problem):
    """The two phases draw the same noises in the same order as one run: with one generator, the same PrivateRun."""
    b = split_budget(4.0, 1e-6, (1, 1, 18))
    for seed in range(3):
        whole = run_private(problem, 0, b, make_rng(seed), fallback=True)
        rng = make_rng(seed)
        c = certify(problem, 0, b, rng, fallback=True)
        assert c.test == whole.test and c.lambda_min == whole.lambda_min
        done = finish(problem, c, rng, fallback=True)
        assert done.release == whole.release and done.lambda_max == whole.lambda_max and (done.u == whole.u).all()


@pytest.mark.parametrize("k", [1, 3])
def test_the_two_phases_cost_the_whole_and_the_first_covers_the_certificates(k):
    b = split_budget(4.0, 1e-6, (1, 1, 18))
    unit = PrivacyUnit("person", k)
    (e1, d1), (e2, d2) = phase_cost(b, unit, "certificates"), phase_cost(b, unit, "release")
    whole = cost(b, unit)
    assert e1 + e2 == pytest.approx(whole[0], rel=1e-15) and d1 + d2 == pytest.approx(whole[1], rel=1e-12)
    assert e1 >= k * (b.lambda_min.epsilon + b.lambda_max.epsilon) * (1 - 1e-15) and d1 > 0
    assert (e2, d2) == unit.per_person(2 * b.release.epsilon, (1 + math.exp(b.release.epsilon)) * b.release.delta)
    with pytest.raises(BudgetError):  # two phases need basic composition's shares
        phase_cost(make_budget(4.0, 1e-6, (1, 1, 18), "pld"), unit, "certificates")


def test_certify_first_charges_stages_one_to_three_and_finishing_charges_the_rest(problem, tmp_path):
    book = open_charged(tmp_path / "l.sqlite3", (10.0, 1e-5))
    people = SPEC.population()
    p = plan(problem, budget=split_budget(4.0, 1e-6, (1, 1, 18)))
    with pytest.raises(InputError, match="not private"):
        charge_and_certify(plan(problem, seed=3), problem, book, spender=CURATOR)
    assert book.spent(people) == (0.0, 0.0)
    w = charge_and_certify(p, problem, book, spender=CURATOR)
    (first,) = book.entries(people)
    assert (first.epsilon, first.delta) == phase_cost(p.budget, None, "certificates")
    assert first.epsilon == pytest.approx(0.4) and book.spent(people)[0] == pytest.approx(0.4)  # a stop costs this
    with pytest.raises(Refused, match="another budget"):  # certificates of one budget never finish another
        charge_and_finish(plan(problem), problem, book, w.certification.uid, spender=CURATOR)
    assert len(book.entries(people)) == 1
    run, second = charge_and_finish(p, problem, book, w.certification.uid, spender=CURATOR)
    # read back from the ledger's counts: the private fields exactly (the Laplace draw, not private, to rounding)
    assert public(run.lambda_min).values() == public(w.certified.lambda_min).values() and run.test == w.certified.test
    assert run.lambda_min.noise == pytest.approx(w.certified.lambda_min.noise, rel=1e-12)
    assert book.spent(people)[0] == pytest.approx(4.0) and book.spent(people)[1] == pytest.approx(1e-6)
    logged = book.entries(people)
    assert logged[0].details is None and logged[1].details.outcome == run.release.status
    assert logged[1].details.document == second.details.document is not None


def test_certificates_release_only_on_the_problem_they_were_drawn_on(problem, tmp_path):
    """A release's privacy rests on certificates of its own data: finishing on another problem is refused, before
    the release event is charged."""
    book = open_charged(tmp_path / "l.sqlite3", (10.0, 1e-5))
    p = plan(problem, budget=split_budget(4.0, 1e-6, (1, 1, 18)))
    w = charge_and_certify(p, problem, book, spender=CURATOR)
    other_spec = SyntheticSpec("robust", 20_000, 3, 1.0, 1.0, 6)
    other = prepare_spec(other_spec.load(), ModelSpec("robust"), other_spec)
    with pytest.raises(InputError, match="other data"):
        finish(other, w.certified, make_rng(1))
    with pytest.raises(InputError, match="other data than the plan names"):
        charge_and_finish(p, other, book, w.certification.uid, spender=CURATOR)
    assert len(book.entries(SPEC.population())) == 1  # only the certificates were charged
