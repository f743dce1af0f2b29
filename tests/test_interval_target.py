"""Every interval names what it covers: the coefficient fitted on the rows, or, for the fallback without a certified
curvature, that of its ridge-regularised fit, in the data (JSON) and in the first screen's words alike."""

from __future__ import annotations

import pytest

from core.data.spec import SyntheticSpec
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import prepare_spec
from core.mechanisms.release import FITTED, RIDGE
from core.plan import ReleasePlan, TablePlan, execute, execute_table
from core.privacy.accounting import make_budget
from core.report import first_sentence, plain_summary, plain_table_summary, published_report, table_document

SMALL = SyntheticSpec("logistic", 500, 3, 1.0, 1.0, 11)  # too few rows at ε = 1 for a certified curvature
LARGE = SyntheticSpec("logistic", 40_000, 3, 1.0, 1.0, 11)  # enough for Algorithm 5's interval at ε = 8


def problem(spec: SyntheticSpec):
    return prepare_spec(spec.load(), ModelSpec("logistic").resolve(spec.d), spec)


@pytest.fixture(scope="module")
def small():
    return problem(SMALL)


def report(spec, p, epsilon: float, seed: int = 3) -> dict:
    plan = ReleasePlan(data=spec, model=p.model, target=0, name="x0", budget=make_budget(epsilon, 1e-6),
                       fallback=True, seed=seed)
    run = execute(plan, p)
    return published_report(run, "x0", plan.budget, spec, p.model, spec.n, spec.d, ("x0", "x1", "x2"), None)


def test_an_uncertified_fallback_names_the_ridge_fit_and_prints_no_odds_ratio(small):
    rep = report(SMALL, small, 1.0)
    r = rep["release"]
    assert r["status"] == "fallback" and r["fallback_interval"] is None and r["interval_target"] == RIDGE
    words = " ".join(plain_summary(rep, 1.0, 1e-6))
    assert "ridge-regularised fit" in words and "pulls toward 0" in words
    assert "for the people in these data" not in words
    assert "odds" not in words and "odds" not in first_sentence(rep)
    assert r["population"] is None  # no population range around the ridge's coefficient either


def test_algorithm_5s_interval_names_the_fitted_coefficient():
    rep = report(LARGE, problem(LARGE), 8.0)
    r = rep["release"]
    assert r["status"] == "released" and r["interval_target"] == FITTED
    words = " ".join(plain_summary(rep, 8.0, 1e-6))
    assert "for the people in these data" in words and "ridge" not in words and "odds" in words


def test_a_tables_rows_each_name_their_target(small):
    plan = TablePlan(data=SMALL, model=small.model, indices=(0, 1, 2), names=("x0", "x1", "x2"),
                     budget=make_budget(1.0, 1e-6), fallback=True, seed=5)
    t = execute_table(plan, small)
    assert t.status == "fallback" and t.targets == (RIDGE, RIDGE, RIDGE)
    doc = table_document(t, SMALL.describe(), SMALL.n, SMALL.d, small.model, None)
    assert [r["target"] for r in doc["table"]["rows"]] == [RIDGE] * 3
    words = " ".join(plain_table_summary(doc, 1.0, 1e-6))
    assert words.count("is for a ridge-regularised fit pulled toward 0") == 3 and "odds" not in words
    assert "odds" not in first_sentence(doc) and "ridge-regularised fit, " in first_sentence(doc)
    assert "ridge-regularised fit, pulled toward 0" in doc["table"]["interval_note"]


def test_a_document_kept_before_targets_reads_its_target_from_its_curvature(small):
    rep = report(SMALL, small, 1.0)
    del rep["release"]["interval_target"]
    assert "ridge-regularised fit" in plain_summary(rep, 1.0, 1e-6)[0]
