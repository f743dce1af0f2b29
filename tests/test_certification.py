"""A certificate buys one release: the ledger owns a release certified first from its first charge to its last.

Tried as an attacker would, through the library the command line and the app use: finishing one set of certificates
again (through the same handle, a fresh one, a copy, another process), on other rows, for another target or budget;
a charged route that fails after its charge; the command line's publishing run, which prints only what the ledger
keeps.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import pickle

import numpy as np
import pytest

from core.cli import main
from core.data.spec import SyntheticSpec
from core.errors import InputError, Refused, ReleaseFailed
from core.estimator.model import ModelSpec
from core.mechanisms.curvature import curvatures
from core.mechanisms.fallback import fallback_half_width
from core.mechanisms.pipeline import certify, counts, finish, make_rng, prepare, prepare_spec
from core.mechanisms.split import CURVATURE_SHARE, fallback_budget_split, stand_in
from core.plan import (
    ReleasePlan,
    TablePlan,
    charge_and_certify,
    charge_and_execute,
    charge_and_finish,
    charge_and_release_table,
    preview,
    waiting,
)
from core.privacy.access import CURATOR
from core.privacy.accounting import split_budget
from core.privacy.charge import open_charged, phase_cost
from core.privacy.ledger_store import open_ledger

LOGISTIC = SyntheticSpec("logistic", 500, 3, 1.0, 1.0, 11)  # lambda_hat_min = 0 at this n: the fallback releases
ROBUST = SyntheticSpec("robust", 20_000, 3, 1.0, 1.0, 5)


@pytest.fixture(scope="module")
def logistic():
    return prepare_spec(LOGISTIC.load(), ModelSpec("logistic"), LOGISTIC)


@pytest.fixture(scope="module")
def robust():
    return prepare_spec(ROBUST.load(), ModelSpec("robust"), ROBUST)


def plan_of(problem, target=0, split=(1, 18, 1), epsilon=4.0, **changes) -> ReleasePlan:
    return ReleasePlan(data=problem.data_spec, model=problem.model, target=target,
                       name=problem.feature_names[target] if isinstance(target, int) else "custom u",
                       budget=split_budget(epsilon, 1e-6, split), fallback=True, **changes)


def ledger_at(tmp_path, cap=(10.0, 1e-5)):
    return open_charged(tmp_path / "ledger.sqlite3", cap)


def test_one_set_of_certificates_releases_once_whatever_handle_or_copy(logistic, tmp_path):
    """The attack that spent eps = 172 under a cap of 10: certify once, finish again and again."""
    book = ledger_at(tmp_path)
    p = plan_of(logistic)
    people = p.data.population()
    w = charge_and_certify(p, logistic, book, spender=CURATOR)
    assert w.certified.lambda_min.lambda_hat == 0  # the fallback will spend stage 2's share too
    run, _ = charge_and_finish(p, logistic, book, w.certification.uid, spender=CURATOR)
    assert run.release.status == "fallback"
    spent = book.spent(people)
    assert spent[0] == pytest.approx(4.0, rel=1e-12)  # the two phases add up to the budget
    for handle in (book, open_ledger(tmp_path / "ledger.sqlite3"), pickle.loads(pickle.dumps(book))):
        with pytest.raises(Refused, match="released already"):
            charge_and_finish(p, logistic, handle, w.certification.uid, spender=CURATOR)
        with pytest.raises(Refused, match="released already"):  # a copy of what was handed back is no key
            charge_and_finish(p, logistic, handle, pickle.loads(pickle.dumps(w)).certification.uid, spender=CURATOR)
    assert book.spent(people) == spent and len(book.entries(people)) == 2
    assert waiting(p, logistic, book) is None


def test_the_probe_is_kept_with_the_certificates_and_finishing_reads_it_back(logistic, tmp_path):
    """lambda_hat_min = 0: the probe of the data's curvature is drawn with the certificates, kept in the ledger with
    their counts, read back by a new handle without new noise, and chooses the split the preview forecast and the
    release spends. A certification kept before the probe existed (two counts) reads back without one: the fixed
    shares, and none of stage 2's epsilon spent on a probe."""
    book = ledger_at(tmp_path)
    p = plan_of(logistic)
    w = charge_and_certify(p, logistic, book, spender=CURATOR)
    drawn = w.certified.probe
    assert drawn is not None and drawn.epsilon == pytest.approx(p.budget.lambda_max.epsilon / 2)
    again = waiting(p, logistic, open_ledger(tmp_path / "ledger.sqlite3"))
    assert again.certified.probe == drawn
    ahead = preview(p, logistic, again.certified)["forecast"]
    run, _ = charge_and_finish(p, logistic, book, w.certification.uid, spender=CURATOR)
    r = run.release
    assert r.fallback_probe == drawn and r.status == "fallback"
    split = fallback_budget_split(p.budget, 0.0, 1, logistic.geometry, logistic.n, 0.0, p.level, p.calibration, True,
                                  stand_in(0.0, drawn))
    assert r.fallback_shares == split.shares and r.fallback_epsilon == split.epsilon
    assert ahead["wide"] == pytest.approx(fallback_half_width(r.fallback_lambda_reg, r.fallback_noise_scale,
                                                              p.level, logistic.geometry), rel=1e-12)
    old = certify(logistic, 0, p.budget, make_rng(5), True, counts(w.certified)[:2])
    assert old.probe is None
    legacy = finish(logistic, old, make_rng(6), p.calibration, p.level, True).release
    assert legacy.fallback_shares == CURVATURE_SHARE and legacy.fallback_probe is None
    assert legacy.fallback_epsilon == pytest.approx(p.budget.lambda_max.epsilon + 2 * p.budget.release.epsilon)


def _finish_in_process(path, uid, queue) -> None:  # a separate process: its own interpreter and ledger handle
    spec = LOGISTIC
    problem = prepare_spec(spec.load(), ModelSpec("logistic"), spec)
    try:
        charge_and_finish(plan_of(problem), problem, open_ledger(path), uid, spender=CURATOR)
        queue.put("released")
    except Refused as exc:
        queue.put(str(exc))


@pytest.mark.slow
def test_two_processes_racing_to_finish_release_once(logistic, tmp_path):
    book = ledger_at(tmp_path)
    w = charge_and_certify(plan_of(logistic), logistic, book, spender=CURATOR)
    queue = multiprocessing.get_context("spawn").Queue()
    workers = [multiprocessing.get_context("spawn").Process(
        target=_finish_in_process, args=(tmp_path / "ledger.sqlite3", w.certification.uid, queue)) for _ in range(2)]
    for worker in workers:
        worker.start()
    outcomes = sorted(queue.get(timeout=120) for _ in workers)
    for worker in workers:
        worker.join(60)
    assert outcomes[1] == "released" and "released already" in outcomes[0]
    assert len(book.entries(LOGISTIC.population())) == 2


def test_certificates_of_rows_a_never_release_on_rows_b(robust, tmp_path):
    """Rows B: rows A with one column scaled by 0.3, under the same data spec (so the people match): refused."""
    book = ledger_at(tmp_path)
    p = plan_of(robust, split=(1, 1, 18))
    w = charge_and_certify(p, robust, book, spender=CURATOR)
    X = robust.X.copy()
    X[:, 1] *= 0.3
    rows_b = dataclasses.replace(prepare(X, robust.y, "robust"), data_spec=ROBUST)
    with pytest.raises(Refused, match="other rows"):
        charge_and_finish(p, rows_b, book, w.certification.uid, spender=CURATOR)
    bare = prepare(X, robust.y, "robust")  # no data spec: no people to charge, refused before any charge
    with pytest.raises(InputError, match="data spec"):
        charge_and_finish(p, bare, book, w.certification.uid, spender=CURATOR)
    with pytest.raises(InputError, match="data spec"):
        charge_and_execute(p, bare, book, spender=CURATOR)
    assert len(book.entries(ROBUST.population())) == 1
    charge_and_finish(p, robust, book, w.certification.uid, spender=CURATOR)  # its own rows: still open, releases


@pytest.mark.parametrize("change, words", [
    (dict(target=2), "another target"), (dict(epsilon=2.0), "another budget"), (dict(level=0.9), "interval level"),
    (dict(calibration="paper"), "another calibration"), (dict(fallback=False), "fallback")])
def test_certificates_never_release_for_another_plan(logistic, tmp_path, change, words):
    book = ledger_at(tmp_path)
    p = plan_of(logistic)
    w = charge_and_certify(p, logistic, book, spender=CURATOR)
    target = change.pop("target", 0)
    epsilon = change.pop("epsilon", 4.0)
    other = plan_of(logistic, target=target, epsilon=epsilon, **{k: v for k, v in change.items() if k != "fallback"})
    if "fallback" in change:
        other = dataclasses.replace(other, fallback=change["fallback"])
    with pytest.raises(Refused, match=words):
        charge_and_finish(other, logistic, book, w.certification.uid, spender=CURATOR)
    assert len(book.entries(LOGISTIC.population())) == 1  # nothing charged by the refusal
    run, entry = charge_and_finish(p, logistic, book, w.certification.uid, spender=CURATOR)
    assert json.loads(entry.details.document)["coefficient"]["name"] == p.name


def test_an_open_certification_is_read_back_and_can_be_closed_unspent(robust, tmp_path):
    book = ledger_at(tmp_path)
    p = plan_of(robust, split=(1, 1, 18))
    w = charge_and_certify(p, robust, book, spender=CURATOR)
    again = waiting(p, robust, open_ledger(tmp_path / "ledger.sqlite3"))  # a new handle, as after a restart
    assert again is not None and again.certification.uid == w.certification.uid
    assert again.certified.test == w.certified.test and again.certified.lambda_max.lambda_hat == \
        w.certified.lambda_max.lambda_hat
    assert waiting(plan_of(robust, target=1, split=(1, 1, 18)), robust, book) is None  # another target: not its own
    closed = book.close_certification(w.certification.uid)
    assert closed.state == "closed" and waiting(p, robust, book) is None
    with pytest.raises(Refused, match="closed unspent"):
        charge_and_finish(p, robust, book, w.certification.uid, spender=CURATOR)
    assert book.spent(ROBUST.population()) == phase_cost(p.budget, None, "certificates")


def test_a_failure_after_the_charge_is_recorded_and_said_in_one_sentence(robust, tmp_path, monkeypatch):
    book = ledger_at(tmp_path, (20.0, 1e-4))
    p = plan_of(robust, split=(1, 1, 18))

    def broken(*args, **kwargs):
        raise OverflowError("math range error")

    monkeypatch.setattr("core.plan.run_private", broken)
    with pytest.raises(ReleaseFailed, match="recorded as failed") as caught:
        charge_and_execute(p, robust, book, spender=CURATOR)
    assert "\n" not in str(caught.value)
    table = TablePlan(data=ROBUST, model=robust.model, indices=(0, 1), names=("x0", "x1"), budget=p.budget)
    monkeypatch.setattr("core.plan.release_table", broken)
    with pytest.raises(ReleaseFailed):
        charge_and_release_table(table, robust, book, spender=CURATOR)
    w = charge_and_certify(p, robust, book, spender=CURATOR)
    monkeypatch.setattr("core.plan.finish", broken)
    with pytest.raises(ReleaseFailed):
        charge_and_finish(p, robust, book, w.certification.uid, spender=CURATOR)
    logged = book.entries(ROBUST.population())
    assert [e.details.outcome if e.details else None for e in logged] == ["failed", "failed", None, "failed"]
    assert all(e.details.reason == "OverflowError: math range error" for e in logged if e.details)
    assert book.certification(w.certification.uid).state == "finished"  # its release event was charged and failed
    assert book.spent(ROBUST.population())[0] == pytest.approx(12.0)  # what was charged stays spent


class _Huge:
    """A generator whose every draw is enormous: the curvature's bound must still be capped, not overflow."""

    def laplace(self, loc, scale):
        return 1e6

    def standard_normal(self):
        return 1e6


def test_a_huge_draw_of_the_curvature_is_capped_in_logarithms(robust):
    point = robust.fit.theta
    (c,) = curvatures(robust, point, 0.0, np.eye(robust.d)[:1], 1.0, 1e-6, 0.01, _Huge())
    assert c.bound == pytest.approx(1.0 / c.lambda_hat)  # exp(1e6) overflowed before the cap applied


def _cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_command_lines_publishing_run_prints_only_the_ledgers_document(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite3"
    data = ["--synthetic", "--loss", "logistic", "--n", 500, "--d", 3, "--sample-seed", 11]
    status, out, err = _cli(capsys, "release", *data, "--coordinate", 0, "--epsilon", 4, "--delta", 1e-6,
                            "--ledger", path)
    assert status == 0, err
    (entry,) = open_ledger(path).entries(LOGISTIC.population())
    assert out == entry.details.document + "\n"  # byte for byte
    doc = json.loads(out)
    assert doc["release"]["status"] == "fallback"  # auto: the logistic loss falls back, as in the app
    for hidden in ("fit", "theta_star", "not_private", "u_theta", "omega", "statistic"):
        assert f'"{hidden}"' not in out
    status, out, _ = _cli(capsys, "release", *data, "--coordinate", 0, "--epsilon", 4, "--delta", 1e-6,
                          "--fallback", "off", "--seed", 1)
    assert status == 0 and json.loads(out)["release"]["status"] == "bottom" and '"fit"' in out  # teaching: marked
    assert "fit" in json.loads(out)["not_private"][0] or any("fit" in p for p in json.loads(out)["not_private"])


def test_the_command_line_certifies_first_and_finishes_once(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite3"
    release = ["release", "--synthetic", "--loss", "logistic", "--n", 500, "--d", 3, "--sample-seed", 11,
               "--coordinate", 0, "--epsilon", 4, "--delta", 1e-6, "--ledger", path]
    status, out, err = _cli(capsys, *release, "--certify-first")
    assert status == 0, err
    uid = json.loads(out)["certification"]
    assert json.loads(out)["preview"]["branch"] == "fallback"
    status, out, err = _cli(capsys, *release, "--finish", uid)
    assert status == 0, err
    status, out, err = _cli(capsys, *release, "--finish", uid)
    assert status == 2 and "released already" in err and out == ""
    status, out, err = _cli(capsys, *release[:-2], "--finish", uid)
    assert status == 2 and "--ledger" in err
    assert len(open_ledger(path).entries(LOGISTIC.population())) == 2


def test_the_command_line_certifies_a_table_first_and_finishes_it_once(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite3"
    release = ["release", "--synthetic", "--loss", "logistic", "--n", 500, "--d", 3, "--sample-seed", 11,
               "--coordinates", "x0,x2", "--epsilon", 4, "--delta", 1e-6, "--ledger", path]
    status, out, err = _cli(capsys, *release, "--certify-first")
    assert status == 0, err
    ahead = json.loads(out)
    assert ahead["coefficients"] == ["x0", "x2"] and ahead["preview"]["rows"] == ["x0", "x2"]
    assert ahead["preview"]["row_level"] == pytest.approx(0.975)
    status, out, err = _cli(capsys, *release, "--finish", ahead["certification"])
    assert status == 0, err
    assert [r["name"] for r in json.loads(out)["table"]["rows"]] == ["x0", "x2"]
    status, out, err = _cli(capsys, *release, "--finish", ahead["certification"])
    assert status == 2 and "released already" in err and out == ""
    one = [a if a != "x0,x2" else "x0" for a in release]  # one coefficient cannot finish a table's certificates
    status, out, err = _cli(capsys, *[a if a != "--coordinates" else "--coordinate" for a in one], "--finish",
                            ahead["certification"])
    assert status == 2 and out == ""
    entries = open_ledger(path).entries(LOGISTIC.population())
    assert len(entries) == 2 and sum(e.epsilon for e in entries) == pytest.approx(4.0)


def _keys(doc) -> set[str]:
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in _keys(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in _keys(v)}
    return set()


def test_every_charged_document_holds_private_outputs_only(robust, tmp_path):
    """What the ledger keeps, the Report shows and the command line prints names no field computed without privacy:
    not the certificates' exact counts, Laplace draws or true eigenvalues (a table's document once printed them)."""
    from core.mechanisms.certificates import RecursiveBound
    from core.mechanisms.release import Release
    from core.privacy.marks import not_private

    # the fit's fields share names with private ones (a certificate's lambda_min): its own keys stand for it
    hidden = not_private(RecursiveBound) | not_private(Release) | {"covers", "fit", "theta", "grad_norm", "theta_star"}
    book = ledger_at(tmp_path)
    p = plan_of(robust, split=(1, 1, 18))
    table = TablePlan(data=ROBUST, model=robust.model, indices=(0, 1), names=("x0", "x1"), budget=p.budget)
    entries = [charge_and_execute(p, robust, book, spender=CURATOR)[1],
               charge_and_release_table(table, robust, book, spender=CURATOR)[2]]
    assert {"N", "noise", "statistic", "u_theta"} <= hidden
    for entry in entries:
        assert not _keys(json.loads(entry.details.document)) & hidden
